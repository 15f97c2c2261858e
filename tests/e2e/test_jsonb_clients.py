"""json and jsonb through real drivers, against PostgreSQL: psycopg binds documents (Jsonb and
Json wrappers, text and binary format), asyncpg binds them as text in its binary protocol, and
both read back the same Python values PostgreSQL's answers give."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

DOCS = [{"b": 1, "a": [1, 2.5, None]}, [], "text", 12, None, {"nested": {"k": [True, False]}}]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_binds_and_reads_jsonb(slipstream, pg_oracle, binary):
    sql = "SELECT %s::jsonb, %s::jsonb -> 'a', jsonb_typeof(%s::jsonb), %s::json"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for d in DOCS:
            params = (Jsonb(d), Jsonb(d), Jsonb(d), Json(d))
            got = ss.execute(sql, params, binary=binary).fetchall()
            want = pg.execute(sql, params, binary=binary).fetchall()
            assert got == want, d


def test_asyncpg_reads_and_binds_jsonb(slipstream, pg_oracle):
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            out = []
            for text in ('{"b": 1, "a": 2}', '[1, "x"]', '"s"', 'null'):
                out.append(tuple(await conn.fetchrow("SELECT $1::jsonb, $1::jsonb @> '{\"a\": 2}', "
                                                     "jsonb_build_object('v', $1::jsonb)", text)))
            return out
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))
