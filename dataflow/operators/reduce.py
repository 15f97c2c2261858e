"""Reduce (GROUP BY with aggregates) and Distinct.

State lives per group *slot* (see KeyIndex):
  * every group: the accumulated row count (a group with count 0 has no output row);
  * count/sum/avg: NumPy accumulators (non-null counts; float sums, or exact sums of unscaled
    integers as Python ints for integer and numeric inputs), updated with `np.add.reduceat`;
  * min/max: the multiset of (slot, value) in an Arrangement, from which the touched groups are
    recomputed when a retraction reaches the extremum (retractions make min/max non-invertible);
  * bool_and/bool_or, the variance family, string_agg, bit_and/bit_or/bit_xor, corr/covar_*/
    regr_* and the ordered-set aggregates (percentile_cont, percentile_disc, mode): see
    `reduce_aggs`;
  * DISTINCT: per (group, value) multiplicities; only 0 <-> positive transitions reach the
    aggregate's own state (`_Distinct`).

Every state has `grow(size)`, `update(seg, slots, args, diff, time)` (args: the aggregate's
inputs evaluated over the time's rows, `AggregateExpr.inputs()` order), `result(slots, counts)`
and `compact(upper)`.

A step is processed time by time in ascending order (a loop over distinct *times*). At each time
the touched groups' old output is computed, the time's updates applied, the new output computed,
and for every group that changed a retraction of the old row and an insertion of the new one
are emitted at that time.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement
from dataflow.batch import DIFF, SMALL_BATCH, as_schema, concat
from dataflow.decimal_util import (check_exact_rescale, check_unconstrained_range, div_round, from_unscaled,
                                   i64_scaled_to_decimal, rescale, scale_of, to_unscaled, to_unscaled_i64)
from dataflow.errors import SqlError, SqlState
from dataflow.expr import AggregateExpr
from dataflow.float_sum import ExactFloatSums
from dataflow.numeric_scale import avg_quotients
from dataflow.operators.base import Operator, Runtime, StepContext, at_time, check_no_retractions, split_by_time
from dataflow.operators.keyindex import KeyIndex
from dataflow.operators.reduce_aggs import (MOMENTS, ORDERED_SET, REGRESSION, _Bits, _Bools, _grow, _Moments,
                                            _OrderedSet, _Regression, _StringAgg)
from dataflow.scalar import compile_expr, conform
from dataflow.types import TypeKind


# Steps with at least this many rows (hydration) group by counting over the dense slot numbers
# (np.bincount, O(n + slots)) instead of sorting the slots (O(n log n)).
DENSE_MIN_ROWS = 4096


class _Segments:
    """The rows of one time grouped by slot: the touched slots and per-slot sums.

    Small steps sort the slots (segment starts for np.add.reduceat). Big steps over a dense slot
    range count instead: `np.bincount` finds the touched slots and sums integers exactly while
    every partial sum stays below 2**53 (float64 weights); the sort is made only if needed."""

    def __init__(self, slots: np.ndarray, size: int | None = None) -> None:
        self.slots = slots
        self._order: np.ndarray | None = None
        self.size = size
        if size is not None and len(slots) >= DENSE_MIN_ROWS and size <= 2 * len(slots):
            self.touched = np.flatnonzero(np.bincount(slots, minlength=size))
        else:
            self.size = None
            self._sort()

    def _sort(self) -> None:
        # Any order within a segment will do (sums, one representative row): quicksort is faster.
        self._order = np.argsort(self.slots)
        s = self.slots[self._order]
        self.touched, self.starts = np.unique(s, return_index=True)

    @property
    def order(self) -> np.ndarray:
        if self._order is None:
            self._sort()
        return self._order

    def sum(self, values: np.ndarray) -> np.ndarray:
        if self.size is not None and values.dtype.kind in "iu" and len(values):
            big = max(-int(values.min()), int(values.max()))
            if big * len(values) < 2 ** 53:  # every partial sum is exact in float64
                return np.bincount(self.slots, weights=values, minlength=self.size)[self.touched].astype(np.int64)
        order = self.order
        with np.errstate(over="ignore", invalid="ignore"):  # float sums: inf is checked by the caller
            return np.add.reduceat(values[order], self.starts) if len(self.starts) else values[:0]


def _unconstrained(agg: AggregateExpr) -> bool:
    """Whether the aggregate's argument is unconstrained numeric (its values show their digits
    without trailing zeros: see dataflow/numeric_scale.py)."""
    return agg.arg is not None and agg.arg.type.kind is TypeKind.NUMERIC and agg.arg.type.scale is None


class _Accumulating:
    """count / sum / avg without DISTINCT: per-slot accumulators."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.nn = np.zeros(0, np.int64)
        self.float = agg.arg is not None and agg.func in ("sum", "avg") and (
            agg.type.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8))
        # Exact sums: int64 while the sum of |contributions| ever applied stays below 2**62
        # (then no partial sum can overflow), Python ints (object) after that.
        self.sums = np.zeros(0, np.int64)
        # Float sums are exact too (ExactFloatSums: a float64 running sum is not invertible,
        # +1e20, +1, -1e20 would leave 0). +Infinity, -Infinity, NaN and -0 inputs are counted
        # apart from the finite sum (inf - inf would turn the sum into NaN for good once an
        # infinity is retracted; a sum of only -0 is -0, as PostgreSQL's float8pl gives).
        self.exact = ExactFloatSums() if self.float else None
        self.specials = np.zeros((0, 4), np.int64)
        self.bound = 0.0
        self.in_scale = 0

    def grow(self, size: int) -> None:
        self.nn = _grow(self.nn, size)
        if self.float:
            self.exact.grow(size)
            if len(self.specials) < size:
                self.specials = np.concatenate([self.specials, np.zeros((size - len(self.specials), 4), np.int64)])
        else:
            self.sums = _grow(self.sums, size)

    def update(self, seg: _Segments, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        self.apply(seg, args[0] if args else None, diff)

    def compact(self, upper: int) -> None:
        pass

    def apply(self, seg: _Segments, values: pa.Array | None, diff: np.ndarray) -> None:
        t = seg.touched
        if values is None:
            return
        valid = values.is_valid().to_numpy(zero_copy_only=False) if values.null_count else np.ones(len(diff), bool)
        self.nn[t] += seg.sum(np.where(valid, diff, 0))
        if self.agg.func == "count":
            return
        if self.float:
            v = pc.fill_null(values.cast(pa.float64()), 0.0).to_numpy()
            finite = np.isfinite(v)
            if not finite.all():
                for k, mask in enumerate((v == np.inf, v == -np.inf, np.isnan(v))):
                    self.specials[t, k] += seg.sum(np.where(mask, diff, 0))
                v = np.where(finite, v, 0.0)
            negzero = (v == 0) & np.signbit(v) & valid
            if negzero.any():
                self.specials[t, 3] += seg.sum(np.where(negzero, diff, 0))
            self.exact.add(seg.slots, v, diff)
        else:
            self.in_scale = scale_of(values.type)
            if self.sums.dtype != object:
                fast = to_unscaled_i64(values)
                if fast is not None:
                    v = fast[0]
                    step_bound = float(np.abs(v.astype(np.float64) * diff).sum())
                    if self.bound + step_bound < 2.0 ** 62:
                        self.bound += step_bound
                        self.sums[t] += seg.sum(v * diff)
                        return
                self.sums = self.sums.astype(object)  # exact from here on
            v, _ = to_unscaled(values)
            self.sums[t] += seg.sum(v * diff)

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        agg, out = self.agg, self.agg.type
        if agg.func == "count_star":
            return pa.array(counts[slots], pa.int64())
        nn = self.nn[slots]
        if agg.func == "count":
            return pa.array(nn, pa.int64())
        valid = nn > 0
        sums = self.exact.result(slots) if self.float else self.sums[slots]
        if (agg.func == "sum" and out.kind is TypeKind.NUMERIC and sums.dtype == np.int64
                and 0 <= out.effective_scale - self.in_scale <= 18):
            # The common sum(int) -> numeric: widen to 128 bits in NumPy, no Python ints.
            return i64_scaled_to_decimal(sums, valid, out.effective_scale - self.in_scale, out.effective_scale)
        if not self.float and sums.dtype != object:
            sums = sums.astype(object)  # rescaling may leave int64: only the touched groups
        if self.float:
            if np.isinf(sums[valid]).any():
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
            pos, neg, nan, negzero = self.specials[slots].T if len(slots) else (np.zeros(0),) * 4
            if agg.func == "sum":  # avg adds to 0.0 in PostgreSQL, so its -0 is 0
                sums = np.where(valid & (negzero == nn), -0.0, sums)
            sums = np.where(pos > 0, np.inf, sums)
            sums = np.where(neg > 0, -np.inf, sums)
            sums = np.where((nan > 0) | ((pos > 0) & (neg > 0)), np.nan, sums)
            vals = sums / np.where(valid, nn, 1) if agg.func == "avg" else sums
            out_arr = pc.if_else(pa.array(valid), pa.array(vals, pa.float64()), None)
            if out.kind is TypeKind.FLOAT4 and np.isinf(vals[valid & np.isfinite(sums)].astype(np.float32)).any():
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
            return out_arr.cast(out.arrow)
        if agg.func == "avg":
            s_out = out.effective_scale if out.kind is TypeKind.NUMERIC else 0
            num = rescale(sums, self.in_scale, s_out + 0)
            res = div_round(num, np.where(valid, nn, 1).astype(object)) if len(num) else num
            if out.kind is TypeKind.NUMERIC:
                if out.scale is None:
                    res = avg_quotients(res, valid, sums, self.in_scale, nn, s_out, _unconstrained(self.agg))
                return from_unscaled(res, valid, s_out)
            return pc.if_else(pa.array(valid), pa.array(res.astype(np.float64)), None).cast(out.arrow)
        # sum
        if out.is_integer:
            info = np.iinfo(out.arrow.to_pandas_dtype())
            whole = rescale(sums, self.in_scale, 0)
            if len(whole) and ((whole < info.min) | (whole > info.max)).any():
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE,
                               f"{'bigint' if out.kind is TypeKind.INT8 else 'integer'} out of range")
            arr = pa.array(np.where(valid, whole, 0).astype(np.int64))
            return pc.if_else(pa.array(valid), arr, None).cast(out.arrow)
        if out.kind is TypeKind.NUMERIC:
            if out.scale is None:  # the exact sum must fit unconstrained numeric: refused, not rounded
                check_exact_rescale(np.where(valid, sums, 0), self.in_scale, out.effective_scale)
                check_unconstrained_range(sums, valid, self.in_scale)
            return from_unscaled(rescale(sums, self.in_scale, out.effective_scale), valid, out.effective_scale)
        return pc.if_else(pa.array(valid), pa.array(sums.astype(np.float64)), None).cast(out.arrow)


