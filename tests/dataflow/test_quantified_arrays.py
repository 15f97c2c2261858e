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
