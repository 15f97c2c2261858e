"""Kernels of the math functions and integer bit operators (signatures: `planner.functions.math`).

Double precision kernels run NumPy over the whole batch (NumPy's sqrt, exp, log, sin, pow, ...
give the same bits as the C library PostgreSQL calls; tanh is the exception and goes through
Python's `math.tanh`, which is the C library's). Errors follow PostgreSQL's checks, in its
order, for the first row that fails: a domain error (sqrt of a negative number, 2201F; log of
zero or of a negative number, 2201E; asin(2), sin('Infinity'), 22003 "input is out of range"),
then overflow and underflow of a finite result (22003 "value out of range: overflow").

Numeric kernels reproduce PostgreSQL's numeric.c: the result scale PostgreSQL picks (at least
16 significant digits, never fewer digits than an input shows) and its rounding (half away
from zero), computed with Python's Decimal once per distinct argument value (no vectorised
arbitrary-precision sqrt/ln/exp exists; float64 cannot give 16 significant digits exactly).
The value is then rounded half away from zero to the 16 fractional digits unconstrained
numeric keeps:

    sqrt(2.0)       PostgreSQL 1.414213562373095 (scale 15)   here the same
    sqrt(0.0001)    PostgreSQL 0.01000000000000000 (17)       here 0.01
    exp(-40.0)      PostgreSQL 4.248354255291589E-18 (33)     here 0 (rounded to 16 digits)
    exp(51.0)       23 integer digits                         here 22003, too large

A value's display scale (its digits after the point, which PostgreSQL's scale rules use) is
the number of digits it shows: a numeric(p,s) argument has s, a constant its written digits, a
computed or stored unconstrained value its digits without trailing zeros.

>>> from dataflow.expr import Call, Literal
>>> from dataflow.types import NUMERIC
>>> from decimal import Decimal
>>> KERNELS["math_n_sqrt"]([pa.array([Decimal(2), None], pa.decimal128(38, 16))],
...                        Call("math_n_sqrt", (Literal(None, NUMERIC),), NUMERIC)).to_pylist()
[Decimal('1.4142135623730950'), None]
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, localcontext
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.decimal_util import (from_unscaled, from_unscaled_i64, plain_text, scale_of, to_unscaled,
                                   to_unscaled_i64)
from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call
from dataflow.functions import libm
from dataflow.numeric_scale import NUMERIC_MAX_DISPLAY_SCALE, NUMERIC_MIN_SIG_DIGITS, div_scales, dscale_floor, shown_scales
from dataflow.types import TypeKind

# ---- errors, with PostgreSQL's SQLSTATEs and wording ---------------------------------------


def _overflow() -> SqlError:
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")


def _underflow() -> SqlError:
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow")


def _input_out_of_range() -> SqlError:
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "input is out of range")


def _negative_sqrt() -> SqlError:
    return SqlError("2201F", "cannot take square root of a negative number")


def _log_zero() -> SqlError:
    return SqlError("2201E", "cannot take logarithm of zero")


def _log_negative() -> SqlError:
    return SqlError("2201E", "cannot take logarithm of a negative number")


def _zero_negative_power() -> SqlError:
    return SqlError("2201F", "zero raised to a negative power is undefined")


def _complex_power() -> SqlError:
    return SqlError("2201F", "a negative number raised to a non-integer power yields a complex result")


def _division_by_zero() -> SqlError:
    return SqlError(SqlState.DIVISION_BY_ZERO, "division by zero")


def _int_out_of_range(kind: TypeKind) -> SqlError:
    name = {TypeKind.INT2: "smallint", TypeKind.INT4: "integer", TypeKind.INT8: "bigint"}[kind]
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f"{name} out of range")


def _width_bucket_error(message: str) -> SqlError:
    return SqlError("2201G", message)


def _numeric_overflow(what: str | None = None) -> SqlError:
    """A numeric result beyond what unconstrained numeric holds (22 integer digits), or beyond
    PostgreSQL's own numeric range: PostgreSQL's message, with the reason as detail."""
    detail = None
    if what is not None:
        detail = (f"{what} does not fit: unconstrained numeric keeps at most 22 digits before the "
                  "decimal point.")
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format", detail=detail)


def _raise_first(checks: list[tuple[np.ndarray, Callable[[], SqlError]]]) -> None:
    """Raise the error of the first failing row; within a row, the first failing check (the
    list is in PostgreSQL's order of checks)."""
    best: tuple[int, int] | None = None
    for order, (mask, err) in enumerate(checks):
        hits = np.flatnonzero(mask)
        if len(hits) and (best is None or hits[0] < best[0]):
            best = (int(hits[0]), order)
    if best is not None:
        raise checks[best[1]][1]()


# ---- double precision ------------------------------------------------------------------------

def _arr(x: Any) -> pa.Array:
    if isinstance(x, pa.ChunkedArray):
        return x.combine_chunks()
    return x


def _valid(a: pa.Array) -> np.ndarray:
    if a.null_count == 0:
        return np.ones(len(a), dtype=bool)
    return a.is_valid().to_numpy(zero_copy_only=False)


def _f64(a: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(float64 values with NULLs as 0, validity)."""
    a = _arr(a)
    if a.type != pa.float64():
        a = a.cast(pa.float64())
    valid = _valid(a)
    if a.null_count:
        a = pc.fill_null(a, 0.0)
    return a.to_numpy(zero_copy_only=False), valid


def _f64_out(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    values = np.asarray(values, dtype=np.float64)
    return pa.array(values, pa.float64(), mask=None if valid.all() else ~valid)


def _float_unary(compute: Callable[[np.ndarray], np.ndarray],
                 checks: Callable[[np.ndarray], list[tuple[np.ndarray, Callable[[], SqlError]]]] | None = None,
                 result_checks: Callable[[np.ndarray, np.ndarray], list] | None = None) -> Callable:
    """A double precision function of one argument: `checks(x)` lists the domain errors (masks
    over the argument), `result_checks(x, r)` overflow/underflow of the result."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        x, valid = _f64(vals[0])
        if checks is not None:
            _raise_first([(m & valid, e) for m, e in checks(x)])
        with np.errstate(all="ignore"):
            r = compute(x)
        if result_checks is not None:
            _raise_first([(m & valid, e) for m, e in result_checks(x, r)])
        return _f64_out(r, valid)
    return run


def _finite_overflow(x: np.ndarray, r: np.ndarray) -> list:
    """PostgreSQL's float checks: an infinite result from a finite argument overflowed, a zero
    result from a non-zero finite argument underflowed."""
    finite = np.isfinite(x)
    return [(np.isinf(r) & finite, _overflow), ((r == 0) & (x != 0) & finite, _underflow)]


def _log_checks(x: np.ndarray) -> list:
    return [(x == 0, _log_zero), (x < 0, _log_negative)]


def _infinite_input(x: np.ndarray) -> list:
    return [(np.isinf(x), _input_out_of_range)]


def _outside_unit(x: np.ndarray) -> list:
    return [((x < -1.0) | (x > 1.0), _input_out_of_range)]


def _exp_result(x: np.ndarray, r: np.ndarray) -> list:
    finite = np.isfinite(x)
    return [(np.isinf(r) & finite, _overflow), ((r == 0) & finite, _underflow)]


def _sign(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0))  # NaN and -0 give 0, as PostgreSQL


def _tanh(x: np.ndarray) -> np.ndarray:
    return libm.tanh(x)


def _atanh(x: np.ndarray) -> np.ndarray:
    return np.where(x == 1.0, np.inf, np.where(x == -1.0, -np.inf, libm.arctanh(x)))


RADIANS_PER_DEGREE = 0.0174532925199432957692

# PostgreSQL's degree-based trigonometry (float.c): exact at 0, 30, 45, 60 and 90 degrees.
_SIN_30 = math.sin(30.0 * RADIANS_PER_DEGREE)
_ONE_MINUS_COS_60 = 1.0 - math.cos(60.0 * RADIANS_PER_DEGREE)
_ASIN_0_5 = math.asin(0.5)
_ACOS_0_5 = math.acos(0.5)
_ATAN_1_0 = math.atan(1.0)


def _sind_0_to_30(x: np.ndarray) -> np.ndarray:
    return (libm.sin(x * RADIANS_PER_DEGREE) / _SIN_30) / 2.0


def _cosd_0_to_60(x: np.ndarray) -> np.ndarray:
    one_minus_cos_x = 1.0 - libm.cos(x * RADIANS_PER_DEGREE)
    return 1.0 - (one_minus_cos_x / _ONE_MINUS_COS_60) / 2.0


def _sind_q1(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 30.0, _sind_0_to_30(x), _cosd_0_to_60(90.0 - x))


def _cosd_q1(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 60.0, _cosd_0_to_60(x), _sind_0_to_30(90.0 - x))


_TAN_45 = float(_sind_q1(np.array([45.0]))[0] / _cosd_q1(np.array([45.0]))[0])
_COT_45 = float(_cosd_q1(np.array([45.0]))[0] / _sind_q1(np.array([45.0]))[0])


def _asind_q1(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.5, (libm.arcsin(x) / _ASIN_0_5) * 30.0, 90.0 - (libm.arccos(x) / _ACOS_0_5) * 60.0)


def _acosd_q1(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.5, 90.0 - (libm.arcsin(x) / _ASIN_0_5) * 30.0, (libm.arccos(x) / _ACOS_0_5) * 60.0)


def _reduce_degrees(x: np.ndarray, flips: tuple[bool, bool, bool]) -> tuple[np.ndarray, np.ndarray]:
    """PostgreSQL's reduction of an angle to [0, 90] degrees: (angle, sign). `flips` says
    whether the sign changes for x < 0, for x > 180 and for x > 90 (each function differs)."""
    sign = np.ones_like(x)
    x = np.fmod(x, 360.0)
    neg = x < 0.0
    x = np.where(neg, -x, x)
    if flips[0]:
        sign = np.where(neg, -sign, sign)
    big = x > 180.0
    x = np.where(big, 360.0 - x, x)
    if flips[1]:
        sign = np.where(big, -sign, sign)
    obtuse = x > 90.0
    x = np.where(obtuse, 180.0 - x, x)
    if flips[2]:
        sign = np.where(obtuse, -sign, sign)
    return x, sign


def _sind(x: np.ndarray) -> np.ndarray:
    a, s = _reduce_degrees(x, (True, True, False))
    return s * _sind_q1(a)


def _cosd(x: np.ndarray) -> np.ndarray:
    a, s = _reduce_degrees(x, (False, False, True))
    return s * _cosd_q1(a)


def _tand(x: np.ndarray) -> np.ndarray:
    a, s = _reduce_degrees(x, (True, True, True))
    r = s * ((_sind_q1(a) / _cosd_q1(a)) / _TAN_45)
    return np.where(r == 0.0, 0.0, r)  # never minus zero, as PostgreSQL


def _cotd(x: np.ndarray) -> np.ndarray:
    a, s = _reduce_degrees(x, (True, True, True))
    r = s * ((_cosd_q1(a) / _sind_q1(a)) / _COT_45)
    return np.where(r == 0.0, 0.0, r)


def _asind(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0.0, _asind_q1(x), -_asind_q1(-x))  # asind(-0) is -0


def _acosd(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0.0, _acosd_q1(x), 90.0 + _asind_q1(-x))


def _atand(x: np.ndarray) -> np.ndarray:
    return (libm.arctan(x) / _ATAN_1_0) * 45.0


def _nan_keeping(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.where(np.isnan(x), np.nan, fn(np.where(np.isnan(x), 0.0, x)))


def _f_power(vals: list[pa.Array], expr: Call) -> pa.Array:
    """pow(double, double) as PostgreSQL's dpow: NaN ^ 0 and 1 ^ NaN are 1; 0 ^ negative and
    negative ^ non-integer are 2201F; infinities follow POSIX pow; a finite result that
    overflows or underflows is 22003."""
    x, vx = _f64(vals[0])
    y, vy = _f64(vals[1])
    valid = vx & vy
    some_nan = np.isnan(x) | np.isnan(y)
    checked = valid & ~some_nan
    with np.errstate(all="ignore"):
        _raise_first([(checked & (x == 0) & (y < 0), _zero_negative_power),
                      (checked & (x < 0) & (np.floor(y) != y), _complex_power)])
        r = libm.power(x, y)
    finite = checked & np.isfinite(x) & np.isfinite(y)
    _raise_first([(finite & np.isinf(r), _overflow), (finite & (r == 0) & (x != 0), _underflow)])
    return _f64_out(r, valid)


def _f_atan2(degrees: bool) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        y, vy = _f64(vals[0])
        x, vx = _f64(vals[1])
        with np.errstate(all="ignore"):
            r = libm.arctan2(y, x)
            if degrees:
                r = (r / _ATAN_1_0) * 45.0
        return _f64_out(r, vx & vy)
    return run


def _pi(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pa.array(np.full(len(vals[0]), math.pi), pa.float64())


_RNG = np.random.default_rng()


def _random(vals: list[pa.Array], expr: Call) -> pa.Array:
    """Uniform in [0, 1), a fresh value per row (each process seeds its own generator)."""
    return pa.array(_RNG.random(len(vals[0])), pa.float64())


_INT32_MIN = -2 ** 31


def _f_width_bucket(vals: list[pa.Array], expr: Call) -> pa.Array:
    """width_bucket(double, double, double, int) as PostgreSQL 15's width_bucket_float8:
    count * (operand - low) / (high - low) + 1 in double precision, converted to int32 as C
    does on x86 (a NaN or out-of-range value becomes -2147483648)."""
    x, v0 = _f64(vals[0])
    b1, v1 = _f64(vals[1])
    b2, v2 = _f64(vals[2])
    c = _arr(vals[3]).cast(pa.int64())
    valid = v0 & v1 & v2 & _valid(c)
    count = pc.fill_null(c, 1).to_numpy(zero_copy_only=False)
    cf = count.astype(np.float64)
    with np.errstate(all="ignore"):
        _raise_first([(valid & (count <= 0), lambda: _width_bucket_error("count must be greater than zero")),
                      (valid & (np.isnan(x) | np.isnan(b1) | np.isnan(b2)), lambda: _width_bucket_error(
                          "operand, lower bound, and upper bound cannot be NaN")),
                      (valid & (np.isinf(b1) | np.isinf(b2)),
                       lambda: _width_bucket_error("lower and upper bounds must be finite")),
                      (valid & (b1 == b2), lambda: _width_bucket_error("lower bound cannot equal upper bound"))])
        up = b1 < b2
        below = np.where(up, x < b1, x > b1)
        above = np.where(up, x >= b2, x <= b2)
        _raise_first([(valid & ~below & above & (count == 2 ** 31 - 1), lambda: _int_out_of_range(TypeKind.INT4))])
        inner = np.where(up, cf * (x - b1) / (b2 - b1), cf * (b1 - x) / (b1 - b2)) + 1
        ok = np.isfinite(inner) & (inner < 2.0 ** 31) & (inner > -2.0 ** 31 - 1)
        as_int = np.where(ok, np.trunc(np.where(ok, inner, 0.0)), _INT32_MIN).astype(np.int64)
    r = np.where(below, 0, np.where(above, count + 1, as_int))
    return pa.array(r.astype(np.int32), pa.int32(), mask=None if valid.all() else ~valid)


# ---- numeric: PostgreSQL's numeric.c on Python Decimals -------------------------------------

NUMERIC_MAX_RESULT_SCALE = 2000
_SCALE = 16  # unconstrained numeric's fractional digits
_INT_DIGITS = 22
_LIMIT = Decimal(10) ** _INT_DIGITS
_WIDE = Context(prec=3000, rounding=ROUND_HALF_UP, Emin=-999999, Emax=999999)
_ONE = Decimal(1)


def _clamp_scale(s: int) -> int:
    return min(max(s, 0), NUMERIC_MAX_DISPLAY_SCALE)


def _round(d: Decimal, scale: int) -> Decimal:
    """`d` rounded half away from zero to `scale` fractional digits (PostgreSQL's round_var)."""
    return d.quantize(_ONE.scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)


def _ctx(digits: int) -> Context:
    return Context(prec=max(digits, 1) + 12, rounding=ROUND_HALF_EVEN, Emin=-999999, Emax=999999)


def _dscale(d: Decimal) -> int:
    """The digits after the point a value shows (arguments come normalized: `_decimal`)."""
    return max(0, -d.as_tuple().exponent)


def _decimal(unscaled: int, scale: int) -> Decimal:
    """unscaled / 10^scale as a Decimal without trailing zeros."""
    if unscaled == 0:
        return Decimal(0)
    text = str(unscaled)
    digits = text.rstrip("0")
    return Decimal(f"{digits}E{len(text) - len(digits) - scale}")


def _groups(d: Decimal) -> tuple[int, list[int]]:
    """PostgreSQL's NumericVar view of |d| > 0: its weight and its base-10000 digits, aligned
    at the decimal point, without leading or trailing zero digits.

    >>> _groups(Decimal("12345.0007"))
    (1, [1, 2345, 7])
    """
    sign, digits, exponent = d.copy_abs().normalize(_WIDE).as_tuple()
    coefficient = int("".join(map(str, digits)))
    weight = (len(digits) - 1 + exponent) // 4
    low = exponent // 4
    n = coefficient * 10 ** (exponent - 4 * low)
    out = []
    while n:
        n, g = divmod(n, 10000)
        out.append(g)
    return weight, out[::-1]


def _nbase(d: Decimal) -> tuple[int, int, int, bool]:
    """(weight, first digit, second digit or 0, whether digits follow the first) of |d| > 0."""
    weight, groups = _groups(d)
    return weight, groups[0], groups[1] if len(groups) > 1 else 0, len(groups) > 1


def _ln_dweight(d: Decimal) -> int:
    """numeric.c estimate_ln_dweight: the decimal weight of ln(d)."""
    if d <= 0:
        return 0
    if Decimal("0.9") <= d <= Decimal("1.1"):
        x = d - 1
        if x == 0:
            return 0
        weight, first, _, _ = _nbase(x)
        return weight * 4 + int(math.log10(first))
    weight, first, second, more = _nbase(d)
    digits, dweight = first, weight * 4
    if more:
        digits = digits * 10000 + second
        dweight -= 4
    ln_var = math.log(float(digits)) + dweight * 2.302585092994046
    return int(math.log10(abs(ln_var)))


def _ln_at(d: Decimal, scale: int) -> Decimal:
    """ln(d) (d > 0) rounded to `scale` digits (numeric.c ln_var)."""
    return _round(d.ln(_ctx(scale + len(str(abs(d.adjusted()))) + 2)), scale)


def _exp_at(x: Decimal, scale: int) -> Decimal:
    """exp(x) rounded to `scale` digits (numeric.c exp_var, without its overflow check)."""
    weight = int(float(x) * 0.434294481903252)
    return _round(x.exp(_ctx(weight + 1 + scale)), scale)


def _fit(d: Decimal, what: Callable[[], str]) -> Decimal:
    """A result PostgreSQL computed at its own scale, as unconstrained numeric holds it: rounded
    half away from zero to 16 digits, 22003 beyond 22 integer digits."""
    d = _round(d, _SCALE) if d.as_tuple().exponent < -_SCALE else d
    if d.copy_abs() >= _LIMIT:
        raise _numeric_overflow(what())
    return d


def _n_sqrt(x: Decimal, ds: int) -> Decimal:
    """numeric.c numeric_sqrt on a Decimal (see `_sqrt_unscaled` for the kernel's integer form)."""
    if x < 0:
        raise _negative_sqrt()
    sign, digits, exponent = x.as_tuple()
    unscaled = int("".join(map(str, digits)))
    return Decimal(_sqrt_unscaled(unscaled, -exponent, ds)).scaleb(-_SCALE, _WIDE)


def _sqrt_unscaled(u: int, scale: int, floor: int) -> int:
    """sqrt(u / 10^scale) (u >= 0) as PostgreSQL's numeric_sqrt rounds it - to
    max(16 - (its decimal weight), display scale) digits, half away from zero - then rounded to
    16 digits, as an unscaled integer at scale 16. Exact integer arithmetic (math.isqrt).

    >>> _sqrt_unscaled(2, 0, 0), _sqrt_unscaled(1, 4, 0)   # sqrt(2) at 15 digits, sqrt(0.0001)
    (14142135623730950, 100000000000000)
    """
    if u == 0:
        return 0
    text = str(u)
    n = len(text)
    ds = scale - (n - len(text.rstrip("0")))  # digits the value shows
    # 16 - (the root's decimal weight: 2 * weight + 1, weight of the first base-10000 digit)
    rscale = 15 - 2 * ((n - 1 - scale) // 4)
    rscale = min(max(rscale, ds, floor, 0), NUMERIC_MAX_DISPLAY_SCALE)
    e = 2 * rscale - scale  # the root at rscale digits is sqrt(u * 10^e), rounded
    if e >= 0:
        r = (math.isqrt(4 * u * 10 ** e) + 1) // 2
    else:
        k = (1 - e) // 2
        r = (math.isqrt(u * 10 ** (e + 2 * k)) + 5 * 10 ** (k - 1)) // 10 ** k
    if rscale > _SCALE:
        step = 10 ** (rscale - _SCALE)
        return (r + step // 2) // step
    return r * 10 ** (_SCALE - rscale)


def _n_sqrt_kernel(vals: list[pa.Array], expr: Call) -> pa.Array:
    """sqrt(numeric): integer square roots per distinct value (`_sqrt_unscaled`)."""
    floor = dscale_floor(expr.args[0])
    u, inv, valid, scale = _distinct(_arr(vals[0]))
    _raise_first([(valid & (u[inv] < 0), _negative_sqrt)])
    roots = np.array([_sqrt_unscaled(int(v), scale, floor) if v > 0 else 0 for v in u.tolist()] + [0],
                     dtype=object)
    return _numeric_out(roots[np.where(valid, inv, len(u))], valid, _SCALE, lambda i: "sqrt")


def _n_ln(x: Decimal, ds: int) -> Decimal:
    if x == 0:
        raise _log_zero()
    if x < 0:
        raise _log_negative()
    rscale = _clamp_scale(max(NUMERIC_MIN_SIG_DIGITS - _ln_dweight(x), ds))
    return _ln_at(x, rscale)


def _n_log(base: Decimal, num: Decimal, bds: int, nds: int) -> Decimal:
    """numeric.c log_var: ln(num) / ln(base) at the scale PostgreSQL picks."""
    for v in (base, num):
        if v == 0:
            raise _log_zero()
        if v < 0:
            raise _log_negative()
    if base == 1:
        raise _division_by_zero()
    result_dweight = _ln_dweight(num) - _ln_dweight(base)
    rscale = _clamp_scale(max(NUMERIC_MIN_SIG_DIGITS - result_dweight, bds, nds))
    if base == 10:
        exact = num.log10(_ctx(rscale + 4))
    else:
        ctx = _ctx(rscale + 2 * (len(str(abs(num.adjusted()))) + len(str(abs(base.adjusted())))) + 12)
        exact = ctx.divide(num.ln(ctx), base.ln(ctx))
    return _round(exact, rscale)


def _n_exp(x: Decimal, ds: int) -> Decimal:
    val = float(x)
    if abs(val) >= NUMERIC_MAX_RESULT_SCALE * 3:
        if val > 0:
            raise _numeric_overflow()
        return Decimal(0)
    weight = min(max(val * 0.434294481903252, -NUMERIC_MAX_RESULT_SCALE), NUMERIC_MAX_RESULT_SCALE)
    if weight > _INT_DIGITS + 1:
        raise _numeric_overflow(f"exp({plain_text(x)})")
    rscale = _clamp_scale(max(NUMERIC_MIN_SIG_DIGITS - int(weight), ds))
    return _exp_at(x, rscale)


def _is_integral(d: Decimal) -> bool:
    return d == d.to_integral_value()


def _n_power(base: Decimal, exp: Decimal, bds: int, eds: int) -> Decimal:
    """numeric.c numeric_power / power_var / power_var_int."""
    if base == 0 and exp < 0:
        raise _zero_negative_power()
    if _is_integral(exp) and -2 ** 31 <= exp < 2 ** 31:
        return _power_int(base, int(exp), bds)
    if base == 0:
        return Decimal(0)
    negative = False
    if base < 0:
        if not _is_integral(exp):
            raise _complex_power()
        negative = int(exp) % 2 == 1
        base = -base
    ln_dweight = _ln_dweight(base)
    local_rscale = max(8 - ln_dweight, 0)
    ln_num = _round(_ln_at(base, local_rscale) * exp, local_rscale)  # a first, rough estimate
    val = float(ln_num)
    if abs(val) > NUMERIC_MAX_RESULT_SCALE * 3.01:
        if val > 0:
            raise _numeric_overflow()
        return Decimal(0)
    val *= 0.434294481903252
    if val > _INT_DIGITS + 1:
        raise _numeric_overflow(f"{plain_text(base)} ^ {plain_text(exp)}")
    rscale = _clamp_scale(max(NUMERIC_MIN_SIG_DIGITS - int(val), bds, eds))
    sig_digits = max(rscale + int(val), 0)
    local_rscale = max(sig_digits - ln_dweight + 8, 0)
    ln_num = _round(_ln_at(base, local_rscale) * exp, local_rscale)
    r = _exp_at(ln_num, rscale)
    return -r if negative and r else r


def _power_int(base: Decimal, exp: int, bds: int) -> Decimal:
    """numeric.c power_var_int (PostgreSQL 15): base ^ exp for an int32 exponent, rounded to
    max(16, the base's display scale) digits whatever the result's size."""
    rscale = _clamp_scale(max(NUMERIC_MIN_SIG_DIGITS, bds))
    if exp == 0:
        return Decimal(1)
    if exp == 1:
        return _round(base, rscale)
    if exp == -1:
        return _div_round(_ONE, base, rscale)
    if exp == 2:
        return _round(base * base, rscale)
    if base == 0:
        return Decimal(0)
    # base ~= f * 10^p from its first four base-10000 digits, as PostgreSQL estimates it
    weight, groups = _groups(base)
    f, p = float(groups[0]), weight * 4
    for g in groups[1:4]:
        f = f * 10000 + g
        p -= 4
    f = exp * (math.log10(f) + p)
    if f > 3 * 32767 * 4:
        raise _numeric_overflow()
    if f + 1 < -rscale or f + 1 < -NUMERIC_MAX_DISPLAY_SCALE:
        return Decimal(0)
    if f > _INT_DIGITS + 1:
        raise _numeric_overflow(f"{plain_text(base)} ^ {exp}")
    if abs(exp) * len(base.as_tuple().digits) <= 2000:  # exact
        power = base ** abs(exp)
        return _round(power, rscale) if exp > 0 else _div_round(_ONE, power, rscale)
    return _round(_ctx(max(int(f), 0) + 1 + rscale + 8).power(base, exp), rscale)


def _n_width_bucket(x: Decimal, b1: Decimal, b2: Decimal, count: int, ds: tuple[int, int, int]) -> int:
    """numeric.c width_bucket_numeric and compute_bucket, with its rounded division (PostgreSQL
    15 rounds (operand - low) * count / (high - low) to the scale of a numeric division, so an
    operand just below the upper bound can land in bucket count + 1)."""
    if count <= 0:
        raise _width_bucket_error("count must be greater than zero")
    if b1 == b2:
        raise _width_bucket_error("lower bound cannot equal upper bound")
    if b1 < b2:
        if x < b1:
            return 0
        if x >= b2:
            result = count + 1
        else:
            result = _bucket(x - b1, b2 - b1, count, max(ds[0], ds[1]), max(ds[2], ds[1]))
    else:
        if x > b1:
            return 0
        if x <= b2:
            result = count + 1
        else:
            result = _bucket(b1 - x, b1 - b2, count, max(ds[0], ds[1]), max(ds[2], ds[1]))
    if result > 2 ** 31 - 1:
        raise _int_out_of_range(TypeKind.INT4)
    return result


def _bucket(num: Decimal, den: Decimal, count: int, num_ds: int, den_ds: int) -> int:
    num = num * count
    rscale = _div_scale(num, den, num_ds, den_ds)
    q = _div_round(num, den, rscale)
    return int((q + 1).to_integral_value(rounding="ROUND_FLOOR", context=_WIDE))


def _div_round(a: Decimal, b: Decimal, scale: int) -> Decimal:
    """a / b rounded half away from zero to `scale` digits, exactly (integer arithmetic)."""
    _, da, ea = a.as_tuple()
    _, db, eb = b.as_tuple()
    num = int(a.scaleb(-ea, _WIDE))
    den = int(b.scaleb(-eb, _WIDE))
    shift = ea - eb + scale  # a / b * 10^scale = num / den * 10^shift
    if shift >= 0:
        num *= 10 ** shift
    else:
        den *= 10 ** -shift
    q, r = divmod(abs(num), abs(den))
    if 2 * r >= abs(den):
        q += 1
    return Decimal(q if (num < 0) == (den < 0) else -q).scaleb(-scale, _WIDE)


def _div_scale(a: Decimal, b: Decimal, ads: int, bds: int) -> int:
    """numeric.c select_div_scale of a / b (display scales `ads`, `bds`): see numeric_scale.py."""
    (ua, sa), (ub, sb) = _unscaled_of(a), _unscaled_of(b)
    return int(div_scales(np.array([ua], dtype=object), sa, np.array([ads]),
                          np.array([ub], dtype=object), sb, np.array([bds]))[0])


def _unscaled_of(d: Decimal) -> tuple[int, int]:
    """(unscaled integer, scale >= 0) of a finite Decimal."""
    sign, digits, exponent = d.as_tuple()
    u = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    return (u * 10 ** exponent, 0) if exponent > 0 else (u, -exponent)


# ---- numeric plumbing: distinct argument values, display scales ------------------------------

def _distinct(a: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(distinct unscaled values, index of each row's value, validity, scale) of an integer or
    decimal array; NULL rows get index 0."""
    a = _arr(a)
    fast = to_unscaled_i64(a)
    if fast is not None:
        v, valid = fast
        u, inv = np.unique(v, return_inverse=True)
        return u, inv.reshape(-1), valid, scale_of(a.type)
    # Wide decimals: Arrow hashes the 128-bit values; Python ints only for the distinct ones.
    valid = _valid(a)
    encoded = a.dictionary_encode()
    inv = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    u, _ = to_unscaled(encoded.dictionary)
    if not len(u):
        u = np.zeros(1, dtype=object)
    return u, inv, valid, scale_of(a.type)


def _per_distinct(vals: list[pa.Array], compute: Callable[..., Any], out: pa.DataType,
                  decimals: tuple[bool, ...]) -> pa.Array:
    """`compute(*values)` once per distinct combination of non-NULL arguments (numeric arguments
    as Decimals, integers as ints), in the order the combinations first occur (so an error is
    the first failing row's); NULL in, NULL out."""
    n = len(vals[0])
    cols = [_distinct(_arr(a)) for a in vals]
    valid = np.ones(n, dtype=bool)
    for c in cols:
        valid &= c[2]
    rows = np.flatnonzero(valid)
    if not len(rows):
        return pa.nulls(n, out)
    # One int64 key per row for its combination of distinct values (renumbered whenever the
    # product of the counts grows large).
    keys, size = cols[0][1][rows], len(cols[0][0])
    for u, inv, _, _ in cols[1:]:
        if size * len(u) >= 2 ** 62:
            _, keys = np.unique(keys, return_inverse=True)
            size = int(keys.max()) + 1
        keys, size = keys * len(u) + inv[rows], size * len(u)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    representative = rows[first]  # a row holding each combination
    order = np.argsort(first, kind="stable")
    results: list[Any] = [None] * len(first)
    with localcontext(_WIDE):  # + - * of Decimals are exact in here
        for k in order.tolist():
            r = representative[k]
            args = []
            for (u, inv, _, scale), is_dec in zip(cols, decimals):
                raw = int(u[inv[r]])
                args.append(_decimal(raw, scale) if is_dec else raw)
            results[k] = compute(*args)
    distinct = pa.array(results, out)
    taken = distinct.take(pa.array(inverse.reshape(-1)))
    if len(rows) == n:
        return taken
    idx = np.full(n, -1, dtype=np.int64)
    idx[rows] = np.arange(len(rows))
    return taken.take(pa.array(idx, mask=~valid))


_DEC16 = pa.decimal128(38, _SCALE)


def _numeric_fn(fn: Callable[..., Decimal], name: str, with_dscale: bool = True) -> Callable:
    """A numeric kernel from a function of Decimals (and their display scales)."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        floors = [dscale_floor(a) for a in expr.args]

        def one(*xs: Decimal) -> Decimal:
            extra = [max(_dscale(x), f) for x, f in zip(xs, floors)] if with_dscale else []
            return _fit(fn(*xs, *extra), lambda: f"the result of {name}({', '.join(plain_text(x) for x in xs)})")
        return _per_distinct(vals, one, _DEC16, (True,) * len(vals))
    return run


def _n_width_bucket_kernel(vals: list[pa.Array], expr: Call) -> pa.Array:
    floors = [dscale_floor(a) for a in expr.args[:3]]

    def one(x: Decimal, b1: Decimal, b2: Decimal, count: int) -> int:
        ds = tuple(max(_dscale(v), f) for v, f in zip((x, b1, b2), floors))
        return _n_width_bucket(x, b1, b2, count, ds)
    return _per_distinct(vals, one, pa.int32(), (True, True, True, False))


# ---- numeric kernels that need no Decimal: sign, trunc, div, gcd, lcm, factorial -------------

def _unscaled(a: pa.Array) -> tuple[np.ndarray, np.ndarray, int]:
    a = _arr(a)
    fast = to_unscaled_i64(a)
    v, valid = fast if fast is not None else to_unscaled(a)
    return v, valid, scale_of(a.type)


def _numeric_out(v: np.ndarray, valid: np.ndarray, scale: int, what: Callable[[int], str]) -> pa.Array:
    """Unscaled results at `scale` -> unconstrained numeric (scale 16), 22003 past 22 digits."""
    if v.dtype != object and scale == _SCALE:
        big = valid & (np.abs(v) >= 10 ** (_INT_DIGITS + _SCALE))
        if not big.any():
            return from_unscaled_i64(v, valid, _SCALE)
    v = v.astype(object)
    if scale < _SCALE:
        v = v * 10 ** (_SCALE - scale)
    big = np.flatnonzero(valid & (np.abs(v) >= 10 ** (_INT_DIGITS + _SCALE)))
    if len(big):
        raise _numeric_overflow(what(int(big[0])))
    return from_unscaled(v, valid, _SCALE)


def _n_sign(vals: list[pa.Array], expr: Call) -> pa.Array:
    v, valid, _ = _unscaled(vals[0])
    s = np.sign(v).astype(np.int64) * 10 ** _SCALE
    return from_unscaled_i64(s, valid, _SCALE)


def _n_min_scale(vals: list[pa.Array], expr: Call) -> pa.Array:
    """min_scale(numeric): the digits after the point the value needs (without trailing zeros),
    exactly what it shows here."""
    v, valid, scale = _unscaled(vals[0])
    return pa.array(shown_scales(v, scale).astype(np.int32), pa.int32(), mask=~valid)


def _n_trim_scale(vals: list[pa.Array], expr: Call) -> pa.Array:
    """trim_scale(numeric): the value without trailing zeros after the point, which is how an
    unconstrained numeric shows every value here: the value as unconstrained numeric (a
    numeric(p,s) value needing more than its 16 digits is refused as that cast refuses it)."""
    from dataflow.scalar import cast_array  # (dataflow.scalar imports the function library)
    return cast_array(vals[0], expr.type)


def _n_trunc(vals: list[pa.Array], expr: Call) -> pa.Array:
    """trunc(numeric [, int]): toward zero at the given number of digits (negative: before the
    point), on the unscaled integers."""
    v, valid, scale = _unscaled(vals[0])
    if len(vals) > 1:
        d = _arr(vals[1]).cast(pa.int64())
        valid = valid & _valid(d)
        digits = pc.fill_null(d, 0).to_numpy(zero_copy_only=False)
    else:
        digits = np.zeros(len(v), dtype=np.int64)
    drop = np.clip(scale - digits, 0, scale + 60)  # digits to zero at the end of the unscaled value
    if v.dtype != object and (drop <= 18).all():
        unit = (10 ** drop).astype(np.int64)
        r = (np.abs(v) // unit) * unit * np.sign(v)
    else:
        unit = np.array([10 ** int(k) for k in drop], dtype=object) if len(drop) else np.array([], dtype=object)
        vo = v.astype(object)
        r = (np.abs(vo) // unit) * unit * np.sign(vo)
    return _numeric_out(r, valid, scale, lambda i: "the result of trunc")


def _n_div_kernel(vals: list[pa.Array], expr: Call) -> pa.Array:
    """div(numeric, numeric): the quotient truncated toward zero, exact on unscaled integers."""
    a, va, sa = _unscaled(vals[0])
    b, vb, sb = _unscaled(vals[1])
    valid = va & vb
    _raise_first([(valid & (b == 0), _division_by_zero)])
    a, b = a.astype(object), b.astype(object)
    common = max(sa, sb)
    a, b = a * 10 ** (common - sa), b * 10 ** (common - sb)
    b = np.where(b == 0, 1, b)
    q = (np.abs(a) // np.abs(b)) * (np.sign(a) * np.sign(b))
    return _numeric_out(q, valid, 0, lambda i: f"the result of div({_text(vals[0], i)}, {_text(vals[1], i)})")


def _text(a: pa.Array, i: int) -> str:
    v = _arr(a)[i].as_py()
    return plain_text(v.normalize(_WIDE)) if isinstance(v, Decimal) else str(v)


def _uint_abs(v: np.ndarray) -> np.ndarray:
    """|v| as uint64 (exact also for the most negative int64)."""
    return np.where(v < 0, (~v.view(np.uint64)) + np.uint64(1), v.view(np.uint64))


def _gcd_lcm(lcm: bool) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        kind = expr.type.kind
        if kind is TypeKind.NUMERIC:
            return _numeric_gcd_lcm(vals, lcm)
        a = _arr(vals[0]).cast(pa.int64())
        b = _arr(vals[1]).cast(pa.int64())
        valid = _valid(a) & _valid(b)
        x = pc.fill_null(a, 0).to_numpy(zero_copy_only=False)
        y = pc.fill_null(b, 0).to_numpy(zero_copy_only=False)
        ux, uy = _uint_abs(x), _uint_abs(y)
        g = np.gcd(ux, uy)
        limit = np.uint64(2 ** 31 - 1 if kind is TypeKind.INT4 else 2 ** 63 - 1)
        if not lcm:
            _raise_first([(valid & (g > limit), lambda: _int_out_of_range(kind))])
            r = g
        else:
            zero = (ux == 0) | (uy == 0)
            q = ux // np.where(g == 0, np.uint64(1), g)
            over = ~zero & (q != 0) & (uy > limit // np.where(q == 0, np.uint64(1), q))
            _raise_first([(valid & over, lambda: _int_out_of_range(kind))])
            r = np.where(zero | over, np.uint64(0), q * uy)
        return pa.array(r.astype(np.int64), pa.int64(), mask=None if valid.all() else ~valid).cast(expr.type.arrow)
    return run


def _numeric_gcd_lcm(vals: list[pa.Array], lcm: bool) -> pa.Array:
    """gcd/lcm of numerics (fractions too: gcd(1.5, 0.6) is 0.3), on the unscaled integers at a
    common scale."""
    a, va, sa = _unscaled(vals[0])
    b, vb, sb = _unscaled(vals[1])
    valid = va & vb
    common = max(sa, sb)
    x = np.abs(a.astype(object) * 10 ** (common - sa))
    y = np.abs(b.astype(object) * 10 ** (common - sb))
    g = np.gcd(x, y)
    if not lcm:
        return _numeric_out(g, valid, common, lambda i: "the result of gcd")
    # lcm(x, y) = x / gcd(x, y) * y: x / gcd is a plain integer, so the product is unscaled
    # at the common scale.
    r = np.where((x == 0) | (y == 0), 0, (x // np.where(g == 0, 1, g)) * y)
    return _numeric_out(r, valid, common,
                        lambda i: f"the result of lcm({_text(vals[0], i)}, {_text(vals[1], i)})")


_FACTORIALS = [math.factorial(i) for i in range(40)]


def _factorial(vals: list[pa.Array], expr: Call) -> pa.Array:
    """factorial(bigint): exact; 0! is 1; 23! and beyond have more than 22 integer digits."""
    a = _arr(vals[0]).cast(pa.int64())
    valid = _valid(a)
    n = pc.fill_null(a, 0).to_numpy(zero_copy_only=False)
    _raise_first([(valid & (n < 0), lambda: SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE,
                                                     "factorial of a negative number is undefined")),
                  (valid & (n > 32177), lambda: _numeric_overflow()),
                  (valid & (n > 22), lambda: _numeric_overflow("the factorial of 23 or more"))])
    r = np.array([_FACTORIALS[int(k)] if ok else 0 for k, ok in zip(np.clip(n, 0, 22).tolist(), valid.tolist())],
                 dtype=object) if len(n) else np.array([], dtype=object)
    return _numeric_out(r, valid, 0, lambda i: "the factorial")


# ---- integer bit operators -------------------------------------------------------------------

def _ints(a: pa.Array, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    a = _arr(a)
    valid = _valid(a)
    return pc.fill_null(a, 0).to_numpy(zero_copy_only=False).astype(dtype), valid


def _int_out(r: np.ndarray, valid: np.ndarray, t: pa.DataType) -> pa.Array:
    return pa.array(r.astype(t.to_pandas_dtype()), t, mask=None if valid.all() else ~valid)


def _bitwise(op: Callable) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        t = expr.type.arrow
        x, vx = _ints(vals[0], t.to_pandas_dtype())
        y, vy = _ints(vals[1], t.to_pandas_dtype())
        return _int_out(op(x, y), vx & vy, t)
    return run


def _bit_not(vals: list[pa.Array], expr: Call) -> pa.Array:
    t = expr.type.arrow
    x, valid = _ints(vals[0], t.to_pandas_dtype())
    return _int_out(np.invert(x), valid, t)


def _shift(left: bool) -> Callable:
    """`<<` / `>>` as PostgreSQL computes them in C on x86: the count is taken modulo the width of
    the type the shift is done in (32 bits for smallint and integer, 64 for bigint), a smallint
    is shifted as an integer and its result cut to 16 bits; `>>` keeps the sign."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        t = expr.type.arrow
        wide = t == pa.int64()
        x, vx = _ints(vals[0], np.int64 if wide else np.int32)
        n, vn = _ints(vals[1], np.int64)
        bits = 64 if wide else 32
        count = (n & (bits - 1)).astype(np.uint64 if wide else np.uint32)
        if left:
            u = x.view(np.uint64 if wide else np.uint32)
            r = (u << count).view(np.int64 if wide else np.int32)
        else:
            r = x >> count.astype(x.dtype)
        return _int_out(r, vx & vn, t)  # astype cuts a smallint's result to its low 16 bits
    return run


KERNELS = {
    "math_f_sqrt": _float_unary(np.sqrt, lambda x: [(x < 0, _negative_sqrt)]),
    "math_f_cbrt": _float_unary(libm.cbrt),
    "math_f_exp": _float_unary(libm.exp, result_checks=_exp_result),
    "math_f_ln": _float_unary(libm.log, _log_checks),
    "math_f_log10": _float_unary(libm.log10, _log_checks),
    "math_f_sign": _float_unary(_sign),
    "math_f_trunc": _float_unary(np.trunc),
    "math_f_power": _f_power,
    "math_f_degrees": _float_unary(lambda x: x / RADIANS_PER_DEGREE, result_checks=_finite_overflow),
    "math_f_radians": _float_unary(lambda x: x * RADIANS_PER_DEGREE, result_checks=_finite_overflow),
    "math_f_sin": _float_unary(libm.sin, _infinite_input),
    "math_f_cos": _float_unary(libm.cos, _infinite_input),
    "math_f_tan": _float_unary(libm.tan, _infinite_input),
    "math_f_cot": _float_unary(lambda x: 1.0 / libm.tan(x), _infinite_input),
    "math_f_asin": _float_unary(libm.arcsin, _outside_unit),
    "math_f_acos": _float_unary(libm.arccos, _outside_unit),
    "math_f_atan": _float_unary(libm.arctan),
    "math_f_atan2": _f_atan2(False),
    "math_f_sind": _float_unary(_nan_keeping(_sind), _infinite_input),
    "math_f_cosd": _float_unary(_nan_keeping(_cosd), _infinite_input),
    "math_f_tand": _float_unary(_nan_keeping(_tand), _infinite_input),
    "math_f_cotd": _float_unary(_nan_keeping(_cotd), _infinite_input),
    "math_f_asind": _float_unary(_nan_keeping(_asind), _outside_unit),
    "math_f_acosd": _float_unary(_nan_keeping(_acosd), _outside_unit),
    "math_f_atand": _float_unary(_atand),
    "math_f_atan2d": _f_atan2(True),
    "math_f_sinh": _float_unary(libm.sinh),
    "math_f_cosh": _float_unary(libm.cosh),
    "math_f_tanh": _float_unary(_tanh),
    "math_f_asinh": _float_unary(libm.arcsinh),
    "math_f_acosh": _float_unary(libm.arccosh, lambda x: [(x < 1.0, _input_out_of_range)]),
    "math_f_atanh": _float_unary(_atanh, _outside_unit),
    "math_f_width_bucket": _f_width_bucket,
    "math_pi": _pi,
    "math_random": _random,
    "math_n_sqrt": _n_sqrt_kernel,
    "math_n_exp": _numeric_fn(_n_exp, "exp"),
    "math_n_ln": _numeric_fn(_n_ln, "ln"),
    "math_n_log10": _numeric_fn(lambda x, ds: _n_log(Decimal(10), x, 0, ds), "log"),
    "math_n_log": _numeric_fn(_n_log, "log"),
    "math_n_power": _numeric_fn(_n_power, "power"),
    "math_n_sign": _n_sign,
    "math_n_min_scale": _n_min_scale,
    "math_n_trim_scale": _n_trim_scale,
    "math_n_trunc": _n_trunc,
    "math_n_div": _n_div_kernel,
    "math_n_width_bucket": _n_width_bucket_kernel,
    "math_gcd": _gcd_lcm(False),
    "math_lcm": _gcd_lcm(True),
    "math_factorial": _factorial,
    "math_bit_and": _bitwise(np.bitwise_and),
    "math_bit_or": _bitwise(np.bitwise_or),
    "math_bit_xor": _bitwise(np.bitwise_xor),
    "math_bit_not": _bit_not,
    "math_bit_shl": _shift(True),
    "math_bit_shr": _shift(False),
}
