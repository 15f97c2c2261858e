"""Dataflows none of whose inputs changed skip their step on every worker (no exchanges); what
must still move does: a view over a view follows writes to the table under it, a view over two
tables follows writes to either, a temporal filter (`mz_now()`) drops rows as time passes with
no write at all, and SUBSCRIBE keeps reporting progress while nothing changes."""

from __future__ import annotations

import time

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def _rows(conn, sql):
    return sorted(tuple(r) for r in conn.execute(sql).fetchall())


def test_views_follow_writes_through_idle_neighbours(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}a (k int, v int)")
        conn.execute(f"CREATE TABLE {p}b (k int, w text)")
        conn.execute(f"CREATE TABLE {p}other (x int)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}sums AS SELECT k, sum(v) AS s FROM {p}a GROUP BY k")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}named AS SELECT s.k, s.s, b.w FROM {p}sums s JOIN {p}b b ON s.k = b.k")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}others AS SELECT count(*) AS n FROM {p}other")
        query = (f"SELECT s.k, s.s, b.w FROM (SELECT k, sum(v) AS s FROM {p}a GROUP BY k) s "
                 f"JOIN {p}b b ON s.k = b.k")
        steps = [f"INSERT INTO {p}a VALUES (1, 10), (2, 20)", f"INSERT INTO {p}other VALUES (1)",
                 f"INSERT INTO {p}b VALUES (1, 'one')", f"INSERT INTO {p}other VALUES (2)",
                 f"INSERT INTO {p}a VALUES (1, 5)", f"INSERT INTO {p}b VALUES (2, 'two')",
                 f"DELETE FROM {p}a WHERE v = 10", f"UPDATE {p}b SET w = 'uno' WHERE k = 1"]
        for n, stmt in enumerate(steps):
            conn.execute(stmt)
            assert _rows(conn, f"SELECT * FROM {p}named") == _rows(conn, query), stmt
            assert _rows(conn, f"SELECT * FROM {p}others") == _rows(conn, f"SELECT count(*) FROM {p}other"), stmt
        assert _rows(conn, f"SELECT * FROM {p}named") == [(1, 5, "uno"), (2, 20, "two")]
        time.sleep(1.5)  # idle ticks: nothing changes, nothing is lost
        assert _rows(conn, f"SELECT * FROM {p}named") == [(1, 5, "uno"), (2, 20, "two")]
        assert _rows(conn, f"SELECT * FROM {p}others") == [(2,)]
        for obj in ("named", "sums", "others"):
            conn.execute(f"DROP MATERIALIZED VIEW {p}{obj}")
        conn.execute(f"DROP TABLE {p}a, {p}b, {p}other")


def test_temporal_filter_drops_rows_without_writes(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}ev (id int, expires bigint)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}live AS SELECT id FROM {p}ev WHERE mz_now() < expires")
        now_ms = conn.execute("SELECT mz_now()::text").fetchone()[0]
        soon = int(now_ms) + 2500
        conn.execute(f"INSERT INTO {p}ev VALUES (1, {soon}), (2, {soon + 600000})")
        assert _rows(conn, f"SELECT id FROM {p}live") == [(1,), (2,)]
        deadline = time.monotonic() + 20
        while _rows(conn, f"SELECT id FROM {p}live") != [(2,)]:
            assert time.monotonic() < deadline, "row 1 was never retracted"
            time.sleep(0.3)
        conn.execute(f"DROP MATERIALIZED VIEW {p}live")
        conn.execute(f"DROP TABLE {p}ev")


def test_subscribe_progresses_while_idle(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}s (x int)")
        conn.execute(f"INSERT INTO {p}s VALUES (1)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}sv AS SELECT count(*) AS n FROM {p}s")
        with conn.transaction():
            conn.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {p}sv WITH (PROGRESS)")
            first: list = []
            while not any(not r[1] for r in first):  # until the snapshot's row
                first += conn.execute("FETCH ALL c WITH (timeout = '2s')").fetchall()
            assert [r[3] for r in first if not r[1]] == [1]  # the snapshot: n = 1
            seen = [int(r[0]) for r in first]
            time.sleep(1.5)
            later = conn.execute("FETCH ALL c WITH (timeout = '2s')").fetchall()
            assert later and all(r[1] for r in later), later  # progress only: nothing changed
            assert max(int(r[0]) for r in later) > max(seen)
        conn.execute(f"DROP MATERIALIZED VIEW {p}sv")
        conn.execute(f"DROP TABLE {p}s")
