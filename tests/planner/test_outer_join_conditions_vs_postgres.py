"""Outer joins on any ON condition (expression keys, non-equalities, ORs, constants), planned
by `planner.outer_join` and run by the engine, against PostgreSQL, including duplicate rows
(a padded row keeps its own multiplicity) and NULLs and NaN in the compared columns."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer
from tests.planner.test_regressions_vs_postgres import DATA, DDL

QUERIES = [
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON a.i + 1 = b.j",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON a.i = b.j OR a.j = b.i",
    "SELECT a.i, b.i FROM t a RIGHT JOIN t b ON a.i < b.i",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON a.i < b.j AND a.s = b.s",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON a.i = b.j AND a.j < b.i",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON a.f = b.f AND a.i <> b.i",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON a.d = b.i",
    "SELECT a.i, b.bi FROM t a LEFT JOIN t b ON a.i = b.bi",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON false",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON 1 = 2",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON NULL",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON a.s IS NULL",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON b.s IS NULL",
    "SELECT a.i, b.i FROM t a FULL JOIN t b ON coalesce(a.i, 0) = coalesce(b.j, 0)",
    "SELECT a.i, count(b.i) FROM t a LEFT JOIN t b ON a.i > b.i GROUP BY a.i",
    "SELECT * FROM t a LEFT JOIN t b ON a.i = b.j AND a.ts < b.ts",
    "SELECT a.i, b.i FROM t a LEFT JOIN t b ON a.i = b.j AND a.j = b.i",
    "SELECT a.i, b.i, c.i FROM t a LEFT JOIN t b ON a.i < b.i LEFT JOIN t c ON b.i > c.j",
    "SELECT a.i, b.i FROM (SELECT i, j FROM t UNION ALL SELECT i, j FROM t) a LEFT JOIN t b ON a.i < b.j",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_outer_join_condition_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
