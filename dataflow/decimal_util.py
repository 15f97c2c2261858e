"""Exact numeric (decimal128(38, s)) arithmetic on whole arrays.

Arrow's decimal kernels widen precision past 38 digits and then refuse (e.g. 38+38 digits), so
numeric arithmetic is done on the *unscaled* integers instead: the 128-bit values are read
straight from the Arrow buffer into a NumPy object array of Python ints (exact, no per-row Python
loop in our code), combined there, and written back. Rounding is half away from zero, as
PostgreSQL's numeric does.

>>> a = pa.array([Decimal("1.25"), None], pa.decimal128(38, 2))
>>> v, valid = to_unscaled(a)
>>> v.tolist(), valid.tolist()
([125, 0], [True, False])
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState
from dataflow.types import DEFAULT_NUMERIC_SCALE, NUMERIC_MAX_PRECISION

_LOW64 = (1 << 64) - 1
MAX_UNSCALED = 10 ** 38


def scale_of(t: pa.DataType) -> int:
    return t.scale if pa.types.is_decimal(t) else 0


def _combined_with_validity(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """One contiguous array and its validity mask (True = not NULL)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(len(arr), dtype=bool)
    return arr, valid


def to_unscaled(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(object array of unscaled Python ints with NULLs as 0, validity mask) of an integer or
    decimal128 array."""
    arr, valid = _combined_with_validity(arr)
    n = len(arr)
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        vals = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy().astype(object)
        return vals, valid
    if not pa.types.is_decimal128(t):
        arr = arr.cast(pa.decimal128(38, scale_of(t)))
    words = np.frombuffer(arr.buffers()[1], dtype=np.uint64)[2 * arr.offset: 2 * (arr.offset + n)]
    lo = words[0::2].astype(object)
    hi = words[1::2].view(np.int64).astype(object)
    vals = hi * (1 << 64) + lo
    if not valid.all():
        vals = np.where(valid, vals, 0)
    return vals, valid


def from_unscaled(vals: np.ndarray, valid: np.ndarray, scale: int, precision: int = 38,
                  message: str = "value overflows numeric format") -> pa.Array:
    """Build a decimal128(38, scale) array from unscaled ints; values beyond `precision`
    digits raise 22003."""
    n = len(vals)
    if n == 0:
        return pa.array([], pa.decimal128(38, scale))
    vals = np.where(valid, vals, 0)
    limit = 10 ** precision
    if (np.abs(vals) >= limit).any():
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, message)
    lo = (vals & _LOW64).astype(np.uint64)
    hi = (vals >> 64).astype(np.int64).view(np.uint64)
    words = np.empty(2 * n, dtype=np.uint64)
    words[0::2] = lo
    words[1::2] = hi
    mask = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.decimal128(38, scale), n, [mask, pa.py_buffer(words.tobytes())],
                                 null_count=int((~valid).sum()))


def div_round(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den rounded half away from zero, elementwise on Python ints (den != 0)."""
    neg = (num < 0) != (den < 0)
    an, ad = np.abs(num), np.abs(den)
    q = (an * 2 + ad) // (ad * 2)
    return np.where(neg, -q, q)


def rescale(vals: np.ndarray, from_scale: int, to_scale: int) -> np.ndarray:
    if to_scale == from_scale:
        return vals
    if to_scale > from_scale:
        return vals * (10 ** (to_scale - from_scale))
    den = np.full(len(vals), 10 ** (from_scale - to_scale), dtype=object)
    return div_round(vals, den) if len(vals) else vals


def decimal_to_decimal(arr: pa.Array, scale: int, precision: int = 38) -> pa.Array:
    """Round an integer/decimal array to `scale` fractional digits (PG numeric(p, s) cast)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type == pa.decimal128(38, scale) and precision >= 38:
        return arr
    fast = to_unscaled_i64(arr)
    if fast is not None:
        try:
            v = rescale_i64(fast[0], scale_of(arr.type), scale)
            if precision < 19 and len(v) and (np.abs(v[fast[1]]) >= 10 ** precision).any():
                raise field_overflow(precision, scale)
            return from_unscaled_i64(v, fast[1], scale)
        except OverflowError:
            pass
    vals, valid = to_unscaled(arr)
    vals = rescale(vals, scale_of(arr.type), scale)
    if len(vals) and (np.abs(np.where(valid, vals, 0)) >= 10 ** precision).any():
        raise field_overflow(precision, scale)
    return from_unscaled(vals, valid, scale, precision)


def field_overflow(precision: int, scale: int) -> SqlError:
    """PostgreSQL's error for a value with too many integer digits for numeric(p, s).

    >>> field_overflow(5, 2).detail
    'A field with precision 5, scale 2 must round to an absolute value less than 10^3.'
    """
    bound = "1" if scale >= precision else f"10^{precision - scale}"
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow",
                    detail=f"A field with precision {precision}, scale {scale} must round to an "
                           f"absolute value less than {bound}.")


# ---- fast path: when every unscaled value fits in int64, stay in NumPy int64 -----------------

def to_unscaled_i64(arr: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Like `to_unscaled` but as an int64 NumPy array, or None if some value does not fit."""
    arr, valid = _combined_with_validity(arr)
    n = len(arr)
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(), valid
    if not pa.types.is_decimal128(t):
        return None
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * arr.offset: 2 * (arr.offset + n)]
    lo, hi = words[0::2], words[1::2]
    fits = hi == (lo >> 63)  # the high word is just the sign extension of the low one
    if not (fits | ~valid).all():
        return None
    return np.where(valid, lo, 0), valid


