"""Materialized views with bool_and/bool_or/every, the variance family, string_agg, the json
aggregates and the modifiers DISTINCT, FILTER and ORDER BY inside the call, grouped and global,
stay equal to
PostgreSQL's answer after every step of random inserts, deletes and updates (over real sockets,
a real server with its Spark workers).

Comparison rules as in tests/planner/test_aggregates_vs_postgres.py: PostgreSQL's numerics
rounded to our 16 fractional digits, double precision variances to 1e-12 relative, a
string_agg without ORDER BY as its sorted pieces."""

from __future__ import annotations

import math
import random
import re
from decimal import ROUND_HALF_UP, Context, Decimal

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

# name: (query over av, {column: delimiter} of string_aggs without ORDER BY)
VIEWS = {
    "bools": ("SELECT g, bool_and(b) AS ba, bool_or(b) AS bo, every(x > 0) AS ev, "
              "bool_or(b) FILTER (WHERE x < 0) AS bf FROM av GROUP BY g", {}),
    "moments": ("SELECT g, var_samp(x) AS vs, var_pop(x) AS vp, stddev_samp(n) AS ss, stddev_pop(n) AS sp, "
                "variance(f) AS vf, stddev(f) AS sf FROM av GROUP BY g", {}),
    "moments_global": ("SELECT variance(x) AS v, stddev_pop(n) AS s, var_pop(f) AS vf, var_samp(DISTINCT x) AS vd, "
                       "stddev(x) FILTER (WHERE b) AS sb, count(*) AS c FROM av", {}),
    "strings": ("SELECT g, string_agg(s, ',' ORDER BY s, id) AS o, "
                "string_agg(s, '|' ORDER BY id DESC) FILTER (WHERE b) AS f, "
                "string_agg(DISTINCT s, ';' ORDER BY s) AS d, string_agg(s, ',') AS u FROM av GROUP BY g", {4: ","}),
    "strings_global": ("SELECT string_agg(s, '-' ORDER BY x DESC NULLS LAST, id) AS o, "
                       "string_agg(DISTINCT s, '' ORDER BY s DESC) AS d FROM av", {}),
    "modifiers": ("SELECT g, count(DISTINCT s) FILTER (WHERE x > 0) AS cd, sum(x) FILTER (WHERE b) AS sb, "
                  "avg(n) FILTER (WHERE NOT b) AS an, min(f) FILTER (WHERE b) AS mf, "
                  "max(s ORDER BY id) FILTER (WHERE x < 3) AS ms, count(*) FILTER (WHERE b IS NULL) AS cn "
                  "FROM av GROUP BY g", {}),
    "json": ("SELECT g, json_agg(s ORDER BY id)::text AS ja, json_agg(n ORDER BY id) FILTER (WHERE b)::text AS jn, "
             "json_object_agg(id, x ORDER BY id)::text AS jo, "
             "jsonb_object_agg(coalesce(s, '?'), f ORDER BY id)::text AS jb, "
             "json_build_object('g', g, 'n', count(*), 'b', bool_or(b))::text AS bo FROM av GROUP BY g", {}),
}
XS = ["-5", "-1", "0", "1", "2", "3", "7", "NULL", "2147483647", "-2147483648"]
FS = ["0.1", "2.5", "-3", "1e10", "NULL", "'NaN'", "'Infinity'", "-0.0", "1e-5"]
SS = ["'a'", "'b'", "'c,d'", "''", "'ü'", "NULL", "'a'"]
BS = ["true", "false", "NULL"]


def _norm(v):
    if isinstance(v, Decimal):
        return v.quantize(Decimal(1).scaleb(-16), rounding=ROUND_HALF_UP, context=Context(prec=100))
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _rows(rows, pieces):
    out = []
    for r in rows:
        r = [_norm(v) for v in r]
        for i, d in pieces.items():
            if r[i] is not None:
                r[i] = tuple(sorted(r[i].split(d)))
        out.append(tuple(r))
    return sorted(out, key=repr)


def _same_rows(a, b) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) and isinstance(y, float):
                if not (x == y or math.isclose(x, y, rel_tol=1e-12)):
                    return False
            elif x != y:
                return False
    return True


def _row(rng, i):
    n = f"{rng.randint(-100000, 100000) / 100:.2f}"
    return (f"({i}, {rng.randint(1, 3)}, {rng.choice(XS)}, {rng.choice([n, n, 'NULL'])}, "
            f"{rng.choice(FS)}, {rng.choice(BS)}, {rng.choice(SS)})")


def test_aggregate_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS av CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}av (id int, g int, x int, n numeric(10,2), f float8, b bool, s text)")
        for name, (sql, _) in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + re.sub(r"\bav\b", f"{p}av", sql))
        next_id, compared = 0, 0
        for step in range(40):
            kind = rng.choice(["+", "+", "+", "++", "-", "u", "u", "--"])
            target = rng.randint(1, max(1, next_id))
            if kind in ("+", "++"):
                rows = []
                for _ in range(1 if kind == "+" else rng.randint(2, 6)):
                    next_id += 1
                    rows.append(_row(rng, next_id))
                stmt = "INSERT INTO {}av VALUES " + ", ".join(rows)
            elif kind == "-":
                stmt = f"DELETE FROM {{}}av WHERE id = {target}"
            elif kind == "--":
                stmt = f"DELETE FROM {{}}av WHERE g = {rng.randint(1, 3)} AND id % 3 = {rng.randint(0, 2)}"
            else:
                col, vals = rng.choice([("x", XS), ("f", FS), ("s", SS), ("b", BS), ("g", ["1", "2", "3"])])
                stmt = f"UPDATE {{}}av SET {col} = {rng.choice(vals)} WHERE id = {target} OR id = {target + 1}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, (sql, pieces) in VIEWS.items():
                got = _rows(ss.execute(f"SELECT * FROM {p}{name}").fetchall(), pieces)
                want = _rows(pg.execute(sql).fetchall(), pieces)
                assert _same_rows(got, want), \
                    f"after step {step} ({stmt.format('')}), view {name}\n got={got}\n want={want}"
                compared += sum(v is not None for r in got for v in r)
        assert compared > 1000  # the views were not empty along the way
