"""Kept plans of prepared point reads (server/adapter/plan_cache.py): a kept plan with values
bound is exactly the plan the planner makes from those values, and statements whose plan
depends on a parameter's value in any other way are not kept."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings, strategies as st

from dataflow.types import INT2, INT4, INT8, TEXT, UUID, VARCHAR, SqlType, TypeKind
from planner import parse, plan_statement
from planner.context import SessionInfo
from server.adapter.plan_cache import PreparedPlans, binds_only_columns, plan_key
from tests.planner.planner_catalog import MemoryCatalog


@pytest.fixture(scope="module")
def catalog() -> MemoryCatalog:
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE t (a int, b text, c bigint, d smallint, e varchar(20), u uuid)")
    cat.execute("CREATE MATERIALIZED VIEW v AS SELECT a, b, count(*) AS n, sum(c) AS s FROM t GROUP BY a, b")
    return cat


def _plan(catalog, sql, types, values, info=None, reads=None):
    return plan_statement(catalog, parse(sql)[0], params=values, param_types=types,
                          session=info or SessionInfo(), reads=reads)


def _kept(catalog, sql, types, values, plans: PreparedPlans | None = None) -> tuple[PreparedPlans, tuple]:
    """A session's plans after executing `sql` once with `values`."""
    info = SessionInfo()
    stmt = parse(sql)[0]
    reads: list[str] = []
    plan = _plan(catalog, sql, types, values, info, reads)
    plans = plans if plans is not None else PreparedPlans()
    key = plan_key(sql, types, 1, info)
    plans.learn(key, values, plan if binds_only_columns(stmt.ast, len(values)) else None, reads, info,
                lambda v, at, again: _plan(catalog, sql, types, v, at, again))
    return plans, key


INT4S = st.integers(-2**31, 2**31 - 1)
TEXTS = st.text(max_size=12)
INT8_ARRAY = SqlType(TypeKind.ARRAY, element=INT8)
KEY_LISTS = st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=8)
KEY_TEXTS = KEY_LISTS.map(lambda keys: "{" + ",".join(map(str, keys)) + "}")  # (as a parameter arrives)

KEPT = [
    ("SELECT n FROM v WHERE a = $1", [INT4], [INT4S]),
    ("SELECT n, s FROM v WHERE a = $1 AND $2 = b", [INT4, TEXT], [INT4S, TEXTS]),
    ("SELECT b, n FROM v WHERE (a = $1 AND b = $2) ORDER BY n DESC LIMIT 3", [INT4, TEXT], [INT4S, TEXTS]),
    ("SELECT a FROM t WHERE c = $1 AND d = $2 AND e = $3", [INT8, INT2, VARCHAR],
     [st.integers(-2**63, 2**63 - 1), st.integers(-2**15, 2**15 - 1), TEXTS]),
    ("SELECT a FROM t WHERE u = $1", [UUID], [st.uuids()]),
    ("SELECT v.n FROM v JOIN t ON t.a = v.a WHERE v.a = $1 AND t.b = $2", [INT4, TEXT], [INT4S, TEXTS]),
    ("SELECT n FROM v WHERE a = $1 AND a = $2", [INT4, INT4], [INT4S, INT4S]),
    ("SELECT n FROM v WHERE a = $1 AND a = 5", [INT4], [INT4S]),
    ("SELECT n FROM (SELECT * FROM v WHERE n > 1) x WHERE a = $1", [INT4], [INT4S]),
    # A DELETE of a list of keys (a writer's prepared batch delete), and of one key.
    ("DELETE FROM t WHERE c = ANY($1::bigint[])", [INT8_ARRAY], [KEY_TEXTS]),
    ("DELETE FROM t WHERE c = ANY($1)", [INT8_ARRAY], [KEY_TEXTS]),
    ("DELETE FROM t WHERE a = $1 AND c = ANY($2::bigint[])", [INT4, INT8_ARRAY], [INT4S, KEY_TEXTS]),
    ("SELECT a FROM t WHERE c = ANY($1::bigint[])", [INT8_ARRAY], [KEY_TEXTS]),
]


@pytest.mark.parametrize("sql,types,strategies", KEPT, ids=[k[0] for k in KEPT])
def test_bound_plan_is_the_planners(catalog, sql, types, strategies):
    @settings(max_examples=40, deadline=None)
    @given(st.tuples(*strategies), st.tuples(*strategies))
    def check(first, later):
        plans, key = _kept(catalog, sql, types, list(first))
        bound = plans.bind(key, list(later))
        assert bound is not None, "a point read's plan is kept"
        plan, reads = bound
        again: list[str] = []
        assert plan == _plan(catalog, sql, types, list(later), reads=again)
        assert reads == again
    check()


