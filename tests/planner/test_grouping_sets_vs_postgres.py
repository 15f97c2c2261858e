"""GROUPING SETS / ROLLUP / CUBE / GROUPING(), SELECT DISTINCT ON and the query clauses of issue
10 (ORDER BY forms, LIMIT/OFFSET expressions, VALUES, TABLE, NATURAL and USING joins, set
operations) checked in-process against PostgreSQL: values, result types, and errors (SQLSTATE
and message). DISTINCT ON queries order by a unique column last, so PostgreSQL's choice is
determined."""

from __future__ import annotations

import psycopg
import pytest

from dataflow.errors import SqlError
from tests.planner.engine_oracle import oracle_fixtures, pg_answer, pg_type_oids

DDL = ["CREATE TABLE t (id int, a int, b int, c text, x int, f float8, n numeric(8,2))",
       "CREATE TABLE e (a int, b int, x int)",
       "CREATE TABLE u (a int, c text, y bigint)"]
DATA = ["INSERT INTO t VALUES (1, 1, 1, 'p', 10, 1.5, 1.25), (2, 1, 2, 'q', 20, 2.5, 2.50), "
        "(3, 2, NULL, 'p', 30, NULL, NULL), (4, 2, NULL, NULL, NULL, 0.5, 3.00), "
        "(5, NULL, 1, 'q', 5, -1, -1.00), (6, 1, 1, 'p', 10, 1.5, 1.25), (7, 3, 3, 'r', -4, 'NaN', 0)",
        "INSERT INTO u VALUES (1, 'p', 100), (2, 'z', 200), (4, 'q', 400), (NULL, 'p', NULL)"]

