"""A webhook source's CHECK expression as a scalar expression of the engine.

The CHECK of `CREATE SOURCE ... FROM WEBHOOK` is planned like a WHERE clause over one row per
request whose columns are the `WITH (...)` items: `BODY` (text, or bytea with BYTES), `HEADERS`
(jsonb: an object of the request's headers, Slipstream's stand-in for Materialize's
`map[text => text]`) and `SECRET s` (the secret's value). The result is a `dataflow.expr`
expression, evaluated with the engine's own kernels over a whole batch of requests at once
(`storage/sources/webhook_ingest.py`).

    CHECK (WITH (HEADERS, BODY AS b) constant_time_eq(decode(headers->'x-sig', 'base64'),
                                                       hmac(b, 'key', 'sha256')))

`headers->'name'` is Materialize's map lookup, which yields text; here it is read as
`headers->>'name'` so documented checks work unchanged. Subqueries are refused (0A000), as
Materialize refuses them. Secrets are resolved through `resolve_secret`, which refuses them with
Secrets (`WITH (SECRET s)`) are found when the source is created (`find_secret_id`) and read
for each batch of requests (`secret_value`), so ALTER SECRET applies to the next request.
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import SqlError, SqlState
from dataflow.expr import ScalarExpr
from dataflow.types import BYTEA, JSONB, TEXT, SqlType


def find_secret_id(ctx, name: list[str]) -> str:
    """The id of the secret CHECK WITH (SECRET name) names, searched as other names are."""
    store = getattr(ctx.catalog, "secrets", None)
    candidates = [(ctx.database, s, name[0]) for s in ctx.search_path] if len(name) == 1 else \
        [(ctx.database, name[0], name[1])] if len(name) == 2 else [tuple(name)]
    for database, schema, n in candidates:
        found = store.find_secret(database, schema, n) if store is not None else None
        if found is not None:
            return found.id
    raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown catalog item '{'.'.join(name)}'")


def secret_value(catalog, option: dict) -> str:
    """The current value of the secret of a CHECK's WITH (SECRET ...) item."""
    return catalog.secrets.secret_value(option["secret_id"])


def option_type(option: dict) -> SqlType:
    if option["kind"] == "headers":
        if option["bytes"]:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "HEADERS ... BYTES in a webhook CHECK not yet supported",
                           detail="Headers are a jsonb object of text values here (there is no map type).")
        return JSONB
    return BYTEA if option["bytes"] else TEXT


def lower_check(check: dict, catalog) -> ScalarExpr:
    """The CHECK (`{"expr": sql, "options": [...]}`, as stored in the source's definition) as a
    boolean expression over the options' columns, in their order."""
    from planner.context import Params, PlanContext
    from planner.dialect import _parse_expr
    from planner.scalar import ScalarLowerer, to_bool
    from planner.scope import Scope, ScopeColumn

    options = check["options"]
    scope = Scope([ScopeColumn(None, o["alias"], option_type(o)) for o in options])
    tree = _parse_expr(check["expr"])
    if any(isinstance(n, (exp.Subquery, exp.Select, exp.Exists)) for n in tree.walk()):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "subqueries in a webhook CHECK not supported")
    headers = {o["alias"] for o in options if o["kind"] == "headers"}
    tree = tree.transform(lambda n: _map_lookup(n, headers))
    ctx = PlanContext(catalog=catalog, params=Params([], []))
    lowered = ScalarLowerer(scope, ctx, clause="CHECK").lower(tree)
    return to_bool(lowered, ctx, "CHECK")


def _map_lookup(node: exp.Expression, headers: set[str]) -> exp.Expression:
    """`headers->'k'` -> `headers->>'k'` (Materialize's map lookup gives text)."""
    if (isinstance(node, exp.JSONExtract) and isinstance(node.this, exp.Column)
            and not node.this.table and node.this.name in headers):
        return exp.JSONExtractScalar(this=node.this, expression=node.expression,
                                     only_json_types=node.args.get("only_json_types"))
    return node
