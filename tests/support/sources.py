"""Helpers for load-generator sources in e2e tests: waiting for a value, the COUNTER's
consistency at one timestamp, and the restart check (sources created before a kill -9 continue
after it with no gap and no duplicate)."""

from __future__ import annotations

import time

from tests.support.clients import psycopg_connect


def wait_for(conn, sql: str, ok, deadline_s: float = 30):
    deadline = time.monotonic() + deadline_s
    while True:
        row = conn.execute(sql).fetchone()
        value = None if row is None else row[0]
        if value is not None and ok(value):
            return value
        assert time.monotonic() < deadline, f"{sql} stayed at {value}"
        time.sleep(0.1)


def assert_counter_consistent(conn, src: str) -> int:
    """The counter holds exactly 1..n and the progress relation says n, at one timestamp."""
    n, lo, hi, distinct, offset = conn.execute(
        f'SELECT (SELECT count(*) FROM {src}), (SELECT min(counter) FROM {src}), (SELECT max(counter) FROM {src}), '
        f'(SELECT count(DISTINCT counter) FROM {src}), (SELECT "offset" FROM {src}_progress)').fetchone()
    assert (lo, hi, distinct) == ((1, n, n) if n else (None, None, 0)), (n, lo, hi, distinct)
    assert offset == n, (offset, n)
    return n


def create_sources(server) -> int:
    """A COUNTER and an AUCTION ticking every 50 ms; returns the counter's value once >= 20."""
    with psycopg_connect(server) as conn:
        conn.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '50ms')")
        conn.execute("CREATE SCHEMA a")
        conn.execute("CREATE SOURCE a.house FROM LOAD GENERATOR AUCTION (TICK INTERVAL '50ms') FOR ALL TABLES")
        wait_for(conn, "SELECT count(*) FROM c", lambda n: n >= 20)
        wait_for(conn, "SELECT count(*) FROM a.auctions", lambda n: n >= 1)
        return assert_counter_consistent(conn, "c")


def assert_sources_continue(server, before: int) -> None:
    """After a restart: nothing lost, nothing repeated, and the sources keep ticking."""
    with psycopg_connect(server) as conn:
        after = assert_counter_consistent(conn, "c")
        assert after >= before
        wait_for(conn, "SELECT count(*) FROM c", lambda n: n >= after + 10)
        assert_counter_consistent(conn, "c")
        n, lo, hi, distinct, offset = conn.execute(
            "SELECT (SELECT count(*) FROM a.auctions), (SELECT min(id) FROM a.auctions), "
            "(SELECT max(id) FROM a.auctions), (SELECT count(DISTINCT id) FROM a.auctions), "
            '(SELECT "offset" FROM a.house_progress)').fetchone()
        assert (lo, hi, distinct, offset) == (1, n, n, n)
        assert conn.execute("SELECT count(*) - count(DISTINCT id) FROM a.bids").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM a.users").fetchone()[0] == 400
        conn.execute("DROP SOURCE c")
        conn.execute("DROP SOURCE a.house")
