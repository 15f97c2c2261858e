"""Dropping what a running dataflow reads without the catalog knowing it as a dependent.

A materialized view or index over an indexed view reads the view through its index; dropping
that index re-plans them without it (they keep their contents and keep up with later writes). A
SUBSCRIBE whose relation is dropped ends with an error naming it. Neither may take down the
replica: another SUBSCRIBE on the same cluster keeps streaming without a gap or a repeat."""

from __future__ import annotations

import threading

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.ports import wait_until

pytestmark = pytest.mark.e2e


class _Subscriber(threading.Thread):
    """SUBSCRIBE <relation> on its own connection, collecting (mz_diff, value) rows."""

    def __init__(self, dsn: str, relation: str) -> None:
        super().__init__(daemon=True)
        self.dsn, self.relation = dsn, relation
        self.rows: list[tuple[int, int]] = []
        self.error: Exception | None = None
        self.started_streaming = threading.Event()

    def run(self) -> None:
        try:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                with conn.cursor().copy(f"COPY (SUBSCRIBE {self.relation}) TO STDOUT") as copy:
                    self.started_streaming.set()
                    for row in copy.rows():
                        self.rows.append((int(row[1]), int(row[2])))
        except Exception as e:  # noqa: BLE001 - what the test looks at
            self.error = e

    def values(self) -> list[int]:
        out: dict[int, int] = {}
        for diff, v in self.rows:
            out[v] = out.get(v, 0) + diff
        return sorted(v for v, n in out.items() for _ in range(n))


def test_dropping_an_index_a_view_reads_replans_the_view(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t (a int, b int)")
        conn.execute(f"CREATE TABLE {p}other (v int)")
        conn.execute(f"INSERT INTO {p}t VALUES (1, 1), (2, 2), (2, 5)")
        conn.execute(f"CREATE VIEW {p}w AS SELECT a, sum(b) AS s FROM {p}t GROUP BY a")
        conn.execute(f"CREATE INDEX {p}w_a ON {p}w (a)")
        conn.execute(f"CREATE VIEW {p}v AS SELECT a, s * 10 AS x FROM {p}w")
        conn.execute(f"CREATE INDEX {p}v_a ON {p}v (a)")     # reads w through w_a
        conn.execute(f"CREATE MATERIALIZED VIEW {p}m AS SELECT a, x + 1 AS y FROM {p}v")  # reads v_a
        watcher = _Subscriber(slipstream.dsn, f"{p}other")
        watcher.start()
        assert watcher.started_streaming.wait(30)
        conn.execute(f"INSERT INTO {p}other VALUES (1)")

        conn.execute(f"DROP INDEX {p}w_a")
        conn.execute(f"INSERT INTO {p}t VALUES (3, 3), (1, 10)")
        assert conn.execute(f"SELECT * FROM {p}m ORDER BY a").fetchall() == [(1, 111), (2, 71), (3, 31)]
        assert conn.execute(f"SELECT * FROM {p}v WHERE a = 3").fetchall() == [(3, 30)]
        conn.execute(f"DROP INDEX {p}v_a")
        conn.execute(f"DELETE FROM {p}t WHERE a = 2")
        assert conn.execute(f"SELECT * FROM {p}m ORDER BY a").fetchall() == [(1, 111), (3, 31)]

        conn.execute(f"INSERT INTO {p}other VALUES (2)")
        assert wait_until(lambda: watcher.values() == [1, 2], 30, 0.05)
        assert watcher.error is None  # the replica did not restart under it


def test_a_subscribe_whose_relation_is_dropped_ends_with_an_error(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}gone (v int)")
        conn.execute(f"CREATE TABLE {p}kept (v int)")
        conn.execute(f"INSERT INTO {p}gone VALUES (1)")
        doomed = _Subscriber(slipstream.dsn, f"{p}gone")
        watcher = _Subscriber(slipstream.dsn, f"{p}kept")
        doomed.start()
        watcher.start()
        assert doomed.started_streaming.wait(30) and watcher.started_streaming.wait(30)
        conn.execute(f"INSERT INTO {p}kept VALUES (1)")
        assert wait_until(lambda: doomed.values() == [1] and watcher.values() == [1], 30, 0.05)

        conn.execute(f"DROP TABLE {p}gone")
        doomed.join(30)
        assert not doomed.is_alive()
        assert getattr(doomed.error, "sqlstate", None) == "42P01"
        assert f'table "{p}gone" was dropped' in str(doomed.error)

        conn.execute(f"INSERT INTO {p}kept VALUES (2)")
        assert wait_until(lambda: watcher.values() == [1, 2], 30, 0.05)
        assert watcher.error is None
        assert conn.execute(f"SELECT v FROM {p}kept ORDER BY v").fetchall() == [(1,), (2,)]
