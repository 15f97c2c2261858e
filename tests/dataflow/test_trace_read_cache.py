"""A trace answers a whole read from its last read's answer plus the updates after it
(`CollectionTrace.snapshot`): at every readable time that answer is the contents from the whole
history, through appends (several times per write, times after the read), retractions, merges
with time advances, reads going back in time, cache limits and a reset."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

import dataflow.worker as worker_mod
from dataflow.batch import make_batch, snapshot_at
from dataflow.types import INT8, TEXT
from dataflow.worker import CollectionTrace


def _multiset(t: pa.Table) -> Counter:
    rows = zip(t.column(0).to_pylist(), t.column(1).to_pylist(), t["time"].to_pylist())
    out: Counter = Counter()
    for row, d in zip(rows, t["diff"].to_pylist()):
        out[row] += d
    return Counter({row: d for row, d in out.items() if d})  # (negative counts kept)


def _updates(rng: np.random.Generator, live: Counter, lo: int, hi: int) -> pa.Table:
    """A write: some new rows and some retractions of live ones, times in [lo, hi)."""
    rows, diffs = [], []
    for _ in range(int(rng.integers(0, 12))):
        if live and rng.random() < 0.4:
            row = sorted(live, key=repr)[int(rng.integers(0, len(live)))]
            live[row] -= 1
            if not live[row]:
                del live[row]
            rows.append(row)
            diffs.append(-1)
        else:
            row = (int(rng.integers(0, 8)), ["a", "b", None][int(rng.integers(0, 3))])
            live[row] += 1
            rows.append(row)
            diffs.append(1)
    times = rng.integers(lo, hi, len(rows)).astype(np.uint64)
    return make_batch([pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], pa.string())],
                      pa.array(times), pa.array(diffs, pa.int64()))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_cached_reads_equal_reads_of_the_whole_history(seed, monkeypatch):
    if seed == 4:  # limits small enough to be hit: the cache is dropped and rebuilt
        monkeypatch.setattr(worker_mod, "READ_CACHE_ROWS", 5)
        monkeypatch.setattr(worker_mod, "READ_CACHE_BATCHES", 3)
    rng = np.random.default_rng(seed)
    trace = CollectionTrace((INT8, TEXT), 1)
    live: Counter = Counter()
    upper = 1
    for step in range(300):
        new_upper = upper + int(rng.integers(1, 400))
        batch = _updates(rng, live, upper, new_upper)
        trace.append(batch, new_upper)
        upper = new_upper
        if rng.random() < 0.5:
            while trace.untidy():
                trace.tidy()
        for _ in range(int(rng.integers(0, 3))):
            # Mostly the newest time, sometimes an older readable one (before the last read).
            as_of = upper - 1 if rng.random() < 0.7 else int(rng.integers(trace.compacted_to, upper))
            whole = snapshot_at(trace.contents_from(as_of), as_of)
            assert _multiset(trace.snapshot(as_of)) == _multiset(whole)
            if seed != 4:
                assert trace.read_at == as_of  # (kept for the next read)
        if step == 150:
            trace.batches, trace.hashes = [], []  # (what a failed index's reset does)
            trace.forget_read()
            live = Counter()
