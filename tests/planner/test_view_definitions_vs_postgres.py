"""A view's definition as PostgreSQL prints it (pg_get_viewdef(v, true), psql's `\\d+ v`, and
pg_get_viewdef(v), pg_views' plain form): each query below is created as a view both here
(planner.deparse) and in a real PostgreSQL 15, and the texts must be equal, byte for byte.
Queries outside the forms planner.deparse covers keep their written text (checked at the
end), never a wrong one. The view's column
names are compared too (a scalar subquery is named after its column, as in PostgreSQL)."""

from __future__ import annotations

import psycopg
import pytest

from bench.tpch.data import SCHEMA as TPCH_SCHEMA
from bench.tpch.queries import queries as tpch_queries
from planner import parse
from planner.context import Params, PlanContext
from planner.deparse import deparse_view, quote_ident
from planner.lower_ddl import plan_create_view
from tests.planner.planner_catalog import MemoryCatalog

DDL = ["CREATE TABLE t (a int NOT NULL, b text, c numeric(8,2), d date, v varchar(10), f float8, g bigint, h bool)",
       "CREATE TABLE u (k bigint, name text, a int)",
       "CREATE TABLE ch (c3 char(3), b text, v varchar(5))",
       'CREATE TABLE "Odd" ("Mixed" int, "select" text, "extract" int)']

