"""CREATE SOURCE ... FROM POSTGRES: read what the upstream publishes, check it can be ingested
exactly, and create the source, its subsources and its progress relation.

Checks, each an error in the user's words before anything is created:
* the connection exists and the upstream answers (08001 with the upstream's message otherwise);
* the upstream's wal_level is `logical` (55000);
* the publication exists (42704), and every table FOR TABLES names is in it (42P01);
* every table is REPLICA IDENTITY FULL (55000, as Materialize: updates and deletes must carry the
  whole old row, so a retraction is exact without keeping a copy of the table);
* every column's type has a Slipstream counterpart, or is listed in TEXT COLUMNS (0A000,
  storage/sources/postgres/types.py), and every TEXT COLUMNS entry names a column (42703);
* subsource names do not collide (42P07: two upstream schemas with a table of one name need
  FOR TABLES (s1.t AS t1, s2.t AS t2)).

The replication slot is created by the ingestion (storage/sources/postgres/ingest.py) with the
snapshot it takes, so a source that never ingested holds no slot upstream.
"""

from __future__ import annotations

import json
import uuid

from buildpg import render

from catalog.items import ItemKind
from dataflow.errors import SqlError, SqlState
from planner.pg_source_syntax import CreatePostgresSourcePlan
from storage.sources.postgres import upstream
from storage.sources.postgres.spec import PostgresSpec, UpstreamColumn, UpstreamTable

PREREQUISITE = "55000"  # object_not_in_prerequisite_state


async def create_postgres_source(coord, plan: CreatePostgresSourcePlan, user: str):
    from server.adapter.connections import find_connection
    catalog = coord.catalog
    connection = find_connection(catalog, plan.database, plan.search_path, plan.connection)
    if connection is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown connection "{".".join(plan.connection)}"')
    params = upstream.connect_params(catalog, connection)
    try:
        conn = await upstream.connect(params)
    except Exception as e:  # noqa: BLE001 - reported to the user
        raise upstream.user_error(params, e) from None
    try:
        tables = await read_upstream(conn, plan)
    finally:
        await conn.close()
    spec = PostgresSpec(connection.id, plan.publication, f"slipstream_{uuid.uuid4().hex[:16]}", tables)
    spec.outputs()  # type mapping errors (0A000) before anything is created
    return await coord.sources.create_from_spec(plan, spec, spec.to_definition(plan.progress_name))


async def read_upstream(conn, plan: CreatePostgresSourcePlan) -> tuple[UpstreamTable, ...]:
    wal_level = await conn.fetchval("SHOW wal_level")
    if wal_level != "logical":
        raise SqlError(PREREQUISITE, f"the upstream PostgreSQL's wal_level is {wal_level}, not logical",
                       hint="Set wal_level = logical in its configuration and restart it.")
    sql, args = render("SELECT 1 FROM pg_publication WHERE pubname = :pub", pub=plan.publication)
    if await conn.fetchval(sql, *args) is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'publication "{plan.publication}" does not exist',
                       hint="Create it upstream: CREATE PUBLICATION name FOR TABLE ... (or FOR ALL TABLES).")
    sql, args = render(
        "SELECT c.oid, pt.schemaname, pt.tablename, c.relreplident::text FROM pg_publication_tables pt "
        "JOIN pg_namespace n ON n.nspname = pt.schemaname "
        "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename "
        "WHERE pt.pubname = :pub ORDER BY pt.schemaname, pt.tablename", pub=plan.publication)
    published = [(int(r[0]), r[1], r[2], r[3]) for r in await conn.fetch(sql, *args)]
    chosen: list[tuple[int, str, str, str, str]] = []  # oid, schema, table, replident, output
    if plan.tables is not None:
        for name, alias in plan.tables:
            matches = [p for p in published if p[2] == name[-1] and (len(name) < 2 or p[1] == name[-2])]
            if len(name) == 1 and len(matches) > 1:
                raise SqlError(SqlState.AMBIGUOUS_ALIAS if hasattr(SqlState, "AMBIGUOUS_ALIAS") else "42P09",
                               f'table name "{name[0]}" is ambiguous in publication "{plan.publication}"',
                               hint="Qualify it with its schema.")
            if not matches:
                raise SqlError(SqlState.UNDEFINED_TABLE,
                               f'table "{".".join(name)}" is not part of publication "{plan.publication}"')
            oid, schema, table, ident = matches[0]
            chosen.append((oid, schema, table, ident, alias or table))
    else:
        for oid, schema, table, ident in published:
            if plan.schemas is None or schema in plan.schemas:
                chosen.append((oid, schema, table, ident, table))
        if plan.schemas is not None:
            missing = [s for s in plan.schemas if not any(c[1] == s for c in chosen)]
            if missing:
                raise SqlError(SqlState.UNDEFINED_OBJECT,
                               f'publication "{plan.publication}" has no tables in schema "{missing[0]}"')
    if not chosen:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'publication "{plan.publication}" has no tables')
    not_full = [f"{s}.{t}" for _, s, t, ident, _ in chosen if ident != "f"]
    if not_full:
        raise SqlError(PREREQUISITE, f'table "{not_full[0]}" does not have REPLICA IDENTITY FULL',
                       detail="Updates and deletes must carry the whole old row for the source to apply them exactly.",
                       hint=f"Run upstream: ALTER TABLE {not_full[0]} REPLICA IDENTITY FULL;")
    outputs = [c[4] for c in chosen]
    for o in outputs:
        if outputs.count(o) > 1:
            raise SqlError(SqlState.DUPLICATE_TABLE, f'two upstream tables would both be subsource "{o}"',
                           hint="Name them apart: FOR TABLES (s1.t AS t1, s2.t AS t2).")
    sql, args = render(
        "SELECT a.attrelid, a.attname, a.atttypid, a.atttypmod, a.attnotnull, "
        "format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "WHERE a.attrelid = ANY(:oids::oid[]) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
        "ORDER BY a.attrelid, a.attnum", oids=[c[0] for c in chosen])
    columns: dict[int, list] = {}
    for r in await conn.fetch(sql, *args):
        columns.setdefault(int(r[0]), []).append(r)
    text_columns = {tuple(t) for t in plan.text_columns}
    used: set = set()
    tables = []
    for oid, schema, table, _, output in chosen:
        cols = []
        for r in columns.get(oid, []):
            keys = {(table, r[1]), (schema, table, r[1])}
            hit = keys & text_columns
            used |= hit
            cols.append(UpstreamColumn(r[1], int(r[2]), int(r[3]), r[5], bool(hit), not r[4]))
        tables.append(UpstreamTable(oid, schema, table, output, tuple(cols)))
    unknown = text_columns - used
    if unknown:
        raise SqlError(SqlState.UNDEFINED_COLUMN,
                       f'TEXT COLUMNS names "{".".join(sorted(unknown)[0])}", which is not a column of the source\'s tables')
    return tuple(tables)


def subsource_error(item) -> str | None:
    """The error a subsource was put in (a schema change, a truncation), if any: durable in its
    catalog definition so a restart does not ingest it again."""
    return json.loads(item.definition or "{}").get("error")


def set_subsource_error(catalog, item, message: str) -> None:
    from dataclasses import replace
    d = json.loads(item.definition or "{}")
    d["error"] = message
    catalog.replace(replace(item, definition=json.dumps(d)))


__all__ = ["create_postgres_source", "read_upstream", "subsource_error", "set_subsource_error", "ItemKind"]
