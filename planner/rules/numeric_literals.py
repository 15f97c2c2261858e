"""Rule: every unconstrained-numeric constant left in a plan must fit numeric's storage.

A numeric literal stays exact while it is planned (`1e300` compared with a double is just a
double), so only once the plan is built is it known which constants will be stored as
unconstrained numeric, the engine's decimal128(38, 16). Those that cannot be held exactly (more
than 16 fractional digits, more than 22 integer digits) are refused here with 22003, instead of
the engine rounding them silently:

    SELECT 1.2e-20                    -> 22003 (PostgreSQL: 0.000000000000000000012)
    SELECT f FROM t WHERE f > 1.2e-20 -> planned: the literal became a double
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from dataflow.expr import Literal
from dataflow.nodes import field_values
from dataflow.plan import Constant
from dataflow.types import NUMERIC, TypeKind
from planner.casts import cast_value


def _check(value: Any) -> None:
    if isinstance(value, Decimal):
        cast_value(value, NUMERIC, NUMERIC)  # raises 22003 for what storage cannot hold


def check_numeric_literals(node: Any) -> None:
    """Walk a plan (or statement plan) and check its unconstrained numeric constants."""
    seen: set[int] = set()

    def walk(n: Any) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        if isinstance(n, Literal):
            if n.type.kind is TypeKind.NUMERIC and n.type.scale is None:
                _check(n.value)
            return
        if isinstance(n, Constant):
            cols = [i for i, t in enumerate(n.types) if t.kind is TypeKind.NUMERIC and t.scale is None]
            for row in n.rows:
                for i in cols:
                    _check(row[i])
            return
        if isinstance(n, (tuple, list)):
            for x in n:
                walk(x)
            return
        values = field_values(n)
        if values is not None:
            for v in values:
                walk(v)

    walk(node)
