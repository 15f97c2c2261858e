"""Crash safety: a writer killed between writing its part and the CAS leaves only garbage.

The crashes are real: a child process does the write and dies with os._exit right before (or
right after) the consensus compare-and-set, then a fresh client inspects the directory.
"""

import subprocess
import sys
import textwrap

import pytest

from persist_helpers import TYPES, as_counter, updates
from storage.persist import PersistClient

CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {helpers!r})
    from pathlib import Path
    from persist_helpers import TYPES, updates
    from storage.persist import PersistClient

    client = PersistClient.open_local(Path({data_dir!r}), auto_compact_batches=None,
                                      consensus_part_max_bytes={consensus_parts!r})
    shard = client.open_shard("t1", TYPES)
    real_cas = client.consensus.compare_and_set

    def crashing_cas(key, expected, new, parts=None):
        if {when!r} == "after":
            real_cas(key, expected, new, parts)
        os._exit(17)  # no cleanup, no finally blocks: a process crash

    client.consensus.compare_and_set = crashing_cas
    if {action!r} == "append":
        shard.compare_and_append(updates([(99, "lost?", 2, 1)]), 2, 3)
    else:
        shard.compact(max_batches=1)
""")


def run_crashing_child(data_dir, action: str, when: str, helpers_dir, consensus_parts: int = 0) -> None:
    code = CHILD.format(helpers=str(helpers_dir), data_dir=str(data_dir), action=action, when=when,
                        consensus_parts=consensus_parts)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 17, proc.stderr


@pytest.fixture
def seeded(tmp_path):
    shard = PersistClient.open_local(tmp_path).open_shard("t1", TYPES)
    shard.compare_and_append(updates([(1, "a", 0, 1)]), 0, 1)
    shard.compare_and_append(updates([(1, "a", 1, -1), (2, "b", 1, 1)]), 1, 2)
    shard.downgrade_since(1)
    return tmp_path


def test_crash_before_append_cas_leaves_invisible_orphan(seeded, request):
    before = PersistClient.open_local(seeded).open_shard("t1", TYPES).state()
    run_crashing_child(seeded, "append", "before", request.path.parent)
    client = PersistClient.open_local(seeded)
    shard = client.open_shard("t1", TYPES)
    state = shard.state()
    assert (state.upper, state.batches) == (before.upper, before.batches)
    orphans = set(client.blob.list_keys("t1/")) - state.part_keys
    assert len(orphans) == 1  # the part was durably written, just never referenced
    assert as_counter(shard.snapshot(1)) == {(2, "b", 1): 1}
    # the shard is intact and writable: the retry succeeds
    shard.compare_and_append(updates([(99, "lost?", 2, 1)]), 2, 3)
    assert as_counter(shard.snapshot(2)) == {(2, "b", 2): 1, (99, "lost?", 2): 1}
    client.drop_shard("t1")
    assert client.blob.list_keys("t1/") == []  # drop also removes orphans


def test_crash_after_append_cas_is_durable(seeded, request):
    run_crashing_child(seeded, "append", "after", request.path.parent)
    shard = PersistClient.open_local(seeded).open_shard("t1", TYPES)
    assert shard.upper() == 3
    assert as_counter(shard.snapshot(2)) == {(2, "b", 2): 1, (99, "lost?", 2): 1}


@pytest.mark.parametrize("when", ["before", "after"])
def test_crash_during_compaction_keeps_shard_intact(seeded, request, when):
    run_crashing_child(seeded, "compact", when, request.path.parent)
    client = PersistClient.open_local(seeded)
    shard = client.open_shard("t1", TYPES)
    state = shard.state()
    assert len(state.batches) == (2 if when == "before" else 1)
    for key in state.part_keys:
        assert client.blob.get(key) is not None  # every referenced part exists
    assert as_counter(shard.snapshot(1)) == {(2, "b", 1): 1}
    assert as_counter(shard.updates_between(1, 2)) == {(2, "b", 1): 1}
    assert shard.compact(max_batches=1) is (when == "before")
    assert as_counter(shard.snapshot(1)) == {(2, "b", 1): 1}


def test_collect_garbage_removes_only_old_unreferenced_parts(seeded, request):
    run_crashing_child(seeded, "append", "before", request.path.parent)
    client = PersistClient.open_local(seeded)
    shard = client.open_shard("t1", TYPES)
    live = shard.state().part_keys
    assert len(client.blob.list_keys("t1/")) == len(live) + 1
    assert client.collect_garbage("t1") == 0  # within the grace period: maybe a live writer's
    assert client.collect_garbage("t1", grace_s=0) == 1
    assert set(client.blob.list_keys("t1/")) == live
    assert as_counter(shard.snapshot(1)) == {(2, "b", 1): 1}
    assert client.collect_garbage("nonexistent", grace_s=0) == 0


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_part_written_with_the_state_is_all_or_nothing(seeded, request, when):
    """A small part written into consensus with its state change (`consensus_part_max_bytes`):
    a crash before the compare-and-set leaves no part at all, one after it leaves a readable
    part and the state naming it."""
    run_crashing_child(seeded, "append", when, request.path.parent, consensus_parts=1 << 20)
    client = PersistClient.open_local(seeded)
    shard = client.open_shard("t1", TYPES)
    in_consensus = client.consensus.part_keys("db/t1/")
    if when == "before":
        assert shard.upper() == 2 and in_consensus == []
        assert set(client.blob.list_keys("t1/")) == shard.state().part_keys  # no orphan either
    else:
        assert shard.upper() == 3 and len(in_consensus) == 1 and in_consensus[0] in shard.state().part_keys
        assert as_counter(shard.snapshot(2)) == {(2, "b", 2): 1, (99, "lost?", 2): 1}
        # Compaction moves it to blob storage and deletes it from consensus.
        assert shard.compact(max_batches=1)
        assert client.consensus.part_keys("db/t1/") == []
        assert as_counter(PersistClient.open_local(seeded).open_shard("t1", TYPES).snapshot(2)) == \
            {(2, "b", 2): 1, (99, "lost?", 2): 1}
    client.drop_shard("t1")
    assert client.part_keys("t1") == []
