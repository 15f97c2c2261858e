"""Recursive bindings (WITH RECURSIVE, WITH MUTUALLY RECURSIVE) maintained incrementally.

A `LetRec` plan defines bindings X = (x_1 .. x_k) by `values` that may read any of them. Its
evaluation is a sequence of iterations; differential dataflow's `iterate` runs it with times
(outer time, iteration). Here the iterations are *unrolled*: the loop keeps one instance
("copy") of the value plans per iteration, copy i computing iteration i+1 from iteration i:

    fixpoint form (Materialize):  V_0 = ∅,          V_{i+1} = G(V_i),  result V_N where V_N = V_{N-1}
    working-table form (PG, UNION ALL, one binding):
                                  V_0 = seed,       V_{i+1} = F(V_i),  result Σ_i V_i, V_N = ∅

Every copy is an ordinary incremental dataflow over the outer (total) time, so each keeps the
per-iteration state of its operators (join arrangements, distinct counts) and a change at
outer time t flows down the chain as per-iteration differences: copy i receives ΔV_i(t) (and
the change to the loop's invariant inputs) and produces ΔV_{i+1}(t). The work of a change is
proportional to what it changes in each iteration, never a recomputation, and retractions are
exact: deleting the edge of a cycle changes V_i exactly as a from-scratch evaluation of
iteration i would, because each copy *is* iteration i, not a continuation from an old
fixpoint.

The chain length N grows on demand: it is kept so that the result is converged at every time
(fixpoint form: V_N = V_{N-1}; working-table form: V_N = ∅). A change that makes the recursion
deeper adds copies, each hydrated with the full current contents of its inputs (the last
iteration's value and the invariant inputs, which the loop keeps consolidated for this).
Copies are never removed when the recursion becomes shallower (a deeper chain computes the same
converged values). The chain is bounded by `limit`: reaching it is an error, or (RETURN AT
RECURSION LIMIT) the current iteration's values are the result.

Times: a step may carry several outer times; the loop runs the chain once per distinct time, in
order (all workers agree on the list through one exchange round), so every iteration's value is
exact at every time. Subplans of the values that read no binding (the edges table, a filter of
it) are rendered once outside the loop and their changes fed to every copy.

Cost (the honest part): memory is the sum of every copy's operator state. For the working-table
form (UNION ALL) a copy holds only its own working table W_i, so the total is the size of the
result, as in differential dataflow. For the fixpoint form (WITH MUTUALLY RECURSIVE, and
WITH RECURSIVE ... UNION, planned as X = distinct(seed ∪ F(X))) copy i holds the whole V_i, so
memory is about N × |result| (differential dataflow stores per-iteration differences here), and
hydrating a view costs N passes over the growing value. A change still costs only its
per-iteration differences.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dataflow.batch import TIME, concat, consolidate, hash_columns
from dataflow.errors import SqlError
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.plan import Get, LetRec, Plan, children, output_types, with_children
from dataflow.types import arrow_schema

# Without an explicit limit a runaway recursion stops here with an error instead of growing a
# chain (and a worker's memory) without end.
DEFAULT_MAX_ITERATIONS = 10_000
_COMPACT_AFTER = 32  # batches kept per accumulated input before they are consolidated


def _reads(plan: Plan, ids: frozenset[str], memo: dict[int, bool]) -> bool:
    k = id(plan)
    if k not in memo:
        memo[k] = (isinstance(plan, Get) and plan.id in ids) or any(_reads(c, ids, memo) for c in children(plan))
    return memo[k]


class _Hoister:
    """Replace every maximal subplan that reads no binding by a Get of a loop input."""

    def __init__(self, ids: tuple[str, ...], prefix: str) -> None:
        self.ids, self.prefix = frozenset(ids), prefix
        self.reads: dict[int, bool] = {}
        self.inputs: list[Plan] = []
        self._index: dict[int, Get] = {}
        self._done: dict[int, Plan] = {}

    def __call__(self, plan: Plan) -> Plan:
        k = id(plan)
        if k in self._done:
            return self._done[k]
        if not _reads(plan, self.ids, self.reads):
            if k not in self._index:
                self._index[k] = Get(f"{self.prefix}{len(self.inputs)}", output_types(plan))
                self.inputs.append(plan)
            out: Plan = self._index[k]
        else:
            kids = children(plan)
            out = plan if not kids else with_children(plan, [self(c) for c in kids])
        self._done[k] = out
        return out


class _Accumulated:
    """The consolidated contents of a collection so far (a list of update batches, folded into
    one when it grows), read restamped at one time to hydrate a new copy."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.parts: list[pa.Table] = []

    def add(self, b: pa.Table) -> None:
        if b.num_rows:
            self.parts.append(b)
        if len(self.parts) > _COMPACT_AFTER:
            self.parts = [self._fold(None)]

    def _fold(self, time: int | None) -> pa.Table:
        b = concat(self.parts, schema=self.schema)
        if time is None:
            time = int(b[TIME].to_numpy().max()) if b.num_rows else 0
        b = b.set_column(b.schema.get_field_index(TIME), b.schema.field(TIME),
                         pa.array(np.full(b.num_rows, time, np.uint64)))
        return consolidate(b)

    def at(self, time: int) -> pa.Table:
        """Everything so far as updates at `time` (and kept that way)."""
        b = self._fold(time)
        self.parts = [b] if b.num_rows else []
        return b

    def reset(self, b: pa.Table) -> None:
        self.parts = [b] if b.num_rows else []