QUERIES = [
    # select lists, names and constants
    "SELECT a, b FROM t",
    "SELECT * FROM t",
    "SELECT t.* FROM t",
    "SELECT x.* FROM t x",
    "SELECT a AS t_a, b AS a_b FROM t",
    "SELECT 1 AS one, 'txt' AS s, 2.5 AS n, true AS yes, NULL::int AS z",
    "SELECT 3000000000 AS big, -2.5 AS negn, 1e5 AS sci, 0.5 AS half, 100.00 AS scaled, 'it''s' AS q FROM t",
    "SELECT a AS \"Mixed\", b AS \"select\", c AS x_1 FROM t",
    'SELECT "Mixed", "select", "extract" FROM "Odd"',
    "SELECT a + 1, a FROM t",
    "SELECT DISTINCT b FROM t",
    "SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b",
    # operators, precedence, implicit casts
    "SELECT a + 1 AS x FROM t WHERE a > -1",
    "SELECT a * 2 + g AS x, (a + 1) * 2 AS y, a - (g - 1) AS z, -a AS w, a - -1 AS q FROM t",
    "SELECT f * 2 AS x, g / 3 AS y, g % 2 AS z, c * a AS w, f / 2 AS fd, c / 3 AS cd FROM t",
    "SELECT v = 'q' AS x, c > 1.5 AS y, d > '2020-01-01' AS z, a > 1.5 AS w, f > 1 AS u, c > 1 AS cc, g > a AS ga FROM t",
    "SELECT a FROM t WHERE a + 1 > 2 AND b || 'x' = 'y' AND -a + 1 > 0",
    "SELECT a FROM t WHERE b = 'x' AND c = '1.5' AND f = '2' AND g = '3' AND a = '-4' AND d = '2020-1-2'",
    "SELECT a, b FROM t WHERE b LIKE 'a%' AND v LIKE 'b%' AND v = b AND c = a AND c > g AND f > a AND f > c",
    "SELECT b || 'x' AS cat, b || a AS cat2, 'a' || b AS cat3, 1 + 2 AS three FROM t",
    "SELECT CAST(a AS text) AS x, a::numeric(10,2) AS y, (a + 1)::text AS z, b::int AS w, '5'::int AS k FROM t",
    "SELECT a::bigint AS x, g::int AS y, b::varchar(3) AS z, c::int AS w, f::numeric AS q, d::timestamp AS ts FROM t",
    "SELECT upper(b)::varchar AS x, (-a)::text AS y, -(a + 1) AS z, - c AS w FROM t",
    "SELECT c3 = b AS x, upper(c3) AS u, c3 || 'x' AS cat, c3 LIKE 'a%' AS lk, c3 = v AS cv, lower(v) AS lv, "
    "c3 IN ('a', 'b') AS i, v IN ('a', 'b') AS vi, c3 = 'ab' AS eq FROM ch",
    # boolean structure
    "SELECT a FROM t WHERE a > 1 AND b = 'x' OR h",
    "SELECT a FROM t WHERE h AND NOT h OR a = 1 AND (b = 'x' OR b = 'y')",
    "SELECT a FROM t WHERE (a > 1 OR a < 0) AND b IS NOT NULL",
    "SELECT a, b FROM t WHERE NOT h AND a <> 3",
    "SELECT a NOT IN (1, 2) AS x, NOT (a > 1 AND h) AS y, (a > 1) IS TRUE AS z, a <> 1 AS w, a != 2 AS ww, b IS NOT NULL AS nn FROM t",
    "SELECT a FROM t WHERE NOT a > 1 AND NOT h AND NOT (b IS NULL) AND (a > 1) = h",
    "SELECT a FROM t WHERE h IS TRUE AND h IS NOT FALSE",
    "SELECT a FROM t WHERE a IS DISTINCT FROM 1 AND a IS NOT DISTINCT FROM 2",
    "SELECT coalesce(b, 'none') AS x, b IS NULL AS y, a IN (1,2,3) AS z, a BETWEEN 1 AND 5 AS w, "
    "b LIKE 'a%' AS l, b NOT LIKE 'a%' AS nl, b ILIKE 'a' AS il FROM t",
    "SELECT a FROM t WHERE a IN (1)",
    "SELECT a FROM t WHERE a = 1 OR a IN (2, 3) OR b IS NULL",
    "SELECT a FROM t WHERE a = ANY (ARRAY[1, 2])",
    "SELECT a FROM t WHERE g IN (1, 2) AND f IN (1.5, 2) AND b IN ('a', 'b') AND v IN ('a')",
    "SELECT a FROM t WHERE d >= '2020-01-01'::date AND d < date '2021-01-01'",
    # calls and CASE
    "SELECT upper(b) AS u, lower(b) AS l, length(b) AS n, abs(a) AS ab, round(c, 1) AS r FROM t",
    "SELECT greatest(a, 2) AS g, least(a, g) AS l, nullif(a, 1) AS n FROM t",
    "SELECT upper(v) AS x, length(v) AS y, coalesce(v, b) AS z, coalesce(a, g) AS w, coalesce(a, 1.5) AS k FROM t",
    "SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END AS sz FROM t",
    "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS sz FROM t",
    "SELECT CASE WHEN a > 1 THEN a ELSE g END AS x, CASE WHEN h THEN 1 END AS y FROM t",
    "SELECT extract(year from d) AS y, extract(epoch from d) FROM t",
    # aggregates and grouping
    "SELECT a, count(*) AS n FROM t GROUP BY a",
    "SELECT a, count(*), sum(c), avg(f), max(b) FROM t GROUP BY a HAVING count(*) > 1 ORDER BY a DESC LIMIT 10",
    "SELECT count(DISTINCT b) FROM t",
    "SELECT string_agg(b, ',' ORDER BY b) AS s, array_agg(a) AS arr, bool_and(h) AS ba, count(a) AS ca FROM t",
    "SELECT count(*) FILTER (WHERE a > 1 AND h) AS n, sum(DISTINCT a) AS s FROM t",
    "SELECT sum(a) FILTER (WHERE h) FROM t",
    "SELECT sum(a) + 1 AS s, count(*) * 2 AS c2, max(b) || 'x' AS mb FROM t",
    "SELECT sum(a * g) AS s, avg(c)::numeric(10,2) AS ac FROM t",
    "SELECT max(a) - min(a) AS span FROM t HAVING max(a) > 0",
    "SELECT a, b, count(*) AS n FROM t GROUP BY a, b ORDER BY 3 DESC, b",
    "SELECT a, sum(g) FROM t GROUP BY 1 ORDER BY 2",
    "SELECT a + 1 AS x, count(*) FROM t GROUP BY a + 1",
    # ORDER BY, LIMIT, OFFSET
    "SELECT a FROM t ORDER BY b NULLS FIRST, a OFFSET 2",
    "SELECT a + 1 AS x FROM t ORDER BY x",
    "SELECT a FROM t ORDER BY a + 1 DESC NULLS LAST LIMIT ALL",
    "SELECT b FROM t ORDER BY b DESC NULLS LAST, a ASC NULLS FIRST, c DESC NULLS FIRST",
    "SELECT a FROM t LIMIT 5 OFFSET 3",
    # joins
    "SELECT t.a, u.name FROM t JOIN u ON t.a = u.k",
    "SELECT t.a, u.name FROM t, u WHERE t.a = u.k",
    "SELECT x.a, y.name FROM t AS x LEFT JOIN u y ON x.a = y.k AND y.name <> 'z'",
    "SELECT t.a FROM t JOIN u ON t.a = u.k JOIN u u2 ON u2.a = t.a LEFT JOIN u u3 ON u3.k = u2.k",
    "SELECT t.a FROM t CROSS JOIN u",
    "SELECT t.a FROM t RIGHT JOIN u ON t.a = u.a FULL JOIN u u2 ON u2.k = u.k",
    "SELECT t.a FROM t INNER JOIN u ON t.a = u.a AND t.b = u.name WHERE u.k > 0",
    "SELECT a FROM t AS t",
    # subqueries
    "SELECT a FROM t WHERE a IN (SELECT k FROM u)",
    "SELECT a, (SELECT max(k) FROM u) FROM t",
    "SELECT a, (SELECT k + 1 FROM u LIMIT 1) AS x, (SELECT max(k) FROM u) FROM t",
    "SELECT a FROM t t1 WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t1.a)",
    "SELECT a FROM t WHERE EXISTS (SELECT a + 1 FROM u) AND EXISTS (SELECT k FROM u) AND EXISTS (SELECT k AS z FROM u)",
    "SELECT a FROM t WHERE a IN (SELECT a + 1 FROM u) OR a IN (SELECT a AS z FROM u)",
    "SELECT a FROM t WHERE a IN (SELECT a FROM t)",
    "SELECT a FROM t WHERE a IN (SELECT a FROM t x) AND a NOT IN (SELECT k FROM u)",
    "SELECT a FROM t WHERE NOT a IN (SELECT k FROM u) AND NOT EXISTS (SELECT 1 FROM u)",
    "SELECT a FROM t WHERE a > (SELECT max(k) FROM u WHERE u.a = t.a)",
    "SELECT (SELECT count(*) FROM u WHERE u.a = t.a) + 1 AS n FROM t",
    "SELECT a FROM (SELECT a, b FROM t) s WHERE s.b = 'y'",
    "SELECT x FROM (SELECT a + 1, a AS x FROM t) s",
    "SELECT p, q FROM (SELECT a, b FROM t) AS s (p, q)",
    "WITH w AS (SELECT a FROM t) SELECT a FROM w",
    "WITH w AS (SELECT a + 1, a FROM t) SELECT a FROM w",
    "WITH w (x, y) AS (SELECT a, b FROM t) SELECT x FROM w WHERE y = (SELECT max(y) FROM w)",
    # set operations
    "SELECT a FROM t UNION SELECT a FROM u",
    "SELECT a FROM t UNION ALL SELECT k FROM u",
    "SELECT a, b FROM t INTERSECT SELECT a, name FROM u EXCEPT SELECT 1, 'x'",
    "SELECT a FROM t UNION (SELECT a FROM u EXCEPT ALL SELECT a FROM t)",
    "SELECT a FROM t UNION SELECT a FROM u UNION SELECT k FROM u",
    "SELECT a FROM t UNION SELECT a FROM u ORDER BY 1 LIMIT 3",
    "SELECT a AS x FROM t UNION ALL SELECT a FROM u ORDER BY x DESC",
    "SELECT n FROM (SELECT a AS n FROM t UNION SELECT k FROM u) s WHERE n > 1",
    "WITH w AS (SELECT a FROM t UNION ALL SELECT a FROM u) SELECT a, count(*) FROM w GROUP BY a",
    "SELECT a FROM t WHERE a IN (SELECT a FROM u UNION SELECT 1)",
    # window functions
    "SELECT a, row_number() OVER (PARTITION BY b ORDER BY a) FROM t",
    "SELECT a, count(*) OVER () AS n, lag(a, 1) OVER (ORDER BY d DESC) AS prev FROM t",
    "SELECT a, sum(g) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t",
    "SELECT a, rank() OVER (PARTITION BY b, a + 1 ORDER BY d NULLS FIRST) AS r, "
    "dense_rank() OVER (ORDER BY a DESC) AS dr FROM t",
    "SELECT a, avg(c) OVER (PARTITION BY h ORDER BY d RANGE BETWEEN '1 day' PRECEDING AND CURRENT ROW) AS m FROM t",
    "SELECT a, max(a) OVER (ORDER BY a ROWS UNBOUNDED PRECEDING EXCLUDE CURRENT ROW) AS m, "
    "min(a) OVER (ORDER BY a GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) AS n FROM t",
    "SELECT a, lead(a, 2, 0) OVER (ORDER BY a) AS nx, first_value(b) OVER (ORDER BY a) AS fv, "
    "ntile(4) OVER (ORDER BY a) AS q, percent_rank() OVER (ORDER BY a) AS pr FROM t",
    "SELECT a, rank() OVER w AS r, sum(g) OVER w2 AS s FROM t "
    "WINDOW w AS (PARTITION BY b ORDER BY a), w2 AS (ORDER BY d ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
    # USING and NATURAL
    "SELECT t.a, u.name FROM t JOIN u USING (a)",
    "SELECT a, name FROM t NATURAL JOIN u",
    "SELECT * FROM t JOIN u USING (a)",
    "SELECT * FROM t LEFT JOIN u USING (a) WHERE a > 1",
    "SELECT a, k FROM t RIGHT JOIN u USING (a)",
    "SELECT k, a, y.name, b FROM u x JOIN u y USING (k, a) JOIN t USING (a)",
]

