"""CREATE TABLE / INSERT (1000 rows in one statement) / UPDATE / DELETE / SELECT through psql,
psycopg 3 and asyncpg, checking exact values and the Python types each driver returns."""

from __future__ import annotations

import asyncio
import datetime
import decimal

import pytest

from tests.support.clients import asyncpg_connect, psql, psycopg_connect
from tests.support.statements import execute, inline, insert

pytestmark = pytest.mark.e2e

COLUMNS = ["i", "b", "t", "flag", "d", "n", "ts"]
BASE_TS = datetime.datetime(2024, 1, 1)


def create_sql(table: str) -> str:
    return (f"CREATE TABLE {table} (i int, b bigint, t text, flag boolean, "
            f"d double precision, n numeric, ts timestamp)")


def make_row(i: int) -> tuple:
    return (i, i * 10_000_000_000, f"row {i}", i % 2 == 0, i / 4,
            decimal.Decimal(f"{i}.25"), BASE_TS + datetime.timedelta(minutes=i))


def expected_after_changes(i: int) -> tuple:
    """UPDATE set t='updated', n = n + 1 where i <= 100; DELETE where i > 900."""
    row = make_row(i)
    if i <= 100:
        row = (row[0], row[1], "updated", row[3], row[4], row[5] + 1, row[6])
    return row


ROWS = [make_row(i) for i in range(1, 1001)]
UPDATE = "UPDATE {t} SET t = 'updated', n = n + 1 WHERE i <= 100"
DELETE = "DELETE FROM {t} WHERE i > 900"
SELECT = "SELECT i, b, t, flag, d, n, ts FROM {t} WHERE i >= 95 AND i <= 105 ORDER BY i DESC LIMIT 5"
EXPECTED_SELECT = [expected_after_changes(i) for i in (105, 104, 103, 102, 101)]
EXPECTED_EDGE = [expected_after_changes(i) for i in (100, 99)]


def as_psql_text(row: tuple) -> str:
    i, b, t, flag, d, n, ts = row
    return "|".join([str(i), str(b), t, "t" if flag else "f", format_float(d), str(n),
                     ts.strftime("%Y-%m-%d %H:%M:%S")])


def format_float(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def test_dml_with_psql(slipstream, unique_prefix):
    table = f"{unique_prefix}psql"
    psql(slipstream, create_sql(table))
    out = psql(slipstream, inline(*insert(table, COLUMNS, ROWS)), "-v", "QUIET=0")
    assert out.strip().endswith("INSERT 0 1000")
    assert psql(slipstream, UPDATE.format(t=table), "-v", "QUIET=0").strip() == "UPDATE 100"
    assert psql(slipstream, DELETE.format(t=table), "-v", "QUIET=0").strip() == "DELETE 100"
    assert psql(slipstream, f"SELECT count(*) FROM {table}") == "900"
    out = psql(slipstream, SELECT.format(t=table))
    assert out.splitlines() == [as_psql_text(r) for r in EXPECTED_SELECT]
    out = psql(slipstream, f"SELECT {', '.join(COLUMNS)} FROM {table} WHERE i IN (99, 100) "
                           f"ORDER BY i DESC")
    assert out.splitlines() == [as_psql_text(r) for r in EXPECTED_EDGE]


def test_dml_with_psycopg(slipstream, unique_prefix):
    table = f"{unique_prefix}psycopg"
    with psycopg_connect(slipstream) as conn:
        conn.execute(create_sql(table))
        cur = conn.execute(inline(*insert(table, COLUMNS, ROWS)))
        assert cur.statusmessage == "INSERT 0 1000"
        assert conn.execute(UPDATE.format(t=table)).statusmessage == "UPDATE 100"
        assert conn.execute(DELETE.format(t=table)).statusmessage == "DELETE 100"
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (900,)
        rows = conn.execute(SELECT.format(t=table)).fetchall()
        assert rows == EXPECTED_SELECT
        assert [type(v) for v in rows[0]] == [int, int, str, bool, float, decimal.Decimal,
                                              datetime.datetime]
        # Parameters bound by the driver (extended protocol).
        rows = conn.execute(f"SELECT i, t FROM {table} WHERE i = %s OR t = %s ORDER BY i",
                            (7, "row 500")).fetchall()
        assert rows == [(7, "updated"), (500, "row 500")]


def test_dml_with_asyncpg(slipstream, unique_prefix):
    table = f"{unique_prefix}asyncpg"

    async def scenario():
        conn = await asyncpg_connect(slipstream)
        try:
            await conn.execute(create_sql(table))
            # 7000 bound parameters in one INSERT, built with buildpg.
            assert await execute(conn, insert(table, COLUMNS, ROWS)) == "INSERT 0 1000"
            assert await conn.execute(UPDATE.format(t=table)) == "UPDATE 100"
            assert await conn.execute(DELETE.format(t=table)) == "DELETE 100"
            assert await conn.fetchval(f"SELECT count(*) FROM {table}") == 900
            rows = [tuple(r) for r in await conn.fetch(SELECT.format(t=table))]
            assert rows == EXPECTED_SELECT
            assert isinstance(rows[0][5], decimal.Decimal)
            assert isinstance(rows[0][6], datetime.datetime)
            row = await conn.fetchrow(f"SELECT i, n, ts FROM {table} WHERE i = $1", 42)
            assert tuple(row) == (42, decimal.Decimal("43.25"),
                                  BASE_TS + datetime.timedelta(minutes=42))
        finally:
            await conn.close()

    asyncio.run(scenario())
