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
    """One aggregate of a Reduce.

    `func`: count_star, count, sum, min, max, avg, bool_and, bool_or, var_samp, var_pop,
    stddev_samp, stddev_pop, string_agg, bit_and, bit_or, bit_xor, the two-argument statistics
    corr, covar_pop, covar_samp, regr_* (arg = Y, extra = (X,)) and the ordered-set aggregates
    percentile_cont, percentile_disc (extra = (fraction literal,)) and mode (arg = the value,
    order_by = its sort key). `arg` is None only for count_star. `type` is the
    result type, as in PostgreSQL (count -> int8, sum(int4|int8) -> int8|numeric, avg(int) ->
    numeric, var_samp(int|numeric) -> numeric, var_samp(float) -> float8, ...).
    `extra`: further arguments (string_agg's delimiter). `order_by`: ORDER BY inside the call
    as (key, descending, nulls_last), kept only where the order changes the result
    (string_agg). `distinct`: the aggregate sees each distinct argument (tuple) once.

    FILTER (WHERE c) has no field of its own: the planner wraps every input in
    `If(c, input, NULL)`, and every aggregate here ignores rows whose `arg` is NULL
    (count(*) FILTER becomes count of `If(c, true, NULL)`).
    """

    func: str
    arg: ScalarExpr | None
    type: SqlType
    distinct: bool = False
    extra: tuple[ScalarExpr, ...] = ()
    order_by: tuple[tuple[ScalarExpr, bool, bool], ...] = ()

    def inputs(self) -> tuple[ScalarExpr, ...]:
        """Every expression the aggregate reads per row: arg, extra args, order keys."""
        head = () if self.arg is None else (self.arg,)
        return head + self.extra + tuple(k for k, _, _ in self.order_by)

    def with_inputs(self, exprs: tuple[ScalarExpr, ...]) -> "AggregateExpr":
        """The same aggregate over replaced input expressions (in `inputs()` order)."""
        exprs = tuple(exprs)
        i = 0 if self.arg is None else 1
        arg = None if self.arg is None else exprs[0]
        extra = exprs[i:i + len(self.extra)]
        keys = exprs[i + len(self.extra):]
        order_by = tuple((k, d, n) for k, (_, d, n) in zip(keys, self.order_by))
        return AggregateExpr(self.func, arg, self.type, self.distinct, extra, order_by)


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
