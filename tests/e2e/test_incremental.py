"""Incrementality is visible: an UPDATE shows in the MV, and a SUBSCRIBE on the MV reports it
as a -1 and a +1 at the same mz_timestamp. Read-your-writes across connections."""

from __future__ import annotations

import pytest

from tests.support.clients import psycopg_connect
from tests.support.subscribe import psycopg_fetch_until

pytestmark = pytest.mark.e2e


def test_update_shows_in_mv_and_in_subscribe(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as writer, psycopg_connect(slipstream) as reader:
        writer.execute(f"CREATE TABLE {p}acct (id int, balance int)")
        writer.execute(f"INSERT INTO {p}acct VALUES (1, 100), (2, 50)")
        writer.execute(f"CREATE MATERIALIZED VIEW {p}total AS "
                       f"SELECT sum(balance) AS total, count(*) AS n FROM {p}acct")
        assert writer.execute(f"SELECT total, n FROM {p}total").fetchone() == (150, 2)

        reader.execute("BEGIN")
        reader.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {p}total")
        snapshot = psycopg_fetch_until(reader, "c", lambda rows: len(rows) >= 1)
        assert [tuple(r[1:]) for r in snapshot] == [(1, 150, 2)]

        writer.execute(f"UPDATE {p}acct SET balance = 70 WHERE id = 2")
        assert writer.execute(f"SELECT total, n FROM {p}total").fetchone() == (170, 2)

        change = psycopg_fetch_until(reader, "c", lambda rows: len(rows) >= 2)
        assert len(change) == 2, change
        assert change[0][0] == change[1][0], "retraction and insertion at one mz_timestamp"
        assert change[0][0] > snapshot[0][0]
        assert sorted(tuple(r[1:]) for r in change) == [(-1, 150, 2), (1, 170, 2)]
        reader.execute("ROLLBACK")


def test_read_your_writes_across_connections(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as a, psycopg_connect(slipstream) as b:
        a.execute(f"CREATE TABLE {p}events (k int, v int)")
        a.execute(f"CREATE MATERIALIZED VIEW {p}stats AS "
                  f"SELECT count(*) AS n, max(v) AS top, sum(v) AS s FROM {p}events")
        total = 0
        for step in range(1, 41):
            value = step * 7 + 3
            total += value
            a.execute(f"INSERT INTO {p}events VALUES ({step}, {value})")
            # Acknowledged on A: B's very next read must include it.
            assert b.execute(f"SELECT n, top, s FROM {p}stats").fetchone() == \
                (step, value, total), f"step {step}"
