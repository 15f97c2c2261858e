"""Brute-force reference for dataflow property tests, plus the harness that runs a Dataflow
with 1 or N workers and checks every time against the reference.

The reference evaluates a plan over plain Python multisets (Counter of row tuples) of the inputs
accumulated to a time t. The harness feeds random update streams (several steps, several distinct
times per step, retractions) and asserts that, after every step, the engine's accumulated output
at every t < upper equals the reference at t.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from dataflow.batch import rows_of
from dataflow.exchange import LocalExchange, ThreadExchange
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import (ArrangeBy, Constant, DeltaJoin, Distinct, Filter, FlatMap, Get, Join, Map, Negate,
                           Project, Reduce, Threshold, TopK, Union_, output_types)
from dataflow.render import Dataflow
from dataflow.types import TypeKind, arrow_schema

AS_OF = 1


# ------------------------------------------------------------------------------------------
# scalar expressions in plain Python (only what the tests use)

def py_eval(e, row: tuple, now: int | None = None) -> Any:
    if isinstance(e, ColumnRef):
        return row[e.index]
    if isinstance(e, Literal):
        return e.value
    assert isinstance(e, Call), e
    f = e.func
    if f == "mz_now":
        return now
    if f == "and":
        vals = [py_eval(a, row, now) for a in e.args]
        if any(v is False for v in vals):
            return False
        return None if any(v is None for v in vals) else True
    if f == "or":
        vals = [py_eval(a, row, now) for a in e.args]
        if any(v is True for v in vals):
            return True
        return None if any(v is None for v in vals) else False
    args = [py_eval(a, row, now) for a in e.args]
    if f == "is_null":
        return args[0] is None
    if f == "not":
        return None if args[0] is None else not args[0]
    if any(a is None for a in args):
        return None
    ops = {"eq": lambda a, b: a == b, "neq": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "gt": lambda a, b: a > b, "lte": lambda a, b: a <= b, "gte": lambda a, b: a >= b,
           "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}
    return ops[f](*args)


# ------------------------------------------------------------------------------------------
# plans over multisets

def _clean(c: Counter) -> Counter:
    return Counter({k: v for k, v in c.items() if v != 0})


def _agg(agg, rows: list[tuple[tuple, int]]) -> Any:
    f = agg.func
    if f == "count_star":
        return sum(c for _, c in rows)
    vals = [(py_eval(agg.arg, r), c) for r, c in rows]
    vals = [(v, c) for v, c in vals if v is not None and c > 0]
    if agg.distinct:
        vals = [(v, 1) for v in sorted({v for v, _ in vals})]
    if f == "count":
        return sum(c for _, c in vals)
    if not vals:
        return None
    if f == "min":
        return min(v for v, _ in vals)
    if f == "max":
        return max(v for v, _ in vals)
    total = sum(Decimal(v) * c if not isinstance(v, float) else v * c for v, c in vals)
    if f == "sum":
        return int(total) if agg.type.is_integer else _quant(total, agg.type)
    n = sum(c for _, c in vals)
    return _quant(Decimal(total) / n, agg.type)


def _quant(v, t):
    if t.kind is TypeKind.NUMERIC:
        return Decimal(v).quantize(Decimal(1).scaleb(-t.effective_scale), rounding=ROUND_HALF_UP)
    return v


def _sort_key(v, desc=False, nulls_last=True):
    if v is None:
        return (1 if nulls_last else -1, 0)
    return (0, -v if desc else v)


def ref_eval(plan, env: dict[str, Counter]) -> Counter:
    if isinstance(plan, Get):
        return Counter(env.get(plan.id, Counter()))
    if isinstance(plan, Constant):
        return Counter(plan.rows)
    if isinstance(plan, Filter):
        inp = ref_eval(plan.input, env)
        return Counter({r: c for r, c in inp.items() if all(py_eval(p, r, env.get("__now__")) is True for p in plan.predicates)})
    if isinstance(plan, Map):
        out = Counter()
        for r, c in ref_eval(plan.input, env).items():
            for e in plan.exprs:
                r = r + (py_eval(e, r),)
            out[r] += c
        return out
    if isinstance(plan, Project):
        out = Counter()
        for r, c in ref_eval(plan.input, env).items():
            out[tuple(r[i] for i in plan.columns)] += c
        return _clean(out)
    if isinstance(plan, FlatMap):
        out = Counter()
        for r, c in ref_eval(plan.input, env).items():
            a = [py_eval(x, r) for x in plan.args]
            if any(v is None for v in a):
                continue
            for n, v in enumerate(range(a[0], a[1] + 1, a[2] if len(a) > 2 else 1), 1):
                out[r + (v,) + ((n,) if plan.ordinality else ())] += c
        return out
    if isinstance(plan, Join):
        left, right = ref_eval(plan.left, env), ref_eval(plan.right, env)
        out = Counter()
        for l, cl in left.items():
            lk = tuple(l[i] for i in plan.left_key)
            if any(v is None for v in lk):
                continue
            for r, cr in right.items():
                if tuple(r[i] for i in plan.right_key) == lk:
                    out[l + r] += cl * cr
        return _clean(out)
    if isinstance(plan, DeltaJoin):
        return _delta_join(plan, [ref_eval(p, env) for p in plan.inputs])
    if isinstance(plan, Reduce):
        groups: dict[tuple, list] = {}
        for r, c in ref_eval(plan.input, env).items():
            groups.setdefault(tuple(r[i] for i in plan.group_key), []).append((r, c))
        out = Counter()
        for k, rows in groups.items():
            if sum(c for _, c in rows) > 0:
                out[k + tuple(_agg(a, rows) for a in plan.aggregates)] += 1
        return out
    if isinstance(plan, Distinct):
        return Counter({r: 1 for r, c in ref_eval(plan.input, env).items() if c > 0})
    if isinstance(plan, Threshold):
        return Counter({r: c for r, c in ref_eval(plan.input, env).items() if c > 0})
    if isinstance(plan, Union_):
        out = Counter()
        for p in plan.inputs:
            for r, c in ref_eval(p, env).items():
                out[r] += c
        return _clean(out)
    if isinstance(plan, Negate):
        return Counter({r: -c for r, c in ref_eval(plan.input, env).items()})
    if isinstance(plan, ArrangeBy):
        return ref_eval(plan.input, env)
    if isinstance(plan, TopK):
        groups = {}
        for r, c in ref_eval(plan.input, env).items():
            if c > 0:
                groups.setdefault(tuple(r[i] for i in plan.group_key), []).append((r, c))
        out = Counter()
        for rows in groups.values():
            def key(rc):
                r = rc[0]
                ks = [_sort_key(r[col], desc, nl) for col, desc, nl in plan.order_by]
                return ks + [_sort_key(v) for v in r]
            expanded = [r for r, c in sorted(rows, key=key) for _ in range(c)]
            end = None if plan.limit is None else plan.offset + plan.limit
            for r in expanded[plan.offset:end]:
                out[r] += 1
        return out
    raise TypeError(plan)


def _delta_join(plan, inputs: list[Counter]) -> Counter:
    """The cross product of the inputs where every stage of every path finds its keys equal
    (and not NULL), each stage's columns mapped from its path's running rows to the output's."""
    widths = [len(output_types(p)) for p in plan.inputs]
    starts = [sum(widths[:i]) for i in range(len(widths))]
    equal: set[tuple[int, int]] = set()
    for source, stages in enumerate(plan.paths):
        running = [starts[source] + c for c in range(widths[source])]
        for stage in stages:
            for a, b in zip(stage.stream_key, stage.lookup_key):
                equal.add((running[a], starts[stage.input] + b))
            running += [starts[stage.input] + c for c in range(widths[stage.input])]
    out = Counter()
    for combo in itertools.product(*(list(i.items()) for i in inputs)):
        row = tuple(v for r, _ in combo for v in r)
        if all(row[a] is not None and row[a] == row[b] for a, b in equal):
            out[row] += math.prod(c for _, c in combo)
    return _clean(out)


