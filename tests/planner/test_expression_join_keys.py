"""Joins on equalities of expressions (`a.c::text = b.c`, character(n) with varchar, int with
bigint, `a.y = b.z + 1`): each side's expression is computed on its own input and joined on,
never a filtered cross product; answers equal PostgreSQL's, NULLs and padding included."""

from __future__ import annotations

import pytest

from planner import parse, plan_statement
from tests.planner.engine_oracle import joins_in, oracle_fixtures, pg_answer

DDL = ["CREATE TABLE ca (c char(3), y int, j jsonb, iv interval)",
       "CREATE TABLE vb (c varchar, z bigint, j jsonb, iv interval)",
       "CREATE TABLE cd (c char(5), w int)"]
DATA = ["INSERT INTO ca VALUES ('a', 1, '{\"k\": 1}', '1 day'), ('ab ', 2, '[1, 2]', '24 hours'), "
        "(NULL, 3, NULL, NULL), ('x', NULL, '1.0', '1 mon'), ('ab', 5, '{\"k\": 1.0}', '30 days')",
        "INSERT INTO vb VALUES ('a', 0, '{\"k\": 1.00}', '1 day'), ('ab', 1, '1', '1 mon'), ('ab ', 4, NULL, NULL), "
        "(NULL, 2, '[1,2]', '720 hours'), ('x  ', NULL, '\"x\"', '0')",
        "INSERT INTO cd VALUES ('a', 1), ('ab', 2), ('abc', 3), (NULL, 4), ('x', 5)"]

QUERIES = [
    "SELECT c, y, z FROM ca JOIN vb USING (c)",
    "SELECT ca.c, vb.c, y, z FROM ca JOIN vb ON ca.c = vb.c",
    "SELECT ca.c, vb.c FROM ca JOIN vb ON ca.c::text = vb.c",
    "SELECT c, y, w FROM ca JOIN cd USING (c)",
    "SELECT ca.y, vb.z FROM ca JOIN vb ON ca.y = vb.z",
    "SELECT ca.y, vb.z FROM ca JOIN vb ON ca.y = vb.z + 1",
    "SELECT ca.y, vb.z FROM ca, vb WHERE vb.z * 2 = ca.y + 1",
    "SELECT ca.y, vb.z FROM ca JOIN vb ON ca.j -> 'k' = vb.j -> 'k'",
    "SELECT ca.y, vb.z FROM ca JOIN vb ON ca.iv * 2 = vb.iv * 2",
    "SELECT ca.y, vb.z, cd.w FROM ca JOIN vb ON upper(ca.c) = upper(vb.c) JOIN cd ON cd.w = vb.z + 1",
    "SELECT ca.y, vb.z FROM ca JOIN vb ON ca.y = vb.z + 1 AND ca.c = vb.c",
    "SELECT count(*) FROM ca JOIN vb ON ca.y::bigint = vb.z",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", QUERIES[:7] + QUERIES[8:10])
def test_no_cross_product(sql, db):
    plan = plan_statement(db.catalog, parse(sql)[0]).plan
    joins = joins_in(plan)
    assert joins and all(j.left_key for j in joins), plan
