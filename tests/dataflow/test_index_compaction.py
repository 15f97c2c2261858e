"""An index's arrangement forgets history nobody can read (dataflow/worker.py, `_compact_index`):
a table of 1,000 rows updated 5,000 times through a real worker keeps about its live rows, not
every update it ever saw (11,000 before), while reads still to be answered from it at older
times (fast-path lookups, peeks joining it in place) get exactly their time's rows."""

from __future__ import annotations

import pyarrow as pa

from dataflow.batch import batch_from_rows, rows_of
from dataflow.fast_peek import FastPeekPlan
from dataflow.plan import ArrangeBy, Get, Join, Project
from dataflow.protocol import (AdvanceUpper, CreateDataflow, FastPeek, FastPeeks, ImportCollection, PeekResult,
                               PeekResults)
from dataflow.types import INT8
from dataflow.worker import HISTORY_MS, Worker
from storage.controller import StorageController
from storage.persist import PersistClient

T = (INT8, INT8)  # (key, value)
N = 1000


def _worker(tmp_path) -> tuple[Worker, list[object]]:
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("u1", T)
    storage.open("u2", (INT8,))
    storage.append("u1", batch_from_rows([(k, 0) for k in range(N)], T, 1), 2)
    storage.append("u2", batch_from_rows([(k,) for k in range(0, N, 100)], (INT8,), 1), 2)
    sent: list[object] = []
    worker = Worker(0, 1, tmp_path, None, sent.append)
    worker.handle(ImportCollection("u1", T, 2))
    worker.handle(ImportCollection("u2", (INT8,), 2))
    worker.handle(CreateDataflow("u3", ArrangeBy(Get("u1", T), (0,)), 1, "index"))
    return worker, sent


def _update(worker: Worker, values: dict[int, int], k: int, t: int) -> None:
    """Set key k's value to t at time t (one write)."""
    batch = pa.concat_tables([batch_from_rows([(k, values[k])], T, t, -1), batch_from_rows([(k, t)], T, t, 1)])
    values[k] = t
    worker.handle(AdvanceUpper({"u1": batch}, ("u1", "u2"), t + 1))


def test_an_index_under_updates_keeps_about_its_live_rows(tmp_path):
    worker, _ = _worker(tmp_path)
    values = {k: 0 for k in range(N)}
    start = 2
    for i in range(5000):
        _update(worker, values, i % N, start + i * 10)  # 10 ms apart: history is 5 s
    arrangement = worker.dataflows["u3"].dataflow.arrangement()
    arrangement.compact_now()
    kept = len(arrangement)
    # The live rows plus the updates of the last HISTORY_MS (readable AS OF), nothing older.
    assert kept <= N + 2 * (HISTORY_MS // 10) + 10, kept
    contents = worker.collections["u3"].contents_from(worker.collections["u3"].upper - 1)
    live = {}
    for row, d in zip(rows_of(contents), contents["diff"].to_pylist()):
        live[row] = live.get(row, 0) + d
    assert sorted(r for r, d in live.items() if d) == sorted(values.items())


def test_reads_waiting_at_an_older_time_keep_their_rows(tmp_path):
    worker, sent = _worker(tmp_path)
    values = {k: 0 for k in range(N)}
    # A fast-path lookup of key 5 as of 58,000, waiting for the index to get there...
    plan = FastPeekPlan("u3", T, Project(Get("u3", T), (0, 1)), (0,), pa.table({"c0": pa.array([5], pa.int64())}))
    worker.handle(FastPeeks([FastPeek("p1", plan, 58_000)]))
    # ... and a peek joining the index in place as of 30,000, waiting for u2 to get there.
    join = Join(Get("u2", (INT8,)), Get("u3", T), (0,), (0,))
    worker.handle(CreateDataflow("p2", join, 30_000, "peek"))
    # Then one write of many updates at times up to 60,000: the index's readable history
    # starts at 55,000 after it, past the join's time (which was readable when it was made).
    parts, at = [], {}
    for t in range(2, 60_000, 7):
        k = 5 if t % 3 == 0 else (t // 7) % N
        parts += [batch_from_rows([(k, values[k])], T, t, -1), batch_from_rows([(k, t)], T, t, 1)]
        values[k] = t
        if t <= 58_000:
            at[58_000] = values[5]
        if t <= 30_000:
            at[30_000] = sorted((k, k, values[k]) for k in range(0, N, 100))
    worker.handle(AdvanceUpper({"u1": pa.concat_tables(parts)}, ("u1",), 60_001))
    batch = pa.concat_tables([batch_from_rows([(7, values[7])], T, 60_001, -1), batch_from_rows([(7, 1)], T, 60_001, 1)])
    worker.handle(AdvanceUpper({"u1": batch}, ("u1",), 60_002))   # the index steps again
    worker.handle(AdvanceUpper({}, ("u2",), 60_002))               # now the join can read
    answers = {m.id: m for msg in sent for m in (msg.results if isinstance(msg, PeekResults) else [msg])
               if isinstance(m, PeekResult)}
    assert answers["p1"].error is None and rows_of(answers["p1"].batch) == [(5, at[58_000])]
    assert answers["p2"].error is None and sorted(rows_of(answers["p2"].batch)) == at[30_000]
