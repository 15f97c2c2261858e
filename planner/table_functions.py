"""Set-returning functions (generate_series, unnest, jsonb_array_elements[_text],
jsonb_object_keys) in FROM, after other FROM items (LATERAL, as
PostgreSQL makes every function in FROM), and in the select list.

Each call becomes a `FlatMap` over the rows it is evaluated for: a one-row constant when its
arguments are constants, the relation to its left in FROM (so `FROM t, generate_series(1, t.n)`
repeats each row of t once per value), or the FROM result for a select-list call.

    FROM generate_series(1, 3) AS g        -> FlatMap(Constant([()]), 'generate_series', (1, 3), INT4)
    SELECT id, generate_series(1, n) FROM t -> Project(FlatMap(Get(t), ..., (ColumnRef n)), ...)
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import ScalarExpr
from dataflow.plan import FlatMap, Plan
from dataflow.types import (INT4, INT8, INTERVAL, JSONB, NUMERIC, TEXT, TIMESTAMP, TIMESTAMPTZ, SqlType,
                            TypeKind)
from planner.context import PlanContext
from planner.functions.registry import ANY, Overload, choose, no_function, overloads

TABLE_FUNCTIONS = overloads(
    Overload("generate_series", (INT4, INT4), INT4, kernel="generate_series"),
    Overload("generate_series", (INT4, INT4, INT4), INT4, kernel="generate_series"),
    Overload("generate_series", (INT8, INT8), INT8, kernel="generate_series"),
    Overload("generate_series", (INT8, INT8, INT8), INT8, kernel="generate_series"),
    Overload("generate_series", (NUMERIC, NUMERIC), NUMERIC, kernel="generate_series"),
    Overload("generate_series", (NUMERIC, NUMERIC, NUMERIC), NUMERIC, kernel="generate_series"),
    Overload("generate_series", (TIMESTAMP, TIMESTAMP, INTERVAL), TIMESTAMP, kernel="generate_series"),
    Overload("generate_series", (TIMESTAMPTZ, TIMESTAMPTZ, INTERVAL), TIMESTAMPTZ, kernel="generate_series"),
    Overload("unnest", (ANY,), lambda types: types[0].element, kernel="unnest"),
    Overload("generate_subscripts", (ANY, INT4), INT4, kernel="generate_subscripts"),
    Overload("jsonb_array_elements", (JSONB,), JSONB, kernel="jsonb_array_elements"),
    Overload("jsonb_array_elements_text", (JSONB,), TEXT, kernel="jsonb_array_elements_text"),
    Overload("jsonb_object_keys", (JSONB,), TEXT, kernel="jsonb_object_keys"),
    # unnest(regexp_split_to_array(...)): see flat_map
    Overload("regexp_split_to_table", (TEXT, TEXT), TEXT, kernel="unnest"),
    Overload("regexp_split_to_table", (TEXT, TEXT, TEXT), TEXT, kernel="unnest"),
)


def is_table_function(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() in TABLE_FUNCTIONS


def find_table_functions(node: exp.Expression) -> list[exp.Expression]:
    """The set-returning calls of an expression at this query level (those inside a subquery
    belong to the subquery)."""
    found = []
    for n in node.walk(prune=lambda e: e is not node and isinstance(e, (exp.Subquery, exp.Select))):
        if isinstance(n, exp.Anonymous) and is_table_function(n):
            found.append(n)
    return found


def flat_map(node: exp.Anonymous, input_plan: Plan, lowerer, ctx: PlanContext) -> tuple[Plan, SqlType]:
    """`input_plan` with the function's values appended as one more column (its arguments
    lowered by `lowerer`, over the input's scope)."""
    from planner.scalar import coerce

    name = node.name.lower()
    args = [lowerer.lower(a) for a in node.expressions]
    overload, params = choose(name, TABLE_FUNCTIONS[name], args)
    if name == "regexp_split_to_table":
        from planner.functions import resolve_function
        pieces = resolve_function("regexp_split_to_array", args, ctx)
        return FlatMap(input_plan, "unnest", (pieces,), TEXT), TEXT
    if overload.result == NUMERIC:
        raise unsupported("generate_series over numeric")
    if name in ("unnest", "generate_subscripts") and args[0].type.kind is not TypeKind.ARRAY:
        if args[0].type.kind is TypeKind.UNKNOWN:
            raise SqlError("42804", "could not determine polymorphic type because input has type unknown")
        raise no_function(name, args)
    coerced: list[ScalarExpr] = [a if p is ANY else coerce(a, p, ctx) for a, p in zip(args, params)]
    result = overload.result_type([a.type for a in coerced])
    return FlatMap(input_plan, name, tuple(coerced), result), result


def column_name(node: exp.Expression, alias: str | None, col_aliases: list[str]) -> str:
    """PostgreSQL names a scalar function's column by its column alias, else its table alias,
    else the function's name."""
    if len(col_aliases) > 1:
        raise SqlError(SqlState.SYNTAX_ERROR, f"too many column aliases specified for function {node.name.lower()}")
    return col_aliases[0] if col_aliases else (alias or node.name.lower())
