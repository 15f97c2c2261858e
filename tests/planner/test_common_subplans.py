"""Common sub-plans (planner.rules.common_subplans): equal parts of a plan become one node,
never parts that differ (volatile functions, constants equal in Python but not in SQL), and the
merged plans give the same updates as the plans lowering produced, through the real engine over
random update streams with retractions."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import Get, Join, Map, Reduce, Union_
from dataflow.types import FLOAT8, INT8, NUMERIC
from planner.rules.common_subplans import share_common_subplans
from tests.planner.planner_catalog import MemoryCatalog
from tests.planner.plan_equivalence import assert_same_updates, plan_nodes, pruned, unpruned


@pytest.fixture(scope="module")
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE orders (id bigint, customer_id bigint, amount bigint, status text)")
    c.execute("CREATE TABLE customers (id bigint, region text, score int)")
    return c


def _count(plan, kind) -> int:
    return sum(isinstance(p, kind) for p in plan_nodes(plan))


T = Get("u1", (INT8, INT8))


def test_the_same_aggregate_written_twice_is_one_node(cat):
    sql = ("SELECT x.customer_id, x.n, y.n FROM (SELECT customer_id, count(*) n FROM orders GROUP BY customer_id) x "
           "JOIN (SELECT customer_id, count(*) n FROM orders GROUP BY customer_id) y ON x.customer_id = y.customer_id")
    assert _count(unpruned(cat, sql).plan, Reduce) == 2
    plan = pruned(cat, sql).plan
    assert _count(plan, Reduce) == 1


def test_a_cte_read_twice_is_computed_once(cat):
    sql = ("WITH r AS (SELECT customer_id, sum(amount) s FROM orders GROUP BY customer_id) "
           "SELECT customer_id FROM r WHERE s = (SELECT max(s) FROM r)")
    assert _count(pruned(cat, sql).plan, Reduce) < _count(unpruned(cat, sql).plan, Reduce)


def test_worked_example():
    r1 = Reduce(T, (0,), ())
    r2 = Reduce(Get("u1", (INT8, INT8)), (0,), ())
    out = share_common_subplans(Join(r1, r2, (0,), (0,)))
    assert out.left is out.right


@pytest.mark.parametrize("a, b", [
    (Literal(0.0, FLOAT8), Literal(-0.0, FLOAT8)),      # equal in Python, printed 0 and -0
    (Literal(1, INT8), Literal(True, INT8)),
    (Literal(Decimal("1.0"), NUMERIC), Literal(Decimal("1.00"), NUMERIC)),  # a constant shows its digits
])
def test_constants_equal_only_in_python_stay_apart(a, b):
    out = share_common_subplans(Union_((Map(T, (a,)), Map(T, (b,)))))
    assert out.inputs[0] is not out.inputs[1]
    assert out.inputs[0].input is out.inputs[1].input  # the reads of t are still one


def test_volatile_functions_are_never_merged():
    rnd = Call("math_random", (), FLOAT8)
    out = share_common_subplans(Union_((Map(T, (rnd,)), Map(T, (rnd,)))))
    assert out.inputs[0] is not out.inputs[1]
    same = Call("add", (ColumnRef(0, INT8), Literal(1, INT8)), INT8)
    out = share_common_subplans(Union_((Map(T, (same,)), Map(T, (same,)))))
    assert out.inputs[0] is out.inputs[1]


def test_walk_is_linear_in_a_deeply_shared_plan():
    # 60 levels of a node read twice: 2^60 paths, 60 nodes.
    p = T
    for _ in range(60):
        p = Union_((Map(p, (Literal(1, INT8),)), Map(p, (Literal(1, INT8),))))
        p = Map(p, ())
    out = share_common_subplans(p)
    assert len(plan_nodes(out)) <= 3 * 60 + 1


QUERIES = [
    "SELECT x.customer_id, x.n, y.n FROM (SELECT customer_id, count(*) n FROM orders GROUP BY customer_id) x "
    "JOIN (SELECT customer_id, count(*) n FROM orders GROUP BY customer_id) y ON x.customer_id = y.customer_id",
    "WITH r AS (SELECT customer_id, sum(amount) s FROM orders GROUP BY customer_id) "
    "SELECT customer_id, s FROM r WHERE s = (SELECT max(s) FROM r)",
    "SELECT o.id FROM orders o WHERE o.amount > (SELECT avg(amount) FROM orders i WHERE i.customer_id = o.customer_id)",
    "SELECT c.region, count(*) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id AND o.amount > c.score "
    "LEFT JOIN orders p ON p.customer_id = c.id GROUP BY c.region",
    "SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = 'eu') "
    "UNION ALL SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = 'eu')",
    "SELECT status, amount * 0.0, amount * -0.0 FROM orders",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_merged_plan_gives_the_same_updates(cat, sql):
    assert_same_updates(cat, sql)
