"""Background compaction (storage/persist/compactor.py): appends return without merging, a
thread merges behind them, and nothing any reader sees changes - every snapshot read while the
thread works (and afterwards) equals the brute-force contents of exactly the updates appended,
and the shard ends with a few merged batches, not one per append."""

from __future__ import annotations

import random
import threading

import pytest

from persist_helpers import TYPES, as_counter, brute_snapshot, updates
from storage.persist import PersistClient


@pytest.mark.parametrize("seed", range(4))
def test_reads_beside_background_merges_see_every_append(tmp_path, seed):
    rng = random.Random(seed)
    client = PersistClient.open_local(tmp_path, auto_compact_batches=3, compact_in_background=True)
    shard = client.open_shard("s", TYPES)
    history: list[tuple] = []
    try:
        for step in range(60):
            upper = shard.upper()
            rows = [(rng.randrange(6), rng.choice(["a", "b", None]), upper, rng.choice([1, 1, -1]))
                    for _ in range(rng.randrange(1, 40))]
            shard.compare_and_append(updates(rows), upper, upper + 1)
            history.extend(rows)
            as_of = rng.randrange(shard.since(), shard.upper())
            assert as_counter(shard.snapshot(as_of)) == brute_snapshot(history, as_of), (step, as_of)
        assert client.compactor.wait_idle()
        assert len(shard.state().batches) < 12  # (60 appends, merged geometrically)
        last = shard.upper() - 1
        assert as_counter(shard.snapshot(last)) == brute_snapshot(history, last)
    finally:
        client.close()


def test_a_shard_asked_for_often_is_merged_once_per_wait(tmp_path):
    client = PersistClient.open_local(tmp_path, auto_compact_batches=None, compact_in_background=True)
    shard = client.open_shard("s", TYPES)
    for t in range(8):
        shard.compare_and_append(updates([(t, "a", t, 1)]), t, t + 1)
    merged = []
    original = shard.compact
    gate = threading.Event()

    def compact():
        gate.wait(10)
        merged.append(1)
        return original()
    shard.compact = compact
    for _ in range(5):
        client.compactor.request(shard)
    gate.set()
    assert client.compactor.wait_idle()
    assert 1 <= len(merged) <= 2  # (the first may have started before the other four were asked)
    assert len(shard.state().batches) < 8
    client.close()
    client.compactor.request(shard)  # after close: ignored, no thread left running
    assert not client.compactor._pending
