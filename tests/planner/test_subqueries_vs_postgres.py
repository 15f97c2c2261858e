"""Subqueries in expressions (scalar, EXISTS, [NOT] IN, ANY/SOME/ALL, ARRAY), uncorrelated and
correlated at any depth, in every clause, decorrelated by `planner.subqueries` and run by the
engine, against PostgreSQL: NULLs on both sides, duplicates, an empty table, the count bug and
error 21000."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE t (id int, a int, s text, f float8)",
       "CREATE TABLE u (k int, v int, w text)",
       "CREATE TABLE e (k int, v int)"]
DATA = ["INSERT INTO t VALUES (1, 1, 'x', 1.5), (2, 2, 'y', NULL), (3, NULL, NULL, 'NaN'), (4, 5, 'x', 2.5), "
        "(5, 1, 'z', 1.5), (5, 1, 'z', 1.5), (6, 7, 'w', -1)",
        "INSERT INTO u VALUES (1, 10, 'a'), (1, 11, 'b'), (2, 20, 'a'), (NULL, 30, NULL), (5, NULL, 'c'), "
        "(2, 20, 'a'), (7, 1, 'x')"]

UNORDERED = [
    # scalar, uncorrelated
    "SELECT (SELECT 1)",
    "SELECT (SELECT max(v) FROM u), (SELECT min(v) FROM e)",
    "SELECT id, (SELECT max(v) FROM u) - a FROM t",
    "SELECT id FROM t WHERE a < (SELECT avg(k) FROM u)",
    "SELECT id, (SELECT v FROM e) FROM t",
    "SELECT (SELECT v FROM u)",
    "SELECT (SELECT v FROM u WHERE k = 2)",
    "SELECT (SELECT v FROM u WHERE k = 7), (SELECT w FROM u WHERE v = 30)",
    "SELECT id, CASE WHEN id > 100 THEN (SELECT v FROM u) ELSE 0 END FROM t",
    "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > (SELECT count(*) FROM e)",
    "SELECT a, count(*) + (SELECT max(k) FROM u) FROM t GROUP BY a",
    "SELECT (SELECT NULL)",
    "SELECT (SELECT 'abc')",
    # EXISTS
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u)",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM e)",
    "SELECT id, NOT EXISTS (SELECT 1 FROM e), EXISTS (SELECT * FROM u WHERE v > 25) FROM t",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a)",
    "SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k = t.a)",
    "SELECT id, EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND u.v > 10) FROM t",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.v > t.id * 5)",
    "SELECT id FROM t WHERE a IS NULL OR EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND u.w = t.s)",
    "SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k = t.a OR t.a IS NULL)",
    # IN / NOT IN
    "SELECT id, a IN (SELECT k FROM u) FROM t",
    "SELECT id, a NOT IN (SELECT k FROM u) FROM t",
    "SELECT id, a NOT IN (SELECT k FROM u WHERE k IS NOT NULL) FROM t",
    "SELECT id, a NOT IN (SELECT k FROM e), a IN (SELECT k FROM e) FROM t",
    "SELECT id FROM t WHERE a NOT IN (SELECT k FROM u WHERE k IS NOT NULL)",
    "SELECT id FROM t WHERE a NOT IN (SELECT k FROM u)",
    "SELECT id FROM t WHERE a IN (SELECT v FROM u WHERE u.k = t.a) OR id = 3",
    "SELECT id, a IN (SELECT v / 10 FROM u WHERE u.w = t.s) FROM t",
    "SELECT id, a NOT IN (SELECT v / 10 FROM u WHERE u.w = t.s) FROM t",
    "SELECT id, f IN (SELECT v FROM u) FROM t",
    "SELECT id, s IN (SELECT w FROM u WHERE u.k < t.id) FROM t",
    "SELECT id FROM t WHERE a IN (SELECT k FROM u WHERE v > 10) AND id IN (SELECT k FROM u)",
    # ANY / SOME / ALL
    "SELECT id, a = ANY (SELECT k FROM u), a <> ALL (SELECT k FROM u) FROM t",
    "SELECT id, a < ANY (SELECT k FROM u), a < ALL (SELECT k FROM u) FROM t",
    "SELECT id, a >= SOME (SELECT k FROM u WHERE k IS NOT NULL), a >= ALL (SELECT k FROM u WHERE k IS NOT NULL) FROM t",
    "SELECT id, a > ALL (SELECT k FROM e), a > ANY (SELECT k FROM e) FROM t",
    "SELECT id, a <> ANY (SELECT k FROM u WHERE u.v < t.id * 10) FROM t",
    "SELECT id, id <= ALL (SELECT v FROM u WHERE u.k = t.a) FROM t",
    "SELECT id FROM t WHERE a = ANY (SELECT k FROM u WHERE u.v >= 20)",
    "SELECT id, s < ALL (SELECT w FROM u) FROM t",
    # ARRAY
    "SELECT id, ARRAY(SELECT v FROM u WHERE u.k = t.a ORDER BY v DESC)::text FROM t",
    "SELECT ARRAY(SELECT k FROM u ORDER BY k NULLS FIRST)::text",
    "SELECT ARRAY(SELECT k FROM e)::text",
    "SELECT id, ARRAY(SELECT w FROM u WHERE u.k = t.a ORDER BY w LIMIT 1)::text FROM t",
    "SELECT id, ARRAY(SELECT v FROM u WHERE u.v > t.id ORDER BY v LIMIT 2 OFFSET 1)::text FROM t",
    "SELECT id, cardinality(ARRAY(SELECT k FROM u WHERE u.k <= t.a)) FROM t",
    # correlated scalar
    "SELECT id, (SELECT max(v) FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT count(*) FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT count(v) FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT count(*) + 1 FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT sum(v) FROM u WHERE u.k = t.a), (SELECT count(*) FROM e WHERE e.k = t.a) FROM t",
    "SELECT id, (SELECT v FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT v FROM u WHERE u.k = t.a) FROM t WHERE id <> 1 AND id <> 5 AND id <> 2",
    "SELECT id, (SELECT v FROM u WHERE u.k = t.a ORDER BY v LIMIT 1) FROM t",
    "SELECT id, (SELECT v FROM u WHERE u.k = t.a ORDER BY v DESC LIMIT 1) FROM t",
    "SELECT id, (SELECT DISTINCT v FROM u WHERE u.k = t.a AND u.k = 2) FROM t",
    "SELECT id, (SELECT max(v) FROM u WHERE u.k < t.a) FROM t",
    "SELECT id, (SELECT max(v) FROM u WHERE u.k = t.a AND u.w <> t.s) FROM t",
    "SELECT id, (SELECT t.a + max(v) FROM u WHERE u.k = t.a) FROM t",
    "SELECT id, (SELECT t.s || w FROM u WHERE u.v = t.id * 10) FROM t",
    "SELECT id, (SELECT count(*) FROM u WHERE u.k = t.a GROUP BY u.k) FROM t",
    "SELECT id, (SELECT max(v) FROM u WHERE u.k = t.a HAVING count(*) > 1) FROM t",
    "SELECT id, (SELECT 1 WHERE t.a > 1) FROM t",
    "SELECT id, (SELECT t.a) FROM t",
    "SELECT id, (SELECT x FROM (SELECT 1 AS x) s WHERE x = t.a) FROM t",
    "SELECT id, (SELECT k FROM u WHERE u.k = t.a UNION SELECT 99 WHERE t.a IS NULL) FROM t",
    "SELECT id, (SELECT count(*) FROM (SELECT k FROM u UNION ALL SELECT k FROM u) x WHERE x.k = t.a) FROM t",
    "SELECT id, (VALUES (t.a + 1)) FROM t",
    "SELECT id FROM t WHERE a = (SELECT min(k) FROM u WHERE u.v > t.id * 5)",
    "SELECT id FROM t WHERE (SELECT count(*) FROM u WHERE u.k = t.a) = 0",
    "SELECT id FROM t WHERE (SELECT count(*) FROM u WHERE u.k = t.a) >= 2",
    "SELECT id, a FROM t ORDER BY (SELECT count(*) FROM u WHERE u.k = t.a), id",
    # correlated in grouped queries and HAVING
    "SELECT a, count(*), (SELECT count(*) FROM u WHERE u.k = t.a) FROM t GROUP BY a",
    "SELECT a, sum(id) FROM t GROUP BY a HAVING sum(id) > (SELECT count(*) FROM u WHERE u.k = t.a)",
    "SELECT a FROM t GROUP BY a HAVING EXISTS (SELECT 1 FROM u WHERE u.k = t.a)",
    "SELECT s, max(a) IN (SELECT k FROM u) FROM t GROUP BY s",
    "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a)",
    "SELECT s, count(*) FROM t WHERE a IN (SELECT k FROM u WHERE u.w = 'a') GROUP BY s",
    # deeper correlation
    "SELECT id, (SELECT count(*) FROM u WHERE EXISTS (SELECT 1 FROM u u2 WHERE u2.v > u.v AND u2.k = t.a)) FROM t",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND EXISTS (SELECT 1 FROM e WHERE e.k = u.k))",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND NOT EXISTS (SELECT 1 FROM u u2 WHERE u2.k = u.k AND u2.v > u.v))",
    "SELECT id, (SELECT (SELECT t.id + u.v) FROM u WHERE u.k = t.a ORDER BY v LIMIT 1) FROM t",
    "SELECT id, (SELECT count(*) FROM u WHERE u.k IN (SELECT a FROM t t2 WHERE t2.id <= t.id)) FROM t",
    # in ON
    "SELECT t.id, u.v FROM t JOIN u ON u.k = t.a AND u.v = (SELECT max(v) FROM u u2 WHERE u2.k = t.a)",
    "SELECT t.id, u.v FROM t LEFT JOIN u ON u.k = t.a AND u.v = (SELECT max(v) FROM u u2 WHERE u2.k = t.a)",
    "SELECT t.id, u.v FROM t LEFT JOIN u ON u.k = t.a AND u.v IN (SELECT v FROM u WHERE w = 'a')",
    "SELECT t.id, u.v FROM t FULL JOIN u ON u.k = t.a AND EXISTS (SELECT 1 FROM e)",
    "SELECT t.id, u.v FROM t RIGHT JOIN u ON u.k = t.a AND u.v > (SELECT min(v) FROM u)",
    # subqueries in FROM subqueries and with outer columns of joins
    "SELECT x.id, x.c FROM (SELECT id, (SELECT count(*) FROM u WHERE u.k = t.a) AS c FROM t) x WHERE x.c > 0",
    "SELECT t.id, t2.id FROM t, t t2 WHERE t2.id = t.id + 1 AND EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND u.k = t2.a)",
    "SELECT t.id FROM t, u WHERE t.a = u.k AND u.v = (SELECT max(v) FROM u u2 WHERE u2.k = t.a)",
    # DISTINCT, UNION with subqueries
    "SELECT DISTINCT (SELECT count(*) FROM u WHERE u.k = t.a) FROM t",
    "SELECT (SELECT max(v) FROM u WHERE u.k = t.a) FROM t UNION SELECT (SELECT 5)",
    # LATERAL
    "SELECT t.id, s.m FROM t, LATERAL (SELECT max(v) AS m FROM u WHERE u.k = t.a) s",
    "SELECT t.id, s.c FROM t, LATERAL (SELECT count(*) AS c FROM u WHERE u.k = t.a) s",
    "SELECT t.id, s.v FROM t CROSS JOIN LATERAL (SELECT v FROM u WHERE u.k = t.a ORDER BY v DESC LIMIT 1) s",
    "SELECT t.id, s.v, s.w FROM t, LATERAL (SELECT v, w FROM u WHERE u.k = t.a) s",
    "SELECT t.id, s.v FROM t LEFT JOIN LATERAL (SELECT v FROM u WHERE u.k = t.a) s ON true",
    "SELECT t.id, s.v FROM t JOIN LATERAL (SELECT v FROM u WHERE u.k = t.a) s ON s.v > 10",
    "SELECT t.id, s.v FROM t LEFT JOIN LATERAL (SELECT v FROM u WHERE u.k = t.a) s ON s.v > 10",
    "SELECT t.id, s.v FROM t LEFT JOIN LATERAL (SELECT v FROM u WHERE u.v < t.id * 5) s ON s.v <> t.a",
    "SELECT * FROM LATERAL (SELECT 1 AS x) s",
    "SELECT t.id, s.x FROM t, LATERAL (SELECT t.a * 2 AS x) s",
    "SELECT t.id, s.x FROM t, LATERAL (SELECT t.a AS x UNION ALL SELECT t.id) s",
    "SELECT t.id, s.x, r.y FROM t, LATERAL (SELECT t.a + 1 AS x) s, LATERAL (SELECT s.x * 10 AS y) r",
    "SELECT t.id, s.v FROM t, LATERAL (SELECT v FROM u WHERE u.k = t.a AND u.v > 10) s WHERE s.v < 20",
    "SELECT t.id, g.n FROM t, LATERAL (SELECT n FROM generate_series(1, t.a) AS n WHERE n > 2) g",
    "SELECT s.a, s.n FROM (SELECT DISTINCT a FROM t) s, LATERAL (SELECT count(*) AS n FROM u WHERE u.k = s.a) l",
    "SELECT s.a, l.n FROM (SELECT DISTINCT a FROM t) s, LATERAL (SELECT count(*) AS n FROM u WHERE u.k = s.a) l",
    "SELECT t.id, x.total FROM t, LATERAL (SELECT sum(v) AS total FROM u WHERE u.k = t.a GROUP BY u.w) x",
    "SELECT t.id FROM t WHERE EXISTS (SELECT 1 FROM LATERAL (SELECT t.a AS z) s WHERE s.z > 1)",
    # window functions inside correlated subqueries (partitioned per outer value) and beside them
    "SELECT t.id, l.v, l.rn FROM t, LATERAL (SELECT v, row_number() OVER (ORDER BY v) AS rn FROM u WHERE u.k = t.a) l",
    "SELECT id, (SELECT sum(v) OVER () FROM u WHERE u.k = t.a ORDER BY v LIMIT 1) FROM t",
    "SELECT id, rank() OVER (ORDER BY a), (SELECT count(*) FROM u WHERE u.k = t.a) FROM t",
    "SELECT a, count(*), sum(count(*)) OVER (), (SELECT max(v) FROM u WHERE u.k = t.a) FROM t GROUP BY a",
]

ERRORS = [
    "SELECT (SELECT 1, 2)",
    "SELECT id FROM t WHERE a IN (SELECT k, v FROM u)",
    "SELECT (SELECT v FROM u)",
    "SELECT id, (SELECT v FROM u WHERE u.k = t.a) FROM t",
    "SELECT id FROM t WHERE (SELECT nope FROM u) = 1",
    "SELECT ARRAY(SELECT 1, 2)",
    "SELECT id FROM t WHERE a = ANY (SELECT w FROM u)",
]

REFUSED = [
    "SELECT (SELECT max(t.a) FROM u) FROM t",
    "SELECT sum((SELECT 1)) FROM t",
    "SELECT id, (SELECT max((SELECT count(*) FROM u u3 WHERE u3.k = u.k AND u3.v < t.id * 4)) FROM u) FROM t",
    "SELECT a FROM t GROUP BY (SELECT 1), a",
    "SELECT id FROM t WHERE (a, id) IN (SELECT k, v FROM u)",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", UNORDERED)
def test_subquery_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", ERRORS)
def test_subquery_error_matches_postgres(sql, db, pg):
    want = pg_answer(pg, sql)
    assert isinstance(want, str)
    assert db.answer(sql) == want


@pytest.mark.parametrize("sql", REFUSED)
def test_unsupported_subquery_is_refused(sql, db):
    assert db.answer(sql) == "0A000"


def test_result_types_match_postgres(db, pg):
    sql = ("SELECT (SELECT 1), (SELECT max(v) FROM u WHERE u.k = t.a), EXISTS (SELECT 1 FROM e), "
           "a IN (SELECT k FROM u), ARRAY(SELECT w FROM u), (SELECT f FROM t t2 LIMIT 1), (SELECT 'x') FROM t")
    want = [d.type_code for d in pg.execute(sql).description]
    assert db.type_oids(sql) == want
