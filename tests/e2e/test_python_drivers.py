"""What Python drivers do besides plain queries, against Slipstream and PostgreSQL: psycopg 3's
TypeInfo lookup (pg_type by to_regtype), psycopg2's named (server-side) cursors, `= ANY(%s)` with
a list, and copy_expert in and out; pg8000's named parameters; asyncpg's binary COPY in
(copy_records_to_table) and cursors."""

from __future__ import annotations

import asyncio
import io

import asyncpg
import psycopg
import pytest
from psycopg.types import TypeInfo

psycopg2 = pytest.importorskip("psycopg2")
pg8000 = pytest.importorskip("pg8000.native")

pytestmark = pytest.mark.e2e


def _dsn(server, user="slipstream", database="slipstream"):
    return f"postgresql://{user}@{server.host}:{server.port}/{database}"


@pytest.fixture(scope="module")
def dsns(slipstream, pg_oracle):
    return {"slipstream": _dsn(slipstream), "postgres": _dsn(pg_oracle, pg_oracle.user, "postgres")}


def _typeinfo(dsn):
    with psycopg.connect(dsn) as conn:
        out = []
        for name in ("int4", "text[]", "numeric", "jsonb", "uuid", "no_such_type"):
            info = TypeInfo.fetch(conn, name)
            out.append(None if info is None else (info.name, info.oid, info.array_oid))
        return out


def _psycopg2(dsn, table):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {table} (a int, b text)")
    cur.copy_expert(f"COPY {table} FROM STDIN", io.StringIO("1\tx\n2\t\\N\n3\tz\n"))
    out = io.StringIO()
    cur.copy_expert(f"COPY (SELECT * FROM {table} ORDER BY a) TO STDOUT WITH (FORMAT csv, HEADER)", out)
    cur.execute(f"SELECT a FROM {table} WHERE a = ANY(%s) ORDER BY a", ([1, 3, 5],))
    any_rows = cur.fetchall()
    conn.autocommit = False
    named = conn.cursor("srv")
    named.itersize = 2
    named.execute(f"SELECT a, b FROM {table} ORDER BY a")
    streamed = list(named)
    named.close()
    conn.rollback()
    conn.autocommit = True
    cur.execute(f"DROP TABLE {table}")
    conn.close()
    return out.getvalue(), any_rows, streamed


def _pg8000(server, user, database):
    conn = pg8000.Connection(user, host=server.host, port=server.port, database=database)
    try:
        return conn.run("SELECT :a::int + 1, :b || 'x', :c::numeric * 2", a=1, b="y", c="1.25")
    finally:
        conn.close()


async def _asyncpg(dsn, table):
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"CREATE TABLE {table} (a int, b text, c float8, d bool)")
        await conn.copy_records_to_table(table, records=[(1, "x", 1.5, True), (2, None, None, False)])
        rows = [tuple(r) for r in await conn.fetch(f"SELECT * FROM {table} ORDER BY a")]
        async with conn.transaction():
            cur = await conn.cursor(f"SELECT a FROM {table} ORDER BY a")
            first = [tuple(r) for r in await cur.fetch(1)]
        await conn.execute(f"DROP TABLE {table}")
        return rows, first
    finally:
        await conn.close()


def test_psycopg_typeinfo(dsns):
    assert _typeinfo(dsns["slipstream"]) == _typeinfo(dsns["postgres"])


def test_psycopg2_copy_any_and_named_cursor(dsns, unique_prefix):
    assert _psycopg2(dsns["slipstream"], f"{unique_prefix}p2") == _psycopg2(dsns["postgres"], f"{unique_prefix}p2")


def test_pg8000_parameters(slipstream, pg_oracle):
    assert _pg8000(slipstream, "slipstream", "slipstream") == _pg8000(pg_oracle, pg_oracle.user, "postgres")


def test_asyncpg_copy_records_and_cursor(dsns, unique_prefix):
    got = asyncio.run(_asyncpg(dsns["slipstream"], f"{unique_prefix}apg"))
    assert got == asyncio.run(_asyncpg(dsns["postgres"], f"{unique_prefix}apg"))
