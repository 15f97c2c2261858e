"""Materialized views over window functions stay equal to PostgreSQL's answer under random
inserts, deletes and updates (several rows per statement, ties, NULLs, partitions emptied and
refilled): ranking, lag/lead, running and framed aggregates, a top-n per group through
row_number, and window functions over a grouped query. Row orders are made total where
PostgreSQL's answer would depend on the order among peers."""

from __future__ import annotations

import random
from decimal import Decimal

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "rk": "SELECT id, rank() OVER (PARTITION BY g ORDER BY k) AS r, dense_rank() OVER (ORDER BY k DESC) AS d, "
          "cume_dist() OVER (PARTITION BY g ORDER BY k) AS cd, count(*) OVER (PARTITION BY g) AS c FROM wv",
    "lg": "SELECT id, lag(x, 1, -1) OVER (PARTITION BY g ORDER BY id) AS p, lead(k) OVER (ORDER BY id) AS nx, "
          "row_number() OVER (PARTITION BY g ORDER BY k, id) AS rn, ntile(3) OVER (ORDER BY id) AS t FROM wv",
    "ag": "SELECT id, sum(x) OVER (PARTITION BY g ORDER BY k) AS s, avg(n) OVER (PARTITION BY g) AS a, "
          "min(x) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS mn, "
          "max(n) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS mx FROM wv",
    "top": "SELECT g, id FROM (SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS rn "
           "FROM wv) s WHERE rn <= 2",
    "grp": "SELECT g, count(*) AS c, rank() OVER (ORDER BY count(*) DESC) AS r, sum(sum(x)) OVER () AS t "
           "FROM wv GROUP BY g",
}


def _norm(v):
    if isinstance(v, Decimal):
        return round(float(v), 9)
    if isinstance(v, float):
        return round(v, 9)
    return v


def _sorted(rows):
    return sorted((tuple(_norm(x) for x in r) for r in rows), key=repr)


def _value(rng, choices):
    return rng.choice(choices)


def test_window_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS wv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}wv (id int, g int, k int, x int, n numeric(8,2))")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("wv", f"{p}wv"))
        next_id = 0
        gs, ks, xs = ["1", "2", "3", "NULL"], ["1", "2", "2", "3", "NULL"], ["-5", "0", "3", "7", "7", "NULL"]
        ns = ["1.25", "-2.50", "0.00", "NULL", "9.99"]
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u", "ug"])
            if kind == "+":
                vals = []
                for _ in range(rng.randint(1, 3)):
                    next_id += 1
                    vals.append(f"({next_id}, {_value(rng, gs)}, {_value(rng, ks)}, {_value(rng, xs)}, "
                                f"{_value(rng, ns)})")
                stmt = "INSERT INTO {}wv VALUES " + ", ".join(vals)
            elif kind == "-":
                stmt = f"DELETE FROM {{}}wv WHERE id % 5 = {rng.randint(0, 4)} AND id > {rng.randint(0, next_id)}"
            elif kind == "u":
                stmt = f"UPDATE {{}}wv SET k = {_value(rng, ks)}, x = {_value(rng, xs)} WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                stmt = f"UPDATE {{}}wv SET g = {_value(rng, gs)} WHERE g = {rng.randint(1, 3)}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
