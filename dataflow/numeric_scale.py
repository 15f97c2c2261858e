"""The scale PostgreSQL gives a numeric quotient, on whole arrays of unscaled integers.

PostgreSQL rounds `a / b` (and `avg`, which is sum / count) to the scale numeric.c's
select_div_scale picks: at least 16 significant digits, and no fewer digits after the point than
either operand shows (its display scale). Unconstrained numeric here keeps at most 16 digits
after the point, so a quotient is rounded to the smaller of PostgreSQL's scale and 16: the same
value as PostgreSQL's whenever its scale is at most 16 (every quotient above 10,000, and those
below whose first digits allow, `20000 / 3`), and PostgreSQL's rounded to 16 digits otherwise
(`1 / 3`, 20 digits there).

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

from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from dataflow.decimal_util import div_round
from dataflow.expr import Cast, Literal, ScalarExpr
from dataflow.types import DEFAULT_NUMERIC_SCALE, TypeKind

NUMERIC_MIN_SIG_DIGITS = 16
NUMERIC_MAX_DISPLAY_SCALE = 1000
_POW10_I64 = 10 ** np.arange(19, dtype=np.int64)
_POW10_OBJ = np.array([10 ** k for k in range(80)], dtype=object)  # (numeric has at most 38 digits)


def dscale_floor(e: ScalarExpr) -> int:
    """The display scale PostgreSQL would see for every value of argument `e` at least: s of a
    numeric(p,s) argument, the written digits of a constant."""
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
    if u.dtype == object:  # (only the digits after the point count: they fit int64)
        u = (u % 10 ** scale).astype(np.int64) if scale <= 18 else u
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
    # Python ints: from the float's log10, then corrected exactly (the float may round across
    # a power of ten).
    guess = np.floor(np.log10(au.astype(np.float64))).astype(np.int64) + 1
    guess = np.clip(guess, 1, len(_POW10_OBJ) - 2)
    guess = guess + (au >= _POW10_OBJ[guess]).astype(np.int64)
    return guess - (au < _POW10_OBJ[guess - 1]).astype(np.int64)


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
        first = np.empty(len(au), np.int64)
        down = shift >= 0
        first[down] = (au[down] // _POW10_OBJ[shift[down]]).astype(np.int64)
        if not down.all():
            first[~down] = (au[~down] * _POW10_OBJ[-shift[~down]]).astype(np.int64)
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
        q = div_round(n * 10 ** shift, d) if shift >= 0 else div_round(n, d * 10 ** -shift)
        out[rows] = q * 10 ** (out_scale - t)
    return out


@dataclass(frozen=True)
class Shown:
    """How an operand's display scales are found: `scale` for every value (integers,
    numeric(p,s)), or, when `trims` (unconstrained numeric), each value's digits without trailing
    zeros, at least `floor`."""

    trims: bool = False
    floor: int = 0

    def of(self, u: np.ndarray, scale: int) -> np.ndarray:
        return shown_scales(u, scale, self.floor) if self.trims else np.full(len(u), scale, np.int64)


def fewer_digits_where_pg_has(quotients: np.ndarray, valid: np.ndarray, num: np.ndarray, num_scale: int,
                              num_shown: Shown, den: np.ndarray, den_scale: int, den_shown: Shown,
                              out_scale: int) -> np.ndarray:
    """`quotients` (num / den rounded half away from zero to `out_scale` digits, unscaled) with
    the valid rows whose PostgreSQL scale t is smaller rounded to t instead. Display scales are
    looked at only where the quotient's weight alone asks for fewer digits, and a row is rounded
    from its `out_scale`-digit quotient unless that is a tie at t (then the exact quotient is
    divided again: 6732988251 / 53465 = 125932.633517254278499953... is ...2785000 at 16
    digits, a tie at PostgreSQL's 12, where the exact quotient gives ...278, not ...279).
    Returns an object array if any row changed.

    >>> fewer_digits_where_pg_has(np.array([3333333333333333, 333333333333333333333], dtype=object),
    ...     np.array([True, True]), np.array([1, 100000]), 0, Shown(), np.array([3, 3]), 0, Shown(), 16).tolist()
    [3333333333333333, 333333333333333330000]
    """
    if not len(quotients):
        return quotients
    # Fewer than `out_scale` digits needs a quotient weight of at least m base-10000 digits,
    # and such a quotient exceeds 10000^m (its first digits f1 > f2, or its weight is larger):
    # the rows whose rounded quotient is below that keep every digit (most rows: a quotient
    # under 10,000 at out_scale 16, which no int64 quotient at 16 digits exceeds).
    m = (NUMERIC_MIN_SIG_DIGITS - out_scale) // 4 + 1
    smallest = 10 ** (4 * m + out_scale) - 1
    if quotients.dtype != object and smallest > np.iinfo(np.int64).max:
        return quotients
    ok = valid & (den != 0) & (np.abs(quotients) >= smallest)
    rows = np.flatnonzero(ok)
    if not len(rows):
        return quotients
    zeros = np.zeros(len(rows), np.int64)
    num0, den0 = num[rows], den[rows]
    by_weight = div_scales(num0, num_scale, zeros, den0, den_scale, zeros)
    fewer = by_weight < out_scale
    rows, by_weight, num0, den0 = rows[fewer], by_weight[fewer], num0[fewer], den0[fewer]
    if not len(rows):
        return quotients
    # A display scale raises PostgreSQL's scale above what the weight asks for.
    kept = np.maximum(by_weight, np.maximum(num_shown.of(num0, num_scale), den_shown.of(den0, den_scale)))
    fewer = kept < out_scale
    rows, kept, num0, den0 = rows[fewer], kept[fewer], num0[fewer], den0[fewer]
    if not len(rows):
        return quotients
    out = quotients.astype(object)
    q = out[rows]
    magnitude = np.abs(q)
    # The digits rounded away are among the `out_scale` after the point (int64 from here).
    below = (magnitude % 10 ** out_scale).astype(np.int64) if out_scale <= 18 else magnitude
    unit = _POW10_I64[out_scale - kept] if out_scale <= 18 else _POW10_OBJ[out_scale - kept]
    dropped = below % unit
    tie = dropped == unit // 2
    up = np.where(dropped >= unit // 2, unit - dropped, -dropped)  # half away from zero
    rounded = magnitude + up.astype(object)
    out[rows] = np.where(q < 0, -rounded, rounded)
    if tie.any():
        n, d = num0[tie], den0[tie]
        out[rows[tie]] = pg_quotients(n, num_scale, num_shown.of(n, num_scale), d, den_scale,
                                      den_shown.of(d, den_scale), out_scale)
    return out


def avg_quotients(quotients: np.ndarray, valid: np.ndarray, sums: np.ndarray, sum_scale: int,
                  counts: np.ndarray, out_scale: int, unconstrained_input: bool) -> np.ndarray:
    """avg's quotients (sum / count rounded to `out_scale` digits, unscaled) at PostgreSQL's
    scale where it keeps fewer digits (its avg is numeric division of the sum by the count). The
    sum shows its input's scale (integers, numeric(p,s)) or, of unconstrained input, its digits
    without trailing zeros."""
    return fewer_digits_where_pg_has(quotients, valid, sums, sum_scale, Shown(trims=unconstrained_input),
                                     np.asarray(counts), 0, Shown(), out_scale)
