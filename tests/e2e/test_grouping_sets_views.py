"""Materialized views with ROLLUP, CUBE, GROUPING SETS, GROUPING() and SELECT DISTINCT ON stay
equal to PostgreSQL's answer for the same query after every one of random inserts, deletes and
updates, over real sockets. The DISTINCT ON views order by a unique column last, so the row
PostgreSQL chooses is determined; one view without a complete ORDER BY selects only columns its
groups determine (the row chosen among ties is this engine's own, documented choice)."""

from __future__ import annotations

import random
import re

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "rollup": "SELECT g, h, count(*) AS c, sum(x) AS s, grouping(g, h) AS gr FROM t GROUP BY ROLLUP(g, h)",
    "cube": "SELECT g, h, count(DISTINCT x) AS dx, max(x) AS mx, sum(x) FILTER (WHERE x > 10) AS fx, "
            "sum(n) AS an FROM t GROUP BY CUBE(g, h)",
    "sets": "SELECT g, h, count(*) AS c, grouping(h) AS gh FROM t "
            "GROUP BY GROUPING SETS ((g), (h), (), ()) HAVING count(*) > 1",
    "mixed": "SELECT g, h, min(x) AS lo, string_agg(h, ',' ORDER BY h) AS hs FROM t GROUP BY g, ROLLUP(h)",
    "total": "SELECT count(*) AS c, sum(x) AS s FROM t GROUP BY ROLLUP(g) HAVING grouping(g) = 1",
    "latest": "SELECT DISTINCT ON (g) g, id, x FROM t ORDER BY g, x DESC NULLS LAST, id",
    "first": "SELECT DISTINCT ON (h, g) h, g, id, n FROM t ORDER BY h, g, id DESC",
    "keys": "SELECT DISTINCT ON (g % 3) g % 3 AS m FROM t",
    "top2": "SELECT DISTINCT ON (g) g, id FROM t ORDER BY g NULLS FIRST, id LIMIT 2",
}


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def _answer(conn, sql):
    try:
        return _sorted(conn.execute(sql).fetchall())
    except psycopg.Error as e:
        return e.sqlstate


def _qualify(sql: str, p: str) -> str:
    return re.sub(r"\bFROM t\b", f"FROM {p}t t", sql)


def test_grouping_sets_and_distinct_on_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(7)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS t CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}t (id int, g int, h text, x int, n numeric(6,2))")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS {_qualify(sql, p)}")
        next_id = 0
        nonempty = 0
        for step in range(50):
            kind = rng.choice(["+", "+", "+", "-", "u", "u"]) if step < 45 else "-"
            if kind == "+" or next_id == 0:
                rows = []
                for _ in range(rng.randint(1, 3)):
                    next_id += 1
                    g = rng.choice(["NULL", "1", "2", "3", "4"])
                    h = rng.choice(["NULL", "'a'", "'b'", "'c'"])
                    x = rng.choice(["NULL", str(rng.randint(-5, 30))])
                    n = rng.choice(["NULL", f"{rng.randint(-500, 500) / 100:.2f}"])
                    rows.append(f"({next_id}, {g}, {h}, {x}, {n})")
                stmt = f"INSERT INTO {{}}t VALUES {', '.join(rows)}"
            elif kind == "-":
                stmt = f"DELETE FROM {{}}t WHERE id % 5 = {rng.randint(0, 4)} AND id > {rng.randint(0, next_id)}"
            else:
                col, val = rng.choice([("g", rng.choice(["NULL", "1", "2", "5"])), ("h", rng.choice(["NULL", "'a'", "'d'"])),
                                       ("x", str(rng.randint(-5, 30)))])
                stmt = f"UPDATE {{}}t SET {col} = {val} WHERE id = {rng.randint(1, next_id)}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            nonempty += bool(pg.execute("SELECT count(*) FROM t").fetchone()[0])
            for name, sql in VIEWS.items():
                want = _answer(pg, sql)
                got = _answer(ss, f"SELECT * FROM {p}{name}")
                assert got == want, (step, stmt, name)
        assert nonempty > 20
        ss.execute(f"DROP TABLE {p}t CASCADE")  # the server is shared by the whole run
