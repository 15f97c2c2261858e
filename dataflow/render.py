"""Render a dataflow plan into a tree of operators and step it.

    df = Dataflow(plan, as_of=100, exchange=LocalExchange())
    out = df.step({"u1": snapshot_batch}, upper=101)     # output updates for times < 101
    out = df.step({"u1": more_updates}, upper=105)       # exact output at 101..104

Each plan node becomes one operator; its path in the tree (e.g. `0.1` = root's first child's
second child) names its exchange channels, so all workers agree on them. Every operator runs in
every step, even without input, so every worker makes every shuffle call; except that an
operator whose input collections changed on no worker (the step's `quiet` inputs, which every
worker is told alike) is skipped with its exchanges: a change to orders does not exchange the
unchanged customers side of a join.
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa

from dataflow.arrangement import Arrangement
from dataflow.batch import consolidate
from dataflow.errors import SqlError
from dataflow.exchange import Exchange
from dataflow.operators.base import DEFAULT_STEP_LIMIT_BYTES, Operator, Runtime, StepContext
from dataflow.operators.delta_join import ArrangedSide, DeltaJoinOp, IndexSide, path_inputs
from dataflow.operators.join import ArrangedInput, JoinOp, SharedInputJoinOp, SharedJoinOp
from dataflow.operators.reduce import DistinctOp, ReduceOp, ThresholdOp
from dataflow.operators.flat_map import FlatMapOp
from dataflow.operators.stateless import ConstantOp, FilterOp, GetOp, MapOp, NegateOp, ProjectOp, UnionOp
from dataflow.operators.topk import ArrangeByOp, TopKOp
from dataflow.operators.window import WindowOp
from dataflow.plan import (ArrangeBy, Constant, DeltaJoin, Distinct, Filter, FlatMap, Get, Join, LetRec, Map, Negate, Plan,
                           Project, Reduce, Threshold, TopK, Union_, Window, any_node, children,
                           collections_read, mentions_mz_now, nodes, output_types, passthrough_columns,
                           through_stateless)
from dataflow.types import arrow_schema


class SharedOp(Operator):
    """One operator read by several parents (a subplan the planner reuses, as the two halves of
    an outer join do): computed once per step, its output handed to each reader."""

    def __init__(self, inner: Operator) -> None:
        self.inner, self.schema = inner, inner.schema

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self, ctx: StepContext) -> pa.Table:
        out = ctx.outputs.get(id(self))
        if out is None:
            out = ctx.outputs[id(self)] = self.inner.step(ctx)
        return out


def render(plan: Plan, rt: Runtime, path: str = "0", built: dict[int, Operator] | None = None) -> Operator:
    """Build the operator for `plan` (and, recursively, its inputs). A plan node object that
    appears more than once in the tree becomes one operator shared by its readers."""
    if built is None:
        counts: dict[int, int] = {}
        _count_references(plan, counts)
        built = {"__shared__": {k for k, n in counts.items() if n > 1},  # type: ignore[dict-item]
                 "__arranged__": {}, "__join_sides__": _join_sides(plan),
                 "__reads__": {} if _skips_quiet_inputs(plan) else None}
    key = id(plan)
    if key in built:
        return built[key]
    op = _render_node(plan, rt, path, built)
    if key in built["__shared__"]:  # type: ignore[operator]
        op = SharedOp(op)
    reads = built.get("__reads__")  # (None in plans that step every operator; absent in loops)
    if reads is not None:
        op.reads = _reads(plan, reads)  # type: ignore[arg-type]
    built[key] = op
    return op


def _skips_quiet_inputs(plan: Plan) -> bool:
    """Whether the plan's operators may skip steps in which their inputs did not change: not
    when its output changes as time passes (mz_now()), nor inside recursion (whose loop steps
    its body many times per step; kept simple: the whole plan steps every operator)."""
    return not any_node(plan, lambda p: isinstance(p, LetRec) or mentions_mz_now(p))


def _reads(plan: Plan, memo: dict[int, frozenset[str]]) -> frozenset[str]:
    """The collections `plan` reads (memoised by node: plans are DAGs)."""
    got = memo.get(id(plan))
    if got is None:
        got = frozenset((plan.id,)) if isinstance(plan, Get) else \
            frozenset().union(*(_reads(c, memo) for c in children(plan)))
        memo[id(plan)] = got
    return got


def _join_sides(plan: Plan) -> dict[tuple[int, tuple[int, ...]], int]:
    """How many join inputs are each (sub-plan object, key): two or more share one arrangement
    (`ArrangedInput`). Each node visited once."""
    sides: dict[tuple[int, tuple[int, ...]], int] = {}
    # (not into a loop: it renders its own copies)
    for p in nodes(plan, enter=lambda p: not isinstance(p, LetRec)):
        if isinstance(p, Join) and p.left_key:
            for side, key in ((p.left, p.left_key), (p.right, p.right_key)):
                sides[(id(side), key)] = sides.get((id(side), key), 0) + 1
    return sides


def _arranged(side: Plan, op: Operator, key: tuple[int, ...], rt: Runtime, path: str, built: dict) -> ArrangedInput:
    arranged = built["__arranged__"]
    if (id(side), key) not in arranged:
        arranged[(id(side), key)] = ArrangedInput(op, key, rt, path)
    return arranged[(id(side), key)]


def _count_references(plan: Plan, counts: dict[int, int]) -> None:
    counts[id(plan)] = counts.get(id(plan), 0) + 1
    if counts[id(plan)] > 1:
        return  # its inputs were counted the first time
    for child in children(plan):
        _count_references(child, counts)


def _render_node(plan: Plan, rt: Runtime, path: str, built: dict) -> Operator:
    schema = arrow_schema(list(output_types(plan)))
    sub = lambda p, i: render(p, rt, f"{path}.{i}", built)  # noqa: E731
    if isinstance(plan, Get):
        bound = built.get("__bound__")
        if bound and plan.id in bound:  # a recursive binding, read from its loop
            return bound[plan.id]
        return GetOp(plan.id, schema, rt)
    if isinstance(plan, LetRec):
        from dataflow.operators.iterate import render_letrec
        return render_letrec(plan, rt, path, built, render)
    if isinstance(plan, Constant):
        return ConstantOp(plan.rows, plan.types, schema, rt)
    if isinstance(plan, Map):
        return MapOp(sub(plan.input, 0), plan.exprs, schema, rt)
    if isinstance(plan, Filter):
        return FilterOp(sub(plan.input, 0), plan.predicates, schema, rt)
    if isinstance(plan, Project):
        return ProjectOp(sub(plan.input, 0), plan.columns, schema, rt)
    if isinstance(plan, FlatMap):
        return FlatMapOp(sub(plan.input, 0), plan.func, plan.args, plan.types, plan.ordinality, schema, rt)
    if isinstance(plan, Union_):
        return UnionOp([sub(p, i) for i, p in enumerate(plan.inputs)], schema, rt,
                       cancels=any(isinstance(p, Negate) for p in plan.inputs), path=path)
    if isinstance(plan, Negate):
        return NegateOp(sub(plan.input, 0), schema, rt)
    if isinstance(plan, Join):
        shared = _shared_side(plan, rt)
        if shared is not None:
            shared_is_left, arrangement, width, chain = shared
            left, right = sub(plan.left, 0), sub(plan.right, 1)
            other, side = (right, left) if shared_is_left else (left, right)
            ok, sk = (plan.right_key, plan.left_key) if shared_is_left else (plan.left_key, plan.right_key)
            return SharedJoinOp(other, side, ok, sk, arrangement, width, chain, shared_is_left, schema, rt, path)
        sides = built.get("__join_sides__", {})
        if sides.get((id(plan.left), plan.left_key), 0) > 1 or sides.get((id(plan.right), plan.right_key), 0) > 1:
            # Another join arranges one of these inputs by the same key: share that arrangement.
            left = _arranged(plan.left, sub(plan.left, 0), plan.left_key, rt, f"{path}.0", built)
            right = _arranged(plan.right, sub(plan.right, 1), plan.right_key, rt, f"{path}.1", built)
            return SharedInputJoinOp(left, right, schema, rt)
        return JoinOp(sub(plan.left, 0), sub(plan.right, 1), plan.left_key, plan.right_key, schema, rt, path)
    if isinstance(plan, DeltaJoin):
        return _render_delta_join(plan, [sub(p, i) for i, p in enumerate(plan.inputs)], schema, rt, path, built)
    if isinstance(plan, Reduce):
        return ReduceOp(sub(plan.input, 0), plan.group_key, plan.aggregates, schema, rt, path, plan.monotonic)
    if isinstance(plan, Distinct):
        return DistinctOp(sub(plan.input, 0), len(schema) - 2, schema, rt, path)
    if isinstance(plan, Threshold):
        return ThresholdOp(sub(plan.input, 0), len(schema) - 2, schema, rt, path)
    if isinstance(plan, TopK):
        return TopKOp(sub(plan.input, 0), plan.group_key, plan.order_by, plan.limit, plan.offset,
                      schema, rt, path, plan.monotonic)
    if isinstance(plan, Window):
        return WindowOp(sub(plan.input, 0), plan.partition_key, plan.order_by, plan.funcs, schema, rt, path)
    if isinstance(plan, ArrangeBy):
        return ArrangeByOp(sub(plan.input, 0), plan.key, schema, rt, path)
    raise TypeError(f"unknown plan node {plan!r}")


def _render_delta_join(plan: DeltaJoin, inputs: list[Operator], schema, rt: Runtime, path: str,
                       built: dict) -> DeltaJoinOp:
    """A DeltaJoinOp with one side per (input, key) its paths probe: the index the input reads
    when that key is the index's (`_index_side`), else an ArrangedInput (shared with other
    joins). An input probed by several keys, or also shuffled as a path's source, is stepped
    once for all of them."""
    inputs = [op if isinstance(op, SharedOp) else _shared(op) for op in inputs]
    stream_types: dict[tuple[int, tuple[int, ...]], set] = {}
    for source, stages in enumerate(plan.paths):
        running = [t for i in path_inputs(plan, source) for t in output_types(plan.inputs[i])]
        for stage in stages:
            stream_types.setdefault((stage.input, stage.lookup_key), set()).add(
                tuple(running[c] for c in stage.stream_key))
    sides: dict = {}
    for (i, key), probed_with in stream_types.items():
        index = _index_side(plan.inputs[i], key, probed_with, rt)
        if index is not None:
            arrangement, current, width, chain = index
            sides[(i, key)] = IndexSide(inputs[i], key, arrangement, current, width, chain)
        else:
            # (an input arranged by two keys exchanges on two channels: workers match exchanges
            # by step and channel)
            channel = f"{path}.{i}.by" + "-".join(map(str, key))
            sides[(i, key)] = ArrangedSide(_arranged(plan.inputs[i], inputs[i], key, rt, channel, built))
    return DeltaJoinOp(plan, inputs, sides, schema, rt, path)


def _index_side(input: Plan, key: tuple[int, ...], probed_with: set, rt: Runtime):
    """(arrangement, still current?, index width, the input's chain over the index) when
    `input` reads an index this worker maintains whose key is exactly `key` (columns of the
    index carried unchanged) and every path probes it with keys of the index key's types (so
    both are partitioned alike)."""
    node, chain = through_stateless(input)
    if not isinstance(node, Get) or node.id not in rt.shared:
        return None
    index_key, arrangement, current = rt.shared[node.id]
    columns = passthrough_columns(chain, len(node.types))
    if tuple(columns[k] for k in key) != tuple(index_key):
        return None
    if probed_with != {tuple(node.types[i] for i in index_key)}:
        return None
    return arrangement, current, len(node.types), chain


def _shared(op: Operator) -> SharedOp:
    shared = SharedOp(op)
    shared.reads = op.reads  # (what lets a quiet input skip its exchanges)
    return shared


def _shared_side(plan: Join, rt: Runtime):
    """(shared is the left side, (arrangement, still current?), index width, the side's chain of
    projections, filters and maps over the index, top first) when one side of `plan` reads an
    index this worker maintains and joins on exactly its key (columns of the index carried
    unchanged), with key types equal on both sides (so both are partitioned alike)."""
    if not rt.shared:
        return None
    for shared_is_left in (False, True):
        side, key = (plan.left, plan.left_key) if shared_is_left else (plan.right, plan.right_key)
        other, other_key = (plan.right, plan.right_key) if shared_is_left else (plan.left, plan.left_key)
        other_types = output_types(other)
        found = _index_side(side, key, {tuple(other_types[k] for k in other_key)}, rt)
        if found is not None:
            arrangement, current, width, chain = found
            return shared_is_left, (arrangement, current), width, chain
    return None


class Dataflow:
    """One worker's instance of a dataflow plan. `pause`: called between its operators' pieces
    of local work (see `Runtime.pause`)."""

    def __init__(self, plan: Plan, as_of: int, exchange: Exchange,
                 step_limit_bytes: int = DEFAULT_STEP_LIMIT_BYTES, shared: dict | None = None,
                 pause: Callable[[], None] | None = None) -> None:
        self.plan = plan
        self.as_of = as_of
        self._rt = Runtime(exchange, as_of, step_limit_bytes=step_limit_bytes, shared=shared or {}, pause=pause)
        self.root = render(plan, self._rt)
        self.inputs: set[str] = collections_read(plan)
        self.schema: pa.Schema = self.root.schema
        self._first = True
        self.upper = as_of

    @property
    def errors(self) -> list[SqlError]:
        return self._rt.errors

    def step(self, inputs: dict[str, pa.Table], upper: int, quiet: frozenset[str] = frozenset(),
             whole: dict[str, pa.Table] | None = None) -> pa.Table:
        """Feed each input's updates at times < upper; return this worker's consolidated output
        for times < upper. `quiet`: inputs that changed on no worker since the last step (the
        caller must name the same ones on every worker); operators reading only those skip the
        step. `whole`: inputs whose updates of this step every worker holds whole (named alike
        on every worker; `inputs` holds this worker's part of each)."""
        for id in quiet:
            if id in inputs and inputs[id].num_rows:  # never drop an update
                raise AssertionError(f"input {id} is said unchanged but has {inputs[id].num_rows} updates")
        ctx = StepContext(inputs, upper, self._first, quiet, whole or {})
        self._rt.step_channels.clear()
        out = self.root.step(ctx)
        self._first = False
        self.upper = upper
        # Operators whose output can hold no duplicate (row, time) and no zero diff say so.
        return out if getattr(self.root, "output_consolidated", False) else consolidate(out)

    def arrangement(self) -> Arrangement | None:
        return self.root.arrangement if isinstance(self.root, ArrangeByOp) else None


def evaluate_constant(plan: Plan, as_of: int = 0) -> pa.Table:
    """The result of a plan that reads no collection (a catalog query, `SELECT 1 + 1`), computed
    in this process by one step of a local dataflow: no worker holds anything it needs. Its rows
    are at `as_of`, the query's timestamp (what `mz_now()` reads)."""
    from dataflow.exchange import LocalExchange

    df = Dataflow(plan, as_of, LocalExchange())
    out = df.step({}, upper=as_of + 1)
    if df.errors:
        raise df.errors[0]
    return out
