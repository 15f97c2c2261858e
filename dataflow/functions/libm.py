"""The C library's math functions over NumPy arrays, as PostgreSQL computes them.

PostgreSQL's float functions call the C library (`exp`, `sin`, `pow`, ...). NumPy's are not
always the C library's: on CPUs with AVX-512 it dispatches its own SIMD versions (SVML), which
round differently in the last bit for about one argument in ten (`exp`, `log`, `tan`, the
inverse and hyperbolic functions, `pow`, `atan2`, `cbrt`). Arrow's compute kernels call the C
library per element in compiled loops, so they give PostgreSQL's answers on every CPU, still
vectorised. cbrt has no Arrow kernel: it is the C library's `cbrt` (Python's `math.cbrt`) once
per distinct argument.

    exp(np.array([1.0]))      # array([2.718281828459045]), the bits glibc's exp gives
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _unary(name: str):
    kernel = getattr(pc, name)

    def f(x: np.ndarray) -> np.ndarray:
        return kernel(pa.array(np.asarray(x, dtype=np.float64))).to_numpy(zero_copy_only=False)
    f.__name__ = name
    return f


exp = _unary("exp")
log = _unary("ln")
log10 = _unary("log10")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
arcsin = _unary("asin")
arccos = _unary("acos")
arctan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
arcsinh = _unary("asinh")
arccosh = _unary("acosh")
arctanh = _unary("atanh")


def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return pc.power(pa.array(np.asarray(x, dtype=np.float64)),
                    pa.array(np.asarray(y, dtype=np.float64))).to_numpy(zero_copy_only=False)


def arctan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return pc.atan2(pa.array(np.asarray(y, dtype=np.float64)),
                    pa.array(np.asarray(x, dtype=np.float64))).to_numpy(zero_copy_only=False)


def cbrt(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return x.copy()
    distinct, back = np.unique(x, return_inverse=True)
    roots = np.fromiter(map(math.cbrt, distinct.tolist()), dtype=np.float64, count=len(distinct))
    # (-0 and 0 are one distinct value; the root has its argument's sign)
    return np.copysign(roots[back].reshape(x.shape), x)
