"""Property tests for the incrementally maintained aggregates bool_and/bool_or, the variance
family, string_agg, and DISTINCT / FILTER on them: after random inserts and retractions over
several steps (several times per step), the Reduce's accumulated output at every time equals
the output of a fresh dataflow that computes the same plan from scratch over the input as it
is at that time. With 1 and with 3 workers.

This is what makes the state designs honest: float sums of squares, exact numeric sums, the
per-(group, value) DISTINCT counts and string_agg's multiset must all forget retracted rows
exactly. (Agreement with PostgreSQL's values is tests/planner/test_aggregates_vs_postgres.py.)
"""

from __future__ import annotations

import math
import os
from collections import Counter
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataflow.expr import AggregateExpr, Call, ColumnRef, If, Literal
from dataflow.plan import Reduce
from dataflow.types import BOOL, BYTEA, FLOAT4, FLOAT8, INT2, INT8, NUMERIC, TEXT, numeric
from tests.dataflow.df_reference import AS_OF, _accumulate, draw_stream, run_dataflow

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

# g, x int8, n numeric(10,2), u numeric (unconstrained), f float8, r real, b bool, s text, d text, y bytea, h int2
T = (INT8, INT8, numeric(10, 2), NUMERIC, FLOAT8, FLOAT4, BOOL, TEXT, TEXT, BYTEA, INT2)
FLOATS = [0.1, -2.5, 1e10, 3.0, -0.0, 0.0, 1e-300, float("nan"), float("inf"), float("-inf")]
rows = st.tuples(
    st.integers(0, 2),
    st.one_of(st.none(), st.integers(-5, 5), st.sampled_from([2 ** 30, -(2 ** 30), 2 ** 29 + 1])),
    st.one_of(st.none(), st.decimals(min_value=-100, max_value=100, places=2, allow_nan=False)),
    st.one_of(st.none(), st.sampled_from([Decimal("1.5"), Decimal("-0.0001"), Decimal("123456.7"),
                                          Decimal("0.0000000000000001"), Decimal("7")])),
    st.one_of(st.none(), st.sampled_from(FLOATS)),
    st.one_of(st.none(), st.sampled_from([0.5, -1.25, 3e38, 1e-45])),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.sampled_from(["a", "b", "", "ü", "a,b"])),
    st.one_of(st.none(), st.sampled_from([",", "--", ""])),
    st.one_of(st.none(), st.sampled_from([b"\x00", b"ab", b""])),
    st.one_of(st.none(), st.integers(-32768, 32767)),
)


def col(i):
    return ColumnRef(i, T[i])


def agg(func, arg, typ, distinct=False, extra=(), order_by=()):
    return AggregateExpr(func, arg, typ, distinct, tuple(extra), tuple(order_by))


def filtered(cond, e):
    return If(cond, e, Literal(None, e.type), e.type)


COMMA = Literal(",", TEXT)
AGGS = {
    "bools": (agg("bool_and", col(6), BOOL), agg("bool_or", col(6), BOOL),
              agg("bool_and", Call("gt", (col(1), Literal(0, INT8)), BOOL), BOOL)),
    "numeric_moments": (agg("var_samp", col(1), NUMERIC), agg("var_pop", col(2), NUMERIC),
                        agg("stddev_samp", col(3), NUMERIC), agg("stddev_pop", col(1), NUMERIC),
                        agg("var_pop", col(10), NUMERIC), agg("stddev_samp", col(10), NUMERIC)),
    "float_moments": (agg("var_samp", col(4), FLOAT8), agg("stddev_pop", col(4), FLOAT8),
                      agg("var_pop", col(5), FLOAT8), agg("stddev_samp", col(5), FLOAT8)),
    "distinct_and_filter": (agg("var_pop", col(1), NUMERIC, distinct=True),
                            agg("stddev_samp", col(4), FLOAT8, distinct=True),
                            agg("var_samp", filtered(col(6), col(2)), NUMERIC),
                            agg("count", filtered(col(6), Literal(True, BOOL)), INT8),
                            agg("bool_or", filtered(Call("is_null", (col(1),), BOOL), col(6)), BOOL)),
    "string_agg": (agg("string_agg", col(7), TEXT, extra=(COMMA,)),
                   agg("string_agg", col(7), TEXT, extra=(col(8),), order_by=((col(1), True, False),)),
                   agg("string_agg", col(7), TEXT, distinct=True, extra=(COMMA,),
                       order_by=((col(7), False, True),)),
                   agg("string_agg", filtered(col(6), col(7)), TEXT, extra=(COMMA,),
                       order_by=((Call("float_order_key", (col(4),), INT8), False, True),
                                 (col(2), True, True))),
                   agg("string_agg", col(9), BYTEA, extra=(Literal(b"|", BYTEA),),
                       order_by=((col(3), False, False),))),
}


