"""Durability across restarts, on a server with its own data directory: a clean stop (SIGTERM)
and a crash (SIGKILL right after an acknowledged INSERT). Everything created is there after the
restart, the MV is correct and keeps updating, and a new SUBSCRIBE works; load-generator sources
ticking through the crash continue with no row lost or repeated."""

from __future__ import annotations

import signal

import pytest

from tests.support.clients import psycopg_connect
from tests.support.sources import assert_sources_continue, create_sources
from tests.support.subscribe import Reconstruction, psycopg_fetch_until

pytestmark = pytest.mark.e2e


def create_objects(server) -> None:
    with psycopg_connect(server) as conn:
        conn.execute("CREATE TABLE accounts (id int, owner text, balance int)")
        conn.execute("CREATE TABLE owners (name text, city text)")
        conn.execute("INSERT INTO accounts VALUES (1, 'ann', 100), (2, 'bob', 50), "
                     "(3, 'ann', 25)")
        conn.execute("INSERT INTO owners VALUES ('ann', 'oslo'), ('bob', 'rome')")
        conn.execute("CREATE VIEW rich AS SELECT id, balance FROM accounts WHERE balance >= 50")
        conn.execute("CREATE INDEX accounts_by_owner ON accounts (owner)")
        conn.execute("CREATE MATERIALIZED VIEW by_city AS SELECT o.city, count(*) AS n, "
                     "sum(a.balance) AS total FROM accounts a JOIN owners o ON a.owner = o.name "
                     "GROUP BY o.city")


def assert_objects(server, by_city: list[tuple], rich: list[tuple]) -> None:
    with psycopg_connect(server) as conn:
        tables = {r[0] for r in conn.execute("SHOW TABLES").fetchall()}
        assert {"accounts", "owners"} <= tables
        assert "by_city" in {r[0] for r in conn.execute("SHOW MATERIALIZED VIEWS").fetchall()}
        assert conn.execute("SELECT * FROM by_city ORDER BY city").fetchall() == by_city
        assert conn.execute("SELECT * FROM rich ORDER BY id").fetchall() == rich
        assert conn.execute("SELECT id FROM accounts WHERE owner = 'ann' ORDER BY id"
                            ).fetchall() == [(1,), (3,)]


def test_restart_after_sigterm(fresh_slipstream):
    server = fresh_slipstream
    create_objects(server)
    by_city = [("oslo", 2, 125), ("rome", 1, 50)]
    rich = [(1, 100), (2, 50)]
    assert_objects(server, by_city, rich)
    server.restart(signal.SIGTERM)
    assert_objects(server, by_city, rich)
    # Still incremental after the restart.
    with psycopg_connect(server) as conn:
        conn.execute("UPDATE accounts SET balance = 10 WHERE id = 2")
        assert conn.execute("SELECT * FROM by_city ORDER BY city").fetchall() == \
            [("oslo", 2, 125), ("rome", 1, 10)]


def test_crash_right_after_acknowledged_insert(fresh_slipstream):
    server = fresh_slipstream
    create_objects(server)
    counted = create_sources(server)  # load generators ticking every 50 ms through the crash
    with psycopg_connect(server) as conn:
        conn.execute("INSERT INTO accounts VALUES (4, 'bob', 75)")  # acknowledged ...
    server.kill(signal.SIGKILL)                                    # ... then crash at once
    server.restart()
    by_city = [("oslo", 2, 125), ("rome", 2, 125)]
    assert_objects(server, by_city, [(1, 100), (2, 50), (4, 75)])
    assert_sources_continue(server, counted)  # no tick lost or repeated

    with psycopg_connect(server) as sub, psycopg_connect(server) as writer:
        sub.execute("BEGIN")
        sub.execute("DECLARE c CURSOR FOR SUBSCRIBE by_city WITH (PROGRESS)")
        view = Reconstruction()
        view.apply(psycopg_fetch_until(sub, "c", lambda rows: sum(not r[1] for r in rows) >= 2),
                   progress=True)
        assert view.rows() == by_city
        writer.execute("INSERT INTO owners VALUES ('cy', 'oslo')")
        writer.execute("INSERT INTO accounts VALUES (5, 'cy', 1)")
        expected = [("oslo", 3, 126), ("rome", 2, 125)]
        assert writer.execute("SELECT * FROM by_city ORDER BY city").fetchall() == expected
        view.apply(psycopg_fetch_until(sub, "c", lambda rows: sum(not r[1] for r in rows) >= 2),
                   progress=True)
        assert view.rows() == expected
        sub.execute("ROLLBACK")
