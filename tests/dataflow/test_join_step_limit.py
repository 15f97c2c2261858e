"""A join whose one-step output would exceed the runtime's bound fails with 53200 before it is
built (the worker stays up), and joins under the bound are unaffected."""

from __future__ import annotations

import pyarrow as pa
import pytest

from dataflow.errors import SqlError
from dataflow.exchange import LocalExchange
from dataflow.operators.base import DEFAULT_STEP_LIMIT_BYTES
from dataflow.plan import Get, Join
from dataflow.render import Dataflow
from dataflow.types import INT8, arrow_schema


def _table(values: list[int]) -> pa.Table:
    return pa.table({"c0": values, "time": [0] * len(values), "diff": [1] * len(values)},
                    schema=arrow_schema([INT8]))


def _cross(limit: int) -> Dataflow:
    plan = Join(Get("a", (INT8,)), Get("b", (INT8,)), (), ())
    return Dataflow(plan, 0, LocalExchange(), step_limit_bytes=limit)


def test_cross_product_over_the_bound_is_refused_with_53200():
    df = _cross(limit=100_000)          # 100 kB: about 3 000 rows of (int8, time, diff) x 2
    out = df.step({"a": _table(list(range(1000))), "b": _table(list(range(1000)))}, upper=1)
    assert out.num_rows == 0
    assert [e.sqlstate for e in df.errors] == ["53200"]
    err: SqlError = df.errors[0]
    assert "1,000,000 rows" in err.message and err.hint


def test_join_under_the_bound_is_unaffected():
    df = _cross(limit=DEFAULT_STEP_LIMIT_BYTES)
    out = df.step({"a": _table(list(range(100))), "b": _table(list(range(50)))}, upper=1)
    assert not df.errors
    assert sum(out.column("diff").to_pylist()) == 5000


@pytest.mark.parametrize("n", [10, 300])
def test_equi_join_counts_only_true_matches_against_the_bound(n):
    # Rows (i, i % 10) joined on the second column: n*n/10 output rows. A bound that admits them
    # passes; one that does not refuses. (Duplicate rows would consolidate first, so the rows
    # are distinct.)
    def rows(k: int) -> pa.Table:
        return pa.table({"c0": list(range(k)), "c1": [i % 10 for i in range(k)], "time": [0] * k,
                         "diff": [1] * k}, schema=arrow_schema([INT8, INT8]))
    plan = Join(Get("a", (INT8, INT8)), Get("b", (INT8, INT8)), (1,), (1,))
    matches = n * n // 10
    ok = Dataflow(plan, 0, LocalExchange(), step_limit_bytes=matches * 100)
    out = ok.step({"a": rows(n), "b": rows(n)}, upper=1)
    assert not ok.errors and out.num_rows == matches
    tight = Dataflow(plan, 0, LocalExchange(), step_limit_bytes=matches * 10)
    tight.step({"a": rows(n), "b": rows(n)}, upper=1)
    assert [e.sqlstate for e in tight.errors] == ["53200"]
