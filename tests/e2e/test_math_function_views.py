"""Materialized views using the math functions and integer bit operators stay equal to
PostgreSQL's answer under random inserts, deletes and updates (over real sockets): double
precision results bit for bit, numeric results once PostgreSQL's value is rounded to the 16
fractional digits unconstrained numeric keeps (docs/sql-semantics.md, "Numeric functions")."""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_UP, Context, Decimal

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "fl": "SELECT id, sqrt(abs(x)) AS s, cbrt(x) AS c, trunc(x) AS t, sign(x) AS sg, atan(x) AS at, "
          "atan2(x, 2) AS a2, tanh(x) AS th, CASE WHEN abs(x) < 1e100 THEN sind(x) END AS sd, "
          "CASE WHEN x < 700 THEN exp(x) END AS e, CASE WHEN x > 0 THEN ln(x) END AS l, "
          "CASE WHEN x <> 'NaN' AND abs(x) < 1e300 THEN width_bucket(x, -10, 10, 4) END AS wb FROM mt",
    "nm": "SELECT id, sqrt(abs(n)) AS s, ln(abs(n) + 1) AS l, log(abs(n) + 2) AS lg, trunc(n, 1) AS t, "
          "sign(n) AS sg, n ^ 2 AS p2, power(abs(n), 0.5) AS ph, exp(-abs(n)) AS e, gcd(n, 0.25) AS g, "
          "div(n, 7) AS d, mod(n, 7) AS m, width_bucket(n, 0, 100, 5) AS wb FROM mt",
    "bits": "SELECT id, a & 255 AS an, a | 1 AS o, a # b AS xo, ~a AS na, a << 3 AS sl, b >> 2 AS sr, "
            "a << a AS sa, b << a AS sb, mod(a, 5) AS m, gcd(a, 12) AS g, lcm(a % 1000, 6) AS l FROM mt",
    "agg": "SELECT width_bucket(x, -10, 10, 4) AS bk, count(*) AS cnt, sum(sign(x)) AS sg, "
           "max(sqrt(abs(x))) AS mx FROM mt WHERE abs(x) < 1e100 GROUP BY 1",
    "flt": "SELECT id, a FROM mt WHERE a & 1 = 1 AND sqrt(abs(x)) > 1 AND mod(a, 3) <> 0",
}
X = ["'NaN'", "'Infinity'", "'-Infinity'", "-0.0", "0", "1.5", "2.5", "NULL", "1e300", "-7.25", "45",
     "0.001", "9.75"]
N = ["0", "1.5", "-2.25", "100", "0.0001", "NULL", "12345.678", "99.9999", "-0.5", "7"]
A = ["0", "1", "-1", "7", "2147483647", "-2147483648", "NULL", "12", "33", "-100"]
B = ["0", "5", "-9223372036854775808", "9223372036854775807", "NULL", "1000000007", "-3"]

_WIDE = Context(prec=200)


def _value(v):
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else (v, math.copysign(1.0, v))
    if isinstance(v, Decimal):
        if v.as_tuple().exponent < -16:
            v = v.quantize(Decimal(1).scaleb(-16), rounding=ROUND_HALF_UP, context=_WIDE)
        return v.normalize(_WIDE) if v else Decimal(0)
    return v


def _sorted(rows):
    return sorted((tuple(_value(x) for x in r) for r in rows), key=repr)


def _row(rng: random.Random, i: int) -> str:
    return f"({i}, {rng.choice(A)}, {rng.choice(B)}, {rng.choice(X)}, {rng.choice(N)})"


def test_math_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS mt CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}mt (id int, a int, b bigint, x float8, n numeric)")
        seed = "INSERT INTO {}mt VALUES " + ", ".join(_row(rng, i) for i in range(1, 9))
        ss.execute(seed.format(p))
        pg.execute(seed.format(""))
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("mt", f"{p}mt"))
        next_id = 8
        for step in range(30):
            kind = rng.choice(["+", "+", "-", "u", "u"])
            if kind == "+":
                next_id += 1
                stmt = "INSERT INTO {}mt VALUES " + _row(rng, next_id)
            elif kind == "-":
                stmt = f"DELETE FROM {{}}mt WHERE id = {rng.randint(1, next_id)}"
            else:
                col, values = rng.choice([("a", A), ("b", B), ("x", X), ("n", N)])
                stmt = f"UPDATE {{}}mt SET {col} = {rng.choice(values)} WHERE id = {rng.randint(1, next_id)}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
