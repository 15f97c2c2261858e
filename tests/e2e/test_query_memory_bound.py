"""One careless query cannot take the replica down: a cross product of two large tables (what a
forgotten join condition gives) is refused with 53200 before it is built, as a one-off SELECT and
as a materialized view, and every connection keeps working afterwards. The OR-shaped join of
TPC-H Q19 is planned as an equi-join (the shared equality is factored out of the OR) and runs."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def test_huge_cross_product_is_refused_and_the_server_stays_up(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn, psycopg_connect(slipstream) as other:
        conn.autocommit = other.autocommit = True
        conn.execute(f"CREATE TABLE {p}d (v int)")
        conn.execute(f"INSERT INTO {p}d VALUES " + ", ".join(f"({i})" for i in range(120)))
        for t in ("a", "b"):
            conn.execute(f"CREATE TABLE {p}{t} (k int, x int)")
            conn.execute(f"INSERT INTO {p}{t} SELECT d1.v * 120 + d2.v, d1.v FROM {p}d d1, {p}d d2")
        assert conn.execute(f"SELECT count(*) FROM {p}a").fetchone() == (14400,)
        # 14 400 x 14 400 = 207 million rows in one step.
        with pytest.raises(psycopg.Error) as err:
            conn.execute(f"SELECT count(*) FROM {p}a a, {p}b b WHERE a.k <> b.k").fetchall()
        assert err.value.sqlstate == "53200", err.value
        assert "join" in err.value.diag.message_primary
        assert conn.execute(f"SELECT count(*) FROM {p}b").fetchone() == (14400,)
        assert other.execute("SELECT 1").fetchone() == (1,)

        conn.execute(f"CREATE MATERIALIZED VIEW {p}cross AS SELECT count(*) AS n FROM {p}a a, {p}b b WHERE a.k <> b.k")
        with pytest.raises(psycopg.Error) as err:
            other.execute(f"SELECT * FROM {p}cross").fetchall()
        assert err.value.sqlstate == "53200", err.value
        conn.execute(f"DROP MATERIALIZED VIEW {p}cross")

        # The same tables joined on a condition shared by every OR branch: an equi-join.
        q19 = (f"SELECT count(*) FROM {p}a a, {p}b b WHERE (a.k = b.k AND a.x < 10) "
               f"OR (b.k = a.k AND b.x > 100)")
        assert conn.execute(q19).fetchone() == (1200 + 19 * 120,)
        conn.execute(f"INSERT INTO {p}a VALUES (1, 1)")
        assert other.execute(f"SELECT count(*) FROM {p}a").fetchone() == (14401,)


def test_replica_memory_limit_fails_the_result_not_the_replica(tmp_path):
    """With `--replica-memory-limit`, a view whose state outgrows a worker's share fails with 53200
    (the view answers the error), a join step larger than the share is refused before it is
    built, and the replica keeps serving everything else: no worker is killed, nothing restarts."""
    from tests.support.slipstream_server import SlipstreamServer
    from tests.support.spark_workers import dataflow_worker_pids

    server = SlipstreamServer.start(data_dir=tmp_path / "data", log_file=tmp_path / "server.log",
                                    extra_args=("--replica-memory-limit", "160MB"))
    try:
        with psycopg_connect(server) as conn:
            conn.autocommit = True
            workers = sorted(dataflow_worker_pids(server.process.pid))
            conn.execute("CREATE TABLE t (k int8, pad text)")
            # ~60 MB of rows: 30 MB on each worker, under its 80 MB share.
            conn.execute("INSERT INTO t SELECT g, repeat('x', 180) FROM generate_series(1, 300000) AS g")
            conn.execute("CREATE MATERIALIZED VIEW small AS SELECT count(*) AS n FROM t")
            assert conn.execute("SELECT n FROM small").fetchall() == [(300000,)]
            # Its state is four times the table's: past the share.
            conn.execute("CREATE MATERIALIZED VIEW big AS SELECT k, pad || pad || pad || pad AS wide FROM t")
            with pytest.raises(psycopg.Error) as err:
                conn.execute("SELECT count(*) FROM big").fetchall()
            assert err.value.sqlstate == "53200", err.value
            assert "memory limit" in err.value.diag.message_primary
            # A cross product: 90 billion rows, refused before one step builds them.
            with pytest.raises(psycopg.Error) as err:
                conn.execute("SELECT count(*) FROM t a, t b WHERE a.k <> b.k").fetchall()
            assert err.value.sqlstate == "53200", err.value
            conn.execute("INSERT INTO t VALUES (0, 'y')")
            assert conn.execute("SELECT n FROM small").fetchall() == [(300001,)]
            with pytest.raises(psycopg.Error) as err:      # not rebuilt by the write: still in error
                conn.execute("SELECT count(*) FROM big").fetchall()
            assert err.value.sqlstate == "53200", err.value
            conn.execute("DROP MATERIALIZED VIEW big")
            assert conn.execute("SELECT count(*) FROM t a JOIN t b USING (k) WHERE a.k < 10").fetchall() == [(10,)]
            assert sorted(dataflow_worker_pids(server.process.pid)) == workers   # no restart
    finally:
        server.stop()
