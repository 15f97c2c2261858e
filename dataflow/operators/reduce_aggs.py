"""Per-group states of the Reduce's newer aggregates: bool_and/bool_or, the variance family
and string_agg. Each keeps exactly what survives retractions, so a group's value after any
sequence of inserts and deletes equals its value recomputed from the rows present.

* bool_and / bool_or: per group the non-NULL count and the count of trues (bool_and is
  trues == count, bool_or trues > 0).
* var_samp, var_pop, stddev_samp, stddev_pop: per group N and the *exact* sums of x and x**2.
  - integers and numeric: sums of the unscaled integers (int64 while no partial sum can
    overflow, Python ints after that); the result follows PostgreSQL's
    `numeric_stddev_internal` digit for digit: (N*Sxx - Sx**2) / (N*(N-1)) rounded half away
    from zero to `select_div_scale`'s scale (at least 16 significant digits, but never fewer
    fractional digits than twice the inputs' display scale), and stddev the square root of
    that, correctly rounded to the same scale; then shown with at most 16 fractional digits
    (unconstrained numeric here).
  - floats: x and x**2 summed exactly as wide fixed-point integers (`ExactFloatSums` limbs: a
    square is split into three parts of at most 54 bits); the variance is that exact rational
    rounded once to the nearest double. PostgreSQL's Youngs-Cramer running sums are
    order-dependent and may differ in the last bits. NaN or an infinity among the values
    gives NaN, as in PostgreSQL.
* string_agg: the (group, value, delimiter, order keys) multiset in an Arrangement; a touched
  group is rebuilt from it (sorted by the ORDER BY keys, then by value and delimiter, so the
  order without ORDER BY is deterministic), its pieces joined with Arrow's list join.

Group-wise work is NumPy/Arrow over the touched groups. The exact numeric and float results
use NumPy object arrays of Python ints (like the exact sums in `reduce.py`): elementwise in
C loops, no Python loop of ours, but big-integer arithmetic per touched group.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement
from dataflow.decimal_util import (check_unconstrained_range, div_round, from_unscaled, scale_of, to_unscaled,
                                   to_unscaled_i64)
from dataflow.errors import SqlError, SqlState
from dataflow.expr import AggregateExpr
from dataflow.float_sum import ExactFloatSums
from dataflow.types import TypeKind

MOMENTS = {  # func: (sample, square root)
    "var_samp": (True, False), "var_pop": (False, False),
    "stddev_samp": (True, True), "stddev_pop": (False, True),
}

_POW10 = np.array([10 ** k for k in range(1200)], dtype=object)


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    """`a` extended with zero rows (along the first axis) to at least `size`."""
    if len(a) >= size:
        return a
    extra = np.zeros((max(size, 2 * len(a)) - len(a),) + a.shape[1:], dtype=a.dtype)
    return np.concatenate([a, extra])


def _valid(values: pa.Array) -> np.ndarray:
    if values.null_count:
        return values.is_valid().to_numpy(zero_copy_only=False)
    return np.ones(len(values), bool)


class ApplyState:
    """Base of the states updated through `apply(seg, values, diff)` with their only input."""

    def update(self, seg, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        self.apply(seg, args[0], diff)

    def compact(self, upper: int) -> None:
        pass


class _Bools(ApplyState):
    """bool_and / bool_or."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.nn = np.zeros(0, np.int64)
        self.trues = np.zeros(0, np.int64)

    def grow(self, size: int) -> None:
        self.nn, self.trues = _grow(self.nn, size), _grow(self.trues, size)

    def apply(self, seg, values: pa.Array, diff: np.ndarray) -> None:
        valid = _valid(values)
        true = pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(bool)
        t = seg.touched
        self.nn[t] += seg.sum(np.where(valid, diff, 0))
        self.trues[t] += seg.sum(np.where(true & valid, diff, 0))

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        nn, trues = self.nn[slots], self.trues[slots]
        val = (trues == nn) if self.agg.func == "bool_and" else (trues > 0)
        return pa.array(val, pa.bool_(), mask=nn <= 0)


class _ExactInts:
    """Per-slot exact integer sums: int64 while the sum of |contributions| ever added stays
    below 2**62 (then no partial sum can overflow), Python ints (object) after that."""

    def __init__(self) -> None:
        self.v = np.zeros(0, np.int64)
        self.bound = 0.0

    def grow(self, size: int) -> None:
        self.v = _grow(self.v, size)

    def add(self, seg, v: np.ndarray, d: np.ndarray) -> None:
        """Add v[i] * d[i] to the sum of slot seg.slots[i]."""
        if self.v.dtype != object and v.dtype != object:
            step = float((np.abs(v.astype(np.float64)) * np.abs(d)).sum())
            if self.bound + step < 2.0 ** 62:
                self.bound += step
                self.v[seg.touched] += seg.sum(v * d)
                return
        if self.v.dtype != object:
            self.v = self.v.astype(object)  # exact from here on
        self.v[seg.touched] += seg.sum(v.astype(object) * d)

    def get(self, slots: np.ndarray) -> np.ndarray:
        return self.v[slots].astype(object)


