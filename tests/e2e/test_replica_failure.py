"""Fault test: a dataflow worker (a Spark task) dies; the replica job is restarted, indexes and
materialized views rehydrate, and no acknowledged write is lost."""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.spark_workers import dataflow_worker_pids

pytestmark = pytest.mark.e2e


def _eventually(conn, sql: str, expected, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = conn.execute(sql).fetchall()
            if last == expected:
                return
        except psycopg.errors.InternalError as e:  # "the compute replica restarted; retry"
            last = e
        time.sleep(0.5)
    raise AssertionError(f"{sql!r} never returned {expected!r}; last: {last!r}")


def test_killed_worker_restarts_replica_and_views_rehydrate(fresh_slipstream):
    server = fresh_slipstream
    with psycopg_connect(server) as conn, psycopg_connect(server) as sub:
        conn.autocommit = True
        conn.execute("CREATE TABLE t (g int, v int)")
        conn.execute("INSERT INTO t VALUES (1, 1), (1, 2), (2, 5)")
        conn.execute("CREATE MATERIALIZED VIEW m AS SELECT g, sum(v) AS s FROM t GROUP BY g")
        conn.execute("CREATE VIEW c AS SELECT g, count(*) AS n FROM t GROUP BY g")
        conn.execute("CREATE INDEX c_idx ON c (g)")
        assert conn.execute("SELECT * FROM m ORDER BY g").fetchall() == [(1, 3), (2, 5)]

        sub.execute("BEGIN")
        sub.execute("DECLARE cur CURSOR FOR SUBSCRIBE m")
        assert len(sub.execute("FETCH ALL cur WITH (timeout = '5s')").fetchall()) == 2

        workers = dataflow_worker_pids(server.process.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)

        # The subscription cannot continue across the restart: it ends with an error.
        with pytest.raises(psycopg.errors.InternalError):
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                sub.execute("FETCH ALL cur WITH (timeout = '1s')").fetchall()
        sub.rollback()

        _eventually(conn, "SELECT * FROM m ORDER BY g", [(1, 3), (2, 5)])
        conn.execute("INSERT INTO t VALUES (2, 10)")
        assert conn.execute("SELECT * FROM m ORDER BY g").fetchall() == [(1, 3), (2, 15)]
        assert conn.execute("SELECT * FROM c ORDER BY g").fetchall() == [(1, 2), (2, 2)]
        new_workers = dataflow_worker_pids(server.process.pid)
        assert workers[0] not in new_workers and len(new_workers) >= 2


def test_views_created_while_the_replica_restarts_count_their_rows_once(fresh_slipstream):
    """A view created (and a table written) while a lost replica is being restarted is built once
    on the new replica: its creation waits in the restart's backlog *and* is part of the state
    the restart rehydrates, and sending it twice doubled its snapshot (found by the corpus run:
    a self-join view over a one-row table answered two rows)."""
    server = fresh_slipstream
    with psycopg_connect(server) as conn:
        conn.autocommit = True
        conn.execute("CREATE TABLE base (k int)")
        conn.execute("INSERT INTO base VALUES (1)")
        assert conn.execute("SELECT count(*) FROM base").fetchall() == [(1,)]
        workers = dataflow_worker_pids(server.process.pid)
        os.kill(workers[0], signal.SIGKILL)
        time.sleep(0.5)   # the controller notices the lost worker and starts the new replica
        made = []
        deadline = time.monotonic() + 30
        i = 0
        while time.monotonic() < deadline and len(made) < 8:
            try:
                conn.execute(f"CREATE TABLE r{i} (a int, b int)")
                conn.execute(f"INSERT INTO r{i} VALUES (1, 2)")
                conn.execute(f"CREATE MATERIALIZED VIEW v{i} AS "
                             f"SELECT a, x.b AS b1, y.b AS b2 FROM r{i} AS x JOIN r{i} AS y USING (a)")
                made.append(i)
            except psycopg.errors.InternalError:   # "the compute replica restarted; retry"
                pass
            i += 1
        assert made
        for i in made:
            _eventually(conn, f"SELECT count(*) FROM v{i}", [(1,)])
            assert conn.execute(f"SELECT * FROM v{i}").fetchall() == [(1, 2, 2)]
        conn.execute(f"INSERT INTO r{made[0]} VALUES (1, 3)")
        assert conn.execute(f"SELECT count(*) FROM v{made[0]}").fetchall() == [(4,)]