NOT_KEPT = [
    ("SELECT n FROM v WHERE a = $1 + 1", [INT4], [7]),  # folded into another constant
    ("SELECT n FROM v WHERE a > $1", [INT4], [7]),  # not an equality
    ("SELECT n, $1::int FROM v WHERE a = 1", [INT4], [7]),  # in the select list
    ("SELECT n FROM v WHERE a = $1 OR b = 'x'", [INT4], [7]),  # not a conjunct
    ("SELECT n FROM v WHERE a IN (SELECT a FROM t WHERE c = $1)", [INT8], [7]),  # in a subquery
    ("SELECT n, now() FROM v WHERE a = $1", [INT4], [7]),  # reads the clock
    ("SELECT n, pg_backend_pid() FROM v WHERE a = $1", [INT4], [7]),  # the session's (plans are shared)
    ("SELECT n FROM v WHERE b = $1 AND b LIKE 'x%'", [TEXT], ["xy"]),
    ("SELECT a FROM (VALUES (1), (2)) x (a) WHERE a = $1", [INT4], [1]),  # a constant relation
    ("DELETE FROM t WHERE c > ANY($1::bigint[])", [INT8_ARRAY], ["{7}"]),  # not an equality
    ("DELETE FROM t WHERE c = ANY($1::bigint[]) OR a = 1", [INT8_ARRAY], ["{7}"]),  # not a conjunct
    ("DELETE FROM t WHERE c = ANY($1::bigint[])", [INT8_ARRAY], [[7]]),  # a list of values: not the wire's form
    ("UPDATE t SET a = 1 WHERE c = $1", [INT8], [7]),  # (not a read or a delete)
]


@pytest.mark.parametrize("sql,types,values", NOT_KEPT, ids=[k[0] for k in NOT_KEPT])
def test_value_dependent_plans_are_not_kept(catalog, sql, types, values):
    plans, key = _kept(catalog, sql, types, values)
    if types == [INT8_ARRAY]:
        assert plans.knows(key) and plans.bind(key, ["{8}"]) is None and plans.bind(key, [[8]]) is None
        return
    if "LIKE" in sql:  # kept: LIKE's pattern is a constant of the text, not the parameter
        assert plans.bind(key, ["zz"])[0] == _plan(catalog, sql, types, ["zz"])
        return
    assert plans.knows(key) and plans.bind(key, [8]) is None


def test_null_and_other_values_are_planned_as_usual(catalog):
    plans, key = _kept(catalog, "SELECT n FROM v WHERE a = $1", [INT4], [7])
    assert plans.bind(key, [None]) is None  # `a = NULL` folds to false
    assert plans.bind(key, [True]) is None  # not an int4 value
    assert plans.bind(key, [3]) is not None
    plans, key = _kept(catalog, "SELECT n FROM v WHERE a = $1", [INT4], [None])
    assert plans.knows(key) and plans.bind(key, [3]) is None


def test_key_lists_are_kept_only_for_non_null_integers(catalog):
    sql = "DELETE FROM t WHERE c = ANY($1::bigint[])"
    plans, key = _kept(catalog, sql, [INT8_ARRAY], ["{1,2,3}"])
    assert plans.bind(key, ["{5,-3}"])[0] == _plan(catalog, sql, [INT8_ARRAY], ["{5,-3}"])
    assert plans.bind(key, ["{5}"])[0] == _plan(catalog, sql, [INT8_ARRAY], ["{5}"])
    # Not a canonical list of keys (an empty one may fold to false; NULL, spaces, a leading
    # zero), or the planner's other form of an array (Python values): planned as usual.
    for value in ("{}", "{1,NULL}", "{01}", "{1, 2}", "{-0}", None, [5]):
        assert plans.bind(key, [value]) is None, value
    plans, key = _kept(catalog, sql, [INT8_ARRAY], ["{}"])
    assert plans.knows(key) and plans.bind(key, ["{5}"]) is None


def test_capacity_keeps_the_most_recently_used(catalog):
    plans = PreparedPlans(capacity=2)
    keys = [_kept(catalog, f"SELECT n FROM v WHERE a = $1 AND s = {i}", [INT4], [1], plans)[1]
            for i in range(3)]
    assert not plans.knows(keys[0]) and plans.knows(keys[1]) and plans.knows(keys[2])
    assert plans.bind(keys[1], [uuid.uuid4().int % 100]) is not None


WITHOUT_PARAMETERS_KEPT = [
    "SELECT * FROM v",  # a whole view (a closed-loop reader's `SELECT * FROM v1`)
    "SELECT n FROM v WHERE a = 5 ORDER BY n LIMIT 3",
    "SELECT t.a, v.n FROM t JOIN v ON t.a = v.a WHERE t.c > 10",
    "SELECT a, n, mz_now() FROM v",  # (evaluated when the read runs, not when it is planned)
    "DELETE FROM t WHERE c = 7",
]
WITHOUT_PARAMETERS_NOT_KEPT = [
    "SELECT n, now() FROM v",  # reads the clock
    "SELECT n, pg_backend_pid() FROM v",  # the session's (plans are shared)
    "SELECT 1",  # a constant relation
    "SELECT * FROM (VALUES (1), (2)) x (a)",
    "UPDATE t SET a = 1",  # (not a read or a delete)
]


@pytest.mark.parametrize("sql", WITHOUT_PARAMETERS_KEPT)
def test_statements_without_parameters_keep_their_plan(catalog, sql):
    plans, key = _kept(catalog, sql, [], [])
    bound = plans.bind(key, [])
    assert bound is not None
    again: list[str] = []
    assert bound[0] == _plan(catalog, sql, [], [], reads=again) and bound[1] == again


@pytest.mark.parametrize("sql", WITHOUT_PARAMETERS_NOT_KEPT)
def test_statements_without_parameters_that_vary_are_not_kept(catalog, sql):
    plans, key = _kept(catalog, sql, [], [])
    assert plans.knows(key) and plans.bind(key, []) is None
