"""Window functions (`f(...) OVER (PARTITION BY ... ORDER BY ... frame)`), maintained incrementally.

The operator keeps its input in an Arrangement keyed by the partition key (like TopK). At each
distinct time of a step, the partitions touched at that time are recomputed from the arrangement
before and after the time's updates, and the difference is emitted at that time: a change
re-evaluates only its partition.

Evaluating the touched partitions (`window_rows`) is vectorised over all of them at once:

* the rows (each repeated by its multiplicity) are sorted by partition (the key's hash), then by
  the ORDER BY columns (NULLs and NaN placed as in PostgreSQL), then by the whole row, so that
  row_number among peers is deterministic; each row `i` of the sorted array then knows its
  partition `[ps, pe)` and its peer group `[qs, qe)` (rows equal in every ORDER BY column);
* ranking functions are arithmetic on those positions; lag/lead/first/last/nth_value are a
  `take` at computed positions; a frame is a per-row range `[lo, hi)` of positions;
* count/sum/avg over a frame are differences of prefix sums (exact: integers and numeric as
  unscaled integers; floats summed in order, as PostgreSQL does: a running frame by a
  segmented cumulative sum, a narrow moving frame by adding its rows one offset at a time, a
  wide moving frame exactly and rounded once);
* min/max over a frame work on the dense rank of the values: a segmented running maximum for
  frames that start (or end) at the partition's edge, a sparse table (range-maximum query in
  O(1) after O(n log w) preparation) for other frames.

No step loops over rows in Python; the loops are over functions, frame offsets (at most
`_NARROW` of them) and sparse-table levels.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement, keys_equal
from dataflow.batch import DIFF, advance_times, concat, consolidate, hash_columns, negate
from dataflow.decimal_util import (check_unconstrained_range, div_round, from_unscaled, rescale, scale_of,
                                   to_unscaled, to_unscaled_i64)
from dataflow.errors import SqlError, SqlState
from dataflow.numeric_scale import avg_quotients
from dataflow.operators import window_frames
from dataflow.operators.base import Operator, Runtime, StepContext, at_time, split_by_time
from dataflow.plan import WindowFrame, WindowFunc
from dataflow.scalar import conform
from dataflow.types import DEFAULT_NUMERIC_SCALE

# Moving float frames at most this wide are summed row by row in frame order (PostgreSQL's
# answer to the last bit); wider ones exactly, rounded once.
_NARROW = 32


class _Layout:
    """Positions in the sorted rows: row i's partition [ps, pe), peer group [qs, qe), and the
    partition / peer group ids (ascending with i)."""

    def __init__(self, n: int, new_part: np.ndarray, new_peer: np.ndarray) -> None:
        self.n = n
        self.i = np.arange(n, dtype=np.int64)
        self.part = np.cumsum(new_part) - 1
        self.starts = starts = np.flatnonzero(new_part)
        self.ends = ends = np.append(starts[1:], n)
        self.ps, self.pe = starts[self.part], ends[self.part]
        self.peer = np.cumsum(new_peer) - 1
        self.gstart = np.flatnonzero(new_peer)
        self.gend = np.append(self.gstart[1:], n)
        self.qs, self.qe = self.gstart[self.peer], self.gend[self.peer]

    def frame(self, frame: WindowFrame, rows_: pa.Table | None = None, order_by=()) -> tuple[np.ndarray, np.ndarray]:
        """Each row's frame as positions [lo, hi) (empty: lo == hi). RANGE offsets read the
        ORDER BY key from `rows_` (`dataflow.operators.window_frames`)."""
        rows = frame.mode == "rows"

        def bound(kind: str, off, end: bool) -> np.ndarray:
            if kind == "unbounded_preceding":
                return self.ps
            if kind == "unbounded_following":
                return self.pe
            if kind == "current":
                if rows:
                    return self.i + 1 if end else self.i
                return self.qe if end else self.qs
            if frame.mode == "groups":
                return window_frames.groups_bound(kind, off, end, self.peer, self.ps, self.pe, self.gstart, self.gend)
            if frame.mode == "range":
                col, desc, nulls_last = order_by[0]
                return window_frames.range_bound(kind, off, end, _chunk(rows_.column(col)), frame.key_type, desc,
                                                 nulls_last, self.part, self.qs, self.qe)
            delta = -off if kind == "preceding" else off
            return self.i + delta + (1 if end else 0)

        lo = np.clip(bound(*frame.start, False), self.ps, self.pe)
        hi = np.clip(bound(*frame.end, True), self.ps, self.pe)
        return lo, np.maximum(hi, lo)


def _sort_order(rows: pa.Table, part_hash: np.ndarray, order_by) -> np.ndarray:
    """Positions of `rows` sorted by partition, ORDER BY entries, then the whole row."""
    arity = rows.num_columns
    sort_tbl = {"__g": pa.array(part_hash)}
    keys = [("__g", "ascending")]
    for j, (col, desc, nulls_last) in enumerate(order_by):
        c = rows.column(col)
        sort_tbl[f"n{j}"] = c.is_null()
        keys.append((f"n{j}", "ascending" if nulls_last else "descending"))
        if pa.types.is_floating(c.type):
            # NaN is the greatest float in SQL; Arrow puts it last in either direction.
            sort_tbl[f"nan{j}"] = pc.fill_null(pc.is_nan(c), False)
            keys.append((f"nan{j}", "descending" if desc else "ascending"))
        if _sortable(c.type):
            sort_tbl[f"o{j}"] = c
            keys.append((f"o{j}", "descending" if desc else "ascending"))
    for i in range(arity):
        if _sortable(rows.column(i).type):
            sort_tbl[f"t{i}"] = rows.column(i)
            keys.append((f"t{i}", "ascending"))
    # Columns Arrow cannot sort (intervals) still break ties deterministically, by the row hash.
    sort_tbl["__h"] = pa.array(hash_columns(rows, list(range(arity))))
    keys.append(("__h", "ascending"))
    keys = [(name, direction, "at_end") for name, direction in keys]
    return pc.sort_indices(pa.table(sort_tbl), sort_keys=keys).to_numpy()


def _chunk(c) -> pa.Array:
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c


def _sortable(t: pa.DataType) -> bool:
    return not pa.types.is_interval(t)


def window_rows(updates: pa.Table, partition_key: tuple[int, ...], order_by, funcs: tuple[WindowFunc, ...],
                time: int, schema: pa.Schema) -> pa.Table:
    """The Window output (rows with multiplicities at `time`) of whole partitions' updates."""
    if updates.num_rows == 0:
        return schema.empty_table()
    arity = updates.num_columns - 2
    net = consolidate(advance_times(updates, time))
    net = net.filter(pc.greater(net[DIFF], 0))
    if net.num_rows == 0:
        return schema.empty_table()
    counts = net[DIFF].to_numpy()
    rows = net.select(list(range(arity)))
    if (counts != 1).any():  # each copy of a row is its own row of the partition
        rows = rows.take(pa.array(np.repeat(np.arange(len(counts)), counts)))
    n = rows.num_rows
    part_hash = hash_columns(rows, partition_key) if partition_key else np.zeros(n, np.uint64)
    order = _sort_order(rows, part_hash, order_by)
    rows = rows.take(pa.array(order))
    ph = part_hash[order]
    new_part = np.ones(n, bool)
    new_part[1:] = ph[1:] != ph[:-1]
    new_peer = new_part.copy()
    if order_by and n > 1:
        cols = [c for c, _, _ in order_by]
        same = keys_equal(rows.slice(1), cols, rows.slice(0, n - 1), cols, nulls_equal=True, nans_equal=True)
        new_peer[1:] |= ~same
    lay = _Layout(n, new_part, new_peer)
    out = list(rows.columns)
    for f in funcs:
        out.append(conform(_evaluate(f, rows, lay, order_by), f.type))
    table = pa.Table.from_arrays(out, names=[f"c{i}" for i in range(len(out))])
    return at_time(table, time).cast(schema)


