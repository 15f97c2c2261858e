"""RETENTION WINDOW (storage/sources/retention.py) over a real persist shard: rows leave one to two
windows after they arrived, never twice (equal rows included), and the shard stops growing: with
the compaction hold, inserts and their retractions cancel, so what the shard stores stays about
a window's worth of rows however long the source runs."""

from pathlib import Path

import numpy as np
import pyarrow as pa

from dataflow.batch import concat, make_batch
from dataflow.types import INT8
from storage.controller import StorageController
from storage.persist import PersistClient
from storage.sources.retention import RetentionState, compaction_hold, expired

WINDOW = 1_000  # timestamps are milliseconds
STEP = 100
ROWS_PER_STEP = 10


def _rows(values: np.ndarray) -> pa.Table:
    n = len(values)
    return make_batch([pa.array(values, pa.int64())], pa.array(np.zeros(n, np.uint64)), pa.array(np.ones(n, np.int64)))


def _counts(storage: StorageController, id: str) -> dict[int, int]:
    snap = storage.snapshot(id)
    out: dict[int, int] = {}
    for v, d in zip(snap.column(0).to_pylist(), snap.column("diff").to_pylist()):
        out[v] = out.get(v, 0) + d
    return {v: d for v, d in out.items() if d}


def _stored_rows(storage: StorageController, id: str) -> int:
    return sum(b.rows for b in storage._shards[id].state().batches)


def test_rows_leave_after_the_window_and_the_shard_stops_growing(tmp_path: Path):
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("src", (INT8,))
    state = RetentionState(WINDOW, 0)
    arrived: dict[int, list[int]] = {}  # value -> arrival times (values repeat: a multiset)
    stored_at: dict[int, int] = {}
    ts = 0
    for step in range(1, 301):
        ts += STEP
        # Every step brings new rows, some equal to rows already there.
        values = (np.arange(ROWS_PER_STEP) + step * ROWS_PER_STEP) % 700
        parts = [_rows(values)]
        cut = state.due(ts)
        gone = expired(storage, "src", cut) if cut is not None else None
        if gone is not None:
            parts.append(gone)
        batch = concat(parts)
        batch = batch.set_column(batch.schema.get_field_index("time"), "time",
                                 pa.array(np.full(batch.num_rows, ts, np.uint64)))
        storage.append("src", batch, ts + 1)
        if gone is not None:
            state.last_write_ts = ts
            for v in gone.column(0).to_pylist():
                arrived[v].pop(0)  # the oldest arrival of that value leaves
        for v in values.tolist():
            arrived.setdefault(v, []).append(ts)
        storage.compact("src", compaction_hold(WINDOW, ts))
        counts = _counts(storage, "src")
        assert all(d > 0 for d in counts.values()), "a row retracted twice"
        assert counts == {v: len(t) for v, t in arrived.items() if t}
        # Nothing older than two windows is left; nothing younger than one window has gone.
        oldest = min(t[0] for t in arrived.values() if t)
        assert ts - oldest <= 2 * WINDOW + STEP
        stored_at[step] = _stored_rows(storage, "src")
    # 30 windows of arrivals: the shard stores no more late than early on.
    assert max(stored_at[s] for s in range(250, 301)) <= 1.2 * max(stored_at[s] for s in range(40, 60))
    assert max(stored_at.values()) < 300 * ROWS_PER_STEP / 3   # (3,000 rows arrived in all)
