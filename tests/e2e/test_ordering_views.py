"""Materialized views over arrays, jsonb and intervals stay equal to PostgreSQL's answer under
random changes, including deletes and updates of the current extremum: min/max of an int[] and
of an interval per group (PostgreSQL's array and interval orders, `dataflow/sort_keys.py`),
top-k by an array and by a jsonb, and `<` on them."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "mm": "SELECT g, min(a) AS lo, max(a) AS hi, min(v) AS vlo, max(v) AS vhi, count(*) AS n FROM ov GROUP BY g",
    "top": "SELECT a FROM (SELECT a FROM ov ORDER BY a DESC NULLS LAST LIMIT 3) s",
    "topj": "SELECT j FROM (SELECT j FROM ov ORDER BY j LIMIT 3) s",
    "cmp": "SELECT id, a < '{1,2}' AS lt, j >= '[]' AS ge, v > '1 mon' AS gt FROM ov",
}
# How each view is read for comparison: text for arrays and jsonb; intervals by their span
# ('1 mon' and '30 days' are equal, and either is a right answer).
READ = {
    "mm": "SELECT g, lo::text, hi::text, extract(epoch FROM vlo), extract(epoch FROM vhi), n FROM @",
    "top": "SELECT a::text FROM @",
    "topj": "SELECT j::text FROM @",
    "cmp": "SELECT * FROM @",
}
ARRAYS = ["'{}'", "'{1}'", "'{1,2}'", "'{1,NULL}'", "'{NULL}'", "'{-3,5}'", "'{2}'", "'{1,2,3}'", "NULL", "'{0,0}'"]
JSONS = ["'[]'", "'null'", "'1'", "'[1]'", "'\"a\"'", "'{\"a\": 1}'", "'true'", "'[0, 0]'", "'{}'", "NULL", "'-2.5'"]
INTERVALS = ["'1 mon'", "'30 days'", "'29 days 23:00:00'", "'-1 day'", "'1 year'", "'00:00:01'", "NULL",
             "'2 mons -3 days'", "'720:00:00'"]


def _sorted(rows):
    return sorted((tuple(float(x) if x is not None and not isinstance(x, (str, bool, int)) else x for x in r)
                   for r in rows), key=repr)


def test_ordering_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS ov CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}ov (id int, g int, a int[], j jsonb, v interval)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("ov", f"{p}ov"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u", "max", "min"])
            if kind == "+" or next_id == 0:
                next_id += 1
                stmt = (f"INSERT INTO @ov VALUES ({next_id}, {rng.randint(1, 2)}, {rng.choice(ARRAYS)}, "
                        f"{rng.choice(JSONS)}, {rng.choice(INTERVALS)})")
            elif kind == "-":
                stmt = f"DELETE FROM @ov WHERE id = {rng.randint(1, next_id)}"
            elif kind == "u":
                stmt = (f"UPDATE @ov SET a = {rng.choice(ARRAYS)}, v = {rng.choice(INTERVALS)} "
                        f"WHERE id = {rng.randint(1, next_id)}")
            else:
                # Delete (or move away) the row holding a group's current extremum.
                col = rng.choice(["a", "v"])
                order = "DESC" if kind == "max" else "ASC"
                row = pg.execute(f"SELECT id FROM ov WHERE {col} IS NOT NULL ORDER BY {col} {order}, id "
                                 f"LIMIT 1").fetchone()
                target = row[0] if row else 1
                stmt = (f"DELETE FROM @ov WHERE id = {target}" if rng.random() < 0.6 else
                        f"UPDATE @ov SET {col} = NULL WHERE id = {target}")
            ss.execute(stmt.replace("@", p))
            pg.execute(stmt.replace("@", ""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(READ[name].replace("@", f"{p}{name}")).fetchall())
                want = _sorted(pg.execute(READ[name].replace("@", f"({sql}) q")).fetchall())
                assert got == want, f"after step {step} ({stmt.replace('@', '')}), view {name}"
