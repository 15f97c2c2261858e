"""Property test: recursive views (dataflow/operators/iterate.py) kept up to date under random
inserts and deletes of graph edges (with cycles and repeated edges), equal at every time to the
answer computed from scratch by a plain Python evaluation of the SQL's semantics (the working
table for WITH RECURSIVE, Materialize's iteration for WITH MUTUALLY RECURSIVE). With 1 and 3
workers, so the exchanges inside the loop are exercised. Deleting an edge of a cycle must remove
the reachability facts only that cycle supported: a loop continuing from its old fixpoint fails
this test.
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

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "8")), deadline=None,
                    suppress_health_check=list(HealthCheck))


def _closure(edges: Counter) -> Counter:
    """UNION: the set of (a, b) with a path a -> ... -> b."""
    es = {e for e, c in edges.items() if c > 0}
    out = set(es)
    while True:
        new = {(a, d) for (a, b) in out for (c, d) in es if b == c} - out
        if not new:
            return Counter({r: 1 for r in out})
        out |= new


def _paths_from_zero(edges: Counter) -> Counter:
    """UNION ALL working table: (node, depth) per path of length <= 3 from node 0."""
    w = Counter()
    for (a, b), c in edges.items():
        if a == 0:
            w[(b, 1)] += c
    total = Counter(w)
    while w:
        nxt = Counter()
        for (n, d), c in w.items():
            if d < 3:
                for (a, b), c2 in edges.items():
                    if a == n:
                        nxt[(b, d + 1)] += c * c2
        w = +nxt
        total += w
    return total


def _series(edges: Counter) -> Counter:
    """UNION ALL: every a counted up to 6, then grouped."""
    w = Counter()
    for (a, _), c in edges.items():
        if a is not None:
            w[(a,)] += c
    total = Counter(w)
    while w:
        w = +Counter({(n + 1,): c for (n,), c in w.items() if n < 6})
        total += w
    return Counter({(n, c): 1 for (n,), c in total.items()})


def _even_odd(edges: Counter) -> Counter:
    """WITH MUTUALLY RECURSIVE even/odd: all bindings recomputed from the previous values."""
    even, odd = Counter(), Counter()
    for _ in range(100):
        new_even = set([(0,)]) | {(b,) for (n,), c in odd.items() for (a, b), c2 in edges.items()
                                  if a == n and c2 > 0}
        new_even = Counter({r: 1 for r in new_even})
        new_odd = Counter()
        for (n,), c in even.items():
            for (a, b), c2 in edges.items():
                if a == n:
                    new_odd[(b,)] += c * c2
        new_odd = +new_odd
        if new_even == even and new_odd == odd:
            break
        even, odd = new_even, new_odd
    out = Counter()
    for (n,), c in even.items():
        out[("e", n)] += c
    for (n,), c in odd.items():
        out[("o", n)] += c
    return out


QUERIES = {
    "closure_union": ("WITH RECURSIVE r(a, b) AS (SELECT a, b FROM e UNION "
                      "SELECT r.a, e.b FROM r JOIN e ON r.b = e.a) SELECT * FROM r", _closure),
    "paths_union_all": ("WITH RECURSIVE p(n, d) AS (SELECT b, 1 FROM e WHERE a = 0 UNION ALL "
                        "SELECT e.b, p.d + 1 FROM p JOIN e ON e.a = p.n WHERE p.d < 3) SELECT * FROM p",
                        _paths_from_zero),
    "series_grouped": ("WITH RECURSIVE s(n) AS (SELECT a FROM e WHERE a IS NOT NULL UNION ALL "
                       "SELECT n + 1 FROM s WHERE n < 6) SELECT n, count(*) FROM s GROUP BY n", _series),
    "even_odd_wmr": ("WITH MUTUALLY RECURSIVE even (n int) AS (SELECT 0 UNION SELECT e.b FROM odd JOIN e ON e.a = odd.n), "
                     "odd (n int) AS (SELECT e.b FROM even JOIN e ON e.a = even.n) "
                     "SELECT 'e', n FROM even UNION ALL SELECT 'o', n FROM odd", _even_odd),
}

# Few nodes, so cycles and repeated edges are common; a NULL end now and then.
edge = st.tuples(st.integers(0, 4), st.one_of(st.integers(0, 4), st.integers(0, 4), st.none()))


@pytest.fixture(scope="module")
def catalog():
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE e (a int, b int)")
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
def test_recursive_view_equals_recomputation(catalog, name, workers, data):
    sql, reference = QUERIES[name]
    plan, ids, types = _plan(catalog, sql)
    steps = draw_stream(data, {ids["e"]: edge}, max_steps=4, max_ops=6)
    outputs, dfs = run_dataflow(plan, types, steps, workers)
    for df in dfs:
        assert not df.errors, df.errors
    seen_in: list = []
    seen_out: list = []
    lower = AS_OF
    for (upper, ups), out in zip(steps, outputs):
        seen_in.extend(ups[ids["e"]])
        seen_out.extend(out)
        for t in range(lower, upper):
            expected = +reference(_accumulate(seen_in, t))
            got = _accumulate(seen_out, t)
            assert got == expected, f"{name} workers={workers} t={t}\n got={dict(got)}\n expected={dict(expected)}"
        lower = upper


def test_deleting_a_cycle_edge_retracts_what_only_it_supported(catalog):
    """1 -> 2 -> 3 -> 1: every pair among them is reachable; without 3 -> 1 only the forward
    pairs are. A loop that iterated on from the old fixpoint would keep (3, 1), (2, 1), ..."""
    plan, ids, types = _plan(catalog, QUERIES["closure_union"][0])
    e = ids["e"]
    steps = [(AS_OF + 1, {e: [((1, 2), AS_OF, 1), ((2, 3), AS_OF, 1), ((3, 1), AS_OF, 1)]}),
             (AS_OF + 2, {e: [((3, 1), AS_OF + 1, -1)]})]
    for workers in (1, 3):
        out, _ = run_dataflow(plan, types, steps, workers)
        assert _accumulate(out[0], AS_OF) == Counter({(a, b): 1 for a in (1, 2, 3) for b in (1, 2, 3)})
        assert _accumulate(out[0] + out[1], AS_OF + 1) == Counter({(1, 2): 1, (2, 3): 1, (1, 3): 1})


def test_runaway_recursion_is_an_error(catalog):
    plan, ids, types = _plan(catalog, "WITH MUTUALLY RECURSIVE (ERROR AT RECURSION LIMIT 5) "
                                      "c (n int) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT * FROM c")
    _, dfs = run_dataflow(plan, types, [(AS_OF + 1, {ids["e"]: []})], 1)
    assert dfs[0].errors and dfs[0].errors[0].sqlstate == "54001"
    plan, ids, types = _plan(catalog, "WITH MUTUALLY RECURSIVE (RETURN AT RECURSION LIMIT 3) "
                                      "c (n int) AS (SELECT 1 UNION SELECT n + 1 FROM c) SELECT * FROM c")
    out, dfs = run_dataflow(plan, types, [(AS_OF + 1, {ids["e"]: []})], 1)
    assert not dfs[0].errors
    # iteration 1: {1}; 2: {1, 2}; 3: {1, 2, 3}
    assert _accumulate(out[0], AS_OF) == Counter({(1,): 1, (2,): 1, (3,): 1})
