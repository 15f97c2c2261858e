"""Temporal filters: predicates that compare `mz_now()` with an expression of the row.

As in Materialize, `WHERE mz_now() <= created_at + 30000` is not evaluated once: a row is in the
result during the interval of logical times where its temporal predicates hold. An update
`(row, t, d)` with validity `[lower, upper)` becomes `(row, max(t, lower), +d)` and, if `upper`
is finite, `(row, upper, -d)`; both may lie in the future, so they are held until the step whose
frontier passes them.

Forms recognised (either side may be `mz_now()`; `and` conjunctions are flattened):
  mz_now() >= e  -> lower = e        mz_now() > e  -> lower = e + 1
  mz_now() <= e  -> upper = e + 1    mz_now() < e  -> upper = e
  mz_now() =  e  -> [e, e + 1)
`e` must not mention mz_now(); it is read as int8 milliseconds (timestamps and dates are
converted to milliseconds since the epoch). A NULL bound means the predicate is never true.

Example: `mz_now() <= c0 + 10` on (c0=5) inserted at time 3 gives +1 at 3 and -1 at 16.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import DIFF, TIME, concat, make_batch
from dataflow.expr import Call, Cast, If, ScalarExpr
from dataflow.scalar import compile_expr

_FLIP = {"lt": "gt", "lte": "gte", "gt": "lt", "gte": "lte", "eq": "eq"}


def mentions_mz_now(e: ScalarExpr) -> bool:
    if isinstance(e, Call):
        return e.func == "mz_now" or any(mentions_mz_now(a) for a in e.args)
    if isinstance(e, Cast):
        return mentions_mz_now(e.arg)
    if isinstance(e, If):
        return mentions_mz_now(e.cond) or mentions_mz_now(e.then) or mentions_mz_now(e.els)
    return False


def _is_now(e: ScalarExpr) -> bool:
    while isinstance(e, Cast):
        e = e.arg
    return isinstance(e, Call) and e.func == "mz_now"


@dataclass(frozen=True)
class Bound:
    op: str            # comparison with mz_now() on the left: lt lte gt gte eq
    expr: ScalarExpr


def split_temporal(predicates: tuple[ScalarExpr, ...]) -> tuple[list[ScalarExpr], list[Bound]]:
    """(ordinary predicates, temporal bounds). A predicate that mentions mz_now() in a form we
    cannot turn into bounds stays ordinary (mz_now() then reads as the update's own time)."""
    plain: list[ScalarExpr] = []
    bounds: list[Bound] = []
    stack = list(predicates)
    while stack:
        p = stack.pop(0)
        if isinstance(p, Call) and p.func == "and" and mentions_mz_now(p):
            stack[0:0] = list(p.args)
            continue
        if isinstance(p, Call) and p.func in _FLIP and len(p.args) == 2:
            a, b = p.args
            if _is_now(a) and not mentions_mz_now(b):
                bounds.append(Bound(p.func, b))
                continue
            if _is_now(b) and not mentions_mz_now(a):
                bounds.append(Bound(_FLIP[p.func], a))
                continue
        plain.append(p)
    return plain, bounds


def _as_millis(arr: pa.Array) -> pa.Array:
    t = arr.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return arr.cast(pa.timestamp("ms", tz=getattr(t, "tz", None))).view(pa.int64())
    return arr.cast(pa.int64())


class TemporalFilter:
    """Turns updates into validity-interval updates and holds back the future ones."""

    def __init__(self, bounds: list[Bound], schema: pa.Schema) -> None:
        self.bounds = [(b.op, compile_expr(b.expr)) for b in bounds]
        self.schema = schema
        self.pending = schema.empty_table()

    def apply(self, batch: pa.Table, upper: int) -> pa.Table:
        fresh = self._intervals(batch) if batch.num_rows else None
        everything = concat([t for t in (self.pending, fresh) if t is not None], schema=self.schema)
        if everything.num_rows == 0:
            return everything
        now = pc.less(everything[TIME], pa.scalar(upper, pa.uint64()))
        self.pending = everything.filter(pc.invert(now))
        return everything.filter(now)

    def _intervals(self, batch: pa.Table) -> pa.Table:
        n = batch.num_rows
        lower = batch[TIME].to_numpy().astype(np.int64)
        upper = np.full(n, np.iinfo(np.int64).max, np.int64)
        alive = np.ones(n, bool)
        for op, f in self.bounds:
            v = _as_millis(f(batch))
            alive &= v.is_valid().to_numpy(zero_copy_only=False) if v.null_count else True
            x = pc.fill_null(v, 0).to_numpy()
            if op in ("gte", "eq"):
                lower = np.maximum(lower, x)
            if op == "gt":
                lower = np.maximum(lower, x + 1)
            if op in ("lte", "eq"):
                upper = np.minimum(upper, x + 1)
            if op == "lt":
                upper = np.minimum(upper, x)
        alive &= lower < upper
        keep = pa.array(alive)
        rows = batch.filter(keep)
        lo, hi = lower[alive], upper[alive]
        diff = rows[DIFF]
        cols = [rows.column(i) for i in range(rows.num_columns - 2)]
        starts = make_batch(cols, pa.array(lo.astype(np.uint64)), diff)
        finite = hi < np.iinfo(np.int64).max
        if not finite.any():
            return starts.cast(self.schema)
        fm = pa.array(finite)
        ends = make_batch([c.filter(fm) for c in cols], pa.array(hi[finite].astype(np.uint64)),
                          pc.negate(diff.filter(fm)))
        return pa.concat_tables([starts.cast(self.schema), ends.cast(self.schema)])
