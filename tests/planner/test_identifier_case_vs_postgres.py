"""Identifier case against PostgreSQL: unquoted names fold to lower case, quoted ones keep
theirs, for tables, columns, aliases, qualifiers and CTE/VALUES column lists; output column
names follow the same rule. (pgJDBC's getPrimaryKeys orders by `result.table_name` over a
column it selected as `TABLE_NAME`.)"""

from __future__ import annotations

import pytest

from planner import parse, plan_statement
from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ['CREATE TABLE Case_T (A int, "B" int, "c D" text)']
DATA = ["INSERT INTO CASE_T VALUES (1, 2, 'x'), (3, 4, 'y')"]

QUERIES = [
    'SELECT a, "B" FROM case_t',
    'SELECT CASE_T.A, X."B" FROM Case_T x, case_t WHERE Case_T.a = X.A',
    'SELECT "c D" FROM CASE_T',
    "SELECT s.X FROM (SELECT 1 AS X) s ORDER BY s.x",
    "SELECT FOO FROM (SELECT a AS Foo FROM case_t) S WHERE s.foo = 1",
    'SELECT "Bar" FROM (SELECT 2 AS "Bar") s',
    'SELECT bar FROM (SELECT 2 AS "Bar") s',
    "SELECT b FROM case_t",
    'SELECT "a" FROM "Case_T"',
    "SELECT Q.k FROM (VALUES (5)) AS q(K)",
    "SELECT w.v FROM (SELECT 7) AS W(V)",
    "WITH W(V) AS (SELECT 7) SELECT w.v FROM W",
    "SELECT count(*) FROM case_t GROUP BY A ORDER BY A",
    "SELECT R.TABLE_NAME FROM (SELECT 'x' AS TABLE_NAME, 1 AS KEY_SEQ) r ORDER BY r.table_name, R.key_seq",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_identifier_case_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


def test_output_column_names_fold_as_in_postgres(db, pg):
    sql = 'SELECT A, "B", a AS Total, 1 AS "Mixed" FROM Case_T'
    cur = pg.execute(sql)
    planned = plan_statement(db.catalog, parse(sql)[0])
    assert [c.name for c in planned.columns] == [d.name for d in cur.description]
