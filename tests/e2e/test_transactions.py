"""Writes inside BEGIN ... COMMIT apply atomically at COMMIT, at one timestamp; ROLLBACK drops
them; an UPDATE/DELETE whose table changed before COMMIT is evaluated again at COMMIT."""

from __future__ import annotations

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def test_commit_rollback_and_reevaluation(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as a, psycopg_connect(slipstream) as b:
        a.autocommit = True
        b.autocommit = True
        a.execute(f"CREATE TABLE {p}t (id int, v int)")
        a.execute(f"CREATE INDEX {p}t_id ON {p}t (id)")
        a.execute(f"INSERT INTO {p}t VALUES (1, 10), (2, 20), (3, 30)")
        a.execute(f"CREATE MATERIALIZED VIEW {p}s AS SELECT count(*) AS n, sum(v) AS total FROM {p}t")

        # ROLLBACK: nothing happened.
        a.execute("BEGIN")
        assert a.execute(f"DELETE FROM {p}t WHERE id = 1").statusmessage == "DELETE 1"
        a.execute(f"INSERT INTO {p}t VALUES (9, 90)")
        a.execute("ROLLBACK")
        assert b.execute(f"SELECT * FROM {p}s").fetchall() == [(3, 60)]

        # COMMIT: all of it, at once.
        a.execute("BEGIN")
        assert a.execute(f"UPDATE {p}t SET v = v + 1 WHERE id IN (1, 2)").statusmessage == "UPDATE 2"
        a.execute(f"DELETE FROM {p}t WHERE id = 3")
        assert b.execute(f"SELECT * FROM {p}s").fetchall() == [(3, 60)]  # not yet visible
        a.execute("COMMIT")
        assert b.execute(f"SELECT * FROM {p}t ORDER BY id").fetchall() == [(1, 11), (2, 21)]
        assert b.execute(f"SELECT * FROM {p}s").fetchall() == [(2, 32)]

        # Another writer changes the row between the statement and COMMIT: the UPDATE is evaluated
        # again at COMMIT, against the committed state (never retracting a row that is gone).
        a.execute("BEGIN")
        a.execute(f"UPDATE {p}t SET v = v + 1 WHERE id = 1")
        b.execute(f"UPDATE {p}t SET v = 100 WHERE id = 1")
        a.execute("COMMIT")
        assert b.execute(f"SELECT * FROM {p}t ORDER BY id").fetchall() == [(1, 101), (2, 21)]
        assert b.execute(f"SELECT * FROM {p}s").fetchall() == [(2, 122)]
