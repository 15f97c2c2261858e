"""Reading the system catalogs (pg_catalog, information_schema, mz_catalog) in a query.

A system relation is planned as a constant relation: its rows are generated from the catalog
state the statement sees (`catalog.system`), once per statement, and the rest of the query
(joins, filters, subqueries, casts to regclass) is planned as for any other relation. A query
that reads only system relations therefore needs no worker: the adapter runs it in-process.

    SELECT relname FROM pg_class WHERE relkind = 'm'
    -> Filter(Constant(<pg_class rows>), relkind = 'm')

Name resolution follows PostgreSQL and Materialize: pg_catalog and then mz_catalog are searched
before the search path, so an unqualified `pg_class` or `mz_tables` is always the catalog;
information_schema's relations need their schema name (or the schema on the search path).
"""

from __future__ import annotations

import functools
import zlib
from typing import TYPE_CHECKING

from catalog.system import CatalogSnapshot, ProcInfo, RoleInfo, SessionRow, SystemRelation, lookup
from catalog.system.relations import SYSTEM_SCHEMAS
from dataflow.errors import unsupported
from dataflow.plan import Constant
from dataflow.types import SqlType, TypeKind

if TYPE_CHECKING:
    from planner.context import PlanContext


def resolve_system(parts: tuple[str, ...], ctx: "PlanContext") -> SystemRelation | None:
    """The system relation a FROM-clause name means, or None (a user relation, or nothing)."""
    if len(parts) == 3:
        if parts[0] != ctx.database:
            return None
        parts = parts[1:]
    if len(parts) == 2:
        return lookup(parts) if parts[0] in SYSTEM_SCHEMAS else None
    # pg_catalog, then (as in Materialize) mz_catalog, come before the search path.
    for implicit in ("pg_catalog", "mz_catalog"):
        rel = lookup((implicit, parts[0]))
        if rel is not None:
            return rel
    for schema in ctx.search_path:
        if schema in SYSTEM_SCHEMAS:
            rel = lookup((schema, parts[0]))
            if rel is not None:
                return rel
    return None


def plan_system_relation(rel: SystemRelation, ctx: "PlanContext") -> Constant:
    if ctx.maintained is not None:
        # Its rows are the catalog as this statement sees it, not kept up to date as DDL runs.
        raise unsupported(f"reading the system catalog ({rel.schema}.{rel.name}) in {ctx.maintained}")
    key = ("system_relation", rel.id)
    found = ctx.caches.get(key)
    if found is None:  # one object per relation and statement: readers of it share one operator
        snap = snapshot(ctx)
        found = ctx.caches[key] = Constant(tuple(tuple(r) for r in rel.rows(snap)),
                                           tuple(c.type for c in rel.columns))
    return found


def snapshot(ctx: "PlanContext") -> CatalogSnapshot:
    """The catalog as this statement sees it (built once per statement)."""
    cached = ctx.caches.get("system_snapshot")
    if cached is not None:
        return cached
    items = tuple(ctx.catalog.items())
    session = ctx.session
    roles_of = getattr(ctx.catalog, "roles", None)
    roles = tuple(RoleInfo(r.name, r.oid, r.superuser, r.login) for r in roles_of()) if roles_of else ()
    sessions_of = getattr(ctx.catalog, "sessions", None)
    databases_of = getattr(ctx.catalog, "databases", None)
    schemas_of = getattr(ctx.catalog, "schemas", None)
    source_statistics = getattr(ctx.catalog, "source_statistics", None)
    cluster_replicas = getattr(ctx.catalog, "cluster_replicas", None)
    clusters = getattr(ctx.catalog, "clusters", None)
    secret_store = getattr(ctx.catalog, "secrets", None)
    from catalog.privileges import catalog_acls
    acls, owners = catalog_acls(ctx.catalog) if databases_of and schemas_of else ({}, {})
    snap = CatalogSnapshot(
        items=items, database=ctx.database, user=session.user, search_path=tuple(ctx.search_path),
        roles=roles, procs=procs(), settings=tuple(sorted(session.settings.items())),
        sessions=tuple(sessions_of()) if sessions_of else (_own_session(session),),
        databases=tuple(databases_of()) if databases_of else (("slipstream", 16384),),
        schemas=tuple(schemas_of()) if schemas_of else (("slipstream", "public", 2200),),
        defaults=_defaults(items, ctx), acls=acls, owners=owners, **_grants(ctx, items),
        source_statistics=tuple(source_statistics()) if source_statistics else (),
        cluster_replicas=tuple(cluster_replicas()) if cluster_replicas else (),
        clusters=tuple(clusters().clusters) if clusters else (),
        secrets=tuple(secret_store.secrets()) if secret_store else (),
        connections=tuple(secret_store.connections()) if secret_store else (),
        sinks=tuple(ctx.catalog.sinks.sinks()) if getattr(ctx.catalog, "sinks", None) is not None else ())
    ctx.caches["system_snapshot"] = snap
    return snap


