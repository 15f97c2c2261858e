"""Property tests: every operator and composed graphs against a brute-force multiset reference,
at every time of every step, with 1 worker and with 3 workers."""

from __future__ import annotations

import os
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataflow.expr import AggregateExpr, Call, ColumnRef, Literal
from dataflow.plan import (ArrangeBy, Distinct, Filter, FlatMap, Get, Join, Map, Negate, Project, Reduce,
                           Threshold, TopK, Union_)
from dataflow.types import BOOL, INT4, INT8, NUMERIC, TEXT, numeric
from tests.dataflow.df_reference import AS_OF, check_plan, draw_stream

# DF_EXAMPLES=300 for a deeper soak; the default keeps the folder fast.
SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "20")), deadline=None, suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

AB = (INT8, INT8)
ab_rows = st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-3, 3)))

ORDERS = (INT8, INT8, numeric(10, 2), TEXT)
CUSTOMERS = (INT8, TEXT)
order_rows = st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 3)),
                       st.decimals(min_value=-100, max_value=100, places=2, allow_nan=False),
                       st.sampled_from(["captured", "pending"]))
customer_rows = st.tuples(st.integers(0, 3), st.sampled_from(["eu", "us", None]))


def col(i, t=INT8):
    return ColumnRef(i, t)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_map_filter_project(workers, data):
    plan = Project(
        Filter(Map(Get("t", AB), (Call("add", (col(0), col(1)), INT8),)),
               (Call("or", (Call("gt", (col(0), col(1)), BOOL), Call("is_null", (col(1),), BOOL)), BOOL),)),
        (2, 0, 0))
    check_plan(plan, {"t": AB}, draw_stream(data, {"t": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_join(workers, data):
    plan = Join(Get("l", AB), Get("r", AB), (1,), (0,))
    check_plan(plan, {"l": AB, "r": AB}, draw_stream(data, {"l": ab_rows, "r": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_reduce_all_aggregates(workers, data):
    aggs = (AggregateExpr("count_star", None, INT8), AggregateExpr("count", col(1), INT8),
            AggregateExpr("sum", col(1), NUMERIC), AggregateExpr("min", col(1), INT8),
            AggregateExpr("max", col(1), INT8), AggregateExpr("avg", col(1), NUMERIC),
            AggregateExpr("count", col(1), INT8, distinct=True),
            AggregateExpr("sum", col(1), NUMERIC, distinct=True))
    plan = Reduce(Get("t", AB), (0,), aggs)
    check_plan(plan, {"t": AB}, draw_stream(data, {"t": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_global_reduce_and_nullable_key(workers, data):
    steps = draw_stream(data, {"t": ab_rows})
    plan = Reduce(Get("t", AB), (), (AggregateExpr("sum", col(0), NUMERIC),
                                     AggregateExpr("count_star", None, INT8)))
    check_plan(plan, {"t": AB}, steps, workers)
    plan = Reduce(Get("t", AB), (1,), (AggregateExpr("max", col(0), INT8),
                                       AggregateExpr("count_star", None, INT8)))
    check_plan(plan, {"t": AB}, steps, workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_distinct_threshold_except_all(workers, data):
    # a EXCEPT ALL b  ==  Threshold(a + (-b));  plus DISTINCT of a projection.
    plan = Union_((Threshold(Union_((Get("a", AB), Negate(Get("b", AB))))),
                   Distinct(Project(Get("a", AB), (1, 1)))))
    check_plan(plan, {"a": AB, "b": AB}, draw_stream(data, {"a": ab_rows, "b": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data(), limit=st.sampled_from([None, 1, 2]), offset=st.integers(0, 1),
       desc=st.booleans(), nulls_last=st.booleans(), group=st.sampled_from([(), (0,)]))
def test_topk(workers, data, limit, offset, desc, nulls_last, group):
    plan = TopK(Get("t", AB), group, ((1, desc, nulls_last),), limit, offset)
    check_plan(plan, {"t": AB}, draw_stream(data, {"t": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_flat_map_generate_series(workers, data):
    plan = FlatMap(Get("t", AB), "generate_series", (col(1), Literal(2, INT8)), (INT8,), ordinality=True)
    check_plan(plan, {"t": AB}, draw_stream(data, {"t": ab_rows}), workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_arrange_by_snapshots(workers, data):
    plan = ArrangeBy(Get("t", AB), (1,))
    steps = draw_stream(data, {"t": ab_rows})
    dfs = check_plan(plan, {"t": AB}, steps, workers)
    from collections import Counter

    from dataflow.batch import rows_of
    last_upper = steps[-1][0]
    for t in range(AS_OF, last_upper):
        got = Counter()
        for df in dfs:
            snap = df.arrangement().snapshot(t)
            for r, d in zip(rows_of(snap), snap["diff"].to_pylist()):
                got[r] += d
        expected = Counter()
        for _, ups in steps:
            for row, time, diff in ups["t"]:
                if time <= t:
                    expected[row] += diff
        assert +got == +expected and not -got


@WORKERS
@SETTINGS
@given(data=st.data())
def test_orders_by_region(workers, data):
    """SELECT c.region, count(*), sum(o.amount) FROM orders o JOIN customers c
       ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region"""
    joined = Join(Get("orders", ORDERS), Get("customers", CUSTOMERS), (1,), (0,))
    filtered = Filter(joined, (Call("eq", (col(3, TEXT), Literal("captured", TEXT)), BOOL),))
    plan = Reduce(filtered, (5,), (AggregateExpr("count_star", None, INT8),
                                   AggregateExpr("sum", col(2, numeric(10, 2)), numeric(38, 2))))
    steps = draw_stream(data, {"orders": order_rows, "customers": customer_rows}, max_ops=8)
    check_plan(plan, {"orders": ORDERS, "customers": CUSTOMERS}, steps, workers)


def test_reference_sanity():
    """The reference itself on a hand-checked example."""
    from collections import Counter

    from tests.dataflow.df_reference import ref_eval
    plan = Reduce(Get("t", AB), (0,), (AggregateExpr("avg", col(1), NUMERIC),))
    out = ref_eval(plan, {"t": Counter({(1, 1): 1, (1, 2): 1})})
    assert out == Counter({(1, Decimal("1.5000000000000000")): 1})


L2 = (INT4, TEXT, numeric(10, 2))
R2 = (INT8, TEXT, TEXT)
l2_rows = st.tuples(st.one_of(st.none(), st.integers(0, 2)), st.sampled_from(["a", "b"]),
                    st.one_of(st.none(), st.decimals(min_value=-10, max_value=10, places=2, allow_nan=False)))
r2_rows = st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", None]), st.sampled_from(["x", "yy", "zzz", None]))


@WORKERS
@SETTINGS
@given(data=st.data())
def test_composite_mixed_width_join_then_text_and_numeric_aggregates(workers, data):
    joined = Join(Get("l", L2), Get("r", R2), (0, 1), (0, 1))
    plan = Reduce(joined, (1,), (AggregateExpr("min", col(5, TEXT), TEXT), AggregateExpr("max", col(5, TEXT), TEXT),
                                 AggregateExpr("avg", col(2, numeric(10, 2)), NUMERIC),
                                 AggregateExpr("count", col(5, TEXT), INT8, distinct=True)))
    steps = draw_stream(data, {"l": l2_rows, "r": r2_rows})
    check_plan(plan, {"l": L2, "r": R2}, steps, workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_temporal_filter_then_count(workers, data):
    """WHERE mz_now() >= c0 AND mz_now() <= c1 + 3: rows appear and expire at future times."""
    now = Call("mz_now", (), INT8)
    window = Filter(Get("t", AB), (Call("gte", (now, col(0)), BOOL),
                                   Call("lte", (now, Call("add", (col(1), Literal(3, INT8)), INT8)), BOOL)))
    steps = draw_stream(data, {"t": ab_rows})
    check_plan(window, {"t": AB}, steps, workers)
    plan = Reduce(window, (0,), (AggregateExpr("count_star", None, INT8),))
    check_plan(plan, {"t": AB}, steps, workers)