def _canon(counter: Counter) -> Counter:
    """NaN is not equal to itself: give it a stable stand-in so rows compare."""
    out = Counter()
    for row, c in counter.items():
        out[tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row)] += c
    return +out


def check_against_scratch(plan, steps, workers):
    outputs, dfs = run_dataflow(plan, {"t": T}, steps, workers)
    for df in dfs:
        assert not df.errors, df.errors
    seen_in, seen_out, lower = [], [], AS_OF
    for (upper, ups), out in zip(steps, outputs):
        seen_in.extend(ups["t"])
        seen_out.extend(out)
        for t in range(lower, upper):
            state = _accumulate(seen_in, t)
            scratch_out, scratch_dfs = run_dataflow(
                plan, {"t": T}, [(AS_OF + 1, {"t": [(r, AS_OF, c) for r, c in state.items()]})], 1)
            assert not scratch_dfs[0].errors, scratch_dfs[0].errors
            expected = _canon(_accumulate(scratch_out[0], AS_OF))
            got = _canon(_accumulate(seen_out, t))
            assert got == expected, f"workers={workers} t={t}\n got={dict(got)}\n expected={dict(expected)}"
        lower = upper


@WORKERS
@pytest.mark.parametrize("family", sorted(AGGS))
@SETTINGS
@given(data=st.data())
def test_grouped_aggregates_equal_recomputation(workers, family, data):
    steps = draw_stream(data, {"t": rows}, max_steps=3, max_ops=8)
    check_against_scratch(Reduce(_get(), (0,), AGGS[family]), steps, workers)


@WORKERS
@pytest.mark.parametrize("family", sorted(AGGS))
@SETTINGS
@given(data=st.data())
def test_global_aggregates_equal_recomputation(workers, family, data):
    steps = draw_stream(data, {"t": rows}, max_steps=3, max_ops=8)
    check_against_scratch(Reduce(_get(), (), AGGS[family]), steps, workers)


def _get():
    from dataflow.plan import Get
    return Get("t", T)


def test_scratch_values_on_a_hand_checked_example():
    """The from-scratch side itself: values a person can check."""
    plan = Reduce(_get(), (), AGGS["bools"][:2] + AGGS["numeric_moments"][:1] + AGGS["string_agg"][:1])
    base = (None,) * len(T)

    def row(x, b, s):
        r = list(base)
        r[0], r[1], r[6], r[7] = 0, x, b, s
        return tuple(r)

    state = {row(1, True, "a"): 1, row(2, False, "b"): 2, row(None, None, None): 1}
    out, _ = run_dataflow(plan, {"t": T}, [(AS_OF + 1, {"t": [(r, AS_OF, c) for r, c in state.items()]})], 1)
    ((values, _),) = _accumulate(out[0], AS_OF).items()
    assert values[:2] == (False, True)
    assert values[2] == Decimal("0.3333333333333333")  # var_samp(1, 2, 2)
    assert values[3] == "a,b,b"
