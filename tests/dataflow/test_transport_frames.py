"""Frames between the controller and the workers: Arrow tables travel as IPC streams, so a slice
carries its own rows only and every type comes back as it went."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest

from dataflow.batch import partition_rows
from dataflow.protocol import AdvanceUpper, PeekResult, PeekResults
from dataflow.transport import decode_payload, encode_frame


def _round_trip(obj):
    frame = encode_frame(obj)
    assert int.from_bytes(frame[:8], "big") == len(frame) - 8
    return decode_payload(frame[8:])


def _orders(n: int) -> pa.Table:
    return pa.table({"id": np.arange(n, dtype=np.int64), "customer_id": np.arange(n, dtype=np.int64) % 97,
                     "status": pa.array(["captured", "pending"] * (n // 2)),
                     "time": np.zeros(n, dtype=np.int64), "diff": np.ones(n, dtype=np.int64)})


def test_a_slice_carries_its_own_rows_only():
    table = _orders(200_000)
    whole = len(encode_frame(table))
    part = table.slice(150_000, 1_000)
    assert len(encode_frame(part)) < whole / 100
    assert _round_trip(part).equals(part)


def test_each_workers_part_of_a_write_is_about_its_share():
    """`partition_rows` hands each worker a slice of one reordered table; before frames were
    IPC, each worker's AdvanceUpper carried (and its trace kept alive) the whole table."""
    table = _orders(100_000)
    whole = len(encode_frame(table))
    parts = partition_rows(table, 2)
    sizes = [len(encode_frame(AdvanceUpper({"u1": p}, ("u1",), 5, False))) for p in parts]
    assert sum(sizes) < whole * 1.05
    assert all(size < whole * 0.6 for size in sizes)
    back = [_round_trip(AdvanceUpper({"u1": p}, ("u1",), 5, False)).updates["u1"] for p in parts]
    assert pa.concat_tables(back).sort_by("id").equals(table)


@pytest.mark.parametrize("table", [
    pa.table({"d": pa.array([decimal.Decimal("1.5"), None], pa.decimal128(38, 10)),
              "iv": pa.array([pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval()),
              "l": pa.array([[1, 2], None]), "s": pa.array([{"x": 1}, {"x": None}]),
              "n": pa.array([None, None], pa.null()), "b": pa.array([b"\x00", b""]),
              "ts": pa.array([datetime.datetime(2020, 1, 1), None], pa.timestamp("us")),
              "f": pa.array([float("nan"), -0.0])}),
    pa.table({"a": [1, 2, 3]}).select([]),  # rows without columns (a count(*) input)
    pa.table({"a": pa.array([], pa.int64())}),
    pa.table({"a": [1, 2]}).replace_schema_metadata({"k": "v"}),
    pa.concat_tables([pa.table({"a": [1]}), pa.table({"a": pa.array([], pa.int64())}), pa.table({"a": [2, 3]})]),
], ids=["types", "no-columns", "empty", "metadata", "chunked"])
def test_tables_come_back_as_they_went(table):
    back = _round_trip({"t": table})["t"]
    assert back.num_rows == table.num_rows
    assert back.schema == table.schema and back.schema.metadata == table.schema.metadata
    # (repr: NaN equals itself and -0.0 stays apart from 0.0)
    assert repr(back.to_pydict()) == repr(table.to_pydict())
    assert [c.num_chunks for c in back.columns] == [c.num_chunks for c in table.columns] or table.num_rows == 0


def test_record_batches_and_peek_answers_in_slices():
    batch = pa.RecordBatch.from_pydict({"a": list(range(1000)), "s": [str(i) for i in range(1000)]})
    assert _round_trip(batch.slice(10, 3)).equals(batch.slice(10, 3))
    assert _round_trip(batch.slice(0, 0)).num_rows == 0
    table = pa.Table.from_batches([batch])
    results = PeekResults([PeekResult("p", 0, None, part=(0, 5, 2)), PeekResult("p", 1, None, part=(0, 900, 3))],
                          [table])
    answers = _round_trip(results).answers()
    assert [a.batch.to_pydict()["a"] for a in answers] == [[5, 6], [900, 901, 902]]
