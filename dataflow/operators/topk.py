"""TopK (ORDER BY ... LIMIT/OFFSET per group) and ArrangeBy.

TopK keeps its input in an Arrangement keyed by the group key. At each distinct time of a step,
the groups touched at that time are recomputed from the arrangement before and after the time's
updates, and the difference is emitted at that time. Ties in the ORDER BY are broken by the
whole row (ascending, NULLs last) so the chosen rows are deterministic.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval
from dataflow.arrangement import Arrangement
from dataflow.batch import DIFF, TIME, advance_times, concat, consolidate, hash_columns, negate
from dataflow.operators.base import Operator, Runtime, StepContext, at_time, check_no_retractions, split_by_time


def _sortable(c) -> list[pa.Array]:
    """Sort keys for a column: an interval by its span ('1 mon' = '30 days', as PostgreSQL
    orders them), then its fields (Arrow cannot sort month_day_nano values)."""
    if c.type != interval.ARROW:
        return [c]
    c = c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
    null = ~interval.valid_mask(c)
    m, d, us = interval.split(c)
    return [pa.array(x, mask=null if null.any() else None) for x in (interval.span_key(c), m, d, us)]


def top_rows(updates: pa.Table, group_key: tuple[int, ...], order_by: tuple[tuple[int, bool, bool], ...],
             limit: int | None, offset: int, time: int) -> pa.Table:
    """The TopK output (rows with multiplicities at `time`) of a set of updates, whole groups."""
    arity = updates.num_columns - 2
    if updates.num_rows == 0:
        return updates
    names = [f"c{i}" for i in range(arity)]
    g = updates.group_by(names, use_threads=False).aggregate([(DIFF, "sum")]) if names else None
    if g is None:
        return updates.slice(0, 0)
    g = g.filter(pc.greater(g[f"{DIFF}_sum"], 0))
    rows = g.select(names)
    counts = g[f"{DIFF}_sum"].to_numpy()
    gh = hash_columns(rows, group_key)
    sort_tbl = {"__g": pa.array(gh)}
    keys = [("__g", "ascending")]
    for j, (col, desc, nulls_last) in enumerate(order_by):
        c = rows.column(col)
        sort_tbl[f"n{j}"] = c.is_null()
        # The null flag sorts first or last independently of the value's direction.
        keys.append((f"n{j}", "ascending" if nulls_last else "descending"))
        if pa.types.is_floating(c.type):
            # NaN is the greatest float in SQL; Arrow puts it last in either direction.
            sort_tbl[f"nan{j}"] = pc.fill_null(pc.is_nan(c), False)
            keys.append((f"nan{j}", "descending" if desc else "ascending"))
        for k, part in enumerate(_sortable(c)):
            sort_tbl[f"o{j}_{k}"] = part
            keys.append((f"o{j}_{k}", "descending" if desc else "ascending"))
    for i in range(arity):
        for k, part in enumerate(_sortable(rows.column(i))):
            sort_tbl[f"t{i}_{k}"] = part
            keys.append((f"t{i}_{k}", "ascending"))
    keys = [(name, direction, "at_end") for name, direction in keys]
    order = pc.sort_indices(pa.table(sort_tbl), sort_keys=keys).to_numpy()
    gs, cs = gh[order], counts[order]
    new_group = np.ones(len(gs), bool)
    new_group[1:] = gs[1:] != gs[:-1]
    cum = np.cumsum(cs)
    group_base = np.maximum.accumulate(np.where(new_group, cum - cs, 0))
    start = cum - cs - group_base
    lo = offset
    hi = np.inf if limit is None else offset + limit
    keep = np.clip(np.minimum(start + cs, hi) - np.maximum(start, lo), 0, None).astype(np.int64)
    nz = keep > 0
    chosen = rows.take(pa.array(order[nz]))
    return at_time(chosen, time, keep[nz])


class TopKOp(Operator):
    """Besides the whole input (for recomputation), TopK with a LIMIT caches each group's
    *prefix*: its first offset+limit rows. Insertions merge into the prefix (O(delta + prefix));
    only a retraction of a row inside the prefix forces that group to be recomputed from the full
    arrangement. So `ORDER BY x LIMIT 10` over a big collection stays cheap per update. Over an
    input planned as never retracting (`monotonic`), the whole input is not kept at all."""

    def __init__(self, input: Operator, group_key, order_by, limit, offset, schema: pa.Schema,
                 rt: Runtime, path: str, monotonic: bool = False):
        self.input, self.schema, self.rt, self.path = input, schema, rt, path
        self.key, self.order_by, self.limit, self.offset = tuple(group_key), tuple(order_by), limit, offset
        # Over an input that never retracts (and with a LIMIT), no group is ever recomputed:
        # the prefixes are all the state there is.
        self.prefix_only = monotonic and limit is not None
        self.trace = Arrangement(self.key)
        self.prefix = Arrangement(self.key)

    def step(self, ctx: StepContext) -> pa.Table:
        delta = self.rt.shuffle_input(f"{self.path}/topk", self.input, ctx, self.key)
        return self.rt.guarded(self.schema, lambda: self._apply(delta, ctx.upper))

    def _top(self, updates: pa.Table, limit: int | None, offset: int, time: int) -> pa.Table:
        if updates.num_rows == 0:
            return self.schema.empty_table()
        return top_rows(updates, self.key, self.order_by, limit, offset, time).cast(self.schema)

    def _apply(self, delta: pa.Table, upper: int) -> pa.Table:
        if self.prefix_only:
            check_no_retractions(delta)
        out = []
        for time, sub in split_by_time(delta):
            if self.limit is None:
                before = self._top(self.trace.lookup(sub, self.key), None, self.offset, time)
                self.trace.insert(sub)
                after = self._top(self.trace.lookup(sub, self.key), None, self.offset, time)
            else:
                before, after = self._with_prefix(time, sub)
            parts = [p for p in (after, negate(before)) if p.num_rows]
            if parts:
                out.append(consolidate(pa.concat_tables(parts)))
        self.trace.compact(upper)
        self.prefix.compact(upper)
        return concat(out, schema=self.schema)

    def _with_prefix(self, time: int, sub: pa.Table) -> tuple[pa.Table, pa.Table]:
        k = self.offset + self.limit
        arity = sub.num_columns - 2
        net = consolidate(advance_times(sub, time))
        old_p = self._top(self.prefix.lookup(net, self.key), k, 0, time)
        if not self.prefix_only:
            self.trace.insert(sub)
        # Groups where a row of the prefix is retracted must be recomputed from scratch.
        neg = net.filter(pc.less(net[DIFF], 0))
        redo = np.zeros(0, np.uint64)
        if neg.num_rows and old_p.num_rows:
            all_cols = list(range(arity))
            hit = np.isin(hash_columns(neg, all_cols), hash_columns(old_p, all_cols))
            if hit.any():
                redo = np.unique(hash_columns(neg.filter(pa.array(hit)), self.key))
        net_redo = np.isin(hash_columns(net, self.key), redo)
        p_redo = np.isin(hash_columns(old_p, self.key), redo)
        positive = pc.greater(net[DIFF], 0).to_numpy(zero_copy_only=False)
        cand = concat([old_p.filter(pa.array(~p_redo)), net.filter(pa.array(~net_redo & positive)).cast(self.schema)],
                      schema=self.schema)
        parts = [self._top(cand, k, 0, time)]
        if net_redo.any():
            parts.append(self._top(self.trace.lookup(net.filter(pa.array(net_redo)), self.key), k, 0, time))
        new_p = concat(parts, schema=self.schema)
        change = consolidate(concat([new_p, negate(old_p)], schema=self.schema))
        self.prefix.insert(change)
        before = self._top(old_p, self.limit, self.offset, time)
        after = self._top(new_p, self.limit, self.offset, time)
        return before, after


class ArrangeByOp(Operator):
    """Maintains an index of its input by `key` and passes the updates through. The index is not
    compacted automatically: the runtime calls `arrangement.compact(since)` as reads allow."""

    def __init__(self, input: Operator, key: tuple[int, ...], schema: pa.Schema, rt: Runtime, path: str):
        self.input, self.key, self.schema, self.rt, self.path = input, tuple(key), schema, rt, path
        self.arrangement = Arrangement(self.key)

    def step(self, ctx: StepContext) -> pa.Table:
        delta = self.rt.shuffle_input(f"{self.path}/arrange", self.input, ctx, self.key)
        self.arrangement.insert(delta)
        return delta


__all__ = ["TopKOp", "ArrangeByOp", "top_rows", "TIME"]
