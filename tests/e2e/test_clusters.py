"""Compute clusters over a real server: CREATE CLUSTER, materialized views and indexes IN CLUSTER,
a quickstart view over another cluster's view, `SET cluster` for SELECT and SUBSCRIBE while a
writer inserts, losing the other cluster's only replica while quickstart keeps serving, DROP
CLUSTER with and without CASCADE, and a restart that brings the cluster and its objects back.

One server (the default local master: quickstart's 2 workers, room for c2's 1)."""

from __future__ import annotations

import os
import signal
import threading
import time

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.spark_workers import dataflow_worker_pids

pytestmark = pytest.mark.e2e


def _ready(conn) -> dict[tuple[str, str], bool]:
    return {(c, r): ready for c, r, _, ready, _ in conn.execute("SHOW CLUSTER REPLICAS").fetchall()}


def _wait(conn, replica: tuple[str, str], ready: bool, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ready(conn).get(replica) == ready:
            return
        time.sleep(0.05)
    raise AssertionError(f"replica {replica} not {'ready' if ready else 'down'}: {_ready(conn)}")


def _error(conn, sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    return info.value


class _Writer:
    """Inserts 11, 12, ... one row per statement until stopped."""

    def __init__(self, server) -> None:
        self.server, self.stop, self.last, self.errors = server, threading.Event(), 10, []
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        with psycopg_connect(self.server) as conn:
            while not self.stop.is_set():
                try:
                    conn.execute("INSERT INTO events VALUES (%s)", (self.last + 1,))
                    self.last += 1
                except psycopg.Error as e:
                    self.errors.append(e)
                time.sleep(0.01)

    def __enter__(self) -> "_Writer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(60)


# Everything at one timestamp: the views (c2's, and quickstart's over it) against the table.
CONSISTENT = ("SELECT (SELECT count(*) FROM events), (SELECT sum(k) FROM events), t.n, t.s, "
              "(SELECT count(*) FROM odd), (SELECT count(*) FROM events WHERE k % 2 = 1), "
              "(SELECT sum(n) FROM sums) FROM total t")


def _check_consistent(conn) -> int:
    count, total, n, s, odd, odd_expected, sums_n = conn.execute(CONSISTENT).fetchone()
    assert (n, s, odd, sums_n) == (count, total, odd_expected, count)
    return count


def test_clusters(fresh_slipstream):
    server = fresh_slipstream
    with psycopg_connect(server) as conn:
        conn.execute("CREATE TABLE events (k int)")
        conn.execute("INSERT INTO events SELECT generate_series(1, 10)")
        before = set(dataflow_worker_pids(server.process.pid))
        conn.execute("CREATE CLUSTER c2 (SIZE = '1')")
        c2_workers = set(dataflow_worker_pids(server.process.pid)) - before
        assert len(c2_workers) == 1, c2_workers
        for sql, sqlstate in [
            ("CREATE CLUSTER c2 (SIZE = '1')", "42710"),
            ("CREATE CLUSTER big (SIZE = '64')", "53000"),               # more than the slots
            ("CREATE CLUSTER REPLICA c2.r2 (SIZE = '64')", "53000"),
            ("CREATE MATERIALIZED VIEW x IN CLUSTER nope AS SELECT 1", "42704"),
            ("CREATE INDEX IN CLUSTER nope ON events (k)", "42704"),
            ("DROP CLUSTER nope", "42704"),
            ("CREATE CLUSTER REPLICA nope.r1 (SIZE = '1')", "42704"),
        ]:
            assert _error(conn, sql).sqlstate == sqlstate, sql
        conn.execute("CREATE MATERIALIZED VIEW sums IN CLUSTER c2 AS "
                     "SELECT k % 3 AS g, count(*) AS n, sum(k) AS s FROM events GROUP BY k % 3")
        conn.execute("CREATE VIEW odd AS SELECT k FROM events WHERE k % 2 = 1")
        conn.execute("CREATE INDEX odd_k IN CLUSTER c2 ON odd (k)")
        conn.execute("CREATE MATERIALIZED VIEW total AS SELECT sum(n) AS n, sum(s) AS s FROM sums")
        catalog_rows = {
            "SHOW CLUSTERS": [("c2", "r1 (1)", ""), ("quickstart", "r1 (2)", "")],
            "SELECT id, name, size, replication_factor FROM mz_catalog.mz_clusters ORDER BY id":
                [("u1", "quickstart", None, 1), ("u2", "c2", "1", 1)],
            "SELECT r.id, r.name, c.name, r.size FROM mz_catalog.mz_cluster_replicas r "
            "JOIN mz_catalog.mz_clusters c ON r.cluster_id = c.id ORDER BY r.id":
                [("u1", "r1", "quickstart", "2"), ("u2", "r1", "c2", "1")],
            "SELECT name, cluster_id FROM mz_catalog.mz_materialized_views ORDER BY name":
                [("sums", "u2"), ("total", "u1")],
            "SELECT name, cluster_id FROM mz_catalog.mz_indexes": [("odd_k", "u2")],
            "SHOW MATERIALIZED VIEWS": [("sums", "c2", ""), ("total", "quickstart", "")],
        }
        for sql, rows in catalog_rows.items():
            assert conn.execute(sql).fetchall() == rows, sql

        with psycopg_connect(server) as c2, psycopg_connect(server, autocommit=False) as sub:
            c2.execute("SET cluster = c2")
            assert c2.execute("SHOW cluster").fetchone() == ("c2",)
            sub.execute("SET cluster = c2")
            sub.execute("DECLARE cur CURSOR FOR SUBSCRIBE (SELECT n, s FROM total)")
            changes = list(sub.execute("FETCH ALL cur WITH (timeout = '1s')").fetchall())
            with _Writer(server) as writer:
                seen = 0
                deadline = time.monotonic() + 6
                while time.monotonic() < deadline:
                    acknowledged = writer.last
                    seen = _check_consistent(c2)                       # on c2
                    assert seen >= acknowledged                         # sees every acknowledged write
                    k = 2 * (acknowledged // 4) + 1
                    assert c2.execute("SELECT k FROM odd WHERE k = %s", (k,)).fetchall() == [(k,)]  # c2's index
                    assert conn.execute("SELECT k FROM odd WHERE k = %s", (k,)).fetchall() == [(k,)]  # quickstart
                    changes.extend(sub.execute("FETCH ALL cur WITH (timeout = '0.1s')").fetchall())
                assert _check_consistent(conn) >= seen                 # on quickstart
            assert not writer.errors, writer.errors[:3]
            written = writer.last
            assert written > 50
            state: dict[tuple, int] = {}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for ts, diff, n, s in changes:
                    state[(n, s)] = state.get((n, s), 0) + diff
                changes = []
                if {r: d for r, d in state.items() if d} == {(written, written * (written + 1) // 2): 1}:
                    break
                changes = list(sub.execute("FETCH ALL cur WITH (timeout = '0.5s')").fetchall())
            assert {r: d for r, d in state.items() if d} == {(written, written * (written + 1) // 2): 1}
            sub.rollback()

            # c2 loses its only replica: quickstart keeps answering what does not read c2.
            os.kill(next(iter(c2_workers)), signal.SIGKILL)
            _wait(conn, ("c2", "r1"), False, timeout=30)
            conn.execute("INSERT INTO events VALUES (1000)")
            assert conn.execute("SELECT count(*), sum(k) FROM events").fetchone() == (written + 1, written * (written + 1) // 2 + 1000)
            assert conn.execute("SELECT count(*) FROM odd").fetchone() == ((written + 1) // 2,)
            _wait(conn, ("c2", "r1"), True)
            assert _check_consistent(c2) == written + 1

        err = _error(conn, "DROP CLUSTER c2")
        assert err.sqlstate == "2BP01", err

    server.restart(signal.SIGTERM)
    with psycopg_connect(server) as conn:
        for sql, rows in catalog_rows.items():
            assert conn.execute(sql).fetchall() == rows, sql
        conn.execute("SET cluster = c2")
        conn.execute("INSERT INTO events VALUES (1001)")
        assert _check_consistent(conn) == written + 2
        conn.execute("RESET cluster")
        assert _check_consistent(conn) == written + 2

        conn.execute("ALTER CLUSTER c2 SET (REPLICATION FACTOR = 2)")
        _wait(conn, ("c2", "r2"), True)
        assert conn.execute("SELECT replication_factor FROM mz_catalog.mz_clusters WHERE name = 'c2'").fetchone() == (2,)
        conn.execute("SET cluster = c2")
        assert _check_consistent(conn) == written + 2
        conn.execute("ALTER CLUSTER c2 SET (REPLICATION FACTOR = 1)")
        assert [k for k in _ready(conn) if k[0] == "c2"] == [("c2", "r1")]
        assert _check_consistent(conn) == written + 2
        conn.execute("CREATE CLUSTER c3 REPLICAS (a (SIZE '1'))")       # unmanaged, nothing in it
        assert conn.execute("SELECT size FROM mz_catalog.mz_clusters WHERE name = 'c3'").fetchone() == (None,)
        assert _error(conn, "ALTER CLUSTER c3 SET (REPLICATION FACTOR = 2)").sqlstate == "0A000"
        assert _error(conn, "DROP CLUSTER REPLICA c3.a").sqlstate == "0A000"   # its only replica
        with psycopg_connect(server, autocommit=False) as sub:                # a SUBSCRIBE on c3 ...
            sub.execute("SET cluster = c3")
            sub.execute("DECLARE cur CURSOR FOR SUBSCRIBE events")
            assert len(sub.execute("FETCH ALL cur WITH (timeout = '2s')").fetchall()) == written + 2
            conn.execute("DROP CLUSTER c3")
            err = _error(sub, "FETCH ALL cur WITH (timeout = '5s')")          # ... ends when c3 goes
            assert (err.sqlstate, str(err).splitlines()[0]) == ("42704", "cluster 'c3' was dropped")
        conn.execute("RESET cluster")

        conn.execute("DROP CLUSTER c2 CASCADE")
        assert conn.execute("SHOW CLUSTERS").fetchall() == [("quickstart", "r1 (2)", "")]
        assert conn.execute("SELECT name FROM mz_catalog.mz_objects ORDER BY name").fetchall() \
            == [("events",), ("odd",)]                                 # sums, odd_k and total went
        assert conn.execute("SELECT count(*) FROM odd").fetchone() == ((written + 1) // 2 + 1,)
        conn.execute("SET cluster = c2")
        assert conn.execute("SELECT 1").fetchone() == (1,)              # reads nothing a cluster holds
        err = _error(conn, "SELECT count(*) FROM events")
        assert (err.sqlstate, str(err).splitlines()[0]) == ("42704", "unknown cluster 'c2'")
        err = _error(conn, "CREATE MATERIALIZED VIEW again AS SELECT 1")
        assert err.sqlstate == "42704"
