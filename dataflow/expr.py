"""Scalar expressions: the language of map, filter and aggregate arguments.

The planner builds these from SQL; the engine compiles them once per dataflow into vectorised
kernels over Arrow columns (`dataflow.scalar`). Columns are referred to by position in the
operator's input row.

Example: `WHERE amount * 2 > 100` over input `(id int8, amount int8)` becomes

    Call("gt", (Call("mul", (ColumnRef(1, INT8), Literal(2, INT8)), INT8), Literal(100, INT8)), BOOL)

Function names (`Call.func`) and their PostgreSQL meaning:
  arithmetic  add sub mul div mod neg abs          (integer overflow -> 22003, x/0 -> 22012)
  comparison  eq neq lt lte gt gte                  (NULL in -> NULL out)
  logic       and or not                            (three-valued; `and`/`or` take 2+ args)
  null tests  is_null is_not_null is_true is_false is_distinct_from is_not_distinct_from
  text        concat (||) like ilike not_like regex_match (arg1: an RE2 pattern literal) lower upper length substr trim btrim ltrim rtrim replace
  misc        coalesce nullif greatest least round floor ceil in_list (arg0 IN (args1..))
  order keys  float_order_key float_from_order_key (a float as an int64 in SQL order: NaN greatest)
  time        mz_now (no args; the dataflow's logical time, for temporal filters)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from dataflow.types import SqlType


@dataclass(frozen=True)
class ColumnRef:
    index: int
    type: SqlType


@dataclass(frozen=True)
class Literal:
    """A constant. `value` is a Python value of the type (int, float, Decimal, str, bool,
    datetime, date) or None for NULL."""

    value: Any
    type: SqlType


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["ScalarExpr", ...]
    type: SqlType


@dataclass(frozen=True)
class If:
    """CASE WHEN cond THEN then ELSE els END (a NULL cond takes the else branch)."""

    cond: "ScalarExpr"
    then: "ScalarExpr"
    els: "ScalarExpr"
    type: SqlType


@dataclass(frozen=True)
class Cast:
    """An explicit or implicit cast, with PostgreSQL's rules (e.g. text->int4 errors with 22P02)."""

    arg: "ScalarExpr"
    type: SqlType


ScalarExpr = Union[ColumnRef, Literal, Call, If, Cast]


@dataclass(frozen=True)
class AggregateExpr:
    """One aggregate of a Reduce. `func` is count_star, count, sum, min, max or avg;
    `arg` is None only for count_star. `type` is the result type (count -> int8,
    sum(int4|int8) -> int8|numeric as in PostgreSQL, avg(int) -> numeric, ...)."""

    func: str
    arg: ScalarExpr | None
    type: SqlType
    distinct: bool = False


def columns_used(expr: ScalarExpr) -> set[int]:
    """The input column positions an expression reads."""
    if isinstance(expr, ColumnRef):
        return {expr.index}
    if isinstance(expr, Literal):
        return set()
    if isinstance(expr, Call):
        out: set[int] = set()
        for a in expr.args:
            out |= columns_used(a)
        return out
    if isinstance(expr, If):
        return columns_used(expr.cond) | columns_used(expr.then) | columns_used(expr.els)
    if isinstance(expr, Cast):
        return columns_used(expr.arg)
    raise TypeError(expr)
