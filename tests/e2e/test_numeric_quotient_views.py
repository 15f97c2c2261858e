"""Materialized views of numeric quotients and averages stay equal to PostgreSQL's answer under
random changes, value for value (no tolerance): PostgreSQL's value where it keeps at most 16
digits after the point, rounded half away from zero to 16 where it keeps more (see
tests/planner/test_numeric_quotients_vs_postgres.py). Averages are kept incrementally by the
reduce (sums and counts), so a group's quotient is recomputed as its rows come and go.
min_scale and trim_scale, which depend only on the value, ride along."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Context, Decimal

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "qavg": "SELECT g, avg(x) AS ax, avg(y) AS ay, avg(n) AS an, sum(x) / count(*) AS q, max(x) / 7 AS m "
            "FROM qv GROUP BY g",
    "qdiv": "SELECT id, x / 3 AS d, y / x AS e, n / y AS f FROM qv WHERE x <> 0 AND y <> 0",
    "qwin": "SELECT id, avg(y) OVER (PARTITION BY g ORDER BY id) AS w FROM qv",
    "qscale": "SELECT id, min_scale(x) AS mx, trim_scale(x) AS tx, min_scale(y) AS my, trim_scale(y) AS ty, "
              "min_scale(x / 3) AS mq FROM qv",
}
_WIDE = Context(prec=200)


def _r16(v):
    if isinstance(v, Decimal) and v.as_tuple().exponent < -16:
        return v.quantize(Decimal(1).scaleb(-16), rounding=ROUND_HALF_UP, context=_WIDE)
    return v


def _sorted(rows):
    return sorted((tuple(_r16(v) for v in r) for r in rows), key=repr)


def _value(rng: random.Random) -> str:
    """A numeric written without trailing zeros (as it is shown here), from 0.001 to 10^9."""
    d = Decimal(rng.randint(-10 ** 12, 10 ** 12)).scaleb(-rng.randint(0, 3))
    return format(d.normalize(), "f") if d else "0"


def test_quotient_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS qv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}qv (id int, g int, x numeric, y numeric(14,3), n bigint)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("qv", f"{p}qv"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u"])
            if kind == "+":
                rows = []
                for _ in range(rng.randint(1, 6)):
                    next_id += 1
                    rows.append(f"({next_id}, {rng.randint(1, 3)}, {_value(rng)}, {rng.randint(-10 ** 8, 10 ** 8) / 1000}, "
                                f"{rng.randint(-10 ** 12, 10 ** 12)})")
                stmt = "INSERT INTO {}qv VALUES " + ", ".join(rows)
            elif kind == "-":
                stmt = f"DELETE FROM {{}}qv WHERE id % 5 = {rng.randint(0, 4)} AND g = {rng.randint(1, 3)}"
            else:
                stmt = f"UPDATE {{}}qv SET x = {_value(rng)} WHERE id = {rng.randint(1, max(1, next_id))}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
            # The same query as a one-off SELECT (planned and run as a transient dataflow).
            assert _sorted(ss.execute(VIEWS["qavg"].replace("qv", f"{p}qv")).fetchall()) == \
                _sorted(pg.execute(VIEWS["qavg"]).fetchall())
