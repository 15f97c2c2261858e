"""Inline parts: small writes kept in the shard state itself, not in blob storage."""

from pathlib import Path

from dataflow.batch import batch_from_rows
from dataflow.types import INT8, TEXT
from storage.persist import PersistClient

TYPES = (INT8, TEXT)


def test_small_appends_are_inline_durable_and_compacted_into_the_same_contents(tmp_path: Path):
    client = PersistClient.open_local(tmp_path, inline_part_max_bytes=4096, auto_compact_batches=4)
    shard = client.open_shard("t", TYPES)
    expected: dict[tuple, int] = {}
    for t in range(12):
        rows = [(t, "x"), (t % 3, "y")]
        shard.compare_and_append(batch_from_rows(rows, TYPES, t, 1), t, t + 1)
        for r in rows:
            expected[r] = expected.get(r, 0) + 1
    # Nothing reached blob storage: every part so far was small enough to be inline.
    assert client.blob.list_keys("t/") == []
    assert all(p.inline is not None for b in shard.state().batches for p in b.parts)
    # A fresh client (as after a restart) reads the same contents from the state alone.
    cold = PersistClient.open_local(tmp_path).open_shard("t", TYPES)
    snap = cold.snapshot(11)
    got = {(a, b): d for a, b, d in zip(snap.column("c0").to_pylist(), snap.column("c1").to_pylist(),
                                         snap.column("diff").to_pylist())}
    assert got == expected


def test_large_appends_still_go_to_blob(tmp_path: Path):
    client = PersistClient.open_local(tmp_path, inline_part_max_bytes=4096)
    shard = client.open_shard("t", TYPES)
    rows = [(i, "v" * 20 + str(i)) for i in range(5000)]
    shard.compare_and_append(batch_from_rows(rows, TYPES, 0, 1), 0, 1)
    (part,) = [p for b in shard.state().batches for p in b.parts]
    assert part.inline is None
    assert client.blob.get(part.key) is not None
    assert shard.snapshot(0).num_rows == 5000
