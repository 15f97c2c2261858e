"""Inner equi-join over two arrangements, by the delta rule (`SharedJoinOp`: one of them an
index's, shared).

    d(L ⋈ R) = dL ⋈ R_before  +  (L_before + dL) ⋈ dR

with output time = max(left time, right time) and diff = product. Every pair of updates is joined
exactly once, at the first time both exist, so the output accumulated to any t is exactly
L(t) ⋈ R(t) even when a step holds many distinct times. NULL keys never match.
"""

from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement, TooManyMatches
from dataflow.batch import DIFF, TIME, as_schema, hash_columns, make_batch
from dataflow.errors import SqlError, SqlState
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.plan import Filter, Project
from dataflow.scalar import compile_expr, compile_predicate, conform


def _drop_null_keys(b: pa.Table, key: tuple[int, ...]) -> pa.Table:
    if b.num_rows == 0:
        return b
    mask = None
    for k in key:
        col = b.column(k)
        if col.null_count:
            v = col.is_valid()
            mask = v if mask is None else pc.and_(mask, v)
    return b if mask is None else b.filter(mask)


def join_delta(delta: pa.Table, delta_key: tuple[int, ...], trace: Arrangement, delta_is_left: bool,
               delta_hashes: np.ndarray | None = None, limit_bytes: int | None = None) -> pa.Table | None:
    """delta ⋈ trace, columns ordered left ++ right. With `limit_bytes`, an output that would be
    larger is refused (53200) before it is built."""
    max_matches = None
    if limit_bytes is not None and delta.num_rows:
        row_bytes = delta.nbytes / delta.num_rows + trace.bytes_per_row()
        max_matches = int(limit_bytes // max(row_bytes, 1.0))
    try:
        pidx, matched = trace.matches(delta, delta_key, nulls_equal=False, probe_hashes=delta_hashes,
                                      max_matches=max_matches)
    except TooManyMatches as e:
        gib = e.count * row_bytes / (1 << 30)
        raise SqlError(SqlState.OUT_OF_MEMORY,
                       f"a join in this query would produce {e.count:,} rows (about {gib:,.1f} GiB) at once, "
                       f"more than the {limit_bytes / (1 << 30):g} GiB one join step may hold",
                       hint="Check the join conditions (a cross product of large inputs is usually a "
                            "missing one), or filter the inputs first.") from None
    if len(pidx) == 0:
        return None
    d = delta.take(pa.array(pidx))
    nd, nm = d.num_columns - 2, matched.num_columns - 2
    dcols = [d.column(i) for i in range(nd)]
    mcols = [matched.column(i) for i in range(nm)]
    cols = dcols + mcols if delta_is_left else mcols + dcols
    time = pc.max_element_wise(d[TIME], matched[TIME])
    diff = pc.multiply(d[DIFF], matched[DIFF])
    return make_batch(cols, time, diff)


class JoinOp(Operator):
    def __init__(self, left: Operator, right: Operator, left_key: tuple[int, ...],
                 right_key: tuple[int, ...], schema: pa.Schema, rt: Runtime, path: str):
        self.left, self.right = left, right
        self.lk, self.rk = tuple(left_key), tuple(right_key)
        self.schema, self.rt, self.path = schema, rt, path
        self.ltrace = Arrangement(self.lk)
        self.rtrace = Arrangement(self.rk)

    def step(self, ctx: StepContext) -> pa.Table:
        dl = self.rt.shuffle_input(f"{self.path}/join-left", self.left, ctx, self.lk)
        dr = self.rt.shuffle_input(f"{self.path}/join-right", self.right, ctx, self.rk)
        return self.rt.guarded(self.schema, lambda: self._apply(dl, dr, ctx.upper))

    def _apply(self, dl: pa.Table, dr: pa.Table, upper: int) -> pa.Table:
        dl, dr = _drop_null_keys(dl, self.lk), _drop_null_keys(dr, self.rk)
        parts = []
        # The delta's key hash serves both the probe of the other side and its own insert.
        if dl.num_rows:
            h = hash_columns(dl, self.lk)
            parts.append(join_delta(dl, self.lk, self.rtrace, True, h, self.rt.step_limit_bytes))
            self.ltrace.insert(dl, h)
        if dr.num_rows:
            h = hash_columns(dr, self.rk)
            parts.append(join_delta(dr, self.rk, self.ltrace, False, h, self.rt.step_limit_bytes))
            self.rtrace.insert(dr, h)
        # Later deltas have times >= upper, so older times may be read as `upper`: max() with a
        # future time is unchanged, and merged batches consolidate.
        self.ltrace.compact(upper)
        self.rtrace.compact(upper)
        parts = [as_schema(p, self.schema) for p in parts if p is not None]
        if not parts:
            return self.schema.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


class ArrangedInput:
    """One join input arranged by one key, read by every join of the dataflow that joins that
    input on that key (the same sub-plan object, after `planner.rules.common_subplans`): one
    exchange, one arrangement and one insert per step instead of one per join.

    Within a step it shows two states: `arrangement`, the input *before* this step, and
    `delta` (shuffled, NULL keys dropped, with its key hashes). The delta joins the arrangement
    at the start of the next step, once every join has read both: a join cannot insert it
    itself, as the other joins must still see the state before it."""

    def __init__(self, input: Operator, key: tuple[int, ...], rt: Runtime, path: str):
        self.input, self.key, self.rt, self.path = input, tuple(key), rt, path
        self.arrangement = Arrangement(self.key)
        self._stepped: weakref.ref | None = None  # (the step: not kept alive by this)
        self._upper = 0
        self.delta: pa.Table | None = None
        self.hashes: np.ndarray | None = None
        self._delta_arrangement: Arrangement | None = None

    def step(self, ctx: StepContext) -> None:
        if self._stepped is not None and self._stepped() is ctx:
            return
        if self.delta is not None and self.delta.num_rows:
            self.arrangement.insert(self.delta, self.hashes)
        self.arrangement.compact(self._upper)
        delta = self.rt.shuffle_input(f"{self.path}/arranged", self.input, ctx, self.key)
        self.delta = _drop_null_keys(delta, self.key)
        self.hashes = hash_columns(self.delta, self.key) if self.delta.num_rows else None
        self._delta_arrangement = None
        self._stepped, self._upper = weakref.ref(ctx), ctx.upper

    def drop_delta_arrangement(self) -> None:
        self._delta_arrangement = None

    def delta_arrangement(self) -> Arrangement:
        """This step's delta as an arrangement, for the delta ⋈ delta term."""
        if self._delta_arrangement is None:
            self._delta_arrangement = Arrangement(self.key)
            if self.delta is not None and self.delta.num_rows:
                self._delta_arrangement.insert(self.delta, self.hashes)
        return self._delta_arrangement


class SharedInputJoinOp(Operator):
    """An inner equi-join whose inputs are `ArrangedInput`s, at least one of them read by
    another join too. Both inputs show their state before this step, so the delta rule takes
    three terms instead of JoinOp's two:

        d(L ⋈ R) = dL ⋈ R_before  +  L_before ⋈ dR  +  dL ⋈ dR

    (JoinOp inserts dL before probing L with dR, which folds the third term into the second.)"""

    def __init__(self, left: ArrangedInput, right: ArrangedInput, schema: pa.Schema, rt: Runtime):
        self.left, self.right, self.schema, self.rt = left, right, schema, rt

    def step(self, ctx: StepContext) -> pa.Table:
        self.left.step(ctx)
        self.right.step(ctx)
        return self.rt.guarded(self.schema, self._apply)

    def _apply(self) -> pa.Table:
        left, right, limit = self.left, self.right, self.rt.step_limit_bytes
        dl, dr = left.delta, right.delta
        parts = []
        if dl.num_rows:
            parts.append(join_delta(dl, left.key, right.arrangement, True, left.hashes, limit))
        if dr.num_rows:
            parts.append(join_delta(dr, right.key, left.arrangement, False, right.hashes, limit))
        if dl.num_rows and dr.num_rows:
            parts.append(join_delta(dl, left.key, right.delta_arrangement(), True, left.hashes, limit))
        parts = [as_schema(p, self.schema) for p in parts if p is not None]
        if not parts:
            return self.schema.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


class SharedJoinOp(Operator):
    """An inner equi-join one side of which is an index this worker already maintains, read in
    place (a *shared arrangement*, as differential dataflow's): that side needs no arrangement
    of its own and no exchange, since the index keeps its rows partitioned by the join key.

    The index has stepped to at least this step's upper (its collection's upper bounds the
    step), so its arrangement holds the shared side *after* this step's delta, and possibly
    later updates, which the time filter drops (a match's time is the later of the two):

        d(O ⋈ S) = dO ⋈ S_after[< upper]  +  O_before ⋈ dS

    `shared` is the shared side's plan output (the index read, under `chain`: projections, filters
    and maps of the index's rows, top first); `shared_key` is its join key in those columns, which
    maps onto the arrangement's key. A match's index row goes through the chain (`SideChain`):
    the side's filters are applied to the rows the join matched, not to the whole index.
    `arrangement` is (the index's arrangement, whether it is still the index's): a read of an index rebuilt meanwhile fails (40001) rather than read the rebuilt
    one's rows, which carry the rebuild's time."""

    def __init__(self, other: Operator, shared: Operator, other_key: tuple[int, ...], shared_key: tuple[int, ...],
                 arrangement: Arrangement, width: int, chain: tuple, shared_is_left: bool,
                 schema: pa.Schema, rt: Runtime, path: str):
        self.other, self.shared = other, shared
        self.width = width  # the index's columns
        self.ok, self.sk = tuple(other_key), tuple(shared_key)
        (self.arrangement, self.current), self.shared_is_left = arrangement, shared_is_left
        self.side = SideChain(chain)
        self.schema, self.rt, self.path = schema, rt, path
        self.otrace = Arrangement(self.ok)

    def step(self, ctx: StepContext) -> pa.Table:
        side = "right" if self.shared_is_left else "left"
        do = self.rt.shuffle_input(f"{self.path}/join-{side}", self.other, ctx, self.ok)
        ds = self.shared.step(ctx)  # (this worker's part of the index: already by key)
        return self.rt.guarded(self.schema, lambda: self._apply(do, ds, ctx.upper))

    def _apply(self, do: pa.Table, ds: pa.Table, upper: int) -> pa.Table:
        if not self.current():
            raise index_rebuilt()
        do, ds = _drop_null_keys(do, self.ok), _drop_null_keys(ds, self.sk)
        parts = []
        if ds.num_rows:  # O_before ⋈ dS: before dO joins the trace
            parts.append(join_delta(ds, self.sk, self.otrace, self.shared_is_left, None, self.rt.step_limit_bytes))
        if do.num_rows:
            h = hash_columns(do, self.ok)
            full = join_delta(do, self.ok, self.arrangement, not self.shared_is_left, h, self.rt.step_limit_bytes)
            if full is not None:
                parts.append(index_matches(full, upper, self.side, self.width, self.shared_is_left))
            self.otrace.insert(do, h)
        self.otrace.compact(upper)
        parts = [as_schema(p, self.schema) for p in parts if p is not None]
        if not parts:
            return self.schema.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def index_matches(full: pa.Table, upper: int, side: "SideChain", width: int, shared_is_left: bool) -> pa.Table:
    """Matches of rows with an index read in place (the index's `width` columns beside the
    other side's): those before `upper` (the index may have stepped further: a match's time is
    the later of the two), with the index's columns put through the shared side's chain."""
    full = full.filter(pc.less(full[TIME], pa.scalar(upper, pa.uint64())))
    n_other = full.num_columns - 2 - width
    cols = [full.column(i) for i in range(full.num_columns - 2)]
    index_cols, other = (cols[:width], cols[width:]) if shared_is_left else (cols[n_other:], cols[:n_other])
    side_cols, rows = side.apply(index_cols, full[TIME], full[DIFF])
    time, diff = full[TIME], full[DIFF]
    if rows is not None:  # (a filter dropped some matches)
        taken = pa.array(rows)
        other, time, diff = [c.take(taken) for c in other], time.take(taken), diff.take(taken)
    return make_batch(side_cols + other if shared_is_left else other + side_cols, time, diff)


def index_rebuilt() -> SqlError:
    return SqlError("40001",  # serialization_failure: clients retry it
                    "could not complete the read: an index it reads was rebuilt meanwhile",
                    hint="Run the query again.")


class SideChain:
    """A join side's projections, filters and maps over an index (`dataflow.plan.through_stateless`),
    applied to index rows a join matched: the side's columns, and which of the given rows
    passed its filters (None: all, in order). Filters narrow the rows one after another, and
    maps see earlier maps' outputs, as `FilterOp` and `MapOp` do."""

    def __init__(self, chain: tuple) -> None:
        self.steps: list[tuple[str, object]] = []
        for node in reversed(chain):
            if isinstance(node, Project):
                self.steps.append(("project", tuple(node.columns)))
            elif isinstance(node, Filter):
                self.steps.append(("filter", [compile_predicate(p) for p in node.predicates]))
            else:
                self.steps.append(("map", [(e.type, compile_expr(e)) for e in node.exprs]))

    def apply(self, cols: list, time, diff) -> tuple[list, np.ndarray | None]:
        rows: np.ndarray | None = None
        for kind, what in self.steps:
            if kind == "project":
                cols = [cols[c] for c in what]  # type: ignore[union-attr]
            elif kind == "filter":
                for predicate in what:  # type: ignore[union-attr]
                    keep = np.flatnonzero(predicate(make_batch(cols, time, diff)))
                    if len(keep) == len(time):
                        continue
                    taken = pa.array(keep)
                    cols, time, diff = [c.take(taken) for c in cols], time.take(taken), diff.take(taken)
                    rows = keep if rows is None else rows[keep]
            else:
                for t, f in what:  # type: ignore[union-attr]
                    cols = cols + [conform(f(make_batch(cols, time, diff)), t)]
        return cols, rows