# Forms planner.deparse leaves as written (each checked to be refused by it, not misprinted).
AS_WRITTEN = [
    "SELECT * FROM t FULL JOIN u USING (a)",
    "SELECT x FROM generate_series(1, 3) x",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(n, s)",
    "SELECT relname FROM pg_catalog.pg_class",
    "SELECT b, sum(count(*)) OVER (ORDER BY b) AS running FROM t GROUP BY b",
    "SELECT a, sum(a) OVER (w ORDER BY a) FROM t WINDOW w AS (PARTITION BY b)",
]


def _ctx(cat: MemoryCatalog) -> PlanContext:
    return PlanContext(cat, Params([], []), ("public",), "slipstream")


def _ours(cat: MemoryCatalog, name: str, sql: str) -> tuple[tuple[str, str] | None, list[str]]:
    stmt = parse(f"CREATE VIEW {name} AS {sql}")[0].ast
    plan = plan_create_view(stmt, _ctx(cat), sql)
    return plan.pg_definitions, [c.name for c in plan.columns]


@pytest.fixture(scope="module")
def both(pg_oracle):
    cat = MemoryCatalog()
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        pg.execute("DROP SCHEMA IF EXISTS viewdef CASCADE")
        pg.execute("CREATE SCHEMA viewdef")
        pg.execute("SET search_path = viewdef")
        for ddl in DDL + [f"CREATE TABLE {t} ({cols})" for t, cols in TPCH_SCHEMA.items()]:
            pg.execute(ddl)
            cat.execute(ddl)
        yield cat, pg
        pg.execute("DROP SCHEMA viewdef CASCADE")


