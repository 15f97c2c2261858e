"""Equivalence propagation of constants across join keys (planner/rules/join_constants.py): the
filter reaches the other input's scan (plan shape), a shared input is filtered where it is read,
and answers equal PostgreSQL's over joins of every kind, key types, NULLs and duplicates."""

from __future__ import annotations

import pytest

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import Filter, Get, Join, Project
from dataflow.types import BOOL, INT4, INT8, TEXT
from planner import parse, plan_statement
from planner.rules.join_constants import propagate_join_constants
from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE a (x int, y int, s text)", "CREATE TABLE b (x int, z text, n numeric(6,2))",
       "CREATE TABLE c (z text, w int, n numeric(6,2))"]
DATA = ["INSERT INTO a VALUES (5, 1, 'p'), (5, 2, 'q'), (6, 3, 'p'), (NULL, 4, NULL), (7, 5, 'r')",
        "INSERT INTO b VALUES (5, 'q', 1.50), (5, 'p', 2.00), (6, 'q', 1.5), (NULL, 'p', NULL), (8, 'r', 3)",
        "INSERT INTO c VALUES ('q', 5, 1.5), ('p', 6, 2), ('q', 7, NULL), (NULL, 5, 1.50), ('r', 8, 3.00)"]


def _eq(col, value, t):
    return Call("eq", (ColumnRef(col, t), Literal(value, t)), BOOL)


def test_constant_reaches_the_other_inputs_scan():
    a, b = Get("a", (INT4, INT4)), Get("b", (INT4, TEXT))
    plan = Join(Filter(a, (_eq(0, 5, INT4),)), b, (0,), (0,))
    got = propagate_join_constants(plan)
    assert got == Join(Filter(a, (_eq(0, 5, INT4),)), Filter(b, (_eq(0, 5, INT4),)), (0,), (0,))


def test_constant_travels_through_a_chain_of_joins():
    a, b, c = Get("a", (INT4,)), Get("b", (INT4,)), Get("c", (INT4,))
    plan = Join(Join(a, b, (0,), (0,)), Filter(c, (_eq(0, 7, INT4),)), (1,), (0,))
    got = propagate_join_constants(plan)
    assert got.left == Join(Filter(a, (_eq(0, 7, INT4),)), Filter(b, (_eq(0, 7, INT4),)), (0,), (0,))


def test_a_shared_input_is_filtered_where_it_is_read():
    a, b = Get("a", (INT4,)), Get("b", (INT4,))
    shared = Project(b, (0,))
    plan = Join(Join(Filter(a, (_eq(0, 1, INT4),)), shared, (0,), (0,)), shared, (0,), (0,))
    got = propagate_join_constants(plan)
    # the Project read twice is not rewritten below; a filter sits above each read
    assert got.left.right == Filter(shared, (_eq(0, 1, INT4),))
    assert got.right == Filter(shared, (_eq(0, 1, INT4),))


def test_no_fact_from_a_null_or_across_types():
    a = Get("a", (INT4,))
    plan = Join(Filter(a, (_eq(0, None, INT4),)), Get("b", (INT4,)), (0,), (0,))
    assert propagate_join_constants(plan) == plan
    plan = Join(Filter(a, (_eq(0, 5, INT4),)), Get("b", (INT8,)), (0,), (0,))
    assert propagate_join_constants(plan) == plan


QUERIES = [
    "SELECT * FROM a JOIN b ON a.x = b.x WHERE a.x = 5",
    "SELECT * FROM a JOIN b ON a.x = b.x WHERE b.x = 5",
    "SELECT * FROM a, b, c WHERE a.x = b.x AND b.z = c.z AND c.z = 'q'",
    "SELECT * FROM a, b, c WHERE a.x = b.x AND b.x = c.w AND c.w = 5",
    "SELECT * FROM a LEFT JOIN b ON a.x = b.x WHERE a.x = 5",
    "SELECT * FROM a LEFT JOIN b ON a.x = b.x AND b.x = 5",
    "SELECT * FROM a RIGHT JOIN b ON a.x = b.x WHERE b.x = 5",
    "SELECT * FROM a FULL JOIN b ON a.x = b.x WHERE a.x = 5",
    "SELECT * FROM a FULL JOIN b ON a.x = b.x AND a.x = 5",
    "SELECT * FROM b JOIN c ON b.n = c.n WHERE b.n = 1.5",
    "SELECT * FROM b JOIN c ON b.z = c.z WHERE c.z = 'p' AND b.x > 0",
    "SELECT a.x, count(*) FROM a JOIN b USING (x) WHERE x = 5 GROUP BY a.x",
    "SELECT * FROM a WHERE x = 5 AND x IN (SELECT x FROM b)",
    "SELECT * FROM a WHERE x = 5 AND EXISTS (SELECT 1 FROM b WHERE b.x = a.x AND b.z = a.s)",
    "SELECT * FROM a WHERE x = 5 AND NOT EXISTS (SELECT 1 FROM b WHERE b.x = a.x AND b.z = 'r')",
    "SELECT * FROM (SELECT x, count(*) AS k FROM b GROUP BY x) g JOIN a ON g.x = a.x WHERE a.x = 5",
    "SELECT * FROM (SELECT x FROM a UNION ALL SELECT x FROM b) u JOIN c ON u.x = c.w WHERE c.w = 5",
    "SELECT * FROM (SELECT DISTINCT x FROM b) d JOIN a USING (x) WHERE a.x = 6",
    "SELECT * FROM a JOIN b ON a.x = b.x AND a.s = b.z WHERE a.x = 5 AND b.z = 'p'",
    "SELECT * FROM a JOIN b ON a.x = b.x WHERE a.x = 5 AND b.x = 6",
    "SELECT * FROM a JOIN b ON a.x = b.x WHERE a.x = NULL",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


def test_filter_is_in_the_planned_statement(db):
    plan = plan_statement(db.catalog, parse("SELECT * FROM a JOIN b ON a.x = b.x WHERE a.x = 5")[0]).plan
    joins = [plan] if isinstance(plan, Join) else []
    assert joins and isinstance(joins[0].right, Filter), plan
