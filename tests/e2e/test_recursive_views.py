"""Materialized views with WITH RECURSIVE (transitive closure with cycles, UNION ALL tree walks,
a counting series bounded by a table, a correlated
recursive subquery per edge) stay equal to PostgreSQL's answer for the same query
after every one of random inserts, deletes and updates of graph edges, over real sockets (the
loop runs inside the server's Spark workers, with exchanges between them). A WITH MUTUALLY
RECURSIVE view is compared with the equivalent WITH RECURSIVE query in PostgreSQL."""

from __future__ import annotations

import random
import re

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "closure": "WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM e UNION "
               "SELECT r.a, e.dst FROM r JOIN e ON r.b = e.src) SELECT a, b FROM r",
    "reach1": "WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT e.dst FROM r JOIN e ON e.src = r.n) SELECT n FROM r",
    "paths": "WITH RECURSIVE p(n, d) AS (SELECT dst, 1 FROM e WHERE src = 1 UNION ALL "
             "SELECT e.dst, p.d + 1 FROM p JOIN e ON e.src = p.n WHERE p.d < 4) "
             "SELECT n, d, count(*) AS c FROM p GROUP BY n, d",
    "series": "WITH RECURSIVE s(n) AS (SELECT min(src) FROM e UNION ALL SELECT n + 1 FROM s "
              "WHERE n < (SELECT max(dst) FROM e)) SELECT n FROM s",
    "tree": "WITH RECURSIVE t(id, depth, path) AS (SELECT src, 0, src::text FROM e WHERE src = 1 UNION ALL "
            "SELECT e.dst, t.depth + 1, t.path || '>' || e.dst FROM t JOIN e ON e.src = t.id "
            "WHERE t.depth < 3) SELECT id, depth, path FROM t",
    # correlated: for every edge, how many nodes its target reaches within 3 steps
    "reach_per_edge": "SELECT x.src, x.dst, (WITH RECURSIVE r(n, d) AS (SELECT x.dst, 0 UNION "
                      "SELECT e.dst, r.d + 1 FROM r JOIN e ON e.src = r.n WHERE r.d < 3) "
                      "SELECT count(DISTINCT n) FROM r) AS reach FROM e AS x",
}

# The same reachability as "reach1", in Materialize's syntax; PostgreSQL answers VIEWS["reach1"].
WMR = ("WITH MUTUALLY RECURSIVE r (n int) AS (SELECT 1 UNION SELECT e.dst FROM r JOIN e ON e.src = r.n) "
       "SELECT n FROM r")


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def _answer(conn, sql):
    try:
        return _sorted(conn.execute(sql).fetchall())
    except psycopg.Error as e:
        return e.sqlstate


def _qualify(sql: str, p: str) -> str:
    sql = re.sub(r"\b(FROM|JOIN) e AS (\w+)", lambda m: f"{m.group(1)} {p}e AS {m.group(2)}", sql)
    return re.sub(r"\b(FROM|JOIN) e\b(?! AS)", lambda m: f"{m.group(1)} {p}e e", sql)


def test_recursive_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(5)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS e CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}e (id int, src int, dst int)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS {_qualify(sql, p)}")
        ss.execute(f"CREATE MATERIALIZED VIEW {p}wmr AS {_qualify(WMR, p)}")
        next_id = 0
        for step in range(45):
            kind = rng.choice(["+", "+", "+", "-", "-", "u"])
            if kind == "+":
                next_id += 1
                stmt = f"INSERT INTO {{}}e VALUES ({next_id}, {rng.randint(1, 7)}, {rng.randint(1, 7)})"
            elif kind == "-":
                stmt = f"DELETE FROM {{}}e WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                stmt = f"UPDATE {{}}e SET dst = {rng.randint(1, 7)} WHERE id = {rng.randint(1, max(1, next_id))}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                want = _answer(pg, sql)
                assert _answer(ss, f"SELECT * FROM {p}{name}") == want, (step, stmt, name)
                # the same query as a one-off SELECT
                if step % 9 == 0:
                    assert _answer(ss, _qualify(sql, p)) == want, (step, stmt, name, "one-off")
            assert _answer(ss, f"SELECT * FROM {p}wmr") == _answer(pg, VIEWS["reach1"]), (step, stmt, "wmr")
        # The server is shared by the whole run: maintained loops left behind would be stepped
        # by every later test's writes.
        ss.execute(f"DROP TABLE {p}e CASCADE")
