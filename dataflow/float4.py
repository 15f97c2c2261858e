"""Reading numbers as `real` (float4) correctly rounded, as PostgreSQL's float4in (strtof) and
its integer casts do, in one rounding step.

Going through a double first rounds twice, and that is wrong exactly when the double lands on
the midpoint between two neighbouring floats: the tie is then broken to even although the
number itself was above (or below) the midpoint. Only those rows are re-decided from the exact
value, so the common case stays one vectorised NumPy cast.

>>> float4_of_exact(Decimal("1.000000059604644775390626"))   # just above a midpoint
1.0000001192092896
>>> float(np.float32(float(Decimal("1.000000059604644775390626"))))   # double rounding
1.0
>>> float4_of_exact(9007199791611905)                        # 2**53 + 2**29 + 1
9007200328482816.0
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

import numpy as np

_FLT_MAX = float(np.finfo(np.float32).max)
_OVERFLOW_MID = 2.0 ** 128 - 2.0 ** 103  # midpoint between FLT_MAX and 2**128 (rounds to inf)


def _round_ties(x: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows where the double `x` is exactly a float midpoint, the neighbour on the other side
    of that midpoint from `f`, the tie-to-even choice NumPy made)."""
    fx = f.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        up = x > fx
        other = np.nextafter(f, np.where(up, np.float32(np.inf), np.float32(-np.inf)))
        mid = (fx + other.astype(np.float64)) / 2
        ties = np.isfinite(x) & (fx != x) & (x == mid)
        # Beyond FLT_MAX the upper neighbour is 2**128 (infinity).
        over = np.isinf(f) & (np.abs(x) == _OVERFLOW_MID)
    other = np.where(over, np.copysign(np.float32(_FLT_MAX), x).astype(np.float32), other)
    return ties | over, other


def float4_array(x: np.ndarray, exact_of: Callable[[int], Decimal]) -> np.ndarray:
    """float32 values of the numbers whose correctly rounded doubles are `x` (float64);
    `exact_of(i)` gives row i's exact value, asked only for rows whose double is a tie."""
    with np.errstate(over="ignore"):
        f = x.astype(np.float32)
    ties, other = _round_ties(x, f)
    for i in np.flatnonzero(ties):
        d = exact_of(int(i))
        m = Decimal(float(x[i]))
        if d != m and ((d > m) == (other[i] > f[i])):
            f[i] = other[i]
    return f


def float4_of_exact(v: Decimal | int | str) -> float:
    """The float nearest to `v` (ties to even), as a Python float; infinity past FLT_MAX's
    rounding range, a signed zero below the smallest subnormal (callers refuse those)."""
    d = v if isinstance(v, Decimal) else Decimal(v) if isinstance(v, int) else Decimal(v.strip())
    x = np.array([float(d)], np.float64)
    return float(float4_array(x, lambda _i: d)[0])
