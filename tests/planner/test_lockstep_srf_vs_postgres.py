"""unnest(a) and generate_subscripts(b, dim) side by side in one select list (PostgreSQL runs them
in lockstep), when the dimension is not the literal 1: SQLAlchemy's primary-key reflection binds
it (`generate_subscripts(pg_index.indkey, $1::INTEGER)`, found by the client matrix). A
one-dimensional array has subscripts in dimension 1 only."""

from __future__ import annotations

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb, pg_answer

DDL = ["CREATE TABLE ls (k int, a int[], b text[])"]
DATA = ["INSERT INTO ls VALUES (1, '{10,20,30}', '{x,y}'), (2, '{}', '{z}'), (3, NULL, '{p,q,r,s}'), (4, '{5}', NULL)"]
QUERIES = [
    "SELECT k, unnest(a), generate_subscripts(a, 0 + 1) FROM ls",
    "SELECT k, unnest(a), generate_subscripts(b, 1::int) FROM ls",
    "SELECT k, unnest(a), generate_subscripts(b, 2) FROM ls",
    "SELECT k, unnest(b), generate_subscripts(a, 3 - 1), generate_subscripts(b, CAST('1' AS integer)) FROM ls",
    "SELECT k, generate_subscripts(a, 2), generate_subscripts(b, 0) FROM ls",
]


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS ls CASCADE")
        for s in DDL + DATA:
            conn.execute(s)
        yield conn


@pytest.mark.parametrize("sql", QUERIES)
def test_lockstep_with_a_computed_dimension(sql, pg):
    assert EngineDb(DDL, DATA).answer(sql) == pg_answer(pg, sql)
