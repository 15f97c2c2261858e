"""Delta joins in plans (planner/delta_joins.py): a chain of three or more joins becomes one
DeltaJoin exactly when that builds fewer arrangements than the chain of binary joins (indexes
read in place count none); the delta-joined plan gives the same updates as the chain through
the real engine over random streams with retractions (conditions across relations, four
relations, self-joins, a shared sub-plan as two inputs); cross products, ties and cycles keep the chain;
EXPLAIN shows the paths and which arrangements are an index's."""

from __future__ import annotations

import pytest

from dataflow.plan import DeltaJoin, Join
from planner.delta_joins import plan_delta_joins
from planner.explain import render_plan
from planner.shared_arrangements import _servable_keys, use_shared_arrangements
from tests.planner.plan_equivalence import assert_plans_agree, plan_nodes, pruned
from tests.planner.planner_catalog import MemoryCatalog

TABLES = ("CREATE TABLE orders (id bigint, customer_id bigint, amount bigint, status text)",
          "CREATE TABLE customers (id bigint, region text, score int)")


def _catalog(*indexes: str) -> MemoryCatalog:
    c = MemoryCatalog()
    for sql in TABLES + indexes:
        c.execute(sql)
    return c


@pytest.fixture(scope="module")
def indexed() -> MemoryCatalog:
    return _catalog("CREATE INDEX ON customers (id)", "CREATE INDEX ON orders (id)")


@pytest.fixture(scope="module")
def bare() -> MemoryCatalog:
    return _catalog()


def _planned(cat, plan):
    return plan_delta_joins(plan, lambda side: _servable_keys(side, cat, None, None))


def _delta_joins(plan) -> list[DeltaJoin]:
    return [n for n in plan_nodes(plan) if isinstance(n, DeltaJoin)]


STAR = ("SELECT a.id, b.amount, c.region FROM orders a, orders b, customers c "
        "WHERE a.customer_id = b.customer_id AND b.customer_id = c.id")
# (catalog, query, whether it becomes a delta join)
QUERIES = [
    # One key for all three: 3 arrangements instead of 4.
    ("bare", STAR, True),
    ("bare", STAR + " AND a.amount < b.amount + c.score AND a.status <> 'pending'", True),
    # Different keys, no index: 4 either way (the chain is kept on a tie).
    ("bare", "SELECT c.region, o.amount, l.id FROM customers c, orders o, orders l "
             "WHERE c.id = o.customer_id AND l.amount = o.id", False),
    # The same with indexes on customers (id) and orders (id), as written: the chain builds 3
    # (customers' index read by the first join), the delta join 2.
    ("indexed", "SELECT c.region, o.amount, l.id FROM customers c, orders o, orders l "
                "WHERE c.id = o.customer_id AND l.amount = o.id", True),
    # A cycle: its paths would probe 5 (input, key) pairs, the chain arranges 4.
    ("bare", "SELECT a.id, b.id, c.status FROM orders a, orders b, orders c "
             "WHERE a.customer_id = b.customer_id AND b.amount = c.amount AND c.id = a.id", False),
    # Four relations, one key.
    ("bare", "SELECT a.id, b.id, c.region, d.id FROM orders a JOIN orders b ON a.customer_id = b.customer_id "
             "JOIN customers c ON c.id = b.customer_id JOIN orders d ON d.customer_id = c.id", True),
    # A cross product stays a chain.
    ("bare", "SELECT a.id, b.id, c.region FROM orders a, orders b, customers c "
             "WHERE a.customer_id = b.customer_id", False),
]


@pytest.mark.parametrize("which, sql, delta", QUERIES)
def test_delta_joined_plans_give_the_same_updates(which, sql, delta, indexed, bare):
    cat = indexed if which == "indexed" else bare
    plan = pruned(cat, sql).plan
    after = _planned(cat, plan)
    assert bool(_delta_joins(after)) == delta
    if delta:
        assert not [n for n in plan_nodes(after) if isinstance(n, Join)]
        assert_plans_agree(cat, plan, after, sql)
    else:
        assert after is plan


def test_a_shared_sub_plan_stays_one_input(bare):
    # A CTE that is itself a join, read twice: an input of the delta join, not entered.
    sql = ("WITH co AS (SELECT o.id, o.customer_id, c.region FROM customers c JOIN orders o ON c.id = o.customer_id) "
           "SELECT a.id, b.id, l.id FROM co a JOIN co b ON a.customer_id = b.customer_id "
           "JOIN orders l ON l.customer_id = b.customer_id")
    plan = pruned(bare, sql).plan
    after = _planned(bare, plan)
    (join,) = _delta_joins(after)
    assert join.inputs[0] is join.inputs[1]       # still one node, read twice
    assert_plans_agree(bare, plan, after, sql)


def test_explain_shows_paths_and_shared_index_arrangements(indexed):
    sql = ("SELECT c.region, o.amount, l.id FROM customers c, orders o, orders l "
           "WHERE c.id = o.customer_id AND l.amount = o.id")
    from planner import shared_arrangements
    reorder = shared_arrangements.order_joins_for_indexes
    try:   # (as written: re-ordered, the chain reads both indexes and builds as many)
        shared_arrangements.order_joins_for_indexes = lambda p, keys: p
        plan = use_shared_arrangements(pruned(indexed, sql).plan, indexed)
    finally:
        shared_arrangements.order_joins_for_indexes = reorder
    keys = {i.id: tuple(i.index_key) for i in indexed.items() if i.kind.name == "INDEX"}
    line = next(l for l in render_plan(plan, indexes=keys).splitlines() if "DeltaJoin" in l).strip()
    cust_index, order_index = (i.id for i in indexed.items() if i.kind.name == "INDEX")
    assert line == (f"DeltaJoin paths=(%0 » %1[#1] » %2[#1]; %1 » %0[#0] » %2[#1]; %2 » %1[#0] » %0[#0])  "
                    f"arranges: %1 by [#1], %2 by [#1], %0: index {cust_index}'s arrangement, shared, "
                    f"%1: index {order_index}'s arrangement, shared")