# Bit 0 of the float accumulators is 2**_UNIT: below the square of the smallest subnormal
# (2**-2148), a multiple of 32.
_UNIT = -2272


class _ExactFloatMoments:
    """Exact per-slot sums of finite doubles x and of their squares, as fixed-point integers in
    units of 2**_UNIT."""

    def __init__(self) -> None:
        self.s1, self.s2 = ExactFloatSums(), ExactFloatSums()

    def grow(self, size: int) -> None:
        self.s1.grow(size)
        self.s2.grow(size)

    def add(self, slots: np.ndarray, x: np.ndarray, d: np.ndarray) -> None:
        nz = (x != 0) & (d != 0)
        if not nz.all():
            slots, x, d = slots[nz], x[nz], d[nz]
        if not len(x):
            return
        mant, e = np.frexp(x)
        m = (np.abs(mant) * 2.0 ** 53).astype(np.uint64)  # x = m * 2**(e - 53), m < 2**53
        e = e.astype(np.int64) - 53
        self.s1.add_mantissas(slots, m, e - _UNIT, np.where(x < 0, -d, d))
        # m**2 = a**2 * 2**52 + 2ab * 2**26 + b**2 with m = a * 2**26 + b: parts below 2**54.
        a, b = m >> np.uint64(26), m & np.uint64((1 << 26) - 1)
        sq = np.concatenate([a * a, np.uint64(2) * a * b, b * b])
        pos = np.concatenate([2 * e + 52, 2 * e + 26, 2 * e]) - _UNIT
        keep = sq != 0
        self.s2.add_mantissas(np.tile(slots, 3)[keep], sq[keep], pos[keep], np.tile(d, 3)[keep])

    @staticmethod
    def _ints(acc: ExactFloatSums, slots: np.ndarray) -> np.ndarray:
        """The exact sums of `slots` as Python ints in units of 2**_UNIT."""
        out = np.zeros(len(slots), dtype=object)
        width = acc.limbs.shape[1] if acc.limbs.ndim == 2 else 0
        if not width or not len(slots):
            return out
        rows = acc.limbs[slots]
        for k in range(width - 1, -1, -1):  # Horner over the limbs (they may be signed)
            out = out * (1 << 32) + rows[:, k].astype(object)
        # Limb k of the window is absolute limb lo + k; positions are >= 0 here, so lo >= 0.
        return out * (1 << (32 * acc.lo))

    def sums(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._ints(self.s1, slots), self._ints(self.s2, slots)


def _digits(v: np.ndarray) -> np.ndarray:
    """Number of decimal digits of positive Python ints."""
    return np.searchsorted(_POW10, v, side="right").astype(np.int64)


def _weight_first(v: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Base-10000 weight and first base-10000 digit (PostgreSQL's NumericVar) of the positive
    values v / 10**scale (v Python ints)."""
    e = _digits(v) - 1 - scale  # decimal exponent of the leading digit
    w = e // 4
    sh = scale + 4 * w
    first = np.where(sh >= 0, v // _POW10[np.maximum(sh, 0)], v * _POW10[np.maximum(-sh, 0)])
    return w, first


def _min_dscale(v: np.ndarray, scale: int) -> np.ndarray:
    """Fewest fractional digits that show the unscaled values v (at `scale`) exactly."""
    tz = np.zeros(len(v), np.int64)
    for j in range(1, scale + 1):
        step = 10 ** j
        tz = np.where(v % step == 0, j, tz)
    return scale - tz


class _Moments(ApplyState):
    """var_samp, var_pop, stddev_samp, stddev_pop (see the module docstring)."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.sample, self.root = MOMENTS[agg.func]
        self.float = agg.type.kind is TypeKind.FLOAT8
        self.nn = np.zeros(0, np.int64)
        if self.float:
            self.exact = _ExactFloatMoments()
            self.specials = np.zeros((0, 3), np.int64)  # +inf, -inf, NaN
        else:
            self.s1, self.s2 = _ExactInts(), _ExactInts()
            arg_type = agg.arg.type if agg.arg is not None else None
            # PostgreSQL's result scale depends on the inputs' display scale: the declared
            # scale of numeric(p, s), 0 for integers; for unconstrained numeric each value's
            # own digits (counted per group and scale, so retractions keep it exact).
            self.fixed_dscale = None if (arg_type is not None and arg_type.kind is TypeKind.NUMERIC
                                         and arg_type.scale is None) else (arg_type.scale or 0)
            self.dscales = np.zeros((0, 17), np.int64)
        self.in_scale = 0

    def grow(self, size: int) -> None:
        self.nn = _grow(self.nn, size)
        if self.float:
            self.exact.grow(size)
            self.specials = _grow(self.specials, size)
        else:
            self.s1.grow(size)
            self.s2.grow(size)
            if self.fixed_dscale is None:
                self.dscales = _grow(self.dscales, size)

    def apply(self, seg, values: pa.Array, diff: np.ndarray) -> None:
        valid = _valid(values)
        dv = np.where(valid, diff, 0)
        t = seg.touched
        self.nn[t] += seg.sum(dv)
        if self.float:
            x = pc.fill_null(values.cast(pa.float64()), 0.0).to_numpy()
            finite = np.isfinite(x)
            if not finite.all():
                for k, mask in enumerate((x == np.inf, x == -np.inf, np.isnan(x))):
                    self.specials[t, k] += seg.sum(np.where(mask, dv, 0))
                x = np.where(finite, x, 0.0)
            self.exact.add(seg.slots, x, dv)
            return
        self.in_scale = scale_of(values.type)
        fast = to_unscaled_i64(values)
        v = fast[0] if fast is not None else to_unscaled(values)[0]
        self.s1.add(seg, v, dv)
        if v.dtype != object and len(v) and -(2 ** 31) < v.min() and v.max() < 2 ** 31:  # (np.abs wraps at -2**63)
            sq = v * v
        else:
            vo = v.astype(object)
            sq = vo * vo
        self.s2.add(seg, sq, dv)
        if self.fixed_dscale is None:
            ds = np.minimum(_min_dscale(v, self.in_scale), 16)
            np.add.at(self.dscales, (seg.slots, ds), dv)

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        n = self.nn[slots]
        valid = n > (1 if self.sample else 0)
        if self.float:
            return self._float_result(slots, n, valid)
        return self._numeric_result(slots, n, valid)

    def _numeric_result(self, slots: np.ndarray, n: np.ndarray, valid: np.ndarray) -> pa.Array:
        out_scale = self.agg.type.effective_scale
        res = np.zeros(len(slots), dtype=object)
        s = self.in_scale
        N = np.where(valid, n, 2).astype(object)
        s1, s2 = self.s1.get(slots), self.s2.get(slots)
        num = N * s2 - s1 * s1  # N * Sxx - Sx**2, at scale 2s
        pos = valid & (num > 0)
        if pos.any():
            N, num = N[pos], num[pos]
            den = N * (N - 1) if self.sample else N * N
            if self.fixed_dscale is not None:
                dscale = np.full(len(num), self.fixed_dscale, np.int64)
            else:
                present = self.dscales[slots[pos]] > 0
                dscale = 16 - np.argmax(present[:, ::-1], axis=1)
            # select_div_scale(num, den): at least 16 significant digits of the quotient.
            w1, f1 = _weight_first(num, 2 * s)
            w2, f2 = _weight_first(den, 0)
            qweight = w1 - w2 - (f1 <= f2).astype(np.int64)
            rscale = np.minimum(np.maximum(np.maximum(16 - 4 * qweight, 2 * dscale), 0), 1000)
            var = div_round(num * _POW10[rscale], den * _POW10[2 * s])
            if self.root:
                x = var * _POW10[rscale]
                r = np.frompyfunc(math.isqrt, 1, 1)(x)
                var = r + (x - r * r > r)  # half away from zero: x >= (r + 1/2)**2
            up = rscale <= out_scale
            var = np.where(up, var * _POW10[np.maximum(out_scale - rscale, 0)], var)
            if (~up).any():
                down = ~up
                var[down] = div_round(var[down], _POW10[rscale[down] - out_scale])
            res[pos] = var
        check_unconstrained_range(res, valid, out_scale)
        return from_unscaled(res, valid, out_scale)

    def _float_result(self, slots: np.ndarray, n: np.ndarray, valid: np.ndarray) -> pa.Array:
        vals = np.zeros(len(slots), np.float64)
        special = self.specials[slots].sum(axis=1) > 0 if len(slots) else np.zeros(0, bool)
        vals[special] = np.nan
        exact = valid & ~special
        if exact.any():
            sl = slots[exact]
            N = n[exact].astype(object)
            s1, s2 = self.exact.sums(sl)
            # Sx = s1 * 2**U, Sxx = s2 * 2**U:  N*Sxx - Sx**2 = (N*s2 - s1**2 * 2**U) * 2**U.
            num = N * s2 * (1 << -_UNIT) - s1 * s1
            den = (N * (N - 1) if self.sample else N * N) * (1 << (-2 * _UNIT))
            try:
                # int / int is correctly rounded in Python, whatever the sizes.
                q = np.where(num > 0, num, 0) / den
            except OverflowError:
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow") from None
            q = q.astype(np.float64)
            if np.isinf(q).any():
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
            vals[exact] = np.sqrt(q) if self.root else q
        return pa.array(vals, pa.float64(), mask=~valid)


class _StringAgg:
    """string_agg(value, delimiter [ORDER BY ...]): rebuilt per touched group from the multiset
    of its rows (the order of the pieces is a function of the whole group)."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.trace = Arrangement(key=(0,))
        self.binary = agg.type.kind is TypeKind.BYTEA
        self.n_cols = 3 + len(agg.order_by)

    def grow(self, size: int) -> None:
        pass

    def update(self, seg, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        cols = {"c0": pa.array(slots, pa.int64())}
        for i, a in enumerate(args):
            cols[f"c{i + 1}"] = a
        cols["time"] = pa.array(np.full(len(slots), time, np.uint64))
        cols["diff"] = pa.array(diff)
        t = pa.table(cols)
        value = args[0]
        self.trace.insert(t.filter(value.is_valid()) if value.null_count else t)

    def compact(self, upper: int) -> None:
        self.trace.compact(upper)

    def result(self, touched: np.ndarray, counts: np.ndarray) -> pa.Array:
        out_type = self.agg.type.arrow
        n = len(touched)
        ups = self.trace.lookup(pa.table({"c0": pa.array(touched, pa.int64())}), (0,))
        names = [f"c{i}" for i in range(self.n_cols)]
        if ups.num_rows:
            g = ups.group_by(names, use_threads=False).aggregate([("diff", "sum")])
            g = g.filter(pc.greater(g["diff_sum"], 0))
        if not ups.num_rows or not g.num_rows:
            return pa.nulls(n, out_type)
        rows = g.select(names)
        if not self.agg.distinct:  # DISTINCT: each (value, delimiter) once
            mult = g["diff_sum"].to_numpy()
            if (mult != 1).any():
                rows = rows.take(pa.array(np.repeat(np.arange(rows.num_rows), mult)))
        sort_tbl, keys = {"g": rows["c0"]}, [("g", "ascending")]
        for j, (_, desc, nulls_last) in enumerate(self.agg.order_by):
            c = rows[f"c{3 + j}"]
            sort_tbl[f"n{j}"] = c.is_null()
            keys.append((f"n{j}", "ascending" if nulls_last else "descending"))
            sort_tbl[f"o{j}"] = c
            keys.append((f"o{j}", "descending" if desc else "ascending"))
        sort_tbl["v"], sort_tbl["d"] = rows["c1"], rows["c2"]
        keys += [("v", "ascending"), ("d", "ascending")]
        order = pc.sort_indices(pa.table(sort_tbl), sort_keys=[(k, d, "at_end") for k, d in keys])
        rows = rows.take(order)
        g_slots = rows["c0"].to_numpy()
        first = np.ones(len(g_slots), bool)
        first[1:] = g_slots[1:] != g_slots[:-1]
        value = rows["c1"].combine_chunks()
        empty = b"" if self.binary else ""
        delim = pc.fill_null(rows["c2"].combine_chunks(), empty)
        # The first piece of a group drops its delimiter (PostgreSQL's string_agg).
        delim = pc.if_else(pa.array(first), pa.scalar(empty, delim.type), delim)
        pieces = pc.binary_join_element_wise(delim, value, empty)
        starts = np.flatnonzero(first)
        offsets = pa.array(np.append(starts, len(g_slots)).astype(np.int32))
        joined = pc.binary_join(pa.ListArray.from_arrays(offsets, pieces), empty)
        present_slots = g_slots[starts]  # ascending
        pos = np.searchsorted(present_slots, touched)
        posc = np.minimum(pos, len(present_slots) - 1)
        present = present_slots[posc] == touched
        res = joined.take(pa.array(posc))
        return pc.if_else(pa.array(present), res, pa.scalar(None, res.type)).cast(out_type)


# ---- bit_and / bit_or / bit_xor --------------------------------------------------------------

class _Bits(ApplyState):
    """bit_and, bit_or, bit_xor over int2/int4/int8: per group the non-NULL count and, for
    every bit, the count of values with that bit set. bit_and is the bits set in every value,
    bit_or the bits set in any, bit_xor the bits set an odd number of times; all three survive
    retractions exactly. (Bits above a narrow type's width copy its sign bit, so only its own
    width is counted and the result is sign-extended from it.)"""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.width = {TypeKind.INT2: 16, TypeKind.INT4: 32}.get(agg.type.kind, 64)
        self.nn = np.zeros(0, np.int64)
        self.bits = np.zeros((0, self.width), np.int64)

    def grow(self, size: int) -> None:
        self.nn, self.bits = _grow(self.nn, size), _grow(self.bits, size)

    def apply(self, seg, values: pa.Array, diff: np.ndarray) -> None:
        t = seg.touched
        if not len(t):
            return
        dv = np.where(_valid(values), diff, 0)
        self.nn[t] += seg.sum(dv)
        v = pc.fill_null(values.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).view(np.uint64)
        for b in range(self.width):
            bit = ((v >> np.uint64(b)) & np.uint64(1)).astype(np.int64)
            if bit.any():
                self.bits[t, b] += seg.sum(bit * dv)

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        nn, c = self.nn[slots], self.bits[slots]
        func = self.agg.func
        flags = (c == nn[:, None]) if func == "bit_and" else (c > 0) if func == "bit_or" else (c % 2 == 1)
        weights = np.uint64(1) << np.arange(self.width, dtype=np.uint64)
        val = (flags.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
        if self.width < 64:
            val = np.where(flags[:, -1], val | ~np.uint64((1 << self.width) - 1), val)
        return pa.array(val.view(np.int64), pa.int64(), mask=nn <= 0).cast(self.agg.type.arrow)


# ---- corr, covar_*, regr_* ------------------------------------------------------------------

REGRESSION = frozenset({"corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2",
                        "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy"})


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Finite non-zero doubles as x = m * 2**e exactly, m uint64 < 2**53."""
    mant, e = np.frexp(x)
    return (np.abs(mant) * 2.0 ** 53).astype(np.uint64), e.astype(np.int64) - 53


def _add_linear(acc: ExactFloatSums, slots: np.ndarray, x: np.ndarray, d: np.ndarray) -> None:
    """acc[slot] += x * d exactly, in units of 2**_UNIT."""
    nz = (x != 0) & (d != 0)
    slots, x, d = slots[nz], x[nz], d[nz]
    if len(x):
        m, e = _split(x)
        acc.add_mantissas(slots, m, e - _UNIT, np.where(x < 0, -d, d))


def _add_product(acc: ExactFloatSums, slots: np.ndarray, x: np.ndarray, y: np.ndarray, d: np.ndarray) -> None:
    """acc[slot] += x * y * d exactly, in units of 2**_UNIT: with mx = a * 2**26 + b and
    my = c * 2**26 + e, mx * my = ac * 2**52 + (ae + bc) * 2**26 + be, each part < 2**54."""
    nz = (x != 0) & (y != 0) & (d != 0)
    slots, x, y, d = slots[nz], x[nz], y[nz], d[nz]
    if not len(x):
        return
    mx, ex = _split(x)
    my, ey = _split(y)
    low = np.uint64((1 << 26) - 1)
    a, b = mx >> np.uint64(26), mx & low
    c, e = my >> np.uint64(26), my & low
    parts = np.concatenate([a * c, a * e + b * c, b * e])
    ee = ex + ey
    pos = np.concatenate([ee + 52, ee + 26, ee]) - _UNIT
    sign = np.where((x < 0) != (y < 0), -d, d)
    keep = parts != 0
    acc.add_mantissas(np.tile(slots, 3)[keep], parts[keep], pos[keep], np.tile(sign, 3)[keep])


def _rounded(num: np.ndarray, den) -> np.ndarray:
    """Python-int quotients rounded once to doubles; beyond the double range is 22003."""
    try:
        q = (num / den).astype(np.float64) if len(num) else np.zeros(0)
    except OverflowError:
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow") from None
    if np.isinf(q).any():
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
    return q


class _Regression:
    """The two-argument statistics of PostgreSQL's float8_regr_accum (arguments Y, X): per
    group the count N of rows where both are non-NULL and the exact sums of x, y, x*x, y*y and
    x*y (fixed-point integers in units of 2**_UNIT, like the variance family's), so retractions
    are exact. A result takes PostgreSQL's accumulated values, each the exact value rounded
    once to a double: Sx, Sy and Sxx = Sum((x - mean x)**2) = (N*Sum(x*x) - Sum(x)**2) / N,
    Syy, Sxy alike, and applies PostgreSQL's final functions (float8_corr, float8_regr_slope,
    ...) to them in doubles, with their edge cases (N < 1 or, for covar_samp, N < 2 is NULL;
    Sxx = 0 makes slope, intercept, r2 NULL; corr is NULL when Sxx or Syy is 0; r2 is 1 when
    Syy is 0). NaN and infinities are counted apart: as in float8_regr_accum, a non-finite x
    makes Sxx NaN, a non-finite y Syy, either of them Sxy, and Sx / Sy are their float sums
    (NaN for NaN or for both infinities)."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.nn = np.zeros(0, np.int64)
        self.sums = [ExactFloatSums() for _ in range(5)]  # x, y, xx, yy, xy
        self.specials = np.zeros((0, 6), np.int64)  # x: +inf, -inf, NaN; y: +inf, -inf, NaN

    def grow(self, size: int) -> None:
        self.nn = _grow(self.nn, size)
        self.specials = _grow(self.specials, size)
        for s in self.sums:
            s.grow(size)

    def compact(self, upper: int) -> None:
        pass

    def update(self, seg, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        y_arr, x_arr = args[0], args[1]
        t = seg.touched
        if not len(t):
            return
        dv = np.where(_valid(y_arr) & _valid(x_arr), diff, 0)
        self.nn[t] += seg.sum(dv)
        fin = []
        for k, arr in enumerate((x_arr, y_arr)):
            v = pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
            finite = np.isfinite(v)
            if not finite.all():
                for j, mask in enumerate((v == np.inf, v == -np.inf, np.isnan(v))):
                    self.specials[t, 3 * k + j] += seg.sum(np.where(mask, dv, 0))
                v = np.where(finite, v, 0.0)
            fin.append(v)
        x, y = fin
        s = seg.slots
        _add_linear(self.sums[0], s, x, dv)
        _add_linear(self.sums[1], s, y, dv)
        _add_product(self.sums[2], s, x, x, dv)
        _add_product(self.sums[3], s, y, y, dv)
        _add_product(self.sums[4], s, x, y, dv)

    def _total(self, k: int, slots: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Sx (k = 0) or Sy (k = 1) as PostgreSQL's float sum has it."""
        out = np.zeros(len(slots))
        if ok.any():
            ints = _ExactFloatMoments._ints(self.sums[k], slots[ok])
            out[ok] = _rounded(ints, 1 << -_UNIT)
        sp = self.specials[slots]
        pinf, ninf, nan = sp[:, 3 * k] > 0, sp[:, 3 * k + 1] > 0, sp[:, 3 * k + 2] > 0
        out = np.where(pinf, np.inf, out)
        out = np.where(ninf, -np.inf, out)
        return np.where(nan | (pinf & ninf), np.nan, out)

    def _centred(self, a: int, b: int, slots: np.ndarray, n: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Sxx (0, 0), Syy (1, 1) or Sxy (0, 1): (N * Sum(ab) - Sum(a) * Sum(b)) / N, exact,
        rounded once; NaN where `ok` is false (a non-finite input)."""
        out = np.full(len(slots), np.nan)
        if ok.any():
            sl = slots[ok]
            N = n[ok].astype(object)
            sa = _ExactFloatMoments._ints(self.sums[a], sl)
            sb = sa if a == b else _ExactFloatMoments._ints(self.sums[b], sl)
            prod = _ExactFloatMoments._ints(self.sums[{(0, 0): 2, (1, 1): 3, (0, 1): 4}[(a, b)]], sl)
            num = N * prod * (1 << -_UNIT) - sa * sb
            out[ok] = _rounded(num, N * (1 << (-2 * _UNIT)))
        return out

    def result(self, slots: np.ndarray, counts: np.ndarray) -> pa.Array:
        func = self.agg.func
        n = self.nn[slots]
        present = n >= (2 if func == "covar_samp" else 1)
        sl, nv = slots[present], n[present]
        sp = self.specials[sl]
        x_fin, y_fin = sp[:, :3].sum(axis=1) == 0, sp[:, 3:].sum(axis=1) == 0
        N = nv.astype(np.float64)
        vals = np.zeros(len(sl))
        null = np.zeros(len(sl), bool)
        exact = np.zeros(len(sl), bool)  # rows whose value is recomputed exactly below
        with np.errstate(all="ignore"):
            if func in ("regr_avgx", "regr_avgy"):
                vals = self._total(0 if func == "regr_avgx" else 1, sl, x_fin if func == "regr_avgx" else y_fin) / N
            elif func == "regr_sxx":
                vals = self._centred(0, 0, sl, nv, x_fin)
            elif func == "regr_syy":
                vals = self._centred(1, 1, sl, nv, y_fin)
            else:
                sxy = self._centred(0, 1, sl, nv, x_fin & y_fin)
                if func == "regr_sxy":
                    vals = sxy
                elif func == "covar_pop":
                    vals = sxy / N
                elif func == "covar_samp":
                    vals = sxy / (N - 1.0)
                else:
                    sxx = self._centred(0, 0, sl, nv, x_fin)
                    # Where PostgreSQL's doubles overflow on the way (sqrt(Sxx * Syy) of 1e300s
                    # is Infinity, so corr is 0), its answer is kept as it is.
                    if func == "regr_slope":
                        null, vals = sxx == 0, sxy / sxx
                        exact = np.ones(len(sl), bool)
                    elif func == "regr_intercept":
                        sx, sy = self._total(0, sl, x_fin), self._total(1, sl, y_fin)
                        null, vals = sxx == 0, (sy - sx * sxy / sxx) / N
                        exact = np.isfinite(sx * sxy) & np.isfinite(sx * sxy / sxx)
                    else:
                        syy = self._centred(1, 1, sl, nv, y_fin)
                        if func == "corr":
                            null, vals = (sxx == 0) | (syy == 0), sxy / np.sqrt(sxx * syy)
                            exact = np.isfinite(sxx * syy)
                        else:  # regr_r2
                            null = sxx == 0
                            vals = np.where(syy == 0, 1.0, (sxy * sxy) / (sxx * syy))
                            exact = (syy != 0) & np.isfinite(sxx * syy) & np.isfinite(sxy * sxy)
                    # The ratios of finite sums exactly, rounded once (PostgreSQL's doubles
                    # cancel badly where the mean is far from zero).
                    exact &= ~null & x_fin & y_fin
                    if exact.any():
                        vals[exact] = self._exact_ratio(func, sl[exact], nv[exact])
        out = np.zeros(len(slots))
        out[present] = np.where(null, 0.0, vals)
        valid = present.copy()
        valid[present] = ~null
        return pa.array(out, pa.float64(), mask=~valid)

    def _exact_ratio(self, func: str, sl: np.ndarray, nv: np.ndarray) -> np.ndarray:
        """regr_slope, regr_intercept, regr_r2 and corr of groups with finite inputs and
        non-zero Sxx (Syy too for corr and r2), from the exact sums."""
        ints = [_ExactFloatMoments._ints(acc, sl) for acc in self.sums]
        X, Y, XX, YY, XY = ints
        N = nv.astype(object)
        unit = 1 << -_UNIT
        sxx = N * XX * unit - X * X  # N * Sxx, in units of 2**(2 * _UNIT)
        sxy = N * XY * unit - X * Y
        if func == "regr_slope":
            return _ratio(sxy, sxx)
        if func == "regr_intercept":
            return _ratio(Y * sxx - X * sxy, N * sxx * unit)
        syy = N * YY * unit - Y * Y
        r2 = _ratio(sxy * sxy, sxx * syy)
        return r2 if func == "regr_r2" else np.sign(_ratio(sxy, np.ones(len(sxy), object))) * np.sqrt(r2)


def _exact_div(a: int, b: int) -> float:
    try:
        return a / b  # correctly rounded, whatever the sizes
    except OverflowError:
        return math.inf if (a < 0) == (b < 0) else -math.inf


_ratio_of = np.frompyfunc(_exact_div, 2, 1)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Exact Python-int quotients rounded once to doubles (+-Infinity beyond the range, as
    PostgreSQL's final functions overflow silently)."""
    return _ratio_of(num, den).astype(np.float64) if len(num) else np.zeros(0)


# ---- percentile_cont, percentile_disc, mode ---------------------------------------------------

ORDERED_SET = frozenset({"percentile_cont", "percentile_disc", "mode"})


def _percentile_error(p: float) -> SqlError:
    from planner.aggregates import percentile_out_of_range  # (PostgreSQL's wording, one place)
    return percentile_out_of_range(p)


class _OrderedSet:
    """percentile_cont / percentile_disc (fraction: the constant `extra[0]`) and mode()
    WITHIN GROUP (ORDER BY x): the (group, sort key, value) multiset in an Arrangement keyed
    by group, like min/max's; a touched group is recomputed from it, all touched groups at
    once: sorted by (group, key), the wanted row found by binary search in the running counts.
    NULL values are not kept (PostgreSQL ignores them). As in PostgreSQL: percentile_disc is
    the first value whose position (1-based) reaches ceil(f * n); percentile_cont interpolates
    between the values at rows floor and ceil of f * (n - 1) (0-based) as first + (second -
    first) * proportion (intervals with interval arithmetic); mode is the most frequent value,
    the first in the sort order among equally frequent ones."""

    def __init__(self, agg: AggregateExpr) -> None:
        self.agg = agg
        self.trace = Arrangement(key=(0,))
        self.desc = agg.order_by[0][1]
        self.fraction = agg.extra[0].value if agg.extra else None

    def grow(self, size: int) -> None:
        pass

    def compact(self, upper: int) -> None:
        self.trace.compact(upper)

    def update(self, seg, slots: np.ndarray, args: list[pa.Array], diff: np.ndarray, time: int) -> None:
        value, key = args[0], args[-1]
        t = pa.table({"c0": pa.array(slots, pa.int64()), "c1": key, "c2": value,
                      "time": pa.array(np.full(len(slots), time, np.uint64)), "diff": pa.array(diff)})
        self.trace.insert(t.filter(value.is_valid()) if value.null_count else t)

    def _rows(self, touched: np.ndarray) -> pa.Table | None:
        """The touched groups' present (group, key, value) rows with their multiplicity in
        `diff`, sorted by group, then key in the call's order, then value."""
        from dataflow.batch import consolidate
        ups = self.trace.lookup(pa.table({"c0": pa.array(touched, pa.int64())}), (0,))
        if not ups.num_rows:
            return None
        ups = ups.set_column(ups.column_names.index("time"), "time", pa.array(np.zeros(ups.num_rows, np.uint64)))
        rows = consolidate(ups)
        rows = rows.filter(pc.greater(rows["diff"], 0))
        if not rows.num_rows:
            return None
        order = "descending" if self.desc else "ascending"
        sort = {"g": rows["c0"], "k": rows["c1"]}
        keys = [("g", "ascending"), ("k", order)]
        v = rows["c2"]
        if pa.types.is_interval(v.type):  # (ties between equal intervals: by their fields)
            from dataflow import interval
            for j, part in enumerate(interval.split(v.combine_chunks())):
                sort[f"v{j}"] = pa.array(part)
                keys.append((f"v{j}", "ascending"))
        else:
            sort["v"] = v
            keys.append(("v", "ascending"))
        return rows.take(pc.sort_indices(pa.table(sort), sort_keys=keys))

    def result(self, touched: np.ndarray, counts: np.ndarray) -> pa.Array:
        out_type = self.agg.type.arrow
        n_t = len(touched)
        func = self.agg.func
        rows = self._rows(touched) if n_t and not (func != "mode" and self.fraction is None) else None
        if rows is None:
            return pa.nulls(n_t, out_type)
        p = self.fraction
        if func != "mode" and not 0 <= p <= 1:
            raise _percentile_error(p)
        g = rows["c0"].to_numpy()
        m = rows["diff"].to_numpy()
        first = np.ones(len(g), bool)
        first[1:] = g[1:] != g[:-1]
        starts = np.flatnonzero(first)
        present_slots = g[starts]
        cum = np.cumsum(m)
        base = cum[starts] - m[starts]  # rows before each group
        n = np.add.reduceat(m, starts)
        values = rows["c2"].combine_chunks()
        if func == "percentile_disc":
            r = np.maximum(np.ceil(p * n).astype(np.int64), 1)
            res = values.take(pa.array(np.searchsorted(cum, base + r, side="left")))
        elif func == "percentile_cont":
            pos = p * (n - 1).astype(np.float64)
            lo, hi = np.floor(pos), np.ceil(pos)
            a = values.take(pa.array(np.searchsorted(cum, base + lo.astype(np.int64) + 1, side="left")))
            b = values.take(pa.array(np.searchsorted(cum, base + hi.astype(np.int64) + 1, side="left")))
            prop = pos - lo
            if pa.types.is_interval(values.type):
                from dataflow.functions import KERNELS
                step = KERNELS["interval_mul"]([KERNELS["interval_sub"]([b, a], None), pa.array(prop)], None)
                res = pc.if_else(pa.array(hi > lo), KERNELS["interval_add"]([a, step], None), a)
            else:
                av, bv = a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False)
                with np.errstate(all="ignore"):
                    res = pa.array(np.where(hi > lo, av + (bv - av) * prop, av))
        else:  # mode: runs of equal keys within a group, the longest (the first of equals) wins
            k = rows["c1"].combine_chunks()
            run = first.copy()
            if len(g) > 1:
                same = pc.equal(k.slice(1), k.slice(0, len(g) - 1))
                run[1:] |= ~pc.fill_null(same, False).to_numpy(zero_copy_only=False)
            rstarts = np.flatnonzero(run)
            rcount = np.add.reduceat(m, rstarts)
            rgroup = np.cumsum(first)[rstarts] - 1  # group number of each run
            best = np.full(len(starts), -1, np.int64)
            np.maximum.at(best, rgroup, rcount)
            is_best = rcount == best[rgroup]
            pick = np.full(len(starts), len(rstarts), np.int64)
            np.minimum.at(pick, rgroup[is_best], np.flatnonzero(is_best))
            res = values.take(pa.array(rstarts[pick]))
        pos = np.searchsorted(present_slots, touched)
        posc = np.minimum(pos, len(present_slots) - 1)
        present = present_slots[posc] == touched
        res = res.take(pa.array(posc))
        return pc.if_else(pa.array(present), res, pa.scalar(None, res.type)).cast(out_type)
