"""Property test: views with correlated subqueries (planner/subqueries.py), kept up to date
under random inserts and deletes on both the outer and the inner table, equal at every time
the same plan computed from scratch over the inputs as they are at that time. With 1 and 3
workers. (Agreement with PostgreSQL's answers: tests/planner/test_subqueries_vs_postgres.py and
tests/e2e/test_subquery_views.py.)

This checks what decorrelation adds to incremental maintenance: the distinct outer values (D)
appearing and disappearing, per-key default rows of global aggregates (the count bug), the
NULL-safe left joins back, and the counts behind NOT IN's NULL semantics all retract exactly.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import parse, plan_statement
from tests.dataflow.df_reference import AS_OF, _accumulate, draw_stream, run_dataflow
from tests.planner.planner_catalog import MemoryCatalog

# Each example recomputes the plan from scratch at every time: a few examples per query and
# worker count (DF_EXAMPLES=50 for a longer run).
SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "6")), deadline=None,
                    suppress_health_check=list(HealthCheck))

QUERIES = {
    "scalar_count_max": "SELECT t.id, (SELECT count(*) FROM u WHERE u.k = t.a), "
                        "(SELECT max(v) FROM u WHERE u.k = t.a) FROM t",
    "exists_not_in": "SELECT t.id, t.a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a) "
                     "OR t.a NOT IN (SELECT v FROM u WHERE u.k = t.id)",
    "all_array": "SELECT t.id, t.a < ALL (SELECT v FROM u WHERE u.k <> t.a), "
                 "ARRAY(SELECT v FROM u WHERE u.k = t.a ORDER BY v)::text FROM t",
    "having": "SELECT t.a, count(*) FROM t GROUP BY t.a "
              "HAVING count(*) > (SELECT count(*) FROM u WHERE u.k = t.a)",
    "lateral_topk": "SELECT t.id, l.v FROM t, LATERAL (SELECT v FROM u WHERE u.k = t.a ORDER BY v LIMIT 1) l",
    "left_lateral": "SELECT t.id, l.v FROM t LEFT JOIN LATERAL (SELECT v FROM u WHERE u.k = t.a) l ON l.v > t.id",
    "nested": "SELECT t.id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.a AND "
              "NOT EXISTS (SELECT 1 FROM u u2 WHERE u2.k = u.v AND u2.v = t.id))",
    "uncorrelated_scalar": "SELECT t.id, t.a = (SELECT min(v) FROM u), t.a IN (SELECT k FROM u) FROM t",
}

small = st.one_of(st.none(), st.integers(0, 3))
t_rows = st.tuples(st.integers(0, 3), small)                       # t(id, a)
u_rows = st.tuples(small, st.one_of(st.none(), st.integers(0, 4)))  # u(k, v)


@pytest.fixture(scope="module")
def catalog():
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE t (id int, a int)")
    cat.execute("CREATE TABLE u (k int, v int)")
    return cat


def _plan(cat, sql):
    p = plan_statement(cat, parse(sql)[0])
    ids = {item.name: item.id for item in cat.items()}
    types = {ids[n]: tuple(c.type for c in item.columns) for item in cat.items() for n in [item.name]}
    return p.plan, ids, types


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("name", sorted(QUERIES))
@SETTINGS
@given(data=st.data())
def test_correlated_view_equals_recomputation(catalog, name, workers, data):
    plan, ids, types = _plan(catalog, QUERIES[name])
    steps = draw_stream(data, {ids["t"]: t_rows, ids["u"]: u_rows}, max_steps=3, max_ops=6)
    outputs, dfs = run_dataflow(plan, types, steps, workers)
    for df in dfs:
        assert not df.errors, df.errors
    seen_in = {i: [] for i in types}
    seen_out: list = []
    lower = AS_OF
    for (upper, ups), out in zip(steps, outputs):
        for i, u in ups.items():
            seen_in[i].extend(u)
        seen_out.extend(out)
        for t in range(lower, upper):
            state = {i: _accumulate(u, t) for i, u in seen_in.items()}
            scratch, scratch_dfs = run_dataflow(
                plan, types, [(AS_OF + 1, {i: [(r, AS_OF, c) for r, c in s.items()] for i, s in state.items()})], 1)
            assert not scratch_dfs[0].errors
            expected = _accumulate(scratch[0], AS_OF)
            got = _accumulate(seen_out, t)
            assert got == expected, f"{name} workers={workers} t={t}\n got={dict(got)}\n expected={dict(expected)}"
        lower = upper


def test_count_bug_on_a_hand_checked_example(catalog):
    plan, ids, types = _plan(catalog, QUERIES["scalar_count_max"])
    steps = [(AS_OF + 1, {ids["t"]: [((1, 1), AS_OF, 1), ((2, None), AS_OF, 1), ((3, 2), AS_OF, 1)],
                          ids["u"]: [((1, 7), AS_OF, 1), ((1, 8), AS_OF, 1), ((None, 9), AS_OF, 1)]}),
             (AS_OF + 2, {ids["t"]: [], ids["u"]: [((1, 8), AS_OF + 1, -1), ((2, 5), AS_OF + 1, 1)]})]
    out, _ = run_dataflow(plan, types, steps, 1)
    assert _accumulate(out[0], AS_OF) == Counter({(1, 2, 8): 1, (2, 0, None): 1, (3, 0, None): 1})
    assert _accumulate(out[0] + out[1], AS_OF + 1) == Counter({(1, 1, 7): 1, (2, 0, None): 1, (3, 1, 5): 1})
