"""The scale PostgreSQL gives a numeric quotient, on whole arrays of unscaled integers.

PostgreSQL rounds `a / b` (and `avg`, which is sum / count) to the scale numeric.c's
select_div_scale picks: at least 16 significant digits, and no fewer digits after the point than
either operand shows (its display scale). Unconstrained numeric here keeps at most 16 digits
after the point, so a quotient is rounded to the smaller of PostgreSQL's scale and 16: the same
value as PostgreSQL's whenever its scale is at most 16 (every quotient of 10,000 or more, and
most below), and PostgreSQL's rounded to 16 digits otherwise (`1 / 3`).

The quotient's weight is estimated as PostgreSQL does, in base-10000 digits: the weight of each
operand's first non-zero base-10000 digit, less one when the numerator's first digit is not
greater than the denominator's. A worked example, `100000 / 3`:

    100000 = 10|0000 (weight 1, first digit 10);  3 = 3 (weight 0, first digit 3)
    quotient weight 1 - 0 = 1 (10 > 3);  scale 16 - 4 * 1 = 12
    -> 33333.333333333333 (PostgreSQL's too), not 33333.3333333333333333

>>> num, den = np.array([100000, 1, 20000]), np.array([3, 3, 3])
>>> div_scales(num, 0, np.zeros(3, np.int64), den, 0, np.zeros(3, np.int64)).tolist()
[12, 20, 16]
>>> pg_quotients(num, 0, np.zeros(3, np.int64), den, 0, np.zeros(3, np.int64), 16).tolist()
[333333333333333330000, 3333333333333333, 66666666666666666667]

A value's display scale (`shown_scales`) is what it shows: a numeric(p,s) value's s, an integer's
0, an unconstrained value's digits after the point without trailing zeros (storage keeps 16 and
does not remember how many were written), raised to what the expression guarantees
(`dscale_floor`: a constant's written digits).
"""

from __future__ import annotations

import numpy as np

from dataflow.expr import Cast, Literal, ScalarExpr
from dataflow.types import DEFAULT_NUMERIC_SCALE, TypeKind

NUMERIC_MIN_SIG_DIGITS = 16
NUMERIC_MAX_DISPLAY_SCALE = 1000
_POW10_I64 = 10 ** np.arange(19, dtype=np.int64)


def dscale_floor(e: ScalarExpr) -> int:
    """The display scale PostgreSQL would see for every value of argument `e` at least: s of a
    numeric(p,s) argument, the written digits of a constant."""
    from decimal import Decimal
    if isinstance(e, Literal) and isinstance(e.value, Decimal) and e.value.is_finite():
        exponent = e.value.as_tuple().exponent
        # A folded constant carries storage's 16 digits: those are not written digits.
        return -exponent if -DEFAULT_NUMERIC_SCALE < exponent < 0 else 0
    while isinstance(e, Cast):
        e = e.arg
    if e.type.kind is TypeKind.NUMERIC and e.type.scale is not None:
        return e.type.scale
    return 0


def shown_scales(u: np.ndarray, scale: int, floor: int = 0) -> np.ndarray:
    """Per unscaled value at `scale`, the digits after the point it shows (its scale less its
    trailing zeros), at least `floor`.

    >>> shown_scales(np.array([150, 100, 0, 7]), 2).tolist()
    [1, 0, 0, 2]
    """
    shown = np.full(len(u), scale, dtype=np.int64)
    for k in range(1, scale + 1):
        ends = u % (10 ** k) == 0
        if not ends.any():  # (a multiple of 10^k is one of 10^(k-1): none will be further on)
            break
        shown[ends] = scale - k
    return np.maximum(shown, floor)


def _digits(au: np.ndarray) -> np.ndarray:
    """The number of decimal digits of each positive integer."""
    if au.dtype != object:
        return np.searchsorted(_POW10_I64, au, side="right")
    return np.fromiter((len(str(x)) for x in au), np.int64, len(au))


