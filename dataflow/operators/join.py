"""Inner equi-join over two arrangements, by the delta rule.

    d(L ⋈ R) = dL ⋈ R_before  +  (L_before + dL) ⋈ dR

with output time = max(left time, right time) and diff = product. Every pair of updates is joined
exactly once, at the first time both exist, so the output accumulated to any t is exactly
L(t) ⋈ R(t) even when a step holds many distinct times. NULL keys never match.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement, TooManyMatches
from dataflow.batch import DIFF, TIME, hash_columns, make_batch
from dataflow.errors import SqlError, SqlState
from dataflow.operators.base import Operator, Runtime, StepContext


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
        dl = self.rt.shuffle(f"{self.path}/join-left", self.left.step(ctx), self.lk)
        dr = self.rt.shuffle(f"{self.path}/join-right", self.right.step(ctx), self.rk)
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
        parts = [p.rename_columns(self.schema.names).cast(self.schema) for p in parts if p is not None]
        if not parts:
            return self.schema.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
