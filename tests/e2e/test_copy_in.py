"""COPY ... FROM STDIN in the three formats clients use: text (psql, psycopg), CSV, and binary
(asyncpg's copy_records_to_table)."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

ROWS = [
    (1, "plain", 1.5, Decimal("2.25"), True, dt.datetime(2024, 1, 2, 3, 4, 5)),
    (2, "tab\there, newline\nthere, back\\slash", None, None, False, None),
    (3, None, -0.25, Decimal("-7"), None, dt.datetime(1999, 12, 31, 23, 59, 59, 123456)),
]
DDL = "(id int, s text, f double precision, n numeric(10,2), b boolean, ts timestamp)"


def _select(conn, table):
    return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


def test_copy_text_and_csv_with_psycopg(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t {DDL}")
        with conn.cursor().copy(f"COPY {p}t FROM STDIN") as copy:
            for row in ROWS:
                copy.write_row(row)
        assert _select(conn, f"{p}t") == ROWS
        # Many rows without escapes take the vectorised path.
        conn.execute(f"CREATE TABLE {p}big (id int, s text)")
        with conn.cursor().copy(f"COPY {p}big FROM STDIN") as copy:
            copy.write("".join(f"{i}\tv{i}\n" if i % 10 else f"{i}\t\\N\n" for i in range(20000)))
        assert conn.execute(f"SELECT count(*), count(s), sum(id) FROM {p}big").fetchone() == \
            (20000, 18000, sum(range(20000)))
        conn.execute(f"CREATE TABLE {p}c (id int, s text)")
        with conn.cursor().copy(f"COPY {p}c FROM STDIN WITH (FORMAT csv)") as copy:
            copy.write('1,"a,b"\n2,\n3,"say ""hi"""\n')
        assert _select(conn, f"{p}c") == [(1, "a,b"), (2, None), (3, 'say "hi"')]


def test_copy_binary_with_asyncpg(slipstream, unique_prefix):
    p = unique_prefix

    async def run():
        conn = await asyncpg_connect(slipstream)
        try:
            await conn.execute(f"CREATE TABLE {p}t {DDL}")
            result = await conn.copy_records_to_table(f"{p}t", records=ROWS)
            assert result == "COPY 3"
            return [tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}t ORDER BY id")]
        finally:
            await conn.close()

    assert asyncio.run(run()) == ROWS
