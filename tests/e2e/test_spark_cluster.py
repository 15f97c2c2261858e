"""The cluster path: Slipstream on a real Spark standalone cluster (a master and a worker on
loopback, started from pyspark's own bin/spark-class), not local mode. Views are built and kept
current by replicas whose tasks run in the cluster's executors; a second replica is added, one
replica's task process is killed, and a SUBSCRIBE sees every row once while it rehydrates."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import pytest

from tests.support.clients import psycopg_connect
from tests.support.slipstream_server import SlipstreamServer
from tests.support.spark_cluster import SparkStandalone
from tests.support.spark_workers import dataflow_worker_pids

pytestmark = pytest.mark.e2e


def _ready(conn) -> dict[str, bool]:
    return {r: ready for _, r, _, ready, _ in conn.execute("SHOW CLUSTER REPLICAS").fetchall()}


def _wait(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_views_and_replica_loss_on_a_spark_standalone_cluster(tmp_path):
    with SparkStandalone.start(tmp_path / "spark", cores=4) as cluster:
        executor_root = cluster.processes[1].pid   # the Spark worker: executors are its children
        server = SlipstreamServer.start(data_dir=tmp_path / "data", log_file=tmp_path / "server.log",
                                        extra_args=("--spark-master", cluster.master_url))
        try:
            with psycopg_connect(server) as conn, psycopg_connect(server) as sub:
                conn.autocommit = True
                assert not dataflow_worker_pids(server.process.pid)   # nothing runs in local mode
                r1 = set(dataflow_worker_pids(executor_root))
                assert len(r1) == 2, r1
                conn.execute("CREATE TABLE t (k int)")
                conn.execute("INSERT INTO t SELECT generate_series(1, 100)")
                conn.execute("CREATE MATERIALIZED VIEW m AS SELECT k, k % 7 AS g FROM t")
                conn.execute("CREATE VIEW by_g AS SELECT g, count(*) AS n FROM m GROUP BY g")
                conn.execute("CREATE INDEX by_g_idx ON by_g (g)")
                assert conn.execute("SELECT sum(n) FROM by_g").fetchone() == (100,)

                conn.execute("CREATE CLUSTER REPLICA quickstart.r2 (SIZE = '1')")
                r2 = set(dataflow_worker_pids(executor_root)) - r1
                assert len(r2) == 1, r2
                sub.execute("BEGIN")
                sub.execute("DECLARE cur CURSOR FOR SUBSCRIBE m")
                seen = list(sub.execute("FETCH ALL cur WITH (timeout = '2s')").fetchall())
                assert len(seen) == 100

                os.kill(sorted(r1)[0], signal.SIGKILL)
                _wait(lambda: not _ready(conn)["r1"], "r1 to go offline", 30)
                for k in range(101, 131):
                    conn.execute("INSERT INTO t VALUES (%s)", (k,))
                    assert conn.execute("SELECT count(*) FROM m").fetchone() == (k,)
                _wait(lambda: _ready(conn)["r1"], "r1 to rehydrate")
                for k in range(131, 141):
                    conn.execute("INSERT INTO t VALUES (%s)", (k,))
                _wait(lambda: seen.extend(sub.execute("FETCH ALL cur WITH (timeout = '0.5s')").fetchall())
                      or len(seen) >= 140, "the SUBSCRIBE to catch up", 60)
                assert Counter((r[2], r[3], r[1]) for r in seen) == \
                    Counter({(k, k % 7, 1): 1 for k in range(1, 141)})
                assert conn.execute("SELECT sum(n) FROM by_g").fetchone() == (140,)
        finally:
            server.stop()