def _evaluate(f: WindowFunc, rows: pa.Table, lay: _Layout, order_by=()) -> pa.Array:
    name = f.func
    i, ps, pe = lay.i, lay.ps, lay.pe
    if name == "row_number":
        return pa.array(i - ps + 1)
    if name == "rank":
        return pa.array(lay.qs - ps + 1)
    if name == "dense_rank":
        return pa.array(lay.peer - lay.peer[ps] + 1)
    if name == "percent_rank":
        size = pe - ps
        return pa.array(np.where(size > 1, (lay.qs - ps) / np.maximum(size - 1, 1), 0.0))
    if name == "cume_dist":
        return pa.array((lay.qe - ps) / (pe - ps))
    if name == "ntile":
        return _ntile(_arg(rows, f, 0), lay)
    if name in ("lag", "lead"):
        return _lag_lead(name, rows, f, lay)
    lo, hi = lay.frame(f.frame, rows, order_by)
    # EXCLUDE CURRENT ROW / GROUP / TIES: the frame's rows are up to three runs of positions.
    cut = None if f.frame.exclude == "no_others" else \
        window_frames.Excluded.of(f.frame.exclude, lay.i, lay.qs, lay.qe, lo, hi)

    def sums(x: np.ndarray) -> np.ndarray:
        return _range_sums(x, lo, hi) if cut is None else cut.sums(x)
    if name in ("first_value", "last_value", "nth_value"):
        value = _arg(rows, f, 0)
        if name == "first_value":
            pos, ok = (lo, hi > lo) if cut is None else cut.nth(np.ones(lay.n, np.int64))
        elif name == "last_value":
            pos, ok = (hi - 1, hi > lo) if cut is None else cut.last()
        else:
            nth = _arg(rows, f, 1)
            nth_valid = nth.is_valid().to_numpy(zero_copy_only=False)
            k = pc.fill_null(nth.cast(pa.int64()), 1).to_numpy()
            if (nth_valid & (k <= 0)).any():
                raise SqlError("22016", "argument of nth_value must be greater than zero")
            if cut is None:
                pos = lo + k - 1
                ok = nth_valid & (pos < hi)
            else:
                pos, ok = cut.nth(k)
                ok = ok & nth_valid
        return _take(value, pos, ok)
    if name == "count_star":
        return pa.array(hi - lo if cut is None else cut.count())
    value = _arg(rows, f, 0)
    valid = value.is_valid().to_numpy(zero_copy_only=False) if value.null_count else np.ones(len(value), bool)
    nn = sums(valid.astype(np.int64))
    if name == "count":
        return pa.array(nn)
    if name in ("min", "max"):
        return _extreme(name, value, valid, lo, hi, f.frame, lay, cut)
    if name in ("sum", "avg"):
        if pa.types.is_floating(value.type):
            return _float_sum(name, value, valid, nn, lo, hi, f, lay, cut)
        return _exact_sum(name, value, nn, sums, f)
    raise ValueError(f"unknown window function {name}")


