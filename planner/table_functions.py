"""Set-returning functions (generate_series, unnest, jsonb_array_elements[_text],
jsonb_object_keys, regexp_matches) in FROM, after other FROM items (LATERAL, as
PostgreSQL makes every function in FROM), and in the select list.

Each call becomes a `FlatMap` over the rows it is evaluated for: a one-row constant when its
arguments are constants, the relation to its left in FROM (so `FROM t, generate_series(1, t.n)`
repeats each row of t once per value), or the FROM result for a select-list call.

    FROM generate_series(1, 3) AS g        -> FlatMap(Constant([()]), 'generate_series', (1, 3), INT4)
    SELECT id, generate_series(1, n) FROM t -> Project(FlatMap(Get(t), ..., (ColumnRef n)), ...)

Most functions append one column. jsonb_each, jsonb_each_text, json_each and json_each_text
append two (`key`, `value`: PostgreSQL's OUT parameters, `RECORD_RESULTS`), and so does
`unnest(a, b, ...)` of several arrays in FROM (one column per array, zipped, the shorter ones
padded with NULLs); WITH ORDINALITY appends one more, the bigint position of each row among
its input row's rows. In the select list PostgreSQL returns a record for the two-column
functions (`(a,1)`), a type Slipstream does not have: refused with 0A000.
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Literal, ScalarExpr
from dataflow.plan import FlatMap, Plan
from dataflow.types import (BOOL, INT4, INT8, INTERVAL, JSON, JSONB, NUMERIC, TEXT, TIMESTAMP, TIMESTAMPTZ,
                            SqlType, TypeKind, array_of)
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
    # Two columns each (RECORD_RESULTS); the result named here is the value's type.
    Overload("jsonb_each", (JSONB,), JSONB, kernel="jsonb_each"),
    Overload("jsonb_each_text", (JSONB,), TEXT, kernel="jsonb_each_text"),
    Overload("json_each", (JSON,), JSON, kernel="json_each"),
    Overload("json_each_text", (JSON,), TEXT, kernel="json_each_text"),
    # unnest(regexp_split_to_array(...)): see flat_map
    Overload("regexp_split_to_table", (TEXT, TEXT), TEXT, kernel="unnest"),
    Overload("regexp_split_to_table", (TEXT, TEXT, TEXT), TEXT, kernel="unnest"),
    # regexp_matches(s, pattern [, flags]): one text[] per match (planner.functions.strings).
    Overload("regexp_matches", (TEXT, TEXT), array_of(TEXT), kernel="regexp_matches"),
    Overload("regexp_matches", (TEXT, TEXT, TEXT), array_of(TEXT), kernel="regexp_matches"),
)

# The set-returning functions with several output columns: their names and types.
RECORD_RESULTS: dict[str, tuple[tuple[str, SqlType], ...]] = {
    "jsonb_each": (("key", TEXT), ("value", JSONB)),
    "jsonb_each_text": (("key", TEXT), ("value", TEXT)),
    "json_each": (("key", TEXT), ("value", JSON)),
    "json_each_text": (("key", TEXT), ("value", TEXT)),
}

# The columns a function appends: (name, type) each; a None name is a one-column function's
# column, which a FROM item names after its alias (`column_names`).
Columns = list[tuple[str | None, SqlType]]


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


def flat_map(node: exp.Anonymous, input_plan: Plan, lowerer, ctx: PlanContext, *,
             ordinality: bool = False, in_from: bool = False) -> tuple[Plan, Columns]:
    """`input_plan` with the function's columns appended (its arguments lowered by `lowerer`,
    over the input's scope), then, with `ordinality`, the bigint position column. Only a FROM
    item (`in_from`) takes unnest of several arrays."""
    from planner.scalar import coerce

    name = node.name.lower()
    args = [lowerer.lower(a) for a in node.expressions]
    if name == "unnest" and len(args) > 1 and in_from:
        # PostgreSQL reads it as ROWS FROM (unnest(a), unnest(b), ...).
        for a in args:
            _array_argument("pg_catalog.unnest", a)
        types = tuple(a.type.element for a in args)
        return FlatMap(input_plan, name, tuple(args), types, ordinality), [("unnest", t) for t in types]
    overload, params = choose(name, TABLE_FUNCTIONS[name], args)
    if name == "regexp_split_to_table":
        from planner.functions import resolve_function
        pieces = resolve_function("regexp_split_to_array", args, ctx)
        return FlatMap(input_plan, "unnest", (pieces,), (TEXT,), ordinality), [(None, TEXT)]
    if name == "regexp_matches":
        from planner.functions.strings import match_call
        texts = [coerce(a, p, ctx) for a, p in zip(args, params)]
        r = match_call(texts, name)
        if r is None:  # a NULL pattern or flags: no rows
            texts[0], r = Literal(None, TEXT), ("", 0, False)
        regex, groups, glob = r
        call = (texts[0], Literal(regex, TEXT), Literal(groups, INT4), Literal(glob, BOOL))
        return FlatMap(input_plan, name, call, (array_of(TEXT),), ordinality), [(None, array_of(TEXT))]
    if overload.result == NUMERIC:
        raise unsupported("generate_series over numeric")
    if name in ("unnest", "generate_subscripts"):
        _array_argument(name, args[0])
    coerced: list[ScalarExpr] = [a if p is ANY else coerce(a, p, ctx) for a, p in zip(args, params)]
    if name in RECORD_RESULTS:
        columns: Columns = list(RECORD_RESULTS[name])
    elif name in ("jsonb_array_elements", "jsonb_array_elements_text"):
        columns = [("value", overload.result)]  # its OUT parameter's name, whatever the alias
    else:
        columns = [(None, overload.result_type([a.type for a in coerced]))]
    plan = FlatMap(input_plan, name, tuple(coerced), tuple(t for _, t in columns), ordinality)
    return plan, columns


def select_list_flat_map(node: exp.Anonymous, input_plan: Plan, lowerer, ctx: PlanContext) -> tuple[Plan, SqlType]:
    """A set-returning function in the select list: one value column."""
    name = node.name.lower()
    if name in RECORD_RESULTS:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{name} in the select list (a record value) is not supported",
                       hint=f"Call it in FROM: SELECT * FROM {name}(...)")
    plan, columns = flat_map(node, input_plan, lowerer, ctx)
    return plan, columns[0][1]


def _array_argument(name: str, arg: ScalarExpr) -> None:
    if arg.type.kind is TypeKind.ARRAY:
        return
    if arg.type.kind is TypeKind.UNKNOWN:
        raise SqlError("42725", f"function {name}(unknown) is not unique",
                       hint="Could not choose a best candidate function. You might need to add explicit type casts.")
    raise no_function(name, [arg])


def column_names(name: str, columns: Columns, ordinality: bool, alias: str | None,
                 col_aliases: list[str]) -> list[str]:
    """The names of a function's columns in FROM, as PostgreSQL gives them: a one-column
    function's column is named by its table alias, else the function's name; the others keep
    their own names (`key`, `value`; `unnest` for each array); WITH ORDINALITY adds
    `ordinality`; column aliases rename them in order."""
    names = [n if n is not None else (alias or name) for n, _ in columns]
    if ordinality:
        names.append("ordinality")
    if len(col_aliases) > len(names):
        raise SqlError("42P10", f'table "{alias or name}" has {len(names)} columns available but '
                                f'{len(col_aliases)} columns specified')
    return col_aliases + names[len(col_aliases):]