def _grants(ctx: "PlanContext", items) -> dict:
    """What information_schema.table_privileges reads (catalog/privileges.py)."""
    store = getattr(ctx.catalog, "privileges", None)
    if store is None:
        return {}
    from catalog.privileges import PrivilegeChecker
    user = ctx.session.user
    roles = None if PrivilegeChecker(ctx.catalog).superuser(user) else frozenset(store.roles_of(user))
    return {"grants": {("item", i.id): store.acl(("item", i.id)) for i in items}, "user_roles": roles,
            "memberships": tuple(sorted(store.memberships()))}


def _own_session(session) -> SessionRow:
    """The statement's own connection, for pg_stat_activity when no list of sessions is given."""
    return SessionRow(pid=session.pid, user=session.user, database=session.database,
                      application_name=session.settings.get("application_name", ""), state="active",
                      backend_start=None)


def _defaults(items, ctx: "PlanContext") -> dict:
    """Each table's column defaults as expression text, from its CREATE TABLE."""
    out = {}
    for item in items:
        if item.kind.value != "table" or "default" not in item.create_sql.lower():
            continue
        key = ("defaults", item.id, item.create_sql)
        found = ctx.caches.get(key)
        if found is None:
            found = column_defaults(item)
            ctx.caches[key] = found
        if found:
            out[item.id] = found
    return out


def column_defaults(item) -> tuple[tuple[int, str], ...]:
    from sqlglot import exp

    from planner.dialect import parse_one_statement
    try:
        tree = parse_one_statement(item.create_sql)
    except Exception:  # noqa: BLE001 - a definition we cannot re-read has no defaults to show
        return ()
    out = []
    schema = tree.this if isinstance(tree, exp.Create) else None
    if not isinstance(schema, exp.Schema):
        return ()
    n = 0
    for col in schema.expressions:
        if not isinstance(col, exp.ColumnDef):
            continue
        n += 1
        for c in col.args.get("constraints") or []:
            if isinstance(c.kind, exp.DefaultColumnConstraint):
                out.append((n, _deparsed(c.kind.this, item.columns[n - 1].type)))
    return tuple(out)


def _deparsed(e, t: SqlType) -> str:
    """A default as pg_get_expr prints it: a string constant carries its column's type
    (`'x'::text`), as PostgreSQL's stored expression does."""
    from sqlglot import exp
    text = e.sql(dialect="postgres")
    if isinstance(e, exp.Literal) and e.is_string:
        return f"{text}::{t.name}"
    return text


# -- pg_proc: the function library ----------------------------------------------------------

@functools.cache
def procs() -> tuple[ProcInfo, ...]:
    """One pg_proc row per overload of the library, the aggregates and the types' I/O functions,
    with OIDs derived from the signature (stable across restarts and unrelated changes). The
    library is fixed for the life of the process, so this is computed once."""
    return _build_procs()


def _oid_of_type(t) -> int:
    if isinstance(t, SqlType):
        if t.kind is TypeKind.UNKNOWN:
            return 25
        return t.oid if t.kind is not TypeKind.ARRAY or t.element is not None else 2277
    return 2283  # anyelement: a polymorphic or "any" argument


def _build_procs() -> tuple[ProcInfo, ...]:
    from catalog.system.pg_types import all_types, io_functions
    from planner.functions.aggregates import AGGREGATE_FUNCTIONS
    from planner.functions import FUNCTIONS
    from planner.table_functions import TABLE_FUNCTIONS

    sigs: list[tuple[str, tuple[int, ...], int, str, bool]] = []
    for name, overloads in FUNCTIONS.items():
        if not name.isidentifier():
            continue  # operators
        for o in overloads:
            args = tuple(_oid_of_type(a) for a in o.args)
            result = o.result if isinstance(o.result, SqlType) else None
            sigs.append((name, args, _oid_of_type(result) if result is not None else 2283, "f", False))
    from catalog.system.native_procs import NATIVE_PROCS
    sigs += [(name, args, result, "f", False) for name, args, result in NATIVE_PROCS]
    for name in sorted(AGGREGATE_FUNCTIONS):
        sigs.append((name, (2283,), 2283, "a", False))
    for name in sorted(TABLE_FUNCTIONS):
        sigs.append((name, (2283,), 2283, "f", True))
    for t in all_types():
        fin, fout, frecv, fsend = io_functions(t)
        sigs += [(fin, (2275,), t.oid, "f", False), (fout, (t.oid,), 2275, "f", False),
                 (frecv, (2281,), t.oid, "f", False), (fsend, (t.oid,), 17, "f", False)]
    sigs.append(("array_subscript_handler", (2281,), 2281, "f", False))
    seen: set[tuple] = set()
    used: set[int] = set()
    out = []
    for name, args, result, kind, retset in sorted(set(sigs)):
        if (name, args) in seen:
            continue
        seen.add((name, args))
        oid = 100_000 + zlib.crc32(f"{name}({','.join(map(str, args))})".encode()) % 800_000
        while oid in used:
            oid += 1
        used.add(oid)
        out.append(ProcInfo(name, oid, args, result, kind, retset))
    return tuple(out)
