"""Replicas of the compute cluster: CREATE / DROP CLUSTER REPLICA, and losing a replica while
clients read, write and subscribe.

The replica-loss test kills one replica's worker (its Spark task) mid-stream, then, once that
replica has rehydrated, the other's: a SUBSCRIBE sees every inserted row exactly once (no gap, no
duplicate), SELECTs keep answering without an error, and their latency during the losses is
recorded (p99 in the test's properties)."""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
from collections import Counter

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.spark_workers import dataflow_worker_pids

pytestmark = pytest.mark.e2e


def _replicas(conn) -> dict[str, tuple[str, bool]]:
    return {r: (size, ready) for _, r, size, ready, _ in conn.execute("SHOW CLUSTER REPLICAS").fetchall()}


def _wait_ready(conn, name: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _replicas(conn).get(name, (None, False))[1]:
            return
        time.sleep(0.2)
    raise AssertionError(f"replica {name} not ready after {timeout}s: {_replicas(conn)}")


def _wait_down(conn, name: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _replicas(conn)[name][1]:
            return
        time.sleep(0.05)
    raise AssertionError(f"replica {name} never went offline")


class _Load:
    """A writer inserting 1, 2, 3, ... one row per transaction, and a reader timing SELECTs."""

    def __init__(self, server) -> None:
        self.server = server
        self.stop = threading.Event()
        self.written = 0
        self.errors: list[BaseException] = []
        self.latencies: list[float] = []
        self.threads = [threading.Thread(target=self._write), threading.Thread(target=self._read)]

    def __enter__(self) -> "_Load":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def _write(self) -> None:
        with psycopg_connect(self.server) as conn:
            conn.autocommit = True
            while not self.stop.is_set():
                try:
                    conn.execute("INSERT INTO events VALUES (%s)", (self.written + 1,))
                    self.written += 1
                except psycopg.Error as e:
                    self.errors.append(e)
                time.sleep(0.01)

    def _read(self) -> None:
        with psycopg_connect(self.server) as conn:
            conn.autocommit = True
            while not self.stop.is_set():
                start = time.perf_counter()
                try:
                    conn.execute("SELECT count(*) FROM doubled").fetchall()
                    self.latencies.append(time.perf_counter() - start)
                except psycopg.Error as e:
                    self.errors.append(e)
                time.sleep(0.005)


def test_losing_either_replica_is_invisible_to_clients(fresh_slipstream, record_property):
    server = fresh_slipstream
    with psycopg_connect(server) as conn, psycopg_connect(server) as sub:
        conn.autocommit = True
        conn.execute("CREATE TABLE events (k int)")
        conn.execute("CREATE MATERIALIZED VIEW doubled AS SELECT k, k * 2 AS k2 FROM events")
        r1_workers = set(dataflow_worker_pids(server.process.pid))
        conn.execute("CREATE CLUSTER REPLICA quickstart.r2 (SIZE = '1')")
        assert _replicas(conn) == {"r1": ("2", True), "r2": ("1", True)}
        r2_workers = set(dataflow_worker_pids(server.process.pid)) - r1_workers
        assert len(r1_workers) == 2 and len(r2_workers) == 1, (r1_workers, r2_workers)

        sub.execute("BEGIN")
        sub.execute("DECLARE cur CURSOR FOR SUBSCRIBE doubled")
        seen: list[tuple] = list(sub.execute("FETCH ALL cur WITH (timeout = '1s')").fetchall())

        def fetch_for(seconds: float) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                seen.extend(sub.execute("FETCH ALL cur WITH (timeout = '0.2s')").fetchall())

        with _Load(server) as load:
            fetch_for(2)
            os.kill(sorted(r1_workers)[0], signal.SIGKILL)      # r1 is lost; r2 carries on
            _wait_down(conn, "r1")
            fetch_for(1)
            _wait_ready(conn, "r1")                              # r1 rehydrated
            fetch_for(3)
            os.kill(sorted(r2_workers)[0], signal.SIGKILL)       # now r2; r1 carries on
            _wait_down(conn, "r2")
            fetch_for(1)
            _wait_ready(conn, "r2")
            fetch_for(2)
        assert not load.errors, load.errors[:3]
        written = load.written
        assert written > 100
        deadline = time.monotonic() + 30
        while sum(r[1] for r in seen) < written and time.monotonic() < deadline:
            fetch_for(0.5)

        # Every row exactly once, inserted and never retracted: no gap and no duplicate.
        changes = Counter((r[2], r[3], r[1]) for r in seen)
        assert changes == Counter({(k, 2 * k, 1): 1 for k in range(1, written + 1)})
        timestamps = [int(r[0]) for r in seen]
        assert timestamps == sorted(timestamps)
        assert conn.execute("SELECT count(*), sum(k2) FROM doubled").fetchone() == (written, written * (written + 1))

        latencies = sorted(load.latencies)
        p99 = latencies[int(len(latencies) * 0.99)]
        record_property("select_p99_ms_during_replica_losses", round(p99 * 1000, 1))
        record_property("select_p50_ms_during_replica_losses", round(statistics.median(latencies) * 1000, 1))
        print(f"SELECT during two replica losses: {len(latencies)} reads, "
              f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")


def test_replica_statements_errors_and_restart(fresh_slipstream):
    server = fresh_slipstream
    with psycopg_connect(server) as conn:
        conn.autocommit = True
        conn.execute("CREATE TABLE t (a int)")
        conn.execute("INSERT INTO t VALUES (1), (2)")
        conn.execute("CREATE MATERIALIZED VIEW m AS SELECT sum(a) AS s FROM t")
        conn.execute("CREATE CLUSTER REPLICA quickstart.r2 SIZE '1'")
        for sql, sqlstate in [
            ("CREATE CLUSTER REPLICA quickstart.r2 (SIZE = '1')", "42710"),   # exists
            ("CREATE CLUSTER REPLICA quickstart.r3 (SIZE = 'large')", "22023"),
            ("CREATE CLUSTER REPLICA quickstart.r3 (SIZE = '0')", "22023"),
            ("CREATE CLUSTER REPLICA other.r3 (SIZE = '1')", "42704"),
            ("CREATE CLUSTER REPLICA quickstart.r3 (SIZE = '64')", "53000"),  # more than the slots
            ("CREATE CLUSTER quickstart (SIZE = '1')", "42710"),
            ("DROP CLUSTER REPLICA quickstart.r9", "42704"),
            ("DROP CLUSTER REPLICA quickstart.r1, quickstart.r2", "0A000"),   # would leave none
            ("CREATE MATERIALIZED VIEW w IN CLUSTER other AS SELECT 1", "42704"),
        ]:
            with pytest.raises(psycopg.Error) as info:
                conn.execute(sql)
            assert info.value.sqlstate == sqlstate, (sql, info.value)
        conn.execute("DROP CLUSTER REPLICA IF EXISTS quickstart.r9")
        # Prepared (drivers prepare a statement they run often): the rows match what Describe
        # announced (a prepared SHOW CLUSTER REPLICAS, SHOW COLUMNS or SHOW OBJECTS failed).
        for sql in ("SHOW CLUSTER REPLICAS", "SHOW CLUSTERS", "SHOW COLUMNS FROM t", "SHOW OBJECTS",
                    "SHOW SOURCES", "SHOW ROLES", "SHOW CREATE TABLE t", "SHOW TimeZone"):
            assert conn.execute(sql, prepare=True).fetchall() == conn.execute(sql, prepare=False).fetchall()
        assert _replicas(conn) == {"r1": ("2", True), "r2": ("1", True)}
        assert conn.execute("SELECT name, size FROM mz_catalog.mz_cluster_replicas ORDER BY name").fetchall() \
            == [("r1", "2"), ("r2", "1")]
        assert conn.execute("SELECT replication_factor FROM mz_catalog.mz_clusters").fetchall() == [(2,)]

        conn.execute("DROP CLUSTER REPLICA quickstart.r1")     # r2 alone keeps everything answering
        assert _replicas(conn) == {"r2": ("1", True)}
        conn.execute("INSERT INTO t VALUES (3)")
        assert conn.execute("SELECT s FROM m").fetchall() == [(6,)]
        statuses = conn.execute("SELECT replica_id, process_id, status FROM mz_internal.mz_cluster_replica_statuses"
                                ).fetchall()
        assert statuses == [("u2", 0, "online")]

    server.restart(signal.SIGTERM)                              # the replicas are durable
    with psycopg_connect(server) as conn:
        conn.autocommit = True
        assert _replicas(conn) == {"r2": ("1", True)}
        assert conn.execute("SELECT s FROM m").fetchall() == [(6,)]
        conn.execute("CREATE CLUSTER REPLICA quickstart.r1 (SIZE = '2')")
        assert conn.execute("SELECT id, name FROM mz_catalog.mz_cluster_replicas ORDER BY id").fetchall() \
            == [("u2", "r2"), ("u3", "r1")]                       # ids are not reused
        conn.execute("INSERT INTO t VALUES (4)")
        assert conn.execute("SELECT s FROM m").fetchall() == [(10,)]
