"""An evaluation error belongs to the rows that raised it: a materialized view (or an indexed
view) that fails because of one row answers again once that row is deleted, with exactly
PostgreSQL's answer for the remaining rows, and views reading it follow."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def _rows(conn, sql):
    return sorted(tuple(r) for r in conn.execute(sql).fetchall())


def test_view_recovers_when_the_failing_row_goes(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t (k int, c numeric(10,0))")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}v AS SELECT k, c::int4 AS n FROM {p}t")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}agg AS SELECT count(DISTINCT c::int4) AS n FROM {p}t")
        conn.execute(f"CREATE VIEW {p}w AS SELECT k, 100 / c::int AS q FROM {p}t")
        conn.execute(f"CREATE INDEX {p}w_k ON {p}w (k)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}on_v AS SELECT sum(n) AS s FROM {p}v")
        conn.execute(f"INSERT INTO {p}t VALUES (1, 1), (2, 6475768015), (3, 4)")
        for view, sqlstate in (("v", "22003"), ("agg", "22003"), ("w", "22003")):
            with pytest.raises(psycopg.Error) as err:
                conn.execute(f"SELECT * FROM {p}{view}").fetchall()
            assert err.value.sqlstate == sqlstate, view
        conn.execute(f"DELETE FROM {p}t WHERE k = 2")
        assert _rows(conn, f"SELECT * FROM {p}v") == [(1, 1), (3, 4)]
        assert _rows(conn, f"SELECT * FROM {p}agg") == [(2,)]
        assert _rows(conn, f"SELECT * FROM {p}w") == [(1, 100), (3, 25)]
        assert _rows(conn, f"SELECT * FROM {p}on_v") == [(5,)]
        # And it keeps being maintained incrementally afterwards, including a new failure.
        conn.execute(f"INSERT INTO {p}t VALUES (4, 5)")
        assert _rows(conn, f"SELECT * FROM {p}v") == [(1, 1), (3, 4), (4, 5)]
        assert _rows(conn, f"SELECT * FROM {p}on_v") == [(10,)]
        conn.execute(f"INSERT INTO {p}t VALUES (5, 0)")
        with pytest.raises(psycopg.Error) as err:
            conn.execute(f"SELECT * FROM {p}w").fetchall()
        assert err.value.sqlstate == "22012"
        conn.execute(f"UPDATE {p}t SET c = 50 WHERE k = 5")
        assert _rows(conn, f"SELECT * FROM {p}w") == [(1, 100), (3, 25), (4, 20), (5, 2)]
        assert _rows(conn, f"SELECT * FROM {p}agg") == [(4,)]


def test_writes_elsewhere_do_not_rebuild_a_failing_view(slipstream, unique_prefix):
    """A failing view is rebuilt when its inputs are written (that may remove the failing rows),
    not on every write anywhere: with one view stuck in error, a busy unrelated table made the
    server rebuild it several times a second."""
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t (k int, d int)")
        conn.execute(f"CREATE TABLE {p}busy (x int)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}v AS SELECT k, 10 / d AS q FROM {p}t")
        conn.execute(f"INSERT INTO {p}t VALUES (1, 0)")
        with pytest.raises(psycopg.Error) as err:
            conn.execute(f"SELECT * FROM {p}v").fetchall()
        assert err.value.sqlstate == "22012"
        (view_id,) = conn.execute("SELECT id FROM mz_materialized_views WHERE name = %s",
                                  (f"{p}v",)).fetchone()
        log_before = slipstream.log_file.read_text()
        for i in range(5):
            conn.execute(f"INSERT INTO {p}busy VALUES ({i})")
        rebuilt = [line for line in slipstream.log_file.read_text()[len(log_before):].splitlines()
                   if "rebuilding dataflows" in line and f"'{view_id}'" in line]
        assert rebuilt == []
        with pytest.raises(psycopg.Error):
            conn.execute(f"SELECT * FROM {p}v").fetchall()
        conn.execute(f"UPDATE {p}t SET d = 5 WHERE k = 1")
        assert _rows(conn, f"SELECT * FROM {p}v") == [(1, 2)]
