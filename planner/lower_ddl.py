"""CREATE TABLE / VIEW / MATERIALIZED VIEW / INDEX and DROP.

PRIMARY KEY is accepted and implies NOT NULL, but uniqueness is NOT enforced (as with
Materialize's tables, which have no keys to check against). UNIQUE, CHECK, REFERENCES and
other constraints are rejected with 0A000.

>>> # CREATE INDEX ON t (b)  over t(a, b)  ->  CreateIndexPlan('t_b_idx', 'public', 'u1', (1,), ...)
"""

from __future__ import annotations

from sqlglot import exp

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import ScalarExpr
from dataflow.types import Column
from planner import mz_ast as m
from planner.context import PlanContext
from planner.deparse import deparse_view
from planner.lower_select import plan_query
from planner.scalar import ScalarLowerer, coerce
from planner.scope import Scope
from planner.statements import (CreateIndexPlan, CreateNamespacePlan, CreateTablePlan, CreateViewPlan,
                                DropNamespacePlan, DropPlan)
from planner.typing import type_from_ast


def _qualified(parts: tuple[str, ...], ctx: PlanContext) -> tuple[str, str, str]:
    """(database, schema, name) of a new object: unqualified names go to the first schema of
    the search path, in the session's database."""
    if len(parts) == 1:
        return ctx.database, ctx.search_path[0] if ctx.search_path else "public", parts[0]
    if len(parts) == 2:
        return ctx.database, parts[0], parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise SqlError(SqlState.SYNTAX_ERROR, f"improper qualified name (too many dotted names): {'.'.join(parts)}")


def _table_name(t: exp.Table) -> tuple[str, ...]:
    return tuple(p for p in (t.catalog, t.db, t.name) if p)


def table_columns(node: exp.Create, ctx: PlanContext) -> tuple[list[Column], list[ScalarExpr | None]]:
    """The columns and DEFAULT expressions of a CREATE TABLE."""
    schema = node.this
    columns: list[Column] = []
    defaults: list[ScalarExpr | None] = []
    pk_names: list[str] = []
    for e in schema.expressions:
        if isinstance(e, exp.PrimaryKey):
            pk_names.extend(c.name for c in e.expressions)
            continue
        if not isinstance(e, exp.ColumnDef):
            raise unsupported(f"table constraint {e.sql(dialect='postgres')}")
        if e.args.get("kind") is None:
            raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{e.name}"')
        t = type_from_ast(e.args["kind"])
        nullable, default = True, None
        for c in e.args.get("constraints") or []:
            k = c.args.get("kind")
            if isinstance(k, exp.NotNullColumnConstraint):
                nullable = bool(k.args.get("allow_null"))
            elif isinstance(k, exp.PrimaryKeyColumnConstraint):
                nullable = False  # accepted, not enforced beyond NOT NULL
            elif isinstance(k, exp.DefaultColumnConstraint):
                d = ScalarLowerer(Scope(), ctx, clause="DEFAULT expressions").lower(k.this)
                default = coerce(d, t, ctx, mode="assignment", column=e.name)
            else:
                raise unsupported(f"column constraint {c.sql(dialect='postgres')}")
        if any(col.name == e.name for col in columns):
            raise SqlError(SqlState.DUPLICATE_COLUMN, f'column "{e.name}" specified more than once')
        columns.append(Column(e.name, t, nullable))
        defaults.append(default)
    for n in pk_names:
        idx = [i for i, c in enumerate(columns) if c.name == n]
        if not idx:
            raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{n}" named in key does not exist')
        c = columns[idx[0]]
        columns[idx[0]] = Column(c.name, c.type, False)
    return columns, defaults


def plan_create_table(node: exp.Create, ctx: PlanContext, sql: str) -> CreateTablePlan:
    if node.args.get("expression") is not None:
        raise unsupported("CREATE TABLE ... AS")
    if not isinstance(node.this, exp.Schema):
        raise SqlError(SqlState.SYNTAX_ERROR, "syntax error at end of input")
    database, schema, name = _qualified(_table_name(node.this.this), ctx)
    columns, defaults = table_columns(node, ctx)
    return CreateTablePlan(name, schema, tuple(columns), bool(node.args.get("exists")), sql,
                           tuple(defaults), database)


