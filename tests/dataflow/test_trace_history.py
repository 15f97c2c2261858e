"""Every worker agrees on how far back a collection can be read (`CollectionTrace.compacted_to`),
whatever its share of the rows: the workers of a replica start a new dataflow at the later of
its time and that point, and if they disagreed, one would step the dataflow while the other
waited, each in a different exchange (the replica hung until the exchange timeout; seen once in
CI as a two-minute stall and a replica restart)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dataflow.batch import make_batch
from dataflow.types import INT8
from dataflow.worker import HISTORY_MS, CollectionTrace


def _rows(n: int, t: int) -> pa.Table:
    return make_batch([pa.array(np.arange(n, dtype=np.int64))], pa.array(np.full(n, t, np.uint64)),
                      pa.array(np.ones(n, np.int64)))


def test_workers_with_different_shares_agree_on_the_readable_history():
    # Worker 0 gets most rows of each write, worker 1 few or none: their batches merge at
    # different moments, which used to decide how far back each could be read.
    a, b = CollectionTrace((INT8,), 1), CollectionTrace((INT8,), 1)
    rng = np.random.default_rng(7)
    for step in range(1, 400):
        t = step * 100
        a.append(_rows(int(rng.integers(1, 50)), t), t + 1)
        b.append(_rows(int(rng.integers(0, 2)), t) if step % 3 == 0 else None, t + 1)
        assert a.compacted_to == b.compacted_to == max(0, t - HISTORY_MS)
    # What is readable is still right: every row, at any time from compacted_to on.
    total = int(np.asarray(a.contents_from(a.upper - 1)["diff"]).sum())
    assert total > 0 and a.compacted_to <= a.upper - 1


def test_merged_batches_are_one_chunk_each():
    # A read filters and consolidates the whole trace: Arrow pays per chunk, and one step's
    # output per chunk made a 5-row view's 600-update history cost ~2 ms to read.
    trace = CollectionTrace((INT8,), 1)
    for step in range(1, 600):
        trace.append(_rows(2, step * 20), step * 20 + 1)
        while trace.untidy():  # (what the worker does after each command: Worker.tidy_traces)
            trace.tidy()
    assert len(trace.batches) <= 16
    assert all(b.column(0).num_chunks == 1 for b in trace.batches[:-1])


def test_merges_left_for_later_change_no_contents():
    """A worker appends without merging and merges after its answers are out: the contents at
    every readable time are the same before and after the merges."""
    rng = np.random.default_rng(3)
    trace = CollectionTrace((INT8,), 1)
    for step in range(1, 200):
        t = step * 10
        trace.append(_rows(int(rng.integers(0, 30)), t), t + 1)
        if step % 7 == 0:
            as_of = max(trace.compacted_to, t - int(rng.integers(0, 100)))
            before = trace.contents_from(as_of)
            while trace.untidy():
                trace.tidy()
            after = trace.contents_from(as_of)
            def totals(b):
                return sorted(zip(b.column(0).to_pylist(), b["diff"].to_pylist()))
            from dataflow.batch import consolidate
            assert totals(consolidate(before)) == totals(consolidate(after))
            assert not trace.untidy()