def _theirs(pg, name: str, sql: str) -> tuple[tuple[str, str], list[str]]:
    pg.execute(f"CREATE VIEW {name} AS {sql}")
    text = pg.execute(f"SELECT pg_get_viewdef('{name}'::regclass, true), pg_get_viewdef('{name}'::regclass)").fetchone()
    names = [r[0] for r in pg.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 ORDER BY attnum",
        (name,)).fetchall()]
    return tuple(text), names


def _same(ours, theirs) -> None:
    (definitions, names), (want, want_names) = ours, theirs
    assert names == want_names
    assert definitions is not None, "not deparsed"
    assert definitions[0] == want[0], "pretty"
    assert definitions[1] == want[1], "plain"


@pytest.mark.parametrize("i", range(len(QUERIES)), ids=[q[:60] for q in QUERIES])
def test_definition_is_postgres_own(both, i):
    cat, pg = both
    _same(_ours(cat, f"v{i}", QUERIES[i]), _theirs(pg, f"v{i}", QUERIES[i]))


@pytest.mark.parametrize("n", range(1, 23))
def test_tpch_definition_is_postgres_own(both, n):
    cat, pg = both
    sql = tpch_queries(0.01)[n]
    _same(_ours(cat, f"q{n}", sql), _theirs(pg, f"q{n}", sql))


@pytest.mark.parametrize("sql", AS_WRITTEN)
def test_other_forms_keep_their_text(both, sql):
    cat, _ = both
    stmt = parse(f"CREATE VIEW w AS {sql}")[0].ast
    assert deparse_view(stmt.query, _ctx(cat), ["x"] * 8) is None
    assert _ours(cat, "w", sql)[0] is None


def test_quote_ident_follows_postgres():
    assert [quote_ident(n) for n in ("a_1", "Mixed", "select", "extract", "left", "name", "x$", "1a")] == \
        ["a_1", '"Mixed"', '"select"', '"extract"', '"left"', "name", "x$", '"1a"']


def test_a_column_list_renames_the_outputs(both):
    """CREATE VIEW v (x, y) AS ...: PostgreSQL prints the new names as aliases."""
    cat, pg = both
    sql = "SELECT a, b, a + 1 FROM t"
    stmt = parse(f"CREATE VIEW vc (x, b) AS {sql}")[0].ast
    plan = plan_create_view(stmt, _ctx(cat), sql)
    pg.execute(f"CREATE VIEW vc (x, b) AS {sql}")
    want = pg.execute("SELECT pg_get_viewdef('vc'::regclass, true), pg_get_viewdef('vc'::regclass)").fetchone()
    assert plan.pg_definitions == tuple(want)
    assert " SELECT t.a AS x,\n    t.b,\n    t.a + 1 AS \"?column?\"" in plan.pg_definitions[0]
