"""Factoring shared conditions out of ORs: exact under three-valued logic (checked on every
TRUE/FALSE/NULL assignment), and it turns TPC-H Q19's shape into an equi-join."""

from __future__ import annotations

import itertools

import psycopg
import pytest

from dataflow.expr import Call, ColumnRef
from dataflow.plan import Join
from dataflow.types import BOOL
from planner import parse, plan_statement
from planner.rules.factor_disjunctions import factor_disjunction
from tests.planner.engine_oracle import EngineDb, pg_answer

A, B, C = (ColumnRef(i, BOOL) for i in range(3))


def _and(*xs):
    return Call("and", xs, BOOL)


def _or(*xs):
    return Call("or", xs, BOOL)


def _eval(e, env):
    if isinstance(e, ColumnRef):
        return env[e.index]
    vals = [_eval(a, env) for a in e.args]
    if e.func == "and":
        return False if False in vals else (None if None in vals else True)
    return True if True in vals else (None if None in vals else False)


@pytest.mark.parametrize("pred", [
    _or(_and(A, B), _and(A, C)),
    _or(_and(A, B), A),
    _or(_and(A, B, C), _and(C, A), _and(B, A, C)),
    _or(_and(A, B), _and(B, C)),
    _or(A, B),
])
def test_factoring_is_exact_in_three_valued_logic(pred):
    factored = factor_disjunction(pred)
    for env in itertools.product((True, False, None), repeat=3):
        got = _eval(_and(*factored), env) if len(factored) > 1 else _eval(factored[0], env)
        assert got == _eval(pred, env), (env, factored)


DDL = ["CREATE TABLE lineitem (l_partkey int, l_quantity int, l_shipmode text)",
       "CREATE TABLE part (p_partkey int, p_brand text, p_size int)"]
DATA = ["INSERT INTO lineitem VALUES (1, 5, 'AIR'), (1, 25, 'AIR'), (2, 15, 'MAIL'), (3, 1, 'AIR'), "
        "(NULL, 1, 'AIR'), (2, NULL, 'AIR')",
        "INSERT INTO part VALUES (1, 'b12', 3), (2, 'b23', 10), (3, 'b34', NULL), (NULL, 'b12', 1)"]
Q19 = ("SELECT l_partkey, l_quantity, p_brand FROM lineitem, part WHERE "
       "(p_partkey = l_partkey AND p_brand = 'b12' AND l_quantity < 10 AND l_shipmode = 'AIR') OR "
       "(l_partkey = p_partkey AND p_brand = 'b23' AND l_quantity BETWEEN 10 AND 20) OR "
       "(p_partkey = l_partkey AND p_brand = 'b34' AND p_size IS NULL)")


def test_q19_shape_is_an_equi_join():
    db = EngineDb(DDL, [])
    plan = plan_statement(db.catalog, parse(Q19)[0]).plan
    joins = []

    def walk(p):
        if isinstance(p, Join):
            joins.append(p)
        for v in vars(p).values():
            if hasattr(v, "__dataclass_fields__") and not isinstance(v, (Call, ColumnRef)):
                walk(v)
    walk(plan)
    assert joins and all(j.left_key for j in joins), plan


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS lineitem, part CASCADE")
        for s in DDL + DATA:
            conn.execute(s)
        yield conn


@pytest.mark.parametrize("sql", [
    Q19,
    "SELECT * FROM lineitem, part WHERE (p_partkey = l_partkey) OR (p_partkey = l_partkey AND p_size > 5)",
    "SELECT * FROM lineitem LEFT JOIN part ON (p_partkey = l_partkey AND p_size > 2) OR (l_partkey = p_partkey AND p_size < 2)",
    "SELECT * FROM lineitem, part WHERE (p_partkey = l_partkey AND p_size IS NULL) OR (p_partkey = l_partkey AND l_quantity IS NULL)",
])
def test_factored_queries_match_postgres(sql, pg):
    assert EngineDb(DDL, DATA).answer(sql) == pg_answer(pg, sql)
