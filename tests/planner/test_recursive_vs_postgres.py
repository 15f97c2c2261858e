"""WITH RECURSIVE in one-off queries, planned and run in this process, against PostgreSQL: the
answers (values and result types) and the errors (42P19 for recursive references where
PostgreSQL refuses them, 42804 for a recursive term that widens a column). Random graphs,
with cycles, self-loops, repeated edges and NULLs, compared for transitive closure (UNION) and
depth-bounded path counts (UNION ALL). Also catalog-only recursive queries (evaluated in the
adapter's process)."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb, pg_answer, pg_type_oids

DDL = ["CREATE TABLE g (src int, dst int, w numeric(6,2))", "CREATE TABLE t (id int, parent int, name text)"]


def _data(seed: int) -> list[str]:
    rng = random.Random(seed)
    edges = []
    for _ in range(rng.randint(0, 25)):
        s = rng.choice([None] + list(range(8)))
        d = rng.choice([None] + list(range(8)))
        edges.append(f"({'NULL' if s is None else s}, {'NULL' if d is None else d}, {rng.randint(1, 999) / 100})")
    out = [f"INSERT INTO g VALUES {', '.join(edges)}"] if edges else []
    nodes = [f"(1, NULL, 'n1')"] + [f"({i}, {rng.randint(1, i - 1)}, 'n{i}')" for i in range(2, 15)]
    out.append(f"INSERT INTO t VALUES {', '.join(nodes)}")
    return out


QUERIES = [
    "WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM g UNION SELECT r.a, g.dst FROM r JOIN g ON r.b = g.src) SELECT * FROM r",
    "WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM g UNION SELECT g.src, r.b FROM g, r WHERE g.dst = r.a) SELECT a, count(*) FROM r GROUP BY a",
    "WITH RECURSIVE p(n, d, cost) AS (SELECT dst, 1, w FROM g WHERE src = 0 UNION ALL "
    "SELECT g.dst, p.d + 1, p.cost + g.w FROM p JOIN g ON g.src = p.n WHERE p.d < 4) SELECT n, d, cost FROM p",
    "WITH RECURSIVE p(n, d, cost) AS (SELECT dst, 1, w::numeric FROM g WHERE src = 0 UNION ALL "
    "SELECT g.dst, p.d + 1, p.cost + g.w FROM p JOIN g ON g.src = p.n WHERE p.d < 4) SELECT n, d, cost FROM p",
    "WITH RECURSIVE p(n, d) AS (SELECT 0, 0 UNION SELECT g.dst, p.d + 1 FROM p JOIN g ON g.src = p.n WHERE p.d < 5) "
    "SELECT n, min(d) FROM p GROUP BY n",
    "WITH RECURSIVE s(id, path, depth) AS (SELECT id, name, 0 FROM t WHERE parent IS NULL UNION ALL "
    "SELECT t.id, s.path || '/' || t.name, s.depth + 1 FROM t JOIN s ON t.parent = s.id) SELECT * FROM s",
    "WITH RECURSIVE a(id, anc) AS (SELECT id, parent FROM t UNION ALL SELECT a.id, t.parent FROM a JOIN t ON t.id = a.anc) "
    "SELECT id, count(anc) FROM a GROUP BY id",
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < (SELECT count(*) FROM g)) SELECT n FROM s",
    "WITH RECURSIVE s(n, f) AS (SELECT 1, 1::bigint UNION ALL SELECT n + 1, f * (n + 1) FROM s WHERE n < 20) SELECT * FROM s",
    "WITH RECURSIVE s(x) AS (SELECT 'a' UNION SELECT x || 'b' FROM s WHERE length(x) < 5) SELECT x FROM s",
    # correlated: the recursive CTE reads the enclosing query's row (computed for every outer
    # value at once, the rows carrying the value they are for)
    "SELECT t.id, (WITH RECURSIVE a(x, d) AS (SELECT t2.parent, 1 FROM t t2 WHERE t2.id = t.id UNION ALL "
    "SELECT t3.parent, a.d + 1 FROM a, t t3 WHERE t3.id = a.x) SELECT x FROM a WHERE x IS NOT NULL "
    "ORDER BY d DESC LIMIT 1) FROM t",
    "SELECT t.id, (WITH RECURSIVE r(n) AS (SELECT t.id UNION SELECT g.dst FROM r JOIN g ON g.src = r.n) "
    "SELECT count(*) FROM r) FROM t",
    "SELECT t.id, (WITH RECURSIVE r(n, d) AS (SELECT t.id, 0 UNION ALL SELECT g.dst, r.d + 1 FROM r JOIN g "
    "ON g.src = r.n WHERE r.d < t.id) SELECT count(*) FROM r) FROM t",
    "SELECT t.id FROM t WHERE EXISTS (WITH RECURSIVE r(n) AS (SELECT t.parent UNION SELECT t2.parent FROM r, t t2 "
    "WHERE t2.id = r.n) SELECT 1 FROM r WHERE n = 1)",
    "SELECT g.src, g.dst, (WITH RECURSIVE r(n, s) AS (SELECT g.src, g.w UNION ALL SELECT r.n + 1, r.s + g.w FROM r "
    "WHERE r.n < g.dst) SELECT max(s) FROM r) FROM g",
    "SELECT t.id, (WITH RECURSIVE r(n) AS (SELECT t.id UNION ALL SELECT n + 1 FROM r WHERE n < "
    "(SELECT max(src) FROM g LIMIT 1)) SELECT count(*) FROM g, r WHERE g.src = r.n) FROM t",
]

# Correlated forms not planned yet: refused (0A000), never answered differently.
REFUSED = [
    "SELECT t.id, (WITH RECURSIVE r(n) AS (SELECT id UNION ALL SELECT n + 1 FROM r WHERE n < 4) "
    "SELECT count(*) FROM r) FROM t",
    "SELECT t.id, (WITH RECURSIVE r(n) AS (SELECT t.id UNION ALL SELECT * FROM (SELECT n + 1 FROM r) z "
    "WHERE z < 4) SELECT count(*) FROM r) FROM t",
]

ERRORS = [
    "WITH RECURSIVE x(n) AS (SELECT n FROM x UNION ALL SELECT 1) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT x.n FROM x, x y) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT src FROM g WHERE EXISTS (SELECT 1 FROM x)) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT x.n FROM g LEFT JOIN x ON true) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT sum(n) FROM x) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 0.5 FROM x WHERE n < 3) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 EXCEPT SELECT n FROM x) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n * 2 FROM x WHERE n > 0) SELECT * FROM x",
]


@pytest.fixture(scope="module", params=[1, 2, 3, 4])
def dbs(request, pg_oracle):
    data = _data(request.param)
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS g, t CASCADE")
        for s in DDL + data:
            conn.execute(s)
        yield EngineDb(DDL, data), conn


@pytest.mark.parametrize("sql", QUERIES)
def test_recursive_queries_match_postgres(sql, dbs):
    db, pg = dbs
    want = pg_answer(pg, sql)
    assert db.answer(sql) == want
    if not isinstance(want, str):
        assert db.type_oids(sql) == pg_type_oids(pg, sql)


@pytest.mark.parametrize("sql", ERRORS)
def test_recursive_errors_match_postgres(sql, dbs):
    db, pg = dbs
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", REFUSED)
def test_recursive_forms_refused(sql, dbs):
    db, _ = dbs
    assert db.answer(sql) == "0A000"


def test_catalog_only_recursion(dbs):
    """A recursive query over pg_catalog alone runs in the adapter (evaluate_constant)."""
    db, pg = dbs
    sql = ("WITH RECURSIVE ns(oid, depth) AS (SELECT oid, 0 FROM pg_namespace WHERE nspname = 'pg_catalog' "
           "UNION ALL SELECT ns.oid, depth + 1 FROM ns WHERE depth < 3) SELECT count(*), max(depth) FROM ns")
    assert db.answer(sql) == pg_answer(pg, sql)