def _at_time(b: pa.Table, times: np.ndarray, t: int) -> pa.Table:
    if b.num_rows == 0:
        return b
    mask = times == t
    if mask.all():
        return b
    return b.filter(pa.array(mask))


class _LoopRuntime(Runtime):
    """The runtime of the loop's copies: the dataflow's, with each exchange channel tagged by the
    sub-step (outer time) it runs in. Workers' exchanges are matched by (step, channel), and a
    copy runs once per sub-step, so several sub-steps of one step need distinct channels."""

    def __init__(self, parent: Runtime) -> None:
        self.parent, self.tag = parent, ""
        self.exchange, self.as_of = parent.exchange, parent.as_of
        self.errors, self.step_limit_bytes = parent.errors, parent.step_limit_bytes
        self.pause = parent.pause
        self.shared = {}  # (a loop's joins keep their own arrangements: they run per sub-step)

    def shuffle(self, channel: str, batch: pa.Table, key) -> pa.Table:
        return self.parent.shuffle(f"{channel}@{self.tag}", batch, key)


class _Agree:
    """All-gather of small integer lists across the workers of one dataflow (one exchange round
    per call), so every worker takes the same decisions about the loop."""

    def __init__(self, rt: Runtime, channel: str) -> None:
        self.rt, self.channel, self.rounds = rt, channel, 0
        n = rt.exchange.worker_count
        self.tags: list[int] = []
        if n > 1:
            probe = pa.table({"c0": pa.array(np.arange(64 * n), pa.int64())})
            dest = hash_columns(probe, [0]) % np.uint64(n)
            self.tags = [int(np.flatnonzero(dest == d)[0]) for d in range(n)]

    def gather(self, values: list[int]) -> list[int]:
        n = self.rt.exchange.worker_count
        if n == 1:
            return list(values)
        m = len(values)
        tags = np.repeat(np.array(self.tags, np.int64), m)
        vals = np.tile(np.array(values, np.int64), n)
        t = pa.table({"c0": pa.array(tags), "c1": pa.array(vals, pa.int64()),
                      TIME: pa.array(np.zeros(n * m, np.uint64)), "diff": pa.array(np.ones(n * m, np.int64))})
        self.rounds += 1  # a fresh channel per round: exchanges are matched by (step, channel)
        got = self.rt.shuffle(f"{self.channel}#{self.rounds}", t, (0,))
        return got["c1"].to_pylist()

    def any(self, flag: bool) -> bool:
        return any(self.gather([int(flag)]))


