"""Column pruning (planner.rules.prune_columns): plan shapes, and the same results as the
unpruned plan through the real engine over random update streams with retractions."""

from __future__ import annotations

import pytest

from dataflow.expr import AggregateExpr, Call, ColumnRef, Literal
from dataflow.plan import (ArrangeBy, Constant, Distinct, Filter, Get, IndexLookup, Join, Map,
                           Negate, Project, Reduce, TopK, Union_, output_types)
from dataflow.types import BOOL, INT8, NUMERIC, TEXT
from planner.index_lookup import use_index_lookups
from planner.rules import optimize_statement
from planner.rules.prune_columns import prune_columns
from planner.statements import DeletePlan, SelectPlan, UpdatePlan
from tests.planner.plan_equivalence import CUSTOMERS, ORDERS, assert_same_updates, ids, pruned, unpruned
from tests.planner.planner_catalog import MemoryCatalog


@pytest.fixture(scope="module")
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE orders (id bigint, customer_id bigint, amount bigint, status text)")
    c.execute("CREATE TABLE customers (id bigint, region text, score int)")
    c.execute("CREATE INDEX orders_id ON orders (id)")
    return c


V1 = ("SELECT c.region, count(*), sum(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id "
      "WHERE o.status = 'captured' GROUP BY c.region")


# ------------------------------------------------------------------------------------------
# plan shapes

def test_v1_join_inputs_are_narrowed(cat):
    oid, cid = ids(cat)
    p = pruned(cat, V1)
    assert isinstance(p, SelectPlan)
    reduce = p.plan
    assert isinstance(reduce, Reduce) and output_types(reduce) == (TEXT, INT8, NUMERIC)  # sum(int8) is numeric
    join = reduce.input
    assert isinstance(join, Join)
    # orders: (customer_id, amount, status) through the filter, (customer_id, amount) into the join
    left = join.left
    assert isinstance(left, Project) and left.columns == (0, 1)
    flt = left.input
    assert isinstance(flt, Filter)
    assert flt.predicates == (Call("eq", (ColumnRef(2, TEXT), Literal("captured", TEXT)), BOOL),)
    assert flt.input == Project(Get(oid, ORDERS), (1, 2, 3))
    # customers: (id, region); join keys and Reduce positions renumbered
    assert join.right == Project(Get(cid, CUSTOMERS), (0, 1))
    assert (join.left_key, join.right_key) == ((0,), (0,))
    assert output_types(join) == (INT8, INT8, INT8, TEXT)
    assert reduce.group_key == (3,)
    assert [(a.func, a.arg) for a in reduce.aggregates] == [("count_star", None),
                                                             ("sum", ColumnRef(1, INT8))]


def test_unused_map_exprs_and_aggregates_are_dropped(cat):
    p = pruned(cat, "SELECT y FROM (SELECT amount * 2 AS x, id + 1 AS y, upper(status) AS s FROM orders) t")
    m = p.plan if isinstance(p.plan, Map) else p.plan.input
    assert isinstance(m, Map) and len(m.exprs) == 1 and m.exprs[0].func == "add"
    assert output_types(m.input) == (INT8,)  # only orders.id is read
    p = pruned(cat, "SELECT customer_id FROM (SELECT customer_id, max(amount), min(status) FROM orders "
                    "GROUP BY customer_id) t")
    r = p.plan if isinstance(p.plan, Reduce) else p.plan.input
    assert isinstance(r, Reduce) and r.aggregates == ()
    assert output_types(r.input) == (INT8,)


def test_distinct_and_threshold_keep_every_column(cat):
    oid, _ = ids(cat)
    p = pruned(cat, "SELECT count(*) FROM (SELECT DISTINCT * FROM orders) t")
    found = []

    def walk(n):
        if isinstance(n, Distinct):
            found.append(n)
        for k in ([n.left, n.right] if isinstance(n, Join) else list(n.inputs) if isinstance(n, Union_)
                  else [] if isinstance(n, (Get, Constant, IndexLookup)) else [n.input]):
            walk(k)
    walk(p.plan)
    assert found and all(output_types(d) == ORDERS for d in found)


def test_root_output_and_update_delete_selection_keep_every_column(cat):
    oid, _ = ids(cat)
    for sql in ("DELETE FROM orders WHERE amount > 3", "UPDATE orders SET amount = 1 WHERE status = 'x'"):
        p = pruned(cat, sql)
        assert isinstance(p, (DeletePlan, UpdatePlan))
        assert output_types(p.selection) == ORDERS
        assert p.selection == unpruned(cat, sql).selection  # nothing to prune: the row is the output
    for sql in QUERIES:
        assert output_types(pruned(cat, sql).plan) == output_types(unpruned(cat, sql).plan), sql


def test_topk_keeps_every_column_of_its_input(cat):
    # TopK breaks ties by the whole row; narrowing it would change which equal rows it keeps.
    p = pruned(cat, "SELECT customer_id FROM (SELECT * FROM orders ORDER BY amount LIMIT 3) t")
    topk = p.plan.input
    assert isinstance(topk, TopK) and output_types(topk) == ORDERS