def from_unscaled_i64(vals: np.ndarray, valid: np.ndarray, scale: int, precision: int = 38) -> pa.Array:
    n = len(vals)
    vals = np.where(valid, vals, 0).astype(np.int64)
    if precision < 19 and n and (np.abs(vals) >= 10 ** precision).any():
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
    words = np.empty(2 * n, dtype=np.int64)
    words[0::2] = vals
    words[1::2] = vals >> 63
    mask = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.decimal128(38, scale), n, [mask, pa.py_buffer(words.tobytes())],
                                 null_count=int((~valid).sum()))


def _checked(fn, a: np.ndarray, b) -> np.ndarray:
    """int64 arithmetic that raises OverflowError instead of wrapping."""
    try:
        return fn(pa.array(a), pa.scalar(b, pa.int64()) if np.isscalar(b) else pa.array(b)).to_numpy()
    except pa.ArrowInvalid:
        raise OverflowError from None


def rescale_i64(v: np.ndarray, from_scale: int, to_scale: int) -> np.ndarray:
    if to_scale == from_scale:
        return v
    if to_scale > from_scale:
        if to_scale - from_scale > 18:
            raise OverflowError
        return _checked(pc.multiply_checked, v, 10 ** (to_scale - from_scale))
    if from_scale - to_scale > 18:
        return np.zeros_like(v)
    return div_round_i64(v, np.full(len(v), 10 ** (from_scale - to_scale), np.int64))


