"""batch_from_rows / batch_from_columns: every row at the given time and diff, and rows of no
columns still counted (`SELECT FROM t`, `count(*)` over a relation of zero columns: a batch that
took its length from its first column had none and said 0 rows)."""

from __future__ import annotations

from dataflow.batch import batch_from_columns, batch_from_rows
from dataflow.types import INT8, TEXT


def test_rows_of_no_columns_are_counted():
    batch = batch_from_rows([(), (), ()], [], 7, -1)
    assert batch.num_rows == 3
    assert batch["time"].to_pylist() == [7, 7, 7] and batch["diff"].to_pylist() == [-1, -1, -1]
    assert batch_from_columns([], [], 1, rows=2).num_rows == 2


def test_rows_become_columns_at_one_time():
    batch = batch_from_rows([(1, "a"), (None, "b")], [INT8, TEXT], 4)
    assert batch.column(0).to_pylist() == [1, None] and batch.column(1).to_pylist() == ["a", "b"]
    assert batch["time"].to_pylist() == [4, 4] and batch["diff"].to_pylist() == [1, 1]
    assert batch_from_rows([], [INT8], 4).num_rows == 0