def plan_create_view(node: m.CreateView, ctx: PlanContext, sql: str) -> CreateViewPlan:
    database, schema, name = _qualified(node.name, ctx)
    # ORDER BY in a view is ignored (with LIMIT it is a TopK), as in Materialize.
    if node.materialized:
        ctx.maintained = "a materialized view"
        if node.cluster is not None:
            ctx.cluster = node.cluster  # the indexes it may read are that cluster's
    elif node.cluster is not None:
        raise SqlError(SqlState.SYNTAX_ERROR, "IN CLUSTER is only for materialized views",
                       hint="A view is computed where it is read; CREATE MATERIALIZED VIEW ... IN CLUSTER.")
    q = plan_query(node.query, ctx, top=False)
    names = [c.name for c in q.columns]
    if node.columns is not None:
        if len(node.columns) > len(names):
            raise SqlError(SqlState.SYNTAX_ERROR, "CREATE VIEW specifies more column names than columns")
        names = list(node.columns) + names[len(node.columns):]
    seen = set()
    for n in names:
        if n in seen:
            raise SqlError(SqlState.DUPLICATE_COLUMN, f'column "{n}" specified more than once')
        seen.add(n)
    columns = tuple(Column(n, c.type, c.nullable) for n, c in zip(names, q.columns))
    depends = tuple(dict.fromkeys(ctx.depends_on))
    return CreateViewPlan(name, schema, node.materialized, q.plan, columns, node.definition, depends,
                          node.if_not_exists, node.or_replace, sql, database, ctx.cluster_name,
                          _pg_definitions(node.query, ctx, names))


def _pg_definitions(query, ctx: PlanContext, names: list[str]) -> tuple[str, str] | None:
    pretty = deparse_view(query, ctx, names, pretty=True)
    plain = deparse_view(query, ctx, names, pretty=False) if pretty is not None else None
    return None if plain is None else (pretty, plain)


def plan_create_index(node: m.CreateIndex, ctx: PlanContext, sql: str) -> CreateIndexPlan:
    on = ctx.catalog.resolve(node.on, ctx.search_path, ctx.database)
    if node.cluster is not None:
        ctx.cluster = node.cluster
    if on.kind is ItemKind.INDEX:
        raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'cannot create index on index "{on.name}"')
    if on.kind is ItemKind.VIEW:
        # The index maintains the view: check now what only a one-off query may use (now()).
        from planner.lower_select import plan_catalog_item
        maintained = ctx.child()
        maintained.maintained = "an index"
        plan_catalog_item(on, maintained)
    names = [c.name for c in on.columns]
    if node.columns is None:
        key = tuple(range(len(names)))
        name = node.name or f"{on.name}_primary_idx"
    else:
        key = column_positions(on.columns, node.columns)
        name = node.name or f"{on.name}_{'_'.join(node.columns)}_idx"
    return CreateIndexPlan(name, on.schema, on.id, key, node.if_not_exists, sql, on.database, ctx.cluster_name)


def plan_create_namespace(node: m.CreateNamespace, ctx: PlanContext) -> CreateNamespacePlan:
    parts = node.name
    if node.kind == "database":
        if len(parts) != 1:
            raise SqlError(SqlState.SYNTAX_ERROR, f"improper database name: {'.'.join(parts)}")
        return CreateNamespacePlan("database", parts[0], None, node.if_not_exists)
    if len(parts) > 2:
        raise SqlError(SqlState.SYNTAX_ERROR, f"improper qualified name (too many dotted names): {'.'.join(parts)}")
    database = parts[0] if len(parts) == 2 else ctx.database
    return CreateNamespacePlan("schema", database, parts[-1], node.if_not_exists)


_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "mz_catalog", "mz_internal")


