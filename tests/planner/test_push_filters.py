"""Predicate pushdown (planner/rules/push_filters.py): where conditions end up, what must stay
(one-time filters, volatile and temporal conditions, unions with negated inputs, nodes another
parent reads), and the same updates as the plans lowering produced, through the real engine
over random update streams with retractions."""

from __future__ import annotations

import pytest

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import Filter, FlatMap, Get, Join, Map, Negate, Reduce, Union_
from dataflow.types import BOOL, FLOAT8, INT8
from planner.rules.push_filters import push_filters
from tests.planner.planner_catalog import MemoryCatalog
from tests.planner.plan_equivalence import assert_same_updates, plan_nodes, pruned

T = Get("u1", (INT8, INT8))
GT0 = Call("gt", (ColumnRef(0, INT8), Literal(0, INT8)), BOOL)


@pytest.fixture(scope="module")
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE orders (id bigint, customer_id bigint, amount bigint, status text)")
    c.execute("CREATE TABLE customers (id bigint, region text, score int)")
    return c


def _filters_over(plan, kind) -> bool:
    """Some Filter sits directly on a node of `kind`."""
    return any(isinstance(p, Filter) and isinstance(p.input, kind) for p in plan_nodes(plan))


def test_below_map_flatmap_join_and_group_keys():
    m = push_filters(Filter(Map(T, (Literal(1, INT8),)), (GT0,)))
    assert isinstance(m, Map) and isinstance(m.input, Filter)
    f = push_filters(Filter(FlatMap(T, "generate_series", (ColumnRef(1, INT8), ColumnRef(1, INT8)), (INT8,)), (GT0,)))
    assert isinstance(f, FlatMap) and isinstance(f.input, Filter)
    on_right = Call("gt", (ColumnRef(3, INT8), Literal(0, INT8)), BOOL)
    j = push_filters(Filter(Join(T, T, (0,), (0,)), (GT0, on_right)))
    assert isinstance(j, Join) and isinstance(j.left, Filter) and isinstance(j.right, Filter)
    assert j.right.predicates[0].args[0].index == 1  # renumbered into the right side
    r = push_filters(Filter(Reduce(T, (1,), ()), (GT0,)))
    assert isinstance(r, Reduce) and r.input.predicates[0].args[0].index == 1  # key column 1


def test_what_stays():
    one_time = Call("lt", (Literal(None, INT8), Literal(1, INT8)), BOOL)
    assert isinstance(push_filters(Filter(Map(T, (Literal(1, INT8),)), (one_time,))), Filter)
    rnd = Call("lt", (Call("math_random", (), FLOAT8), Literal(0.5, FLOAT8)), BOOL)
    flat = FlatMap(T, "generate_series", (ColumnRef(1, INT8), ColumnRef(1, INT8)), (INT8,))
    assert isinstance(push_filters(Filter(flat, (rnd,))), Filter)
    cancelling = Union_((T, Negate(T)))
    assert isinstance(push_filters(Filter(cancelling, (GT0,))), Filter)
    shared = Map(T, (Literal(1, INT8),))
    both = push_filters(Union_((Filter(shared, (GT0,)), shared)))
    assert both.inputs[0].input is both.inputs[1]  # not pushed into the node the union also reads
    on_agg = push_filters(Filter(Reduce(T, (1,), ()), (Call("gt", (ColumnRef(0, INT8), ColumnRef(0, INT8)), BOOL),)))
    assert isinstance(on_agg, Reduce)  # (column 0 is the key here: pushed, renumbered)


QUERIES = [
    "SELECT * FROM (SELECT id, amount, amount * 2 AS y FROM orders) s WHERE amount > 20",
    "SELECT o.id, g FROM orders o CROSS JOIN generate_series(1, o.amount % 3) g WHERE o.status = 'captured'",
    "SELECT * FROM (SELECT customer_id, count(*) n, sum(amount) s FROM orders GROUP BY customer_id) x "
    "WHERE customer_id > 1 AND n > 1",
    "SELECT * FROM (SELECT DISTINCT customer_id, status FROM orders) d WHERE status = 'pending'",
    "SELECT * FROM (SELECT id, customer_id FROM orders UNION ALL SELECT id, score FROM customers) u WHERE id < 4",
    "SELECT * FROM (SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id) j "
    "WHERE j.region = 'eu' AND j.amount > 10 AND j.score > j.amount",
    "SELECT * FROM (SELECT c.id, o.amount FROM customers c LEFT JOIN orders o ON o.customer_id = c.id) l "
    "WHERE l.id > 2 AND l.amount IS NULL",
    "SELECT * FROM (SELECT customer_id, amount FROM orders EXCEPT SELECT id, score FROM customers) e WHERE amount > 5",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_pushed_plan_gives_the_same_updates(cat, sql):
    assert_same_updates(cat, sql)



def test_pushed_below_a_derived_tables_map(cat):
    plan = pruned(cat, "SELECT * FROM (SELECT id, amount, 100 / amount AS y FROM orders) s WHERE amount <> 0").plan
    assert not _filters_over(plan, Map)