def test_arrange_by_keeps_every_column():
    t = (INT8, INT8, TEXT)
    plan = Project(ArrangeBy(Get("t", t), (0,)), (1,))
    assert prune_columns(plan) == plan


def test_index_lookup_still_found_through_the_narrowing_project(cat):
    oid, _ = ids(cat)
    index = cat.resolve(("orders_id",)).id
    p = pruned(cat, "SELECT amount FROM orders WHERE id = 42")
    assert isinstance(p.plan.input, Filter) and isinstance(p.plan.input.input, Project)
    looked = use_index_lookups(p.plan, cat)
    assert looked.input.input.input == IndexLookup(index, ORDERS, (0,), ((42,),))


def test_copy_and_declare_inner_plans_are_pruned(cat):
    p = pruned(cat, "DECLARE c CURSOR FOR SELECT amount FROM orders WHERE status = 'x'")
    assert output_types(p.inner.plan.input.input) == (INT8, TEXT)
    q = unpruned(cat, "COPY (SELECT amount FROM orders WHERE status = 'x') TO STDOUT")
    assert output_types(optimize_statement(q).inner.plan.input.input) == (INT8, TEXT)


def test_shared_subtrees_and_constants():
    t = (INT8, INT8, TEXT)
    r = Reduce(Get("t", t), (0,), (AggregateExpr("count_star", None, INT8),
                                    AggregateExpr("max", ColumnRef(2, TEXT), TEXT)))
    plan = Project(Union_((Project(r, (0,)), Negate(Project(r, (0,))))), (0,))
    out = prune_columns(plan)
    assert output_types(out) == (INT8,)
    assert "max" not in repr(out)
    c = Project(Constant(((1, 2, "a"), (1, 3, "b")), t), (1,))
    assert prune_columns(c) == Constant(((2,), (3,)), (INT8,))


# ------------------------------------------------------------------------------------------
# same results as the unpruned plans, through the engine

QUERIES = [
    V1,
    "SELECT customer_id, count(*), sum(amount) FROM orders GROUP BY customer_id",
    "SELECT o.id, c.region FROM orders o, customers c "
    "WHERE o.customer_id = c.id AND c.region = 'eu' AND o.amount > c.score",
    "SELECT c.region, o2.status FROM orders o JOIN customers c ON o.customer_id = c.id "
    "JOIN orders o2 ON o2.id = o.id WHERE o.amount < 70",
    "SELECT region FROM (SELECT c.region, sum(o.amount) AS s, count(*) AS n FROM orders o "
    "JOIN customers c ON o.customer_id = c.id GROUP BY c.region) t WHERE n > 1",
    "SELECT count(*), sum(amount) FROM orders WHERE status = 'captured'",
    "SELECT count(*) FROM orders",
    "SELECT count(*) FROM (SELECT customer_id, max(amount) FROM orders GROUP BY customer_id) t",
    "SELECT DISTINCT status FROM orders WHERE amount > 10",
    "SELECT count(*) FROM (SELECT DISTINCT customer_id, status FROM orders) t",
    "SELECT customer_id FROM orders WHERE status = 'captured' UNION ALL SELECT id FROM customers",
    "SELECT customer_id FROM orders EXCEPT SELECT id FROM customers WHERE region = 'eu'",
    "SELECT customer_id FROM orders EXCEPT ALL SELECT id FROM customers WHERE score > 50",
    "SELECT status FROM orders INTERSECT SELECT region FROM customers",
    "SELECT customer_id, amount FROM (SELECT * FROM orders ORDER BY amount DESC, id LIMIT 5) t",
    "SELECT count(*), sum(amount) FROM (SELECT id, amount FROM orders ORDER BY status, id LIMIT 4 OFFSET 1) s",
    # ties in the sort key: which equal rows a LIMIT keeps must not change
    "SELECT customer_id FROM (SELECT * FROM orders ORDER BY amount / 20 LIMIT 3) t",
    "WITH t AS (SELECT * FROM orders ORDER BY status LIMIT 2) SELECT a.id, b.amount FROM t a, t b",
    "SELECT amount * 2 + 1, upper(status) FROM orders WHERE customer_id > 1",
    "SELECT x + 1 FROM (SELECT amount * 2 AS x, id * 3 AS y, status || 'z' AS s FROM orders) t WHERE y > 3",
    "SELECT CASE WHEN amount > 50 THEN 'big' ELSE status END FROM orders",
    "SELECT id FROM orders WHERE status = 'pending' AND amount < 50",
    "SELECT c.region, max(o.amount), min(o.status) FROM customers c JOIN "
    "(SELECT customer_id, amount, status FROM orders WHERE id % 2 = 0) o ON o.customer_id = c.id GROUP BY c.region",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_pruned_plan_gives_the_same_updates(cat, sql):
    assert_same_updates(cat, sql)
