"""Materialized views over floats with NaN, infinities and -0 stay equal to PostgreSQL's answer
under random changes: min/max (NaN is the greatest float), top-k by a float, joins on float
keys (NaN = NaN), grouping and DISTINCT."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "mm": "SELECT g, min(f) AS lo, max(f) AS hi, count(*) AS n FROM fv GROUP BY g",
    "top": "SELECT f FROM (SELECT f FROM fv ORDER BY f DESC NULLS LAST LIMIT 3) s",
    "jn": "SELECT a.id, b.id AS bid FROM fv a JOIN fv b ON a.f = b.f WHERE a.id < b.id",
    "grp": "SELECT f, count(*) AS n FROM fv GROUP BY f",
    "cmp": "SELECT id, f > 1 AS big, f = 'NaN' AS isnan FROM fv",
}
VALUES = ["'NaN'", "'Infinity'", "'-Infinity'", "-0.0", "0", "1.5", "2.5", "NULL", "1e300"]


def _sorted(rows):
    return sorted((tuple("NaN" if isinstance(x, float) and x != x else x for x in r) for r in rows), key=repr)


def test_float_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(5)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS fv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}fv (id int, g int, f float8)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("fv", f"{p}fv"))
        next_id = 0
        for step in range(25):
            kind = rng.choice(["+", "+", "+", "-", "u"])
            if kind == "+":
                next_id += 1
                stmt = f"INSERT INTO {{}}fv VALUES ({next_id}, {rng.randint(1, 3)}, {rng.choice(VALUES)})"
            elif kind == "-":
                stmt = f"DELETE FROM {{}}fv WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                stmt = f"UPDATE {{}}fv SET f = {rng.choice(VALUES)} WHERE id = {rng.randint(1, max(1, next_id))}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