def _nonempty(batches: list[pa.Table]) -> bool:
    return any(b.num_rows for b in batches)


class LetRecOp(Operator):
    """The loop of one LetRec: computes the bindings' final values; `read(j)` gives binding j's
    changes to the body."""

    def __init__(self, plan: LetRec, rt: Runtime, path: str, built: dict, render) -> None:
        self.plan, self.rt, self.path, self.render = plan, rt, path, render
        self.ids = plan.ids
        self.schemas = [arrow_schema(list(t)) for t in plan.types]
        self.semi = plan.seeds is not None
        self.limit = plan.limit if plan.limit is not None else DEFAULT_MAX_ITERATIONS
        hoist = _Hoister(plan.ids, f"{path}/in")
        self.templates = [hoist(v) for v in plan.values]
        self.inputs = [render(p, rt, f"{path}.in{k}", built) for k, p in enumerate(hoist.inputs)]
        self.input_ids = [f"{path}/in{k}" for k in range(len(hoist.inputs))]
        self.seed_ops = [render(p, rt, f"{path}.seed{j}", built) for j, p in enumerate(plan.seeds or ())]
        self.acc_inputs = [_Accumulated(op.schema) for op in self.inputs]
        self.acc_last = [_Accumulated(s) for s in self.schemas]  # V_N, the last iteration
        self.copies: list[list[Operator]] = []
        self.loop_rt = _LoopRuntime(rt)
        self.agree = _Agree(rt, f"{path}/agree")
        self.failed = False
        self._ctx: StepContext | None = None
        self._out: list[pa.Table] = []

    # -- the chain ------------------------------------------------------------------------------

    def _new_copy(self) -> list[Operator]:
        from dataflow.render import _count_references

        counts: dict[int, int] = {}
        for t in self.templates:
            _count_references(t, counts)
        built = {"__shared__": {k for k, n in counts.items() if n > 1}}
        i = len(self.copies)
        return [self.render(t, self.loop_rt, f"{self.path}.it{i}.{j}", built) for j, t in enumerate(self.templates)]

    def _step_copy(self, ops: list[Operator], values: list[pa.Table], inputs: list[pa.Table],
                   t: int, first: bool) -> list[pa.Table]:
        feed = dict(zip(self.ids, values))
        feed.update(zip(self.input_ids, inputs))
        ctx = StepContext(feed, t + 1, first)
        return [consolidate(concat([op.step(ctx)], schema=s)) for op, s in zip(ops, self.schemas)]

    def _error(self, n: int) -> None:
        name = self.plan.names[0] if self.plan.names else "recursive query"
        self.rt.errors.append(SqlError(
            "54001", f"recursive query exceeded the recursion limit {n}" if self.plan.limit is not None
            else f'recursive query "{name}" did not finish within {n} iterations',
            hint=("Use RETURN AT RECURSION LIMIT to return the current values instead of an error."
                  if self.plan.limit is not None else
                  "A recursive query must reach a point where it produces no new rows.")))
        self.failed = True

    def _substep(self, t: int, inputs_t: list[pa.Table], seeds_t: list[pa.Table], inputs_changed: bool,
                 out: list[list[pa.Table]]) -> None:
        k = len(self.ids)
        self.loop_rt.tag = str(t)
        empty = [s.empty_table() for s in self.schemas]
        for acc, b in zip(self.acc_inputs, inputs_t):
            acc.add(b)
        prev = list(seeds_t) if self.semi else list(empty)  # ΔV_0
        if self.semi:
            for j in range(k):
                out[j].append(prev[j])
        prev_last = list(empty)
        for i, ops in enumerate(self.copies):
            if not inputs_changed and not self.agree.any(_nonempty(prev)):
                prev, prev_last = list(empty), list(empty)  # nothing reaches the later iterations
                break
            d = self._step_copy(ops, prev, inputs_t, t, False)
            prev_last, prev = prev, d
            if self.semi:
                for j in range(k):
                    out[j].append(d[j])
        # prev = ΔV_N, prev_last = ΔV_{N-1}
        for acc, b in zip(self.acc_last, prev):
            acc.add(b)
        if self.semi:
            pending = prev  # V_N was empty, so its change is its value
        else:
            for j in range(k):
                out[j].append(prev[j])
            pending = ([consolidate(concat([prev[j], _negated(prev_last[j])], schema=self.schemas[j]))
                        for j in range(k)] if self.copies else None)
        while not self.failed:
            if pending is not None and not self.agree.any(_nonempty(pending)):
                return
            n = len(self.copies)
            if n >= self.limit:
                if not self.plan.limit_return:
                    self._error(self.limit)
                return
            ops = self._new_copy()
            self.copies.append(ops)
            snap = [acc.at(t) for acc in self.acc_last]
            d = self._step_copy(ops, snap, [acc.at(t) for acc in self.acc_inputs], t, True)
            for acc, b in zip(self.acc_last, d):
                acc.reset(b)
            if self.semi:
                for j in range(k):
                    out[j].append(d[j])
                pending = d
            else:
                pending = [consolidate(concat([d[j], _negated(snap[j])], schema=self.schemas[j])) for j in range(k)]
                for j in range(k):
                    out[j].append(pending[j])

    def run(self, ctx: StepContext) -> list[pa.Table]:
        if self._ctx is ctx:
            return self._out
        inputs = [op.step(ctx) for op in self.inputs]
        seeds = [op.step(ctx) for op in self.seed_ops]
        k = len(self.ids)
        out: list[list[pa.Table]] = [[] for _ in range(k)]
        if not self.failed:
            in_times = [b[TIME].to_numpy() for b in inputs]
            seed_times = [b[TIME].to_numpy() for b in seeds]
            local: dict[int, int] = {}
            for ts in seed_times:
                for x in np.unique(ts):
                    local.setdefault(int(x), 0)
            for ts in in_times:
                for x in np.unique(ts):
                    local[int(x)] = 1
            flat = [v for t, f in sorted(local.items()) for v in (t, f)]
            gathered = self.agree.gather([len(local)] + flat) if self.rt.exchange.worker_count > 1 else [len(local)] + flat
            times: dict[int, int] = {}
            pos = 0
            while pos < len(gathered):
                m = gathered[pos]
                for q in range(m):
                    t, f = gathered[pos + 1 + 2 * q], gathered[pos + 2 + 2 * q]
                    times[t] = max(times.get(t, 0), f)
                pos += 1 + 2 * m
            for t in sorted(times):
                if self.failed:
                    break
                self._substep(t, [_at_time(b, ts, t) for b, ts in zip(inputs, in_times)],
                              [_at_time(b, ts, t) for b, ts in zip(seeds, seed_times)], bool(times[t]), out)
        self._out = [consolidate(concat(parts, schema=s)) for parts, s in zip(out, self.schemas)]
        self._ctx = ctx
        return self._out


def _negated(b: pa.Table) -> pa.Table:
    from dataflow.batch import negate

    return negate(b) if b.num_rows else b


class LetRecReadOp(Operator):
    """Binding j of a loop, as the body reads it."""

    def __init__(self, loop: LetRecOp, j: int) -> None:
        self.loop, self.j, self.schema = loop, j, loop.schemas[j]

    def step(self, ctx: StepContext) -> pa.Table:
        return self.loop.run(ctx)[self.j]


def render_letrec(plan: LetRec, rt: Runtime, path: str, built: dict, render) -> Operator:
    """The body of `plan`, its reads of the bindings served by one loop operator."""
    loop = LetRecOp(plan, rt, path, built, render)
    bound = dict(built.get("__bound__", {}))
    for j, i in enumerate(plan.ids):
        bound[i] = LetRecReadOp(loop, j)
    saved = built.get("__bound__")
    built["__bound__"] = bound
    try:
        return render(plan.body, rt, f"{path}.body", built)
    finally:
        if saved is None:
            built.pop("__bound__", None)
        else:
            built["__bound__"] = saved
