"""x op ANY/ALL (array) when many rows share one array (a constant, a parameter): compared one
distinct element at a time (`_quantified_shared`), never as rows x elements pairs, which took
a worker to 11 GB on `SELECT count(*) FROM t WHERE v > ALL($1)` with 100k rows and a 5,000-id
parameter. Answers equal the pairwise path's (tests/fuzz/slt/any_all_constant_arrays.slt checks
both against PostgreSQL)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.scalar import compile_expr
from dataflow.types import BOOL, INT8, TEXT, array_of


def _eval(expr, table: pa.Table) -> list:
    return compile_expr(expr).__call__(table).to_pylist()


def _table(values) -> pa.Table:
    return pa.table({"c0": pa.array(values, pa.int64())})


def test_a_shared_array_is_compared_element_by_element():
    rows, elements = 5_000, 400
    text = "{" + ",".join(str(i * 3) for i in range(elements)) + ",NULL}"
    t = _table(list(range(rows)) + [None])
    for func, op in (("array_all", "gt"), ("array_any", "lt")):
        expr = Call(func, (ColumnRef(0, INT8), Literal(text, array_of(INT8)), Literal(op, TEXT)), BOOL)
        tracemalloc.start()
        got = _eval(expr, t)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 20 << 20, peak   # pairwise: 2M Python values (~100 MB)
        # Against the definition, row by row (NULL element: ALL is never true, ANY NULL unless a hit).
        cap = 3 * (elements - 1)
        for x, r in zip(list(range(rows)) + [None], got):
            if x is None:
                assert r is None
            elif func == "array_all":
                assert r is (False if x <= cap else None)
            else:
                assert r is (True if x < cap else None)


def test_rows_with_different_arrays_take_the_pairwise_path_and_agree():
    arrays = pa.array(["{1,2}", "{3}", None, "{}", "{5,NULL}"] * 4, pa.string())
    t = pa.table({"c0": pa.array([1, 3, 2, 9, 7] * 4, pa.int64()), "c1": arrays})
    expr = Call("array_any", (ColumnRef(0, INT8), ColumnRef(1, array_of(INT8)), Literal("eq", TEXT)), BOOL)
    assert _eval(expr, t) == [True, True, None, False, None] * 4
    shared = pa.table({"c0": pa.array(np.arange(20), pa.int64()), "c1": pa.array(["{5,NULL}"] * 20)})
    assert _eval(expr, shared) == [None] * 5 + [True] + [None] * 14


# ---- long constant arrays: one literal, read in one pass ---------------------------------

from hypothesis import assume, given, settings, strategies as st  # noqa: E402

from dataflow import arrays  # noqa: E402
from dataflow.errors import SqlError  # noqa: E402
from dataflow.types import INT2, INT4  # noqa: E402


def _scan_split(text: str) -> list:
    """The character scan `arrays.split` falls back to (a quoted element forces it)."""
    return arrays.split(text[:-1] + ',"q"}')[:-1]


_ITEM = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1).map(str), st.just("NULL"), st.just("null"),
                  st.text("abc +-0123456789.", min_size=1, max_size=5))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ITEM, st.sampled_from(["", " ", "  "])), min_size=1, max_size=30))
def test_plain_array_text_splits_as_the_scan_does(items):
    text = "{" + ",".join(pad + x + pad for x, pad in items) + "}"
    assume(text[1:-1].strip())  # (blank: the empty array, before either path)
    try:
        want = _scan_split(text)
    except SqlError as e:
        try:
            arrays.split(text)
        except SqlError as e2:
            assert e2.sqlstate == e.sqlstate
            return
        raise AssertionError(f"{text} was accepted")
    assert arrays.split(text) == want


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([INT2, INT4, INT8]),
       st.lists(st.one_of(st.none(), st.integers(-2 ** 64, 2 ** 64), st.sampled_from(["+7", " 08", "1x", "1_0", "٣"])),
                max_size=20))
def test_integer_elements_read_as_the_general_cast_reads_them(element, values):
    from planner.casts import cast_value
    text = "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"

    def general() -> list:
        return arrays.read(text, element, cast=lambda v, t: cast_value(v, TEXT, t))
    try:
        want = general()
    except SqlError as e:
        try:
            arrays.read(text, element)
        except SqlError as e2:
            assert (e2.sqlstate, e2.message) == (e.sqlstate, e.message)
            return
        raise AssertionError(f"{text} was accepted")
    got = arrays.read(text, element)
    assert got == want
    assert arrays.write(got, element) == arrays.write(want, element)


def test_in_array_is_x_in_the_elements():
    arr = Literal("{1,3,NULL,5}", array_of(INT8))
    t = _table([1, 2, 3, None, 5])
    assert _eval(Call("in_array", (ColumnRef(0, INT8), arr), BOOL), t) == [True, None, True, None, True]
    plain = Literal("{1,3}", array_of(INT8))
    assert _eval(Call("in_array", (ColumnRef(0, INT8), plain), BOOL), t) == [True, False, True, None, False]