def _arg(rows: pa.Table, f: WindowFunc, k: int) -> pa.Array:
    c = rows.column(f.args[k])
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c


def _take(value: pa.Array, pos: np.ndarray, ok: np.ndarray) -> pa.Array:
    n = len(pos)
    if n == 0:
        return value.slice(0, 0)
    idx = pa.array(np.where(ok, pos, 0), mask=~ok)  # a NULL index takes NULL
    return value.take(idx)


def _ntile(buckets: pa.Array, lay: _Layout) -> pa.Array:
    """PostgreSQL's ntile: the first `size % k` buckets hold one row more than the others. The
    bucket count is read at the partition's first row, as PostgreSQL does."""
    nb = buckets.take(pa.array(lay.ps))
    valid = nb.is_valid().to_numpy(zero_copy_only=False)
    k = pc.fill_null(nb.cast(pa.int64()), 1).to_numpy()
    if (valid & (k <= 0)).any():
        raise SqlError("22014", "argument of ntile must be greater than zero")
    size, r = lay.pe - lay.ps, lay.i - lay.ps
    q, rem = size // k, size % k
    big = q + 1
    boundary = rem * big
    small = np.maximum(q, 1)
    bucket = np.where(r < boundary, r // big + 1, rem + (r - boundary) // small + 1)
    return pa.array(bucket, mask=~valid)


def _lag_lead(name: str, rows: pa.Table, f: WindowFunc, lay: _Layout) -> pa.Array:
    value = _arg(rows, f, 0)
    if len(f.args) > 1:
        off_arr = _arg(rows, f, 1)
        off_valid = off_arr.is_valid().to_numpy(zero_copy_only=False)
        off = pc.fill_null(off_arr.cast(pa.int64()), 0).to_numpy()
    else:
        off_valid, off = np.ones(lay.n, bool), np.ones(lay.n, np.int64)
    target = lay.i - off if name == "lag" else lay.i + off
    inside = (target >= lay.ps) & (target < lay.pe)
    got = _take(value, target, inside & off_valid)
    if len(f.args) > 2:
        default = _arg(rows, f, 2).cast(value.type)
        got = pc.if_else(pa.array(inside | ~off_valid), got, default)
    return got


def _range_sums(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """sum(x[lo:hi]) per row by prefix sums (integers: exact; object arrays of ints too)."""
    p = np.zeros(len(x) + 1, dtype=x.dtype)
    if len(x):
        p[1:] = np.cumsum(x)
    return p[hi] - p[lo]


# ---- min / max --------------------------------------------------------------------------------

def _extreme(name: str, value: pa.Array, valid: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             frame: WindowFrame, lay: _Layout, cut: window_frames.Excluded | None = None) -> pa.Array:
    """min/max over each frame via the dense rank of the values: the extreme is the greatest
    *score* (rank, or reversed rank for min; 0 for NULL) in the frame (with EXCLUDE: in each of
    its runs of rows)."""
    n = len(value)
    if n == 0 or not valid.any():
        return pa.nulls(n, value.type)
    rank = pc.rank(value, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
    top = int(rank[valid].max())
    score = np.where(valid, rank if name == "max" else top + 1 - rank, 0)
    big = top + 2
    if cut is not None:
        own = np.where(cut.keep, score, 0)
        got = np.maximum(np.maximum(_range_max(score, cut.lo, cut.a), _range_max(score, cut.b, cut.hi)), own)
    elif frame.start[0] == "unbounded_preceding":
        # Segmented running maximum: earlier partitions' keys are all below this one's.
        key = lay.part * big + score
        best = np.maximum.accumulate(key) - lay.part * big
        got = best[np.maximum(hi - 1, 0)]
    elif frame.end[0] == "unbounded_following":
        rev_part = lay.part[-1] - lay.part[::-1]
        key = rev_part * big + score[::-1]
        best = (np.maximum.accumulate(key) - rev_part * big)[::-1]
        got = best[np.minimum(lo, n - 1)]
    else:
        got = _range_max(score, lo, hi)
    if cut is None:
        got = np.where(hi > lo, got, 0)
    # Back from score to a row holding that value.
    rep = np.zeros(top + 2, np.int64)
    rep[score] = np.arange(n)
    return _take(value, rep[got], got > 0)


def _range_max(score: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(score[lo:hi]) per row by a sparse table (0 for empty ranges)."""
    n = len(score)
    width = int((hi - lo).max()) if n else 0
    if width <= 0:
        return np.zeros(n, np.int64)
    levels = [score]
    span = 1
    while span * 2 <= width:
        prev = levels[-1]
        shifted = np.concatenate([prev[span:], np.zeros(span, prev.dtype)])
        levels.append(np.maximum(prev, shifted))
        span *= 2
    length = np.maximum(hi - lo, 1)
    k = np.floor(np.log2(length)).astype(np.int64)
    # Guard against log2 rounding at exact powers of two.
    k = np.where((1 << (k + 1)) <= length, k + 1, k)
    k = np.where((1 << k) > length, k - 1, k)
    table = np.stack(levels)
    a = table[k, np.minimum(lo, n - 1)]
    b = table[k, np.clip(hi - (1 << k), 0, n - 1)]
    return np.where(hi > lo, np.maximum(a, b), 0)


# ---- sum / avg --------------------------------------------------------------------------------

def _exact_sum(name: str, value: pa.Array, nn: np.ndarray, sums, f: WindowFunc) -> pa.Array:
    """sum/avg of integers and numeric: exact prefix sums of the unscaled values (`sums` adds
    an array over each row's frame)."""
    out = f.type
    in_scale = scale_of(value.type)
    fast = to_unscaled_i64(value)
    v = None
    if fast is not None:
        v = fast[0]
        if len(v) and float(np.abs(v.astype(np.float64)).sum()) >= 2.0 ** 62:
            v = None
    if v is None:
        v = to_unscaled(value)[0]
    sums = sums(v)
    valid = nn > 0
    if name == "avg":
        s_out = out.effective_scale
        num = rescale(sums.astype(object), in_scale, s_out)
        res = div_round(num, np.where(valid, nn, 1).astype(object)) if len(num) else num
        if out.scale is None:  # (an unconstrained input's values are stored at scale 16)
            res = avg_quotients(res, valid, sums, in_scale, nn, s_out, in_scale == DEFAULT_NUMERIC_SCALE)
        return from_unscaled(res, valid, s_out)
    if out.is_integer:
        return pa.array(np.where(valid, sums, 0).astype(np.int64), mask=~valid)
    sums = sums.astype(object)
    if out.scale is None:
        check_unconstrained_range(sums, valid, in_scale)
    return from_unscaled(rescale(sums, in_scale, out.effective_scale), valid, out.effective_scale)


def _float_sum(name: str, value: pa.Array, valid: np.ndarray, nn: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, f: WindowFunc, lay: _Layout, cut: window_frames.Excluded | None = None) -> pa.Array:
    """sum/avg of floats in frame order, as PostgreSQL's float8pl/float4pl add them: infinities
    and NaN counted apart (inf + -inf is NaN, NaN stays NaN), the finite values added in order.
    sum(real) adds in single precision, avg(real) in double. With EXCLUDE the excluded rows
    add nothing (PostgreSQL restarts the sum for each row of such a frame)."""
    single = name == "sum" and pa.types.is_float32(value.type)
    dtype = np.float32 if single else np.float64
    v = pc.fill_null(value, 0.0).to_numpy(zero_copy_only=False).astype(dtype)
    finite = np.isfinite(v)
    specials = [(_range_sums(m.astype(np.int64), lo, hi) if cut is None else cut.sums(m.astype(np.int64)))
                if not finite.all() else None for m in (v == np.inf, v == -np.inf, np.isnan(v))]
    v = np.where(finite, v, dtype(0))
    n = len(v)
    width = int((hi - lo).max()) if n else 0
    with np.errstate(over="ignore", invalid="ignore"):
        if cut is not None:
            s = _excluded_float_sums(v, cut, width, dtype)
        elif f.frame.start[0] == "unbounded_preceding":
            # Running frame: the partition's values added in order (a segmented cumulative sum).
            cs = _running_sums(v, lay.starts, lay.ends)
            s = np.where(hi > lo, cs[np.maximum(hi - 1, 0)], dtype(0))
        elif width <= _NARROW:
            s = np.zeros(n, dtype)
            for j in range(width):
                pos = lo + j
                inside = pos < hi
                s = np.where(inside, s + v[np.minimum(pos, n - 1)], s)
        else:
            s = _exact_float_sums(v, lo, hi).astype(dtype)
    s = s.astype(np.float64)
    ok = nn > 0
    if np.isinf(s[ok]).any():
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
    pos_inf, neg_inf, nan = specials
    if pos_inf is not None:
        s = np.where(pos_inf > 0, np.inf, s)
        s = np.where(neg_inf > 0, -np.inf, s)
        s = np.where((nan > 0) | ((pos_inf > 0) & (neg_inf > 0)), np.nan, s)
    if name == "avg":
        s = s / np.where(ok, nn, 1)
    return pa.array(s, mask=~ok).cast(f.type.arrow)


def _excluded_float_sums(v: np.ndarray, cut: window_frames.Excluded, width: int, dtype) -> np.ndarray:
    """Float sums over frames with an EXCLUDE cut: narrow frames added row by row in frame
    order, skipping the cut; wide ones exactly over the runs, rounded once."""
    n = len(v)
    if width <= _NARROW:
        s = np.zeros(n, dtype)
        for j in range(width):
            pos = cut.lo + j
            inside = (pos < cut.hi) & ((pos < cut.a) | (pos >= cut.b) | (cut.keep & (pos == cut.i)))
            s = np.where(inside, s + v[np.minimum(pos, n - 1)], s)
        return s
    return (_exact_float_sums(v, cut.lo, cut.a) + _exact_float_sums(v, cut.b, cut.hi)
            + np.where(cut.keep, v[np.minimum(cut.i, n - 1)], 0)).astype(dtype)


_POW2 = None


# Partitions longer than this get one cumulative sum each; shorter ones are added up together,
# one position at a time (at most this many vectorised steps).
_SHORT_PARTITION = 64


def _running_sums(v: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each partition's (v[starts[k]:ends[k]]) values added left to right from zero, one
    rounding per addition as PostgreSQL's float8pl adds them (no compensation: a compensated
    sum, as pandas' groupby cumsum is, differs from PostgreSQL's in more than the last bit).

    >>> _running_sums(np.array([1e16, 1.0, 1.0, 2.0, 3.0]), np.array([0, 3]), np.array([3, 5])) - [1e16, 1e16, 1e16, 0, 0]
    array([0., 0., 0., 2., 5.])
    """
    out = np.empty_like(v)
    lengths = ends - starts
    long = lengths > _SHORT_PARTITION
    for s, e in zip(starts[long].tolist(), ends[long].tolist()):
        np.cumsum(v[s:e], out=out[s:e])  # (an accumulate: sequential, unlike np.sum)
    short_starts, short_lengths = starts[~long], lengths[~long]
    acc = np.zeros(len(short_starts), v.dtype)
    for j in range(int(short_lengths.max()) if len(short_lengths) else 0):
        alive = short_lengths > j
        at = short_starts[alive] + j
        acc[alive] += v[at]
        out[at] = acc[alive]
    return out


def _exact_float_sums(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """sum(v[lo:hi]) per row, exactly, rounded once: prefix sums of the doubles as Python ints
    scaled by 2**1126 (every finite double is an integer multiple of 2**-1074), differences
    divided back (Python's int / int is correctly rounded)."""
    global _POW2
    if _POW2 is None:
        _POW2 = np.array([1 << k for k in range(2200)], dtype=object)
    mant, exp = np.frexp(v.astype(np.float64))
    m = (mant * 2.0 ** 53).astype(np.int64).astype(object)
    shift = exp.astype(np.int64) - 53 + 1126
    ints = m * _POW2[np.clip(shift, 0, 2199)]
    diffs = _range_sums(ints, lo, hi)
    return (diffs / (1 << 1126)).astype(np.float64)


class WindowOp(Operator):
    """Window functions over partitions, recomputing each touched partition before and after
    each time's updates and emitting the difference."""

    output_consolidated = False

    def __init__(self, input: Operator, partition_key, order_by, funcs, schema: pa.Schema,
                 rt: Runtime, path: str):
        self.input, self.schema, self.rt, self.path = input, schema, rt, path
        self.key, self.order_by, self.funcs = tuple(partition_key), tuple(order_by), tuple(funcs)
        self.trace = Arrangement(self.key)

    def step(self, ctx: StepContext) -> pa.Table:
        delta = self.rt.shuffle_input(f"{self.path}/window", self.input, ctx, self.key)
        return self.rt.guarded(self.schema, lambda: self._apply(delta, ctx.upper))

    def _rows(self, updates: pa.Table, time: int) -> pa.Table:
        return window_rows(updates, self.key, self.order_by, self.funcs, time, self.schema)

    def _apply(self, delta: pa.Table, upper: int) -> pa.Table:
        out = []
        for time, sub in split_by_time(delta):
            before = self._rows(self.trace.lookup(sub, self.key), time)
            self.trace.insert(sub)
            after = self._rows(self.trace.lookup(sub, self.key), time)
            parts = [p for p in (after, negate(before)) if p.num_rows]
            if parts:
                out.append(consolidate(pa.concat_tables(parts)))
        self.trace.compact(upper)
        return concat(out, schema=self.schema)


__all__ = ["WindowOp", "window_rows"]
