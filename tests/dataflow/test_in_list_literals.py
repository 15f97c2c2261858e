"""`x IN (literals)` compiles to one set-membership test with SQL's NULL rules, and agrees with
the general (expression-list) path."""

from decimal import Decimal

import pyarrow as pa
from hypothesis import given, settings, strategies as st

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.scalar import compile_expr
from dataflow.types import BOOL, INT4, INT8, NUMERIC, TEXT


def test_null_rules():
    t = pa.table({"c0": pa.array([1, 2, None, 4], pa.int32())})
    plain = Call("in_list", (ColumnRef(0, INT4), Literal(1, INT8), Literal(4, INT8)), BOOL)
    with_null = Call("in_list", (ColumnRef(0, INT4), Literal(1, INT4), Literal(None, INT4)), BOOL)
    assert compile_expr(plain)(t).to_pylist() == [True, False, None, True]
    assert compile_expr(with_null)(t).to_pylist() == [True, None, None, None]


def test_mixed_types():
    t = pa.table({"c0": pa.array([1, 2], pa.int32()), "c1": pa.array(["a", None])})
    assert compile_expr(Call("in_list", (ColumnRef(0, INT4), Literal(Decimal("2.0"), NUMERIC)), BOOL)
                        )(t).to_pylist() == [False, True]
    assert compile_expr(Call("in_list", (ColumnRef(1, TEXT), Literal("a", TEXT)), BOOL)
                        )(t).to_pylist() == [True, None]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=20),
       st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=6))
def test_agrees_with_the_expression_path(column, items):
    t = pa.table({"c0": pa.array(column, pa.int64()), "c1": pa.array([0] * len(column), pa.int64())})
    literal = Call("in_list", (ColumnRef(0, INT8),) + tuple(Literal(v, INT8) for v in items), BOOL)
    # Adding 0 (a column) to each item forces the general path that evaluates every item.
    general = Call("in_list", (ColumnRef(0, INT8),) + tuple(
        Call("add", (Literal(v, INT8), ColumnRef(1, INT8)), INT8) for v in items), BOOL)
    assert compile_expr(literal)(t).to_pylist() == compile_expr(general)(t).to_pylist()