def plan_drop_namespace(node: m.DropNamespace, ctx: PlanContext) -> DropNamespacePlan:
    """The schemas (or database) to forget and, with CASCADE, every object in them; without
    CASCADE a schema that still holds objects is 2BP01, as in PostgreSQL."""
    if len(node.names) != 1:
        raise unsupported(f"DROP {node.kind.upper()} of several names")
    parts = node.names[0]
    schemas_of = getattr(ctx.catalog, "schemas", None)
    databases_of = getattr(ctx.catalog, "databases", None)
    if node.kind == "database":
        database = parts[0]
        exists = databases_of is not None and any(n == database for n, _ in databases_of())
        if exists and database == ctx.database:
            raise SqlError("55006", "cannot drop the currently open database")
        schemas = [n for d, n, _ in schemas_of(database)] if exists else []
    else:
        database = parts[0] if len(parts) == 2 else ctx.database
        if parts[-1] in _SYSTEM_SCHEMAS:
            raise SqlError("42501", f'cannot drop schema {parts[-1]} because it is required by the database system')
        exists = schemas_of is not None and any(n == parts[-1] for _, n, _ in schemas_of(database))
        schemas = [parts[-1]]
    name = ".".join(parts)
    if not exists:
        if node.if_exists:
            return DropNamespacePlan(node.kind, database, (), (), node.cascade, (name,))
        code = "3D000" if node.kind == "database" else "3F000"
        raise SqlError(code, f'{node.kind} "{name}" does not exist')
    inside = [i for i in ctx.catalog.items() if i.database == database and i.schema in schemas]
    if inside and not node.cascade:
        raise SqlError("2BP01", f'cannot drop {node.kind} {name} because other objects depend on it',
                       detail="\n".join(f"{i.kind.value} {i.name} depends on {node.kind} {name}" for i in inside[:10]),
                       hint="Use DROP ... CASCADE to drop the dependent objects too.")
    return DropNamespacePlan(node.kind, database, tuple(schemas), tuple(i.id for i in inside), node.cascade)


_WRONG_KIND_HINT = {ItemKind.TABLE: "DROP TABLE", ItemKind.VIEW: "DROP VIEW",
                    ItemKind.MATERIALIZED_VIEW: "DROP MATERIALIZED VIEW", ItemKind.INDEX: "DROP INDEX",
                    ItemKind.SOURCE: "DROP SOURCE", ItemKind.SUBSOURCE: "DROP SOURCE"}


def plan_drop(node: m.Drop, ctx: PlanContext) -> DropPlan:
    kind = ItemKind(node.kind)
    ids, missing = [], []
    for parts in node.names:
        item = ctx.catalog.try_resolve(parts, ctx.search_path, ctx.database)
        name = ".".join(parts)
        if item is None:
            if node.if_exists:
                missing.append(name)
                continue
            code = SqlState.UNDEFINED_OBJECT if kind is ItemKind.INDEX else SqlState.UNDEFINED_TABLE
            raise SqlError(code, f'{kind.value} "{name}" does not exist')
        if item.kind is ItemKind.SUBSOURCE and kind is ItemKind.SOURCE:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f'dropping subsource "{name}" on its own not yet supported',
                           hint="Drop its source with DROP SOURCE ... CASCADE.")
        if item.kind is not kind:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{name}" is not a {kind.value}',
                           hint=f"Use {_WRONG_KIND_HINT[item.kind]} to remove a {item.kind.value}.")
        if item.id not in ids:
            ids.append(item.id)
        if item.kind is ItemKind.SOURCE:  # its subsources are part of it (no CASCADE needed)
            ids.extend(i.id for i in ctx.catalog.items()
                       if i.kind is ItemKind.SUBSOURCE and i.depends_on == (item.id,) and i.id not in ids)
    return DropPlan(kind, tuple(ids), node.cascade, tuple(missing))


def resolve_item(parts: tuple[str, ...], ctx: PlanContext) -> CatalogItem:
    return ctx.catalog.resolve(parts, ctx.search_path, ctx.database)


def column_positions(columns, names, relation: str | None = None) -> tuple[int, ...]:
    """Positions of the named columns among `columns`; 42703 for a name that is not there
    (the message names `relation` when given, as PostgreSQL does for COPY and INSERT)."""
    have = [c.name for c in columns]
    out = []
    for n in names:
        if n not in have:
            where = f' of relation "{relation}"' if relation is not None else ""
            raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{n}"{where} does not exist')
        out.append(have.index(n))
    return tuple(out)