# ------------------------------------------------------------------------------------------
# random update streams

def draw_stream(data, row_gens: dict[str, st.SearchStrategy], max_steps: int = 3, max_ops: int = 6):
    """Steps of (upper, {id: [(row, time, diff)]}); retractions only of rows present, so every
    input is a proper multiset at every time."""
    live = {i: [] for i in row_gens}
    ids = sorted(row_gens)
    steps, t = [], AS_OF
    for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
        ups = {i: [] for i in ids}
        for _ in range(data.draw(st.integers(1, 3), label="times")):
            for _ in range(data.draw(st.integers(0, max_ops), label="ops")):
                i = data.draw(st.sampled_from(ids))
                if live[i] and data.draw(st.integers(0, 3)) == 0:
                    row = live[i].pop(data.draw(st.integers(0, len(live[i]) - 1)))
                    ups[i].append((row, t, -1))
                else:
                    row = data.draw(row_gens[i])
                    live[i].append(row)
                    ups[i].append((row, t, 1))
            t += data.draw(st.integers(1, 2))
        steps.append((t, ups))
    return steps


def to_batch(updates: list, types) -> pa.Table:
    schema = arrow_schema(list(types))
    cols = [pa.array([u[0][i] for u in updates], type=t.arrow) for i, t in enumerate(types)]
    cols.append(pa.array(np.array([u[1] for u in updates], dtype=np.uint64)))
    cols.append(pa.array(np.array([u[2] for u in updates], dtype=np.int64)))
    return pa.Table.from_arrays(cols, schema=schema)


