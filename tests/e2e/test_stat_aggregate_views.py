"""Materialized views with the statistics aggregates (corr, covar_*, regr_*, bit_and/bit_or/
bit_xor, percentile_cont/percentile_disc/mode WITHIN GROUP) stay equal to PostgreSQL's answer
under random inserts, deletes and updates, NaN and infinities included. Doubles are compared to
1e-9 relative (PostgreSQL's running sums round at every row, ours are exact)."""

from __future__ import annotations

import math
import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "regr": "SELECT g, corr(y, x) AS c, covar_pop(y, x) AS cp, covar_samp(y, x) AS cs, regr_slope(y, x) AS sl, "
            "regr_intercept(y, x) AS ic, regr_r2(y, x) AS r2, regr_count(y, x) AS n, regr_avgx(y, x) AS ax, "
            "regr_sxx(y, x) AS sxx, regr_sxy(y, x) AS sxy FROM sv GROUP BY g",
    "bits": "SELECT g, bit_and(i) AS a, bit_or(i) AS o, bit_xor(i) AS x, bit_xor(DISTINCT i) AS dx, "
            "bit_and((i % 30000)::smallint) FILTER (WHERE x > 0) AS fa FROM sv GROUP BY g",
    "pct": "SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS med, "
           "percentile_cont(0.25) WITHIN GROUP (ORDER BY y DESC) AS q, "
           "percentile_disc(0.5) WITHIN GROUP (ORDER BY i) AS d, mode() WITHIN GROUP (ORDER BY i) AS m "
           "FROM sv GROUP BY g",
    "global": "SELECT corr(y, x) AS c, regr_count(y, x) AS n, bit_or(i) AS o, "
              "percentile_cont(0.9) WITHIN GROUP (ORDER BY x) AS p, mode() WITHIN GROUP (ORDER BY x) AS m FROM sv",
}
FLOATS = ["'NaN'", "'Infinity'", "'-Infinity'", "-0.0", "0", "1.5", "2.5", "NULL", "-3", "0.1", "7", "1e10"]
INTS = ["NULL", "0", "1", "-1", "5", "12", "-2147483648", "2147483647", "6"]


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _same(got, want) -> bool:
    key = lambda r: repr(tuple("NaN" if isinstance(v, float) and v != v else v for v in r[:1]))  # noqa: E731
    got, want = sorted(got, key=key), sorted(want, key=key)
    return len(got) == len(want) and all(len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
                                         for a, b in zip(got, want))


def test_stat_aggregate_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS sv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}sv (id int, g int, x float8, y float8, i int)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("sv", f"{p}sv"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u"])
            if kind == "+":
                next_id += 1
                stmt = (f"INSERT INTO {{}}sv VALUES ({next_id}, {rng.randint(1, 3)}, {rng.choice(FLOATS)}, "
                        f"{rng.choice(FLOATS)}, {rng.choice(INTS)})")
            elif kind == "-":
                stmt = f"DELETE FROM {{}}sv WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                stmt = (f"UPDATE {{}}sv SET x = {rng.choice(FLOATS)}, i = {rng.choice(INTS)} "
                        f"WHERE id = {rng.randint(1, max(1, next_id))}")
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = ss.execute(f"SELECT * FROM {p}{name}").fetchall()
                want = pg.execute(sql).fetchall()
                assert _same(got, want), f"after step {step} ({stmt.format('')}), view {name}: {got} != {want}"