QUERIES = [
    # grouping sets
    "SELECT a, b, sum(x) FROM t GROUP BY ROLLUP(a, b)",
    "SELECT a, b, sum(x), grouping(a, b), grouping(b), grouping(a) FROM t GROUP BY CUBE(a, b)",
    "SELECT a, c, count(*) FROM t GROUP BY GROUPING SETS ((a), (c), ())",
    "SELECT a, b, c, count(*) FROM t GROUP BY a, ROLLUP(b, c)",
    "SELECT a, b, c, sum(x) FROM t GROUP BY CUBE(a, (b, c))",
    "SELECT a, b, c, count(*), grouping(c, b, a) FROM t GROUP BY GROUPING SETS (a, GROUPING SETS (b, GROUPING SETS (c, ())))",
    "SELECT count(*) FROM e GROUP BY ()",
    "SELECT a, count(*), sum(x) FROM e GROUP BY ROLLUP(a)",
    "SELECT a, count(*) FROM e GROUP BY GROUPING SETS ((), (), a)",
    "SELECT a, b, count(*) FROM e GROUP BY CUBE(a, b)",
    "SELECT a, count(*) FROM t GROUP BY DISTINCT ROLLUP(a), ROLLUP(a)",
    "SELECT a, count(*) FROM t GROUP BY ROLLUP(a), ROLLUP(a)",
    "SELECT a, b, sum(x) FROM t GROUP BY (a, b)",
    "SELECT a, b, sum(x) FROM t GROUP BY ROLLUP((a, b))",
    "SELECT a + 0, grouping(a + 0) FROM t GROUP BY ROLLUP(a + 0)",
    "SELECT a, b, count(DISTINCT c), sum(x) FILTER (WHERE f > 0), avg(n), max(f) FROM t GROUP BY CUBE(a, b)",
    "SELECT a, grouping(a), count(*) FROM t GROUP BY a",
    "SELECT 1 FROM t GROUP BY ROLLUP(a)",
    "SELECT a, b, min(c), max(n), avg(f) FROM t GROUP BY GROUPING SETS (ROLLUP(a), CUBE(b), (a, b))",
    "SELECT c, string_agg(c, ',' ORDER BY c) FROM t GROUP BY ROLLUP(c)",
    "SELECT a, b, sum(x) FROM t GROUP BY ROLLUP(a, b) HAVING sum(x) > 15",
    "SELECT coalesce(c, 'all'), sum(x) FROM t GROUP BY ROLLUP(c)",
    "SELECT a, sum(x), rank() OVER (ORDER BY sum(x)) FROM t GROUP BY ROLLUP(a)",
    "SELECT a, (SELECT count(*) FROM t t2 WHERE t2.a = t.a) FROM t GROUP BY ROLLUP(a)",
    # DISTINCT ON
    "SELECT DISTINCT ON (a) a, id, x FROM t ORDER BY a, x DESC, id",
    "SELECT DISTINCT ON (a, b) a, b, id FROM t ORDER BY b, a, id DESC",
    "SELECT DISTINCT ON (1) a, id FROM t ORDER BY 1, id",
    "SELECT DISTINCT ON (k) a AS k, id FROM t ORDER BY k DESC, id",
    "SELECT DISTINCT ON (a + 1) a, id FROM t ORDER BY a + 1, x NULLS FIRST, id",
    "SELECT DISTINCT ON (c) id FROM t ORDER BY c, n DESC, id",
    "SELECT DISTINCT ON (f) f, id FROM t ORDER BY f, id",
    "SELECT DISTINCT ON (a) a FROM t",
    "SELECT DISTINCT ON (a) a, sum(x) FROM t GROUP BY a, b ORDER BY a, sum(x) DESC NULLS LAST, b",
    "SELECT a, (SELECT DISTINCT ON (t2.a) t2.id FROM t t2 WHERE t2.a = t.a ORDER BY t2.a, t2.x DESC, t2.id) FROM t",
    # query clauses
    "VALUES (1, 'a'), (2, NULL)",
    "VALUES (1), (2.5), (NULL)",
    "SELECT * FROM (VALUES (1, 'a'), (2, NULL)) AS v(k)",
    "TABLE u",
    "SELECT * FROM t NATURAL JOIN u",
    "SELECT * FROM t NATURAL LEFT JOIN u",
    "SELECT * FROM t NATURAL RIGHT JOIN u",
    "SELECT * FROM t NATURAL FULL JOIN u",
    "SELECT a, t.a, u.a, c FROM t FULL JOIN u USING (a, c)",
    "SELECT * FROM t LEFT JOIN u USING (a)",
    "SELECT * FROM e NATURAL FULL JOIN u",
    "SELECT a FROM t UNION SELECT y FROM u",
    "SELECT n FROM t UNION SELECT 1.5::float8",
    # grouping sets in correlated subqueries: every set also grouped by the outer values; a set
    # of no key has its row for every outer value, matched or not
    "SELECT u.a, (SELECT array_agg(n ORDER BY n)::text FROM (SELECT count(*) AS n FROM t WHERE t.a <= u.a "
    "GROUP BY ROLLUP (b)) s) FROM u",
    "SELECT u.a, (SELECT array_agg(n ORDER BY n)::text FROM (SELECT sum(x) AS n FROM t WHERE t.a = u.a "
    "GROUP BY GROUPING SETS ((), ())) s) FROM u",
    "SELECT u.a, EXISTS (SELECT 1 FROM t WHERE t.a > u.a GROUP BY GROUPING SETS ((b), ())) FROM u",
    "SELECT u.a, (SELECT count(*) FROM (SELECT b, grouping(b) AS g, count(*) FROM t WHERE t.a > u.a "
    "GROUP BY CUBE (b)) s) FROM u",
    "SELECT u.a, x.* FROM u, LATERAL (SELECT b, grouping(b), sum(t.x + u.y) FROM t GROUP BY ROLLUP (b)) x",
    "SELECT u.a, x.* FROM u, LATERAL (SELECT t.c, count(*) FROM t WHERE t.c = u.c GROUP BY ROLLUP (t.c)) x",
    "SELECT a FROM u WHERE y IN (SELECT count(*) + u.a FROM t GROUP BY ROLLUP (a, b))",
    "SELECT u.a FROM u WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.a = u.a GROUP BY CUBE (b, c) HAVING count(*) > 2)",
]
ORDERED = [
    "SELECT a, b, count(*) FROM t GROUP BY ROLLUP(a, b) ORDER BY grouping(a, b), a NULLS FIRST, b NULLS FIRST",
    "SELECT DISTINCT ON (a) a, id FROM t ORDER BY a DESC, id LIMIT 2",
    "SELECT a, x FROM t ORDER BY 2 DESC NULLS LAST, 1, id",
    "SELECT a AS z, x FROM t ORDER BY -x, id",
    "SELECT a FROM t UNION SELECT y FROM u ORDER BY 1 DESC",
    "(SELECT a, x FROM t) ORDER BY x + a DESC NULLS LAST, a",
    "SELECT id FROM t ORDER BY id LIMIT 1 + 1 OFFSET 2 * 1",
    "SELECT id FROM t ORDER BY id LIMIT 1.5",
    "SELECT id FROM t ORDER BY id LIMIT '2'",
    "SELECT id FROM t ORDER BY id OFFSET 2 ROWS FETCH FIRST 2 ROWS ONLY",
    "SELECT id FROM t ORDER BY id FETCH FIRST ROW ONLY",
    "VALUES (1, 'a'), (2, 'b') ORDER BY 1 DESC LIMIT 1",
]
ERRORS = [
    "SELECT grouping(a) FROM t",
    "SELECT a FROM t WHERE grouping(a) = 0 GROUP BY ROLLUP(a)",
    "SELECT a, grouping(b) FROM t GROUP BY ROLLUP(a)",
    "SELECT a, sum(grouping(a)) FROM t GROUP BY ROLLUP(a)",
    "SELECT a, b FROM t GROUP BY ROLLUP(a)",
    "SELECT DISTINCT ON (a, b) a, b FROM t ORDER BY a, x",
    "SELECT DISTINCT ON (a) a, b FROM t ORDER BY b",
    "SELECT id FROM t LIMIT -1",
    "SELECT id FROM t OFFSET -1",
    "SELECT id FROM t LIMIT true",
    "SELECT a FROM t UNION SELECT b FROM t ORDER BY a + 1",
    "SELECT a FROM t UNION SELECT b FROM t ORDER BY b",
    "SELECT * FROM t NATURAL CROSS JOIN u",
    "SELECT * FROM (VALUES (1, 'a')) v(a, b, c)",
    "((SELECT a FROM t ORDER BY a LIMIT 3)) ORDER BY a",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
    assert db.type_oids(sql) == pg_type_oids(pg, sql)


@pytest.mark.parametrize("sql", ORDERED)
def test_ordered_matches_postgres(sql, db, pg):
    assert db.answer(sql, ordered=True) == pg_answer(pg, sql, ordered=True)


@pytest.mark.parametrize("sql", ERRORS)
def test_errors_match_postgres(sql, db, pg):
    with pytest.raises(SqlError) as ours:
        db.rows(sql)
    with pytest.raises(psycopg.Error) as theirs:
        pg.execute(sql)
    assert (ours.value.sqlstate, ours.value.message) == (theirs.value.sqlstate, theirs.value.diag.message_primary)


def test_distinct_on_without_order_by_is_deterministic(db):
    """PostgreSQL leaves the row open; here it is the smallest row (ascending, NULLs last)."""
    assert db.rows("SELECT DISTINCT ON (a) a, id FROM t WHERE a = 1") == [(1, 1)]
    assert db.rows("SELECT DISTINCT ON (a) a, c, x FROM t WHERE a = 2") == [(2, "p", 30)]


def test_fetch_with_ties_after_offset_keeps_the_ties_of_the_last_row(db):
    # Rows past the offset whose rank is within offset + n (compared with PostgreSQL in
    # tests/planner/test_regressions_vs_postgres.py); here: how many, whatever the tie order.
    everything = sorted(db.rows("SELECT a FROM t ORDER BY a"), key=lambda r: (r[0] is None, r[0]))
    got = db.rows("SELECT a FROM t ORDER BY a OFFSET 1 FETCH FIRST 1 ROWS WITH TIES")
    last = everything[1][0]
    assert len(got) == 1 + sum(1 for (a,) in everything[2:] if a == last)