def div_round_i64(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den rounded half away from zero in int64 (den != 0)."""
    an, ad = np.abs(num), np.abs(den)
    q, r = np.divmod(an, ad)
    q = q + (2 * r >= ad)
    return np.where((num < 0) != (den < 0), -q, q)


_LOW32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)


def i64_scaled_to_decimal(vals: np.ndarray, valid: np.ndarray, shift: int, scale: int) -> pa.Array:
    """decimal128(38, scale) of int64 `vals` * 10**shift (0 <= shift <= 18), computed as exact
    128-bit words with 32-bit limbs in NumPy (no Python ints).

    >>> i64_scaled_to_decimal(np.array([-3, 12]), np.array([True, True]), 16, 16).to_pylist()
    [Decimal('-3.0000000000000000'), Decimal('12.0000000000000000')]
    """
    n = len(vals)
    v = np.where(valid, vals, 0).astype(np.int64)
    if n <= 64:
        # A few values: exact Python ints to two's-complement bytes beat ~20 NumPy calls.
        c, m = 10 ** shift, (1 << 128) - 1
        data = b"".join(((x * c) & m).to_bytes(16, "little") for x in v.tolist())
        mask = None if valid.all() else pa.array(valid).buffers()[1]
        return pa.Array.from_buffers(pa.decimal128(38, scale), n, [mask, pa.py_buffer(data)],
                                     null_count=int((~valid).sum()))
    neg = v < 0
    a = np.abs(v).view(np.uint64)  # |INT64_MIN| wraps to 2**63 as uint64: still exact
    c = np.uint64(10 ** shift)
    a0, a1 = a & _LOW32, a >> _U32
    c0, c1 = c & _LOW32, c >> _U32
    p00, p01, p10, p11 = a0 * c0, a0 * c1, a1 * c0, a1 * c1
    mid = (p00 >> _U32) + (p01 & _LOW32) + (p10 & _LOW32)
    lo = (p00 & _LOW32) | (mid << _U32)
    hi = p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    # Two's complement negation of the 128-bit value where negative.
    nlo = ~lo + np.uint64(1)
    nhi = ~hi + (lo == 0).astype(np.uint64)
    words = np.empty(2 * n, dtype=np.uint64)
    words[0::2] = np.where(neg, nlo, lo)
    words[1::2] = np.where(neg, nhi, hi)
    mask = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.decimal128(38, scale), n, [mask, pa.py_buffer(words)],
                                 null_count=int((~valid).sum()))


# Unconstrained numeric is decimal128(38, 16): 16 digits after the point, 22 before it.
UNCONSTRAINED_SCALE = DEFAULT_NUMERIC_SCALE
UNCONSTRAINED_INT_DIGITS = NUMERIC_MAX_PRECISION - DEFAULT_NUMERIC_SCALE
_WIDE = Context(prec=2 * NUMERIC_MAX_PRECISION + 4)


def plain_text(d: Decimal) -> str:
    """A Decimal in PostgreSQL's numeric notation: never an exponent, its own scale.

    >>> plain_text(Decimal("1.2E-20")), plain_text(Decimal("1E+2")), plain_text(Decimal("-0.50"))
    ('0.000000000000000000012', '100', '-0.50')
    """
    return format(d.copy_abs() if d == 0 else d, "f")  # numeric has no negative zero


def unscaled_text(v: int, scale: int) -> str:
    """The exact value of unscaled integer `v` at `scale`, without trailing fractional zeros.

    >>> unscaled_text(15241578750190521, 18), unscaled_text(-1200, 2), unscaled_text(5, 0)
    ('0.015241578750190521', '-12', '5')
    """
    return plain_text(Decimal(int(v)).scaleb(-scale, _WIDE).normalize(_WIDE))


def inexact_numeric(value: str | None = None) -> SqlError:
    """A value unconstrained numeric cannot hold exactly: refused rather than rounded.
    `value` is the number as the user would write it (the input text, the exact result)."""
    what = f"numeric value {value}" if value is not None else "numeric value"
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE,
                    f"{what} cannot be stored exactly: unconstrained numeric keeps at most "
                    f"{UNCONSTRAINED_SCALE} digits after the decimal point",
                    hint=f"Round it (round(x, {UNCONSTRAINED_SCALE})) or declare the scale: numeric(p, s) "
                         "rounds to s digits.")


def numeric_too_large(value: str | None = None) -> SqlError:
    """A value with more integer digits than unconstrained numeric keeps (22). The primary
    message is PostgreSQL's for a numeric beyond its own limits; the detail says which."""
    what = f"numeric value {value}" if value is not None else "the value"
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format",
                    detail=f"{what} does not fit: unconstrained numeric keeps at most "
                           f"{UNCONSTRAINED_INT_DIGITS} digits before the decimal point.",
                    hint="Declare the type as numeric(p, s) to hold up to 38 digits in all.")


