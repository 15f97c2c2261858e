"""The test harness itself, against the real PostgreSQL oracle (no Slipstream needed): the
oracle starts, psql/psycopg/asyncpg reach it, and buildpg statements round-trip."""

from __future__ import annotations

import asyncio
import decimal

from tests.support.clients import PsqlError, asyncpg_connect, psql, psycopg_connect
from tests.support.statements import delete, execute, inline, insert, update

import pytest


def test_psql_against_oracle(pg_oracle):
    out = psql(pg_oracle, "SELECT 1, 'a b', NULL::int, true", user=pg_oracle.user,
               database="postgres")
    assert out == "1|a b||t"
    with pytest.raises(PsqlError) as err:
        psql(pg_oracle, "SELECT * FROM no_such_table", user=pg_oracle.user, database="postgres")
    assert "no_such_table" in err.value.stderr


def test_buildpg_statements_roundtrip_on_oracle(pg_oracle):
    async def scenario():
        conn = await asyncpg_connect(pg_oracle)
        try:
            await conn.execute("CREATE TEMP TABLE h (id int, amount numeric, note text)")
            await execute(conn, insert("h", ["id", "amount", "note"],
                                         [(1, decimal.Decimal("1.5"), "it's"), (2, None, None)]))
            await execute(conn, update("h", {"amount": decimal.Decimal("7")}, {"id": 2}))
            await conn.execute(inline(*insert("h", ["id", "amount", "note"], [(3, 0, "x")])))
            await execute(conn, delete("h", {"id": 3}))
            return await conn.fetch("SELECT id, amount, note FROM h ORDER BY id")
        finally:
            await conn.close()

    rows = asyncio.run(scenario())
    assert [tuple(r) for r in rows] == [(1, decimal.Decimal("1.5"), "it's"),
                                        (2, decimal.Decimal("7"), None)]


def test_psycopg_against_oracle(pg_oracle):
    with psycopg_connect(pg_oracle) as conn:
        assert conn.execute("SELECT 40 + 2").fetchone() == (42,)
