"""Catalog queries and constants whose results environmentd keeps for equal plans
(server/constant_results.py), over the wire: a repeated catalog query sees DDL made between
its runs, and what the plan does not determine (random(), the statement time) is not kept."""

from __future__ import annotations

import time

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

CATALOG_QUERY = """
WITH RECURSIVE up(oid, depth) AS (
    SELECT t.oid, 0 FROM pg_type t WHERE t.typname = %s
    UNION ALL
    SELECT t.typelem, up.depth + 1 FROM pg_type t, up WHERE t.oid = up.oid AND t.typelem <> 0
)
SELECT count(*) FROM up"""


def test_repeated_catalog_queries_follow_ddl(slipstream, unique_prefix):
    name = f"{unique_prefix}t"
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        count = f"SELECT count(*) FROM pg_class WHERE relname = '{name}'"
        assert conn.execute(count).fetchone() == (0,)
        assert conn.execute(count).fetchone() == (0,)
        conn.execute(f"CREATE TABLE {name} (a int)")
        assert conn.execute(count).fetchone() == (1,)
        cols = f"SELECT attname FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid WHERE c.relname = '{name}' AND attnum > 0 ORDER BY attnum"
        assert conn.execute(cols).fetchall() == [("a",)]
        conn.execute(f"DROP TABLE {name}")
        conn.execute(f"CREATE TABLE {name} (a int, b text)")
        assert conn.execute(cols).fetchall() == [("a",), ("b",)]
        # A recursive catalog query, twice and from a second connection: the same answer.
        first = conn.execute(CATALOG_QUERY, ("_int8",)).fetchone()
        assert first == (2,)  # _int8, then int8
        with psycopg_connect(slipstream) as other:
            assert other.execute(CATALOG_QUERY, ("_int8",)).fetchone() == first
        assert conn.execute(CATALOG_QUERY, ("int8",)).fetchone() == (1,)
        conn.execute(f"DROP TABLE {name}")
        assert conn.execute(count).fetchone() == (0,)


def test_what_the_plan_does_not_determine_is_evaluated_again(slipstream):
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        randoms = {conn.execute("SELECT random()").fetchone()[0] for _ in range(5)}
        assert len(randoms) > 1
        first = conn.execute("SELECT now()").fetchone()[0]
        time.sleep(0.01)
        assert conn.execute("SELECT now()").fetchone()[0] > first
        uuids = {conn.execute("SELECT gen_random_uuid()").fetchone()[0] for _ in range(3)}
        assert len(uuids) == 3