def _first_digit(u: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """(weight, first digit) of |u| / 10^scale in base 10000, as numeric.c holds it; (0, 0) for
    zero."""
    au = np.abs(u)
    zero = au == 0
    au = np.where(zero, 1, au)
    if au.dtype == object and len(au) and au.max() < 2 ** 63:
        au = au.astype(np.int64)
    weight = (_digits(au) - 1 - scale) // 4
    shift = scale + 4 * weight  # in [-3, digits - 1]: the first digit is au / 10^shift
    if au.dtype == object:
        first = np.array([a // 10 ** s if s >= 0 else a * 10 ** -s for a, s in zip(au, shift.tolist())],
                         dtype=object) if len(au) else np.zeros(0, np.int64)
        first = first.astype(np.int64)
    else:
        first = np.where(shift >= 0, au // _POW10_I64[np.maximum(shift, 0)], au * _POW10_I64[np.maximum(-shift, 0)])
    return np.where(zero, 0, weight), np.where(zero, 0, first)


def div_scales(num: np.ndarray, num_scale: int, num_shown: np.ndarray,
               den: np.ndarray, den_scale: int, den_shown: np.ndarray) -> np.ndarray:
    """numeric.c select_div_scale per row: the scale of num / den (unscaled at their scales;
    `*_shown`: their display scales)."""
    w1, f1 = _first_digit(num, num_scale)
    w2, f2 = _first_digit(den, den_scale)
    qweight = w1 - w2 - (f1 <= f2)
    rscale = np.maximum(NUMERIC_MIN_SIG_DIGITS - 4 * qweight, np.maximum(num_shown, den_shown))
    return np.clip(rscale, 0, NUMERIC_MAX_DISPLAY_SCALE)


def _div_round(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den rounded half away from zero (Python ints, den != 0)."""
    neg = (num < 0) != (den < 0)
    an, ad = np.abs(num), np.abs(den)
    q = (an * 2 + ad) // (ad * 2)
    return np.where(neg, -q, q)


def pg_quotients(num: np.ndarray, num_scale: int, num_shown: np.ndarray,
                 den: np.ndarray, den_scale: int, den_shown: np.ndarray, out_scale: int) -> np.ndarray:
    """num / den (unscaled at their scales, den != 0) rounded half away from zero to the smaller
    of PostgreSQL's scale and `out_scale`, as an object array of unscaled integers at `out_scale`."""
    num, den = num.astype(object), den.astype(object)
    if not len(num):
        return num
    kept = np.minimum(div_scales(num, num_scale, num_shown, den, den_scale, den_shown), out_scale)
    out = np.empty(len(num), dtype=object)
    for t in np.unique(kept).tolist():
        rows = kept == t
        shift = t + den_scale - num_scale  # num / den * 10^t = num * 10^shift / den
        n, d = num[rows], den[rows]
        q = _div_round(n * 10 ** shift, d) if shift >= 0 else _div_round(n, d * 10 ** -shift)
        out[rows] = q * 10 ** (out_scale - t)
    return out


def fewer_digits_where_pg_has(quotients: np.ndarray, valid: np.ndarray, num: np.ndarray, num_scale: int,
                              num_shown: np.ndarray, den: np.ndarray, den_scale: int,
                              den_shown: np.ndarray, out_scale: int) -> np.ndarray:
    """`quotients` (num / den rounded to `out_scale` digits, unscaled) with the valid rows whose
    PostgreSQL scale is smaller rounded to that scale instead (see `pg_quotients`). Only those
    rows are computed again; the result is an object array if any row changed."""
    if not len(quotients):
        return quotients
    ok = valid & (den != 0)
    kept = div_scales(np.where(ok, num, 0), num_scale, num_shown, np.where(ok, den, 1), den_scale, den_shown)
    fewer = np.flatnonzero(ok & (kept < out_scale))
    if not len(fewer):
        return quotients
    out = quotients.astype(object)
    out[fewer] = pg_quotients(num[fewer], num_scale, num_shown[fewer], den[fewer], den_scale,
                              den_shown[fewer], out_scale)
    return out


def avg_quotients(quotients: np.ndarray, valid: np.ndarray, sums: np.ndarray, sum_scale: int,
                  counts: np.ndarray, out_scale: int, unconstrained_input: bool) -> np.ndarray:
    """avg's quotients (sum / count rounded to `out_scale` digits, unscaled) at PostgreSQL's
    scale where it keeps fewer digits (its avg is numeric division of the sum by the count). The
    sum shows its input's scale (integers, numeric(p,s)) or, of unconstrained input, its digits
    without trailing zeros."""
    shown = shown_scales(sums, sum_scale) if unconstrained_input else np.full(len(sums), sum_scale, np.int64)
    return fewer_digits_where_pg_has(quotients, valid, sums, sum_scale, shown, np.asarray(counts),
                                     0, np.zeros(len(sums), np.int64), out_scale)
