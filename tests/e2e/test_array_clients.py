"""Arrays through real drivers, against PostgreSQL: psycopg binds Python lists (text and binary
format) and reads arrays back as lists, asyncpg binds and reads text[] in binary, and COPY and a table round trip keep NULL elements and quoting."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

LISTS = [
    ("int[]", [1, None, -3]), ("bigint[]", [2 ** 40]), ("text[]", ["a b", "", None, 'q"x', "NULL", "{}"]),
    ("numeric[]", [Decimal("1.50"), Decimal("-2")]), ("float8[]", [1.5, -0.25]), ("boolean[]", [True, False, None]),
    ("date[]", [dt.date(2024, 2, 29)]), ("timestamp[]", [dt.datetime(2024, 1, 1, 10, 0, 0, 5)]), ("int[]", []),
]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_binds_and_reads_arrays(slipstream, pg_oracle, binary):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for type_name, value in LISTS:
            sql = f"SELECT %s::{type_name}, cardinality(%s::{type_name}), (%s::{type_name})[1]"
            got = ss.execute(sql, (value, value, value), binary=binary).fetchall()
            want = pg.execute(sql, (value, value, value), binary=binary).fetchall()
            assert got == want, (type_name, value)


def test_array_columns_round_trip(slipstream, unique_prefix):
    t = f"{unique_prefix}arr"
    rows = [(1, [1, None, 3], ["a,b", None, ""]), (2, [], []), (3, None, ["x"])]
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {t} (id int, a int[], s text[])")
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", rows[:2])
        with conn.cursor().copy(f"COPY {t} FROM STDIN") as copy:
            copy.write_row(rows[2])
        for binary in (False, True):
            assert conn.execute(f"SELECT id, a, s FROM {t} ORDER BY id", binary=binary).fetchall() == rows


def test_asyncpg_binds_and_reads_text_arrays_in_binary(slipstream, pg_oracle):
    # asyncpg has built-in codecs for text[]; the other types are looked up first (below).
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            out = [tuple(await conn.fetchrow("SELECT $1::text[], array_to_string($1::text[], '-')", ["a", "b c"]))]
            out.append(tuple(await conn.fetchrow("SELECT $1::text[] || 'z'::text, cardinality($1::text[])",
                                                 ["x", None, ""])))
            out.append(tuple(await conn.fetchrow("SELECT string_to_array('a,b,,c', ',')")))
            return out
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))


def test_asyncpg_introspects_int_numeric_and_date_arrays(slipstream, pg_oracle):
    # For int[], numeric[], date[] ... asyncpg first looks the types up with its introspection
    # query: a WITH RECURSIVE over pg_type whose select list holds a correlated WITH RECURSIVE
    # (`typebases`, reading the outer `t.oid`) and `elemtype::regtype::text` (`-` for oid 0).
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            out = [tuple(await conn.fetchrow("SELECT $1::int[], $2::bigint[], $3::numeric[]",
                                             [1, None, -3], [2 ** 40], [Decimal("1.50"), None]))]
            out.append(tuple(await conn.fetchrow("SELECT ARRAY[1, 2] || 3, $1::date[], $2::float8[]",
                                                 [dt.date(2024, 2, 29)], [0.5, float("inf")])))
            out.append(tuple(await conn.fetchrow("SELECT $1::int4[] = '{7,8,9}'::int[], array_length($1::int4[], 1), "
                                                 "$2::jsonb, $3::uuid[]", [7, 8, 9], '{"a": [1, null]}',
                                                 ["00000000-0000-0000-0000-00000000000a"])))
            return out
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))
