"""Property tests for the statistics aggregates: corr, covar_*, regr_* (exact sums of x, y,
x*x, y*y, x*y), bit_and/bit_or/bit_xor (per-bit counts) and the ordered-set aggregates
percentile_cont, percentile_disc and mode (each group's multiset): after random inserts and
retractions over several steps, the Reduce's accumulated output at every time equals a fresh
dataflow computing the same plan from scratch over the input as it is at that time. With 1 and
3 workers. (Agreement with PostgreSQL is tests/planner/test_stat_aggregates_vs_postgres.py.)
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dataflow.expr import AggregateExpr, Call, ColumnRef, If, Literal
from dataflow.plan import Get, Reduce
from dataflow.types import BOOL, BYTEA, FLOAT8, INT2, INT4, INT8, INTERVAL, TEXT
from tests.dataflow.df_reference import draw_stream
from tests.dataflow.test_df_aggregate_properties import SETTINGS, WORKERS, check_against_scratch

# (no overflow: 1e150 squared is still a double; PostgreSQL fails where Sxx overflows, as we do)
# g, x float8, y float8, i int4, h int2, b int8, s text, f bool
T = (INT8, FLOAT8, FLOAT8, INT4, INT2, INT8, TEXT, BOOL)
FLOATS = [0.1, -2.5, 1e10, 3.0, -0.0, 0.0, 1e-300, 1e150, 5e-324, float("nan"), float("inf"), float("-inf")]
rows = st.tuples(
    st.integers(0, 2),
    st.one_of(st.none(), st.sampled_from(FLOATS), st.integers(-3, 3).map(float)),
    st.one_of(st.none(), st.sampled_from(FLOATS), st.integers(-3, 3).map(float)),
    st.one_of(st.none(), st.integers(-(2 ** 31), 2 ** 31 - 1), st.integers(-8, 8)),
    st.one_of(st.none(), st.integers(-32768, 32767)),
    st.one_of(st.none(), st.integers(-(2 ** 63), 2 ** 63 - 1), st.integers(-8, 8)),
    st.one_of(st.none(), st.sampled_from(["a", "b", "", "c"])),
    st.one_of(st.none(), st.booleans()),
)


def col(i):
    return ColumnRef(i, T[i])


def agg(func, arg, typ, distinct=False, extra=(), order_by=()):
    return AggregateExpr(func, arg, typ, distinct, tuple(extra), tuple(order_by))


def filtered(e):
    return If(col(7), e, Literal(None, e.type), e.type)


def fkey(e):
    return Call("float_order_key", (e,), INT8)


def frac(p):
    return (Literal(p, FLOAT8),)


REGR = ["corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_avgx",
        "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy"]
AGGS = {
    "regression": tuple(agg(f, col(2), FLOAT8, extra=(col(1),)) for f in REGR),
    "regression_filtered": (agg("corr", col(2), FLOAT8, extra=(filtered(col(1)),)),
                            agg("regr_slope", filtered(col(1)), FLOAT8, extra=(col(2),))),
    "bits": tuple(agg(f, col(c), T[c]) for f in ("bit_and", "bit_or", "bit_xor") for c in (3, 4, 5)) + (
        agg("bit_xor", col(3), INT4, distinct=True), agg("bit_or", filtered(col(5)), INT8)),
    "ordered_set": (
        agg("percentile_cont", col(1), FLOAT8, extra=frac(0.5), order_by=((fkey(col(1)), False, True),)),
        agg("percentile_cont", col(1), FLOAT8, extra=frac(0.3), order_by=((fkey(col(1)), True, True),)),
        agg("percentile_disc", col(3), INT4, extra=frac(0.75), order_by=((col(3), False, True),)),
        agg("percentile_disc", col(6), TEXT, extra=frac(0.0), order_by=((col(6), True, True),)),
        agg("mode", col(6), TEXT, order_by=((col(6), False, True),)),
        agg("mode", filtered(col(4)), INT2, order_by=((filtered(col(4)), True, True),)),
        agg("percentile_cont", filtered(col(2)), FLOAT8, extra=frac(1.0),
            order_by=((filtered(fkey(col(2))), False, True),)),
    ),
}


def _get():
    return Get("t", T)


@WORKERS
@pytest.mark.parametrize("family", sorted(AGGS))
@SETTINGS
@given(data=st.data())
def test_grouped_stat_aggregates_equal_recomputation(workers, family, data):
    steps = draw_stream(data, {"t": rows}, max_steps=3, max_ops=8)
    check_against_scratch_t(Reduce(_get(), (0,), AGGS[family]), steps, workers)


@WORKERS
@pytest.mark.parametrize("family", sorted(AGGS))
@SETTINGS
@given(data=st.data())
def test_global_stat_aggregates_equal_recomputation(workers, family, data):
    steps = draw_stream(data, {"t": rows}, max_steps=3, max_ops=8)
    check_against_scratch_t(Reduce(_get(), (), AGGS[family]), steps, workers)


def check_against_scratch_t(plan, steps, workers):
    import tests.dataflow.test_df_aggregate_properties as base
    saved = base.T
    base.T = T
    try:
        check_against_scratch(plan, steps, workers)
    finally:
        base.T = saved


def test_interval_percentiles_equal_recomputation():
    """percentile_cont over intervals interpolates with interval arithmetic; one fixed stream."""
    from tests.dataflow.df_reference import AS_OF, _accumulate, run_dataflow
    from dataflow import interval as iv
    import pyarrow as pa
    TI = (INT8, INTERVAL)
    vals = iv.join(*(pa.array(x).to_numpy() for x in ([1, 0, -2, 0], [3, 30, 0, 1], [0, 0, 0, 3_600_000_000])))
    items = vals.to_pylist()
    key = Call("sort_key", (ColumnRef(1, INTERVAL),), BYTEA)
    plan = Reduce(Get("t", TI), (0,), (
        agg("percentile_cont", ColumnRef(1, INTERVAL), INTERVAL, extra=frac(0.3), order_by=((key, False, True),)),))
    ups = [((0, v), AS_OF, 1) for v in items]
    out, dfs = run_dataflow(plan, {"t": TI}, [(AS_OF + 1, {"t": ups}), (AS_OF + 2, {"t": [((0, items[0]), AS_OF + 1, -1)]})], 1)
    assert not dfs[0].errors, dfs[0].errors
    assert len(_accumulate(out[0] + out[1], AS_OF + 1)) == 1
