"""pg_sleep over real sockets: it returns void ('' in text, NULL for NULL, the empty binary
value), takes the time it is asked for, and a client's cancel (psycopg's Connection.cancel, a
CancelRequest on a new connection) stops a long one with 57014 while the session stays usable.
It is volatile: a materialized view may not use it."""

from __future__ import annotations

import asyncio
import threading
import time

import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e


def test_pg_sleep_returns_void_after_the_time(slipstream, pg_oracle):
    for dsn in (slipstream.dsn, pg_oracle.dsn):
        with psycopg.connect(dsn, autocommit=True) as conn:
            start = time.monotonic()
            cur = conn.execute("SELECT pg_sleep(0.3), pg_sleep(NULL), pg_typeof(pg_sleep(0))")
            assert cur.fetchone() == ("", None, "void")
            assert time.monotonic() - start >= 0.3
            assert cur.description[0].type_code == 2278


def test_pg_sleep_binary_through_asyncpg(slipstream):
    async def run():
        conn = await asyncpg_connect(slipstream)
        try:
            return await conn.fetchrow("SELECT pg_sleep(0.01) AS s, 1 AS one")
        finally:
            await conn.close()
    row = asyncio.run(run())
    assert row["s"] is None and row["one"] == 1  # asyncpg decodes void as None


def test_cancel_stops_pg_sleep(slipstream):
    with psycopg_connect(slipstream) as conn:
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        start = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(30)")
        assert time.monotonic() - start < 10
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_pg_sleep_is_refused_in_a_materialized_view(slipstream, unique_prefix):
    with psycopg_connect(slipstream) as conn:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(f"CREATE MATERIALIZED VIEW {unique_prefix}s AS SELECT pg_sleep(1)")
        assert info.value.sqlstate is not None and not info.value.sqlstate.startswith("XX")
