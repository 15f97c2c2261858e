"""Signatures of the aggregate functions that sqlglot leaves as plain calls of the name typed.

These are not scalar functions (the package's `FUNCTIONS` does not include them, so
`known()` is false for them): `planner.aggregates` resolves a call with the same
`registry.choose` as scalar calls, PostgreSQL's rules, and turns it into an `AggregateExpr`
whose `func` is the overload's `kernel` (the Reduce's name for the aggregate). `planner.dialect`
keeps these names as typed when parsing (sqlglot would turn `var_samp` into its `Variance`,
`string_agg` into `GroupConcat`), so the output column is named as in PostgreSQL.

count, sum, min, max and avg keep sqlglot's own classes (`planner.scalar.AGGREGATES`).
"""

from __future__ import annotations

from dataflow.types import BOOL, BYTEA, FLOAT4, FLOAT8, INT2, INT4, INT8, JSON, JSONB, NUMERIC, TEXT
from planner.functions.registry import ANY, Overload, overloads


REGRESSION = ("corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_avgx",
              "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy")


def _moments(name: str, engine: str) -> list[Overload]:
    # PostgreSQL: over smallint, integer, bigint and numeric the result is numeric (exact
    # sums); over real and double precision it is double precision.
    return [Overload(name, (t,), NUMERIC, kernel=engine) for t in (INT2, INT4, INT8, NUMERIC)] + \
        [Overload(name, (t,), FLOAT8, kernel=engine) for t in (FLOAT4, FLOAT8)]


AGGREGATE_FUNCTIONS: dict[str, list[Overload]] = overloads(
    Overload("bool_and", (BOOL,), BOOL, kernel="bool_and"),
    Overload("every", (BOOL,), BOOL, kernel="bool_and"),
    Overload("bool_or", (BOOL,), BOOL, kernel="bool_or"),
    *_moments("variance", "var_samp"), *_moments("var_samp", "var_samp"), *_moments("var_pop", "var_pop"),
    *_moments("stddev", "stddev_samp"), *_moments("stddev_samp", "stddev_samp"),
    *_moments("stddev_pop", "stddev_pop"),
    Overload("string_agg", (TEXT, TEXT), TEXT, kernel="string_agg"),
    Overload("string_agg", (BYTEA, BYTEA), BYTEA, kernel="string_agg"),
    # Built on string_agg over each value's text in the result (planner.aggregates).
    Overload("array_agg", (ANY,), TEXT, kernel="array_agg"),
    Overload("jsonb_agg", (ANY,), JSONB, kernel="jsonb_agg"),
    Overload("json_agg", (ANY,), JSON, kernel="json_agg"),
    Overload("json_object_agg", (ANY, ANY), JSON, kernel="json_object_agg"),
    Overload("jsonb_object_agg", (ANY, ANY), JSONB, kernel="jsonb_object_agg"),
    # The two-argument statistics (Y, X) of PostgreSQL's float8_regr_accum; regr_count is a
    # count of the rows where both are non-NULL (planner.aggregates).
    *[Overload(name, (FLOAT8, FLOAT8), FLOAT8, kernel=name) for name in REGRESSION],
    Overload("regr_count", (FLOAT8, FLOAT8), INT8, kernel="regr_count"),
    *[Overload(name, (t,), t, kernel=name) for name in ("bit_and", "bit_or", "bit_xor") for t in (INT2, INT4, INT8)],
)
