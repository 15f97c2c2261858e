"""Mathematical functions and the integer bit operators, with PostgreSQL 15's overloads.

Each function has exactly PostgreSQL's signatures for our types (int2/int4/int8, numeric,
real, double precision), so the registry's resolution gives PostgreSQL's result types:

    sqrt(2)            -> sqrt(double precision): double precision (integers go to the
                          preferred number type when no overload matches exactly)
    sqrt(2.0)          -> sqrt(numeric): numeric (an exact match)
    power(2, 3)        -> double precision;   2.0 ^ 3 -> numeric
    mod(1::int2, 1)    -> mod(integer, integer): integer
    gcd(1::int2, 1::int2) -> 42725, not unique (as in PostgreSQL)
    1::int8 << 2       -> bigint << integer: bigint

Trigonometric and hyperbolic functions, cbrt, degrees, radians and pi exist for double
precision only (a numeric or integer argument is cast to it). `log(x)` and `log10(x)` are
base 10, `log(b, x)` exists for numeric only. `random()` is volatile: never folded at plan
time and refused where results are maintained (materialized views, indexes, SUBSCRIBE).
`round`, `floor`, `ceil` and `abs` are planned by `planner.scalar` itself.

Kernels: `dataflow.functions.math` (named `math_*`; `mod` reuses the `%` operator's kernel).
"""

from __future__ import annotations

from dataflow.types import FLOAT8, INT2, INT4, INT8, NUMERIC
from planner.functions.registry import Overload, overloads

_F8, _N = FLOAT8, NUMERIC


def _float_and_numeric(name: str, kernel: str) -> tuple[Overload, Overload]:
    return (Overload(name, (_F8,), _F8, kernel=f"math_f_{kernel}"),
            Overload(name, (_N,), _N, kernel=f"math_n_{kernel}"))


_FLOAT_ONLY = ("cbrt", "degrees", "radians", "sin", "cos", "tan", "cot", "asin", "acos", "atan",
               "sind", "cosd", "tand", "cotd", "asind", "acosd", "atand",
               "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")

_INTS = (INT2, INT4, INT8)

FUNCTIONS = overloads(
    *_float_and_numeric("sqrt", "sqrt"),
    *_float_and_numeric("exp", "exp"),
    *_float_and_numeric("ln", "ln"),
    *_float_and_numeric("log", "log10"),
    *_float_and_numeric("log10", "log10"),
    *_float_and_numeric("sign", "sign"),
    *_float_and_numeric("trunc", "trunc"),
    Overload("log", (_N, _N), _N, kernel="math_n_log"),
    Overload("trunc", (_N, INT4), _N, kernel="math_n_trunc"),
    *(Overload(name, (_F8, _F8), _F8, kernel="math_f_power") for name in ("power", "pow", "^")),
    *(Overload(name, (_N, _N), _N, kernel="math_n_power") for name in ("power", "pow", "^")),
    *(Overload(name, (_F8,), _F8, kernel=f"math_f_{name}") for name in _FLOAT_ONLY),
    Overload("atan2", (_F8, _F8), _F8, kernel="math_f_atan2"),
    Overload("atan2d", (_F8, _F8), _F8, kernel="math_f_atan2d"),
    Overload("pi", (), _F8, kernel="math_pi"),
    Overload("random", (), _F8, kernel="math_random", volatile=True),
    # mod(): the kernel of the `%` operator (dataflow.scalar), which has the same semantics.
    *(Overload("mod", (t, t), t, kernel="mod") for t in _INTS),
    Overload("mod", (_N, _N), _N, kernel="mod"),
    Overload("div", (_N, _N), _N, kernel="math_n_div"),
    # min_scale and trim_scale are exact here; scale() is not offered: an unconstrained value
    # does not keep the digits it was written with (1.50 is 1.5), which scale() reports.
    Overload("min_scale", (_N,), INT4, kernel="math_n_min_scale"),
    Overload("trim_scale", (_N,), _N, kernel="math_n_trim_scale"),
    *(Overload(name, (t, t), t, kernel=f"math_{name}") for name in ("gcd", "lcm") for t in (INT4, INT8, _N)),
    Overload("factorial", (INT8,), _N, kernel="math_factorial"),
    Overload("width_bucket", (_F8, _F8, _F8, INT4), INT4, kernel="math_f_width_bucket"),
    Overload("width_bucket", (_N, _N, _N, INT4), INT4, kernel="math_n_width_bucket"),
    # Integer bit operators: both operands of one type; shifts take an integer count.
    *(Overload(sym, (t, t), t, kernel=f"math_bit_{name}")
      for sym, name in (("&", "and"), ("|", "or"), ("#", "xor")) for t in _INTS),
    *(Overload("~", (t,), t, kernel="math_bit_not") for t in _INTS),
    *(Overload(sym, (t, INT4), t, kernel=f"math_bit_{name}")
      for sym, name in (("<<", "shl"), (">>", "shr")) for t in _INTS),
)