def _accumulate(updates, t) -> Counter:
    out = Counter()
    for row, time, diff in updates:
        if time <= t:
            out[row] += diff
    return _clean(out)


def run_dataflow(plan, types: dict[str, tuple], steps, workers: int):
    """Run the plan with `workers` workers; return per-step lists of output updates and the
    dataflows (for inspecting arrangements/errors)."""
    if workers == 1:
        dfs = [Dataflow(plan, AS_OF, LocalExchange())]
    else:
        dfs = [Dataflow(plan, AS_OF, ex) for ex in ThreadExchange.create(workers, timeout=20)]
    outputs = []
    with ThreadPoolExecutor(workers) as pool:
        for upper, ups in steps:
            per_worker = [{} for _ in range(workers)]
            for i, u in ups.items():
                for w in range(workers):
                    part = u[w::workers]  # arbitrary placement: the engine must shuffle
                    if part or w == 0:
                        per_worker[w][i] = to_batch(part, types[i])
            # Inputs without updates in this step are named quiet, as the worker names them:
            # operators reading only those skip the step (and their exchanges) on every worker.
            quiet = frozenset(i for i, u in ups.items() if not u)
            # Every other step after the first, the workers also hold each changed input whole,
            # as after a small table write (`AdvanceUpper.whole`): a first exchange becomes a
            # local partition of the whole, which must give the same answers.
            whole = {i: to_batch(u, types[i]) for i, u in ups.items() if u} \
                if workers > 1 and len(outputs) % 2 == 1 else {}
            futs = [pool.submit(df.step, per_worker[w], upper, quiet, whole) for w, df in enumerate(dfs)]
            step_out = []
            for f in futs:
                b = f.result()
                times = b["time"].to_pylist()
                assert all(AS_OF <= x < upper for x in times), (times, upper)
                step_out.extend(zip(rows_of(b), times, b["diff"].to_pylist()))
            outputs.append(step_out)
    return outputs, dfs


def check_plan(plan, types: dict[str, tuple], steps, workers: int) -> list:
    """Assert the engine matches the reference at every time of every step."""
    outputs, dfs = run_dataflow(plan, types, steps, workers)
    for df in dfs:
        assert not df.errors, df.errors
    seen_inputs = {i: [] for i in types}
    seen_out: list = []
    lower = AS_OF
    for (upper, ups), out in zip(steps, outputs):
        for i, u in ups.items():
            seen_inputs[i].extend(u)
        seen_out.extend(out)
        for t in range(lower, upper):
            env = {i: _accumulate(u, t) for i, u in seen_inputs.items()}
            env["__now__"] = t
            expected = _clean(ref_eval(plan, env))
            got = _accumulate(seen_out, t)
            assert got == expected, f"workers={workers} t={t}\n got={dict(got)}\n expected={dict(expected)}"
        lower = upper
    return dfs


def operators_of(root, kind) -> list:
    """Every operator of type `kind` in a rendered dataflow (`Dataflow.root`), looking through
    SharedOp wrappers and into operators' attributes and lists of inputs."""
    seen, todo, out = set(), [root], []
    while todo:
        op = todo.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        op = getattr(op, "inner", op)
        if isinstance(op, kind):
            out.append(op)
        for v in getattr(op, "__dict__", {}).values():
            todo.extend(x for x in (v if isinstance(v, list) else [v]) if hasattr(x, "step"))
    return out