class _Distinct:
    """agg(DISTINCT x) for the accumulating aggregates (count, sum, avg, the variance family):
    a value counts once while its multiplicity in the group is positive, so the per-(group,
    value) counts are kept and only 0 <-> positive transitions are fed to the aggregate's own
    state (O(delta) per time)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.pairs = KeyIndex(2)
        self.pair_counts = np.zeros(0, np.int64)

    def grow(self, size: int) -> None:
        self.inner.grow(size)

    def compact(self, upper: int) -> None:
        pass

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        return self.inner.result(slots, counts)

    def update(self, seg: _Segments, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        values = args[0]
        if values.null_count:
            valid = values.is_valid()
            slots, values, diff = slots[valid.to_numpy(zero_copy_only=False)], values.filter(valid), diff[
                valid.to_numpy(zero_copy_only=False)]
        if not len(slots):
            return
        p = self.pairs.slots_for(pa.table({"s": pa.array(slots), "v": values}))
        self.pair_counts = _grow(self.pair_counts, self.pairs.size)
        pseg = _Segments(p)
        tp = pseg.touched
        before = self.pair_counts[tp] > 0
        self.pair_counts[tp] += pseg.sum(diff)
        change = (self.pair_counts[tp] > 0).astype(np.int64) - before.astype(np.int64)
        nz = change != 0
        if not nz.any():
            return
        rep = pseg.order[pseg.starts][nz]  # one row per changed (group, value) pair
        self.inner.apply(_Segments(slots[rep]), values.take(pa.array(rep)), change[nz])


class _FromMultiset:
    """min / max / any DISTINCT aggregate: recomputed for touched groups from the (slot, value)
    multiset, which is kept in an Arrangement keyed by slot."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.trace = Arrangement(key=(0,))

    def grow(self, size: int) -> None:
        pass

    def update(self, seg: _Segments, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        self.insert(slots, args[0], diff, time)

    def compact(self, upper: int) -> None:
        self.trace.compact(upper)

    def insert(self, slots: np.ndarray, values: pa.Array, diff: np.ndarray, time: int) -> None:
        valid = values.is_valid()
        t = pa.table({"c0": pa.array(slots, pa.int64()), "c1": values,
                      "time": pa.array(np.full(len(slots), time, np.uint64)), "diff": pa.array(diff)})
        self.trace.insert(t.filter(valid) if values.null_count else t)

    def result(self, touched: np.ndarray, counts: np.ndarray | None = None) -> pa.Array:
        agg, out = self.agg, self.agg.type
        probe = pa.table({"c0": pa.array(touched, pa.int64())})
        ups = self.trace.lookup(probe, (0,))
        n = len(touched)
        if ups.num_rows:
            g = ups.group_by(["c0", "c1"], use_threads=False).aggregate([("diff", "sum")])
            g = g.filter(pc.greater(g["diff_sum"], 0))
        if not ups.num_rows or not g.num_rows:
            if agg.func in ("count",):
                return pa.array(np.zeros(n, np.int64))
            return pa.nulls(n, out.arrow)
        func = {"min": "min", "max": "max", "count": "count", "sum": "sum", "avg": "sum"}[agg.func]
        values = g["c1"]
        if agg.func in ("sum", "avg") and pa.types.is_integer(values.type):
            values = values.cast(pa.decimal128(38, 0))
        gt = pa.table({"slot": g["c0"], "v": values})
        if agg.func == "avg":
            r = gt.group_by("slot", use_threads=False).aggregate([("v", "sum"), ("v", "count")])
        else:
            r = gt.group_by("slot", use_threads=False).aggregate([("v", func)])
        rs = r["slot"].to_numpy()
        order = np.argsort(rs)
        pos = np.searchsorted(rs[order], touched)
        posc = np.minimum(pos, len(rs) - 1)
        present = rs[order][posc] == touched
        take = pa.array(order[posc])
        if agg.func == "avg":
            sums = r["v_sum"].combine_chunks().take(take)
            cnt = r["v_count"].combine_chunks().take(take).to_numpy()
            if pa.types.is_floating(sums.type):
                res = pa.array(sums.to_numpy(zero_copy_only=False) / np.maximum(cnt, 1))
            else:
                s_out = out.effective_scale
                v, _ = to_unscaled(sums)
                q = div_round(rescale(v, scale_of(sums.type), s_out), np.maximum(cnt, 1).astype(object))
                if out.scale is None:
                    q = avg_quotients(q, present & (cnt > 0), v, scale_of(sums.type), cnt, s_out, _unconstrained(agg))
                res = from_unscaled(q, present, s_out)
        else:
            res = r[f"v_{func}"].combine_chunks()
            if func in ("min", "max") and pa.types.is_floating(res.type):
                res = _nan_extremum(gt, r, func)
            res = res.take(take)
        res = conform(res, out)
        fill = pa.scalar(0, out.arrow) if agg.func == "count" else pa.scalar(None, out.arrow)
        return pc.if_else(pa.array(present), res, fill)


def _nan_extremum(values: pa.Table, grouped: pa.Table, func: str) -> pa.Array:
    """`grouped`'s min/max column (groups of `values` by "slot", in `grouped`'s order) with NaN
    counted as PostgreSQL counts it, greater than every number: Arrow's min/max skip NaN. A
    group's max is NaN if it has one; its min only if it has nothing else."""
    v = values["v"]
    nan = pc.fill_null(pc.is_nan(v), False)
    flags = pa.table({"slot": values["slot"], "nan": nan, "num": pc.invert(nan)}).group_by(
        "slot", use_threads=False).aggregate([("nan", "any"), ("num", "any")])
    order = np.argsort(flags["slot"].to_numpy())
    pos = order[np.searchsorted(flags["slot"].to_numpy()[order], grouped["slot"].to_numpy())]
    any_nan = flags["nan_any"].to_numpy(zero_copy_only=False)[pos]
    any_num = flags["num_any"].to_numpy(zero_copy_only=False)[pos]
    is_nan = any_nan if func == "max" else any_nan & ~any_num
    res = grouped[f"v_{func}"].combine_chunks()
    return pc.if_else(pa.array(is_nan), pa.scalar(float("nan"), res.type), res)


def _objects(arr: pa.Array) -> np.ndarray:
    """Non-null Arrow values as a NumPy object array of Python values."""
    if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        return arr.to_numpy(zero_copy_only=False).astype(object)
    return np.array(arr.to_pylist() + [None], dtype=object)[:-1]  # the None keeps it 1-D


class _MinMax(_FromMultiset):
    """min/max with a per-slot cache of the current extremum: insertions update it with a
    vectorised comparison; only a retraction that reaches the extremum forces the group to be
    recomputed from the multiset. So a big group costs O(delta), not O(group), per time."""

    def __init__(self, agg: AggregateExpr, monotonic: bool = False) -> None:
        super().__init__(agg)
        self.monotonic = monotonic  # no retraction can come: the multiset is never needed
        self.cache = np.empty(0, object)      # extremum per slot; None = group has no values
        self.known = np.zeros(0, bool)
        self.value_type: pa.DataType | None = None

    def grow(self, size: int) -> None:
        if len(self.known) < size:
            n = max(size, 2 * len(self.known)) - len(self.known)
            self.cache = np.concatenate([self.cache, np.full(n, None, object)])
            # A slot never seen before has no values: its (empty) extremum is known.
            self.known = np.concatenate([self.known, np.ones(n, bool)])

    def _better(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a strictly before b in the aggregate's direction; NaN is the greatest float."""
        if self.value_type is not None and pa.types.is_floating(self.value_type):
            a, b = a.astype(np.float64), b.astype(np.float64)
            na, nb = np.isnan(a), np.isnan(b)
            with np.errstate(invalid="ignore"):
                return (a < b) | (nb & ~na) if self.agg.func == "min" else (a > b) | (na & ~nb)
        return (a < b) if self.agg.func == "min" else (a > b)

    def insert(self, slots: np.ndarray, values: pa.Array, diff: np.ndarray, time: int) -> None:
        if self.value_type is None:
            self.value_type = values.type
        valid = values.is_valid().to_numpy(zero_copy_only=False) if values.null_count else np.ones(len(slots), bool)
        if valid.any():
            # Net change per (slot, value) at this time: +3 and -3 at one time cancel out.
            net = pa.table({"s": pa.array(slots[valid]), "v": values.filter(pa.array(valid)),
                            "d": pa.array(diff[valid])}).group_by(["s", "v"], use_threads=False).aggregate(
                [("d", "sum")])
            d = net["d_sum"].to_numpy()
            s_all = net["s"].to_numpy()
            pos, neg = d > 0, d < 0
            if pos.any():
                added = net.filter(pa.array(pos))
                g = added.group_by("s", use_threads=False).aggregate([("v", self.agg.func)])
                best = g[f"v_{self.agg.func}"].combine_chunks()
                if pa.types.is_floating(best.type):
                    best = _nan_extremum(pa.table({"slot": added["s"], "v": added["v"]}),
                                         pa.table({"slot": g["s"], f"v_{self.agg.func}": best}), self.agg.func)
                gs, gv = g["s"].to_numpy(), _objects(best)
                k = self.known[gs]
                gs, gv = gs[k], gv[k]
                cur = self.cache[gs]
                empty = np.array([c is None for c in cur], bool) if len(cur) else np.zeros(0, bool)
                safe_cur = np.where(empty, gv, cur)
                take_new = empty | self._better(gv, safe_cur).astype(bool)
                self.cache[gs[take_new]] = gv[take_new]
            if neg.any():
                rs, rv = s_all[neg], _objects(net["v"].combine_chunks().filter(pa.array(neg)))
                cur = self.cache[rs]
                has = self.known[rs] & np.array([c is not None for c in cur], bool)
                safe_cur = np.where(has, cur, rv)
                # A retraction at or beyond the extremum may remove it: recompute that group.
                hit = has & ~self._better(safe_cur, rv).astype(bool)
                self.known[rs[hit]] = False
        if not self.monotonic:
            super().insert(slots, values, diff, time)

    def result(self, touched: np.ndarray, counts: np.ndarray | None = None) -> pa.Array:
        unknown = ~self.known[touched]
        if unknown.any():
            slots = np.unique(touched[unknown])
            fresh = super().result(slots)
            self.cache[slots] = np.array(fresh.to_pylist() + [None], dtype=object)[:-1]
            self.known[slots] = True
        vt = self.value_type or self.agg.type.arrow
        return conform(pa.array(self.cache[touched], type=vt), self.agg.type)


def _state_for(agg: AggregateExpr, monotonic: bool = False):
    if agg.func in ("min", "max"):
        return _MinMax(agg, monotonic)
    if agg.func == "string_agg":
        return _StringAgg(agg)
    if agg.func in ("bool_and", "bool_or"):
        return _Bools(agg)  # DISTINCT changes nothing
    if agg.func in REGRESSION:
        return _Regression(agg)  # (the planner refuses DISTINCT)
    if agg.func in ORDERED_SET:
        return _OrderedSet(agg)
    if agg.func in ("bit_and", "bit_or", "bit_xor"):
        return _Distinct(_Bits(agg)) if agg.distinct and agg.func == "bit_xor" else _Bits(agg)
    inner = _Moments(agg) if agg.func in MOMENTS else _Accumulating(agg)
    return _Distinct(inner) if agg.distinct and agg.func != "count_star" else inner


class ReduceOp(Operator):
    # Per time, each changed group emits one retraction of its old row and one insertion of a
    # different new row, and groups have distinct keys: the output is already consolidated.
    output_consolidated = True

    def __init__(self, input: Operator, group_key: tuple[int, ...], aggregates: tuple[AggregateExpr, ...],
                 schema: pa.Schema, rt: Runtime, path: str, monotonic: bool = False):
        self.input, self.key, self.aggs = input, tuple(group_key), tuple(aggregates)
        self.schema, self.rt, self.path = schema, rt, path
        self.monotonic = monotonic  # planned over an input that never retracts
        self.index = KeyIndex(len(self.key))
        self.counts = np.zeros(0, np.int64)
        self.arg_fns = [[compile_expr(e) for e in a.inputs()] for a in self.aggs]
        self.states = [_state_for(a, monotonic) for a in self.aggs]

    def step(self, ctx: StepContext) -> pa.Table:
        delta = self.rt.shuffle_input(f"{self.path}/reduce", self.input, ctx, self.key)
        return self.rt.guarded(self.schema, lambda: self._apply(delta, ctx.upper))

    def _outputs(self, touched: np.ndarray) -> tuple[list[pa.Array], np.ndarray]:
        exists = self.counts[touched] > 0
        cols = []
        for st in self.states:
            cols.append(st.result(touched, self.counts))
        return cols, exists

    def _apply(self, delta: pa.Table, upper: int) -> pa.Table:
        if self.monotonic:
            check_no_retractions(delta)
        out = []
        for time, sub in split_by_time(delta):
            args = [[f(sub) for f in fns] for fns in self.arg_fns]
            slots = self.index.slots_for(sub.select([sub.column_names[k] for k in self.key]))
            self.counts = _grow(self.counts, self.index.size)
            for st in self.states:
                st.grow(self.index.size)
            seg = _Segments(slots, self.index.size)
            touched = seg.touched
            old_cols, old_exists = self._outputs(touched)
            diff = sub[DIFF].to_numpy()
            self.counts[touched] += seg.sum(diff)
            for st, a in zip(self.states, args):
                st.update(seg, slots, a, diff, time)
            new_cols, new_exists = self._outputs(touched)
            out.extend(self._emit(touched, time, old_cols, old_exists, new_cols, new_exists))
        for st in self.states:
            st.compact(upper)
        return concat(out, schema=self.schema)

    def _emit(self, touched, time, old_cols, old_exists, new_cols, new_exists) -> list[pa.Table]:
        if len(touched) <= SMALL_BATCH:
            return self._emit_small(touched, time, old_cols, old_exists, new_cols, new_exists)
        changed = np.zeros(len(touched), bool)
        for a, b in zip(old_cols, new_cols):
            same = pc.if_else(pc.and_(a.is_null(), b.is_null()), True, pc.equal(a, b))
            if pa.types.is_floating(a.type):  # NaN stays NaN: unchanged (no -row +row pair)
                same = pc.or_(same, pc.and_(pc.is_nan(a), pc.is_nan(b)))
            changed |= ~pc.fill_null(same, False).to_numpy(zero_copy_only=False)
        retract = old_exists & (~new_exists | changed)
        insert = new_exists & (~old_exists | changed)
        keys = self.index.keys(touched)
        parts = []
        for mask, cols, d in ((retract, old_cols, -1), (insert, new_cols, 1)):
            if mask.any():
                m = pa.array(mask)
                row = [keys.column(i).filter(m) for i in range(keys.num_columns)] + [c.filter(m) for c in cols]
                n = int(mask.sum())
                if row:
                    t = pa.Table.from_arrays(row, names=[f"c{i}" for i in range(len(row))])
                    parts.append(at_time(t, time, np.full(n, d)))
                else:
                    parts.append(_no_column_rows(n, time, d))
        return [as_schema(p, self.schema) for p in parts]

    def _emit_small(self, touched, time, old_cols, old_exists, new_cols, new_exists) -> list[pa.Table]:
        """`_emit` for a few touched groups: the aggregate values compared and assembled as
        Python values (a handful of Arrow calls instead of a dozen per column)."""
        olds = [c.to_pylist() for c in old_cols]
        news = [c.to_pylist() for c in new_cols]
        changed = np.array([any(not _same_value(o[i], n[i]) for o, n in zip(olds, news))
                            for i in range(len(touched))], bool)
        ri = np.flatnonzero(old_exists & (~new_exists | changed))
        ii = np.flatnonzero(new_exists & (~old_exists | changed))
        n = len(ri) + len(ii)
        if n == 0:
            return []
        diff = np.concatenate([np.full(len(ri), -1, np.int64), np.ones(len(ii), np.int64)])
        nk = self.index.arity
        cols: list = []
        if nk:
            keys = self.index.keys(touched[np.concatenate([ri, ii])])
            cols = [keys.column(i) for i in range(nk)]
        ri_l, ii_l = ri.tolist(), ii.tolist()
        for j, (o, nw) in enumerate(zip(olds, news)):
            vals = [o[i] for i in ri_l] + [nw[i] for i in ii_l]
            cols.append(pa.array(vals, type=self.schema.field(nk + j).type))
        cols += [pa.array(np.full(n, time, np.uint64)), pa.array(diff)]
        return [as_schema(pa.Table.from_arrays(cols, names=self.schema.names), self.schema)]


def _same_value(a, b) -> bool:
    """Aggregate values equal for output purposes: NULL = NULL and NaN = NaN."""
    if a is None or b is None:
        return a is None and b is None
    return a == b or (a != a and b != b)


def _no_column_rows(n: int, time: int, d: int) -> pa.Table:
    return pa.table({"time": pa.array(np.full(n, time, np.uint64)), "diff": pa.array(np.full(n, d, np.int64))})


class DistinctOp(ReduceOp):
    """SELECT DISTINCT: a Reduce keyed by every column with no aggregates."""

    def __init__(self, input: Operator, arity: int, schema: pa.Schema, rt: Runtime, path: str):
        super().__init__(input, tuple(range(arity)), (), schema, rt, path)


class ThresholdOp(Operator):
    """Keep max(count, 0) copies of every row (EXCEPT ALL): emits the change of that number."""

    output_consolidated = True  # one nonzero change per distinct row per time

    def __init__(self, input: Operator, arity: int, schema: pa.Schema, rt: Runtime, path: str):
        self.input, self.schema, self.rt, self.path = input, schema, rt, path
        self.key = tuple(range(arity))
        self.index = KeyIndex(arity)
        self.counts = np.zeros(0, np.int64)

    def step(self, ctx: StepContext) -> pa.Table:
        delta = self.rt.shuffle_input(f"{self.path}/threshold", self.input, ctx, self.key)
        return self.rt.guarded(self.schema, lambda: self._apply(delta))

    def _apply(self, delta: pa.Table) -> pa.Table:
        out = []
        for time, sub in split_by_time(delta):
            slots = self.index.slots_for(sub.select([sub.column_names[k] for k in self.key]))
            self.counts = _grow(self.counts, self.index.size)
            seg = _Segments(slots, self.index.size)
            t = seg.touched
            before = np.maximum(self.counts[t], 0)
            self.counts[t] += seg.sum(sub[DIFF].to_numpy())
            change = np.maximum(self.counts[t], 0) - before
            nz = change != 0
            if nz.any():
                keys = self.index.keys(t[nz])
                if keys.num_columns:
                    out.append(as_schema(at_time(keys, time, change[nz]), self.schema))
                else:
                    out.append(as_schema(_no_column_rows(int(nz.sum()), time, 0).set_column(
                        1, "diff", pa.array(change[nz].astype(np.int64))), self.schema))
        return concat(out, schema=self.schema)
