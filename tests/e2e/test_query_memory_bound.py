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
