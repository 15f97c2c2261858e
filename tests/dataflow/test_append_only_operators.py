"""Operators planned over inputs that only gain rows (planner/rules/append_only.py): a Reduce's
min/max keeping each group's current extremum only and a TopK keeping each group's first rows
only give, at every time of every step, the same output as recomputation from scratch
(df_reference) over random insert-only streams, with 1 and 3 workers; they keep no copy of
their input; a retraction reaching one fails the dataflow instead of answering wrongly."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataflow.expr import AggregateExpr, ColumnRef
from dataflow.operators.reduce import ReduceOp
from dataflow.operators.topk import TopKOp
from dataflow.plan import Filter, Get, Join, Reduce, TopK
from dataflow.types import FLOAT8, INT8, TEXT
from tests.dataflow.df_reference import AS_OF, check_plan, operators_of, run_dataflow

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

T = (INT8, INT8, FLOAT8, TEXT)     # group, x, f, s
U = (INT8, TEXT)                   # group, label
rows = st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-5, 5)),
                 st.one_of(st.none(), st.sampled_from([0.5, -1.0, 0.0, -0.0, 1e300, float("inf")])),
                 st.one_of(st.none(), st.sampled_from(["a", "b", "", "ü"])))
labels = st.tuples(st.integers(0, 3), st.sampled_from(["x", "y"]))
BIDS = Get("t", T, append_only=True)
LABELS = Get("u", U, append_only=True)


def insert_only_stream(data, gens: dict, max_steps: int = 4, max_ops: int = 8):
    """Steps of (upper, {id: [(row, time, +1)]}), several times per step, no retraction."""
    steps, t = [], AS_OF
    for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
        ups = {i: [] for i in sorted(gens)}
        for _ in range(data.draw(st.integers(1, 3), label="times")):
            for _ in range(data.draw(st.integers(0, max_ops), label="ops")):
                i = data.draw(st.sampled_from(sorted(gens)))
                ups[i].append((data.draw(gens[i]), t, 1))
            t += data.draw(st.integers(1, 2))
        steps.append((t, ups))
    return steps


def agg(func, col, typ):
    return AggregateExpr(func, ColumnRef(col, T[col]), typ, False, (), ())


MINMAX = Reduce(BIDS, (0,), (agg("min", 1, INT8), agg("max", 1, INT8), agg("max", 2, FLOAT8),
                             agg("min", 3, TEXT), AggregateExpr("count_star", None, INT8, False, (), ())),
                monotonic=True)
GLOBAL_MAX = Reduce(BIDS, (), (agg("max", 3, TEXT), agg("min", 2, FLOAT8)), monotonic=True)
TOP2 = TopK(BIDS, (0,), ((1, True, False), (3, False, True)), limit=2, offset=1, monotonic=True)
JOINED = Reduce(Join(BIDS, Filter(LABELS, ()), (0,), (0,)), (5,), (agg("max", 1, INT8),), monotonic=True)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_monotonic_min_max_equal_recomputation(workers, data):
    steps = insert_only_stream(data, {"t": rows})
    for plan in (MINMAX, GLOBAL_MAX):
        check_plan(plan, {"t": T}, steps, workers)


@WORKERS
@SETTINGS
@given(data=st.data())
def test_monotonic_topk_equal_recomputation(workers, data):
    check_plan(TOP2, {"t": T}, insert_only_stream(data, {"t": rows}), workers)


@SETTINGS
@given(data=st.data())
def test_monotonic_reduce_over_a_join_equal_recomputation(data):
    check_plan(JOINED, {"t": T, "u": U}, insert_only_stream(data, {"t": rows, "u": labels}), 3)


def test_no_copy_of_the_input_is_kept():
    steps = [(AS_OF + 1 + k, {"t": [((k % 3, k, float(k), str(k)), AS_OF + k, 1) for _ in range(2)]})
             for k in range(50)]
    for plan, kind in ((MINMAX, ReduceOp), (TOP2, TopKOp)):
        _, dfs = run_dataflow(plan, {"t": T}, steps, 1)
        op = operators_of(dfs[0].root, kind)[0]
        if kind is ReduceOp:
            assert all(len(s.trace) == 0 for s in op.states if hasattr(s, "trace"))
            assert op.index.size == 3
        else:
            assert len(op.trace) == 0 and 0 < len(op.prefix) < 50  # changes of 3 groups x 3 rows
    # The same plans not marked monotonic keep every value they saw.
    _, dfs = run_dataflow(Reduce(BIDS, MINMAX.group_key, MINMAX.aggregates), {"t": T}, steps, 1)
    op = operators_of(dfs[0].root, ReduceOp)[0]
    assert sum(len(s.trace) for s in op.states if hasattr(s, "trace")) >= 100


@pytest.mark.parametrize("plan", [MINMAX, TOP2])
def test_a_retraction_fails_the_dataflow(plan):
    row = (1, 2, 0.5, "a")
    steps = [(AS_OF + 1, {"t": [(row, AS_OF, 1)]}), (AS_OF + 2, {"t": [(row, AS_OF + 1, -1)]})]
    _, dfs = run_dataflow(plan, {"t": T}, steps, 1)
    assert any("only gains rows" in str(e) for e in dfs[0].errors), dfs[0].errors


@pytest.mark.parametrize("monotonic", [False, True])
def test_nan_is_the_greatest_float(monotonic):
    # PostgreSQL: max is NaN once a group has one, min only if it has nothing else; Arrow's
    # min/max skip NaN (a group of 1.0 and NaN had max 1.0).
    plan = Reduce(BIDS, (0,), (agg("max", 2, FLOAT8), agg("min", 2, FLOAT8)), monotonic=monotonic)
    steps = [(AS_OF + 1, {"t": [((0, 1, 1.0, "a"), AS_OF, 1), ((1, 1, float("nan"), "a"), AS_OF, 1)]}),
             (AS_OF + 2, {"t": [((0, 1, float("nan"), "a"), AS_OF + 1, 1)]}),
             (AS_OF + 3, {"t": [((0, 1, -2.0, "a"), AS_OF + 2, 1), ((1, 1, float("nan"), "b"), AS_OF + 2, 1)]})]
    out, _ = run_dataflow(plan, {"t": T}, steps, 1)
    shown = [sorted((r[0], repr(r[1]), repr(r[2]), t, d) for r, t, d in step) for step in out]
    assert shown == [
        [(0, "1.0", "1.0", AS_OF, 1), (1, "nan", "nan", AS_OF, 1)],
        [(0, "1.0", "1.0", AS_OF + 1, -1), (0, "nan", "1.0", AS_OF + 1, 1)],
        [(0, "nan", "-2.0", AS_OF + 2, 1), (0, "nan", "1.0", AS_OF + 2, -1)],
    ]