def check_unconstrained(d: Decimal, text: str | None = None) -> Decimal:
    """`d` if unconstrained numeric holds it exactly, else 22003 naming it (`text`: the value
    as the user wrote it; its plain digits if not given). NaN and infinities are not checked
    here.

    >>> check_unconstrained(Decimal("0.0000000000000001"))
    Decimal('1E-16')
    """
    if not d.is_finite() or d == 0:
        return d
    if d.adjusted() >= UNCONSTRAINED_INT_DIGITS:
        raise numeric_too_large(text if text is not None else plain_text(d))
    if d.as_tuple().exponent < -UNCONSTRAINED_SCALE and \
            d != d.quantize(Decimal(1).scaleb(-UNCONSTRAINED_SCALE), rounding=ROUND_HALF_UP, context=_WIDE):
        raise inexact_numeric(text if text is not None else plain_text(d))
    return d


def first_inexact(vals: np.ndarray, from_scale: int, to_scale: int) -> int | None:
    """Index of the first unscaled value (object or int64 array, at `from_scale`) with a
    non-zero digit beyond `to_scale` fractional digits, or None."""
    if to_scale >= from_scale or not len(vals):
        return None
    step = 10 ** (from_scale - to_scale)
    if step > 10 ** 18 or vals.dtype == object:
        if vals.dtype != object:
            vals = vals.astype(object)
        rem = vals % step  # object arrays: exact Python ints, elementwise in C
    else:
        rem = vals % vals.dtype.type(step)
    bad = np.flatnonzero(rem != 0)
    return int(bad[0]) if len(bad) else None


def check_exact_rescale(vals: np.ndarray, from_scale: int, to_scale: int,
                        describe: Callable[[int], str] | None = None) -> None:
    """Raise `inexact_numeric` if lowering unscaled `vals` from `from_scale` to `to_scale` digits
    would drop a non-zero digit (object or int64 arrays). The message names the first such
    value: `describe(i)` if given (e.g. "0.015241578750190521 (the product 0.123456789 *
    0.123456789)"), else its exact digits."""
    i = first_inexact(vals, from_scale, to_scale)
    if i is not None:
        raise inexact_numeric(describe(i) if describe else unscaled_text(int(vals[i]), from_scale))


def check_unconstrained_range(vals: np.ndarray, valid: np.ndarray, scale: int,
                              describe: Callable[[int], str] | None = None) -> None:
    """Raise `numeric_too_large` if some valid unscaled value (at `scale`) has more than 22
    integer digits."""
    if not len(vals):
        return
    limit = 10 ** (UNCONSTRAINED_INT_DIGITS + scale)
    big = np.flatnonzero(valid & (np.abs(vals) >= limit))
    if len(big):
        i = int(big[0])
        raise numeric_too_large(describe(i) if describe else unscaled_text(int(vals[i]), scale))


def decimal_text(arr: pa.Array) -> pa.Array:
    """Decimal128 values as PostgreSQL prints numeric(p, s): plain digits, exactly `s` after the
    point, never an exponent (Arrow's own cast writes 1E-16). Vectorised in Arrow.

    >>> decimal_text(pa.array([Decimal("1E-16"), Decimal("-12.5"), None], pa.decimal128(38, 16))).to_pylist()
    ['0.0000000000000001', '-12.5000000000000000', None]
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if not pa.types.is_decimal128(t):
        return arr.cast(pa.string())
    s = t.scale
    # The same 128-bit words read at scale 0: Arrow prints those as plain integers.
    ints = pa.Array.from_buffers(pa.decimal128(38, 0), len(arr), arr.buffers(), null_count=arr.null_count,
                                 offset=arr.offset).cast(pa.string())
    if s <= 0:
        return ints if s == 0 else pc.binary_join_element_wise(ints, pa.scalar("0" * -s), "")
    neg = pc.starts_with(ints, "-")
    digits = pc.utf8_lpad(pc.utf8_ltrim(ints, characters="-"), width=s + 1, padding="0")
    whole = pc.utf8_slice_codeunits(digits, 0, -s)
    frac = pc.utf8_slice_codeunits(digits, -s)
    sign = pc.if_else(neg, pa.scalar("-"), pa.scalar(""))
    return pc.binary_join_element_wise(sign, whole, ".", frac, "")
