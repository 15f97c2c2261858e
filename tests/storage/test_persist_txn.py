"""The transaction WAL (storage/persist/txn.py): a write to several shards commits with one
compare-and-set and is applied to each shard afterwards; recovery finishes what a crash
interrupted. Crashes are real where it matters: a child process dies with os._exit at a chosen
consensus compare-and-set, then a fresh client recovers the directory."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from persist_helpers import TYPES, as_counter, updates
from storage.controller import StorageController
from storage.persist import PersistClient, TxnWal
from storage.persist.txn import TXNS_KEY


def client_at(path: Path, **kw) -> PersistClient:
    return PersistClient.open_local(path, auto_compact_batches=None, **kw)


def contents(client: PersistClient, shard_id: str) -> dict:
    shard = client.open_shard(shard_id, TYPES)
    upper = shard.upper()
    return {} if upper == 0 else dict(as_counter(shard.snapshot(upper - 1).drop_columns(["time"])))


@pytest.mark.parametrize("inline", [0, 4096])
def test_commit_then_apply(tmp_path, inline):
    client = client_at(tmp_path, inline_part_max_bytes=inline)
    a, b = client.open_shard("a", TYPES), client.open_shard("b", TYPES)
    a.compare_and_append(updates([(1, "x", 0, 1)]), 0, 1)
    wal = TxnWal(client)
    entry = wal.commit(7, {"a": (a, updates([(1, "x", 0, -1)])), "b": (b, updates([(1, "x", 0, 1)]))})
    # Committed, not applied: the shards do not have it yet, the record does.
    assert (a.upper(), b.upper()) == (1, 0)
    assert [e.ts for e in wal.pending()] == [7]
    assert wal.apply(entry) == {"a": 8, "b": 8}
    assert contents(client, "a") == {} and contents(client, "b") == {(1, "x"): 1}
    assert b.snapshot(7).column("time").to_pylist() == [7]
    # Applying again (a crash right after the last shard's CAS) changes nothing.
    before = client.consensus.head("shard/b").seqno
    assert wal.apply(entry) == {"a": 8, "b": 8}
    assert client.consensus.head("shard/b").seqno == before
    # Recovery of a fully applied record: nothing to finish, record emptied.
    assert wal.recover() == [] and wal.pending() == []


def test_crash_between_commit_and_apply_is_finished_by_recovery(tmp_path):
    client = client_at(tmp_path)
    a, b, c = (client.open_shard(s, TYPES) for s in "abc")
    wal = TxnWal(client)
    entry = wal.commit(10, {s: (sh, updates([(i, s, 0, 1)])) for i, (s, sh) in enumerate(zip("abc", (a, b, c)))})
    wal.apply(entry, only={"a"})  # ... and the process dies here
    fresh = client_at(tmp_path)
    assert contents(fresh, "b") == {}  # not yet
    recovered = TxnWal(fresh).recover()
    assert [e.ts for e in recovered] == [10]
    assert {s: contents(fresh, s) for s in "abc"} == {"a": {(0, "a"): 1}, "b": {(1, "b"): 1}, "c": {(2, "c"): 1}}
    assert {s: fresh.shard_state(s).upper for s in "abc"} == {"a": 11, "b": 11, "c": 11}
    assert TxnWal(fresh).pending() == []


def test_recovery_skips_a_dropped_shard(tmp_path):
    client = client_at(tmp_path)
    a, b = client.open_shard("a", TYPES), client.open_shard("b", TYPES)
    wal = TxnWal(client)
    wal.commit(3, {"a": (a, updates([(1, "a", 0, 1)])), "b": (b, updates([(2, "b", 0, 1)]))})
    client.drop_shard("b")
    assert [e.ts for e in TxnWal(client).recover()] == [3]
    assert contents(client, "a") == {(1, "a"): 1}


def test_commit_must_be_after_the_last_entry(tmp_path):
    client = client_at(tmp_path)
    a, b = client.open_shard("a", TYPES), client.open_shard("b", TYPES)
    wal = TxnWal(client)
    wal.apply(wal.commit(5, {"a": (a, updates([(1, "a", 0, 1)])), "b": (b, updates([(1, "b", 0, 1)]))}))
    with pytest.raises(ValueError):
        wal.commit(5, {"a": (a, updates([(2, "a", 0, 1)])), "b": (b, updates([(2, "b", 0, 1)]))})


def test_controller_single_table_keeps_the_direct_path(tmp_path):
    storage = StorageController(client_at(tmp_path))
    storage.open("a", TYPES)
    storage.open("b", TYPES)
    storage.append_atomic({"a": updates([(1, "a", 0, 1)])}, 4)
    assert storage.persist.consensus.head(TXNS_KEY) is None  # no WAL record for one table
    storage.append_atomic({"a": updates([(2, "a", 0, 1)]), "b": updates([(2, "b", 0, 1)])}, 6)
    assert (storage.upper("a"), storage.upper("b")) == (7, 7)
    assert storage.persist.consensus.head(TXNS_KEY) is not None
    storage.append("a", updates([(3, "a", 8, 1)]), 9)
    assert contents(storage.persist, "a") == {(1, "a"): 1, (2, "a"): 1, (3, "a"): 1}


def test_controller_finishes_a_failed_application_before_the_next_append(tmp_path):
    storage = StorageController(client_at(tmp_path))
    storage.open("a", TYPES)
    storage.open("b", TYPES)
    real = storage.txns._apply_one
    calls = []

    def failing(shard_id, part, ts):
        calls.append(shard_id)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(shard_id, part, ts)

    storage.txns._apply_one = failing
    with pytest.raises(OSError):
        storage.append_atomic({"a": updates([(1, "a", 0, 1)]), "b": updates([(1, "b", 0, 1)])}, 4)
    storage.txns._apply_one = real
    # The transaction is committed; the next write to b first gives b its part.
    storage.append("b", updates([(2, "b", 6, 1)]), 7)
    assert contents(storage.persist, "b") == {(1, "b"): 1, (2, "b"): 1}
    assert storage.persist.shard_state("b").batches[0].upper == 5


CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {helpers!r})
    from pathlib import Path
    from persist_helpers import TYPES, updates
    from storage.controller import StorageController
    from storage.persist import PersistClient

    client = PersistClient.open_local(Path({data_dir!r}), auto_compact_batches=None,
                                      inline_part_max_bytes={inline!r})
    storage = StorageController(client)
    for s in ("a", "b", "c"):
        storage.open(s, TYPES)
    real_cas = client.consensus.compare_and_set
    seen = []

    def crashing_cas(key, expected, new, parts=None):
        seen.append(key)
        if len(seen) == {crash_at!r}:
            os._exit(17)  # no cleanup, no finally blocks: a process crash
        return real_cas(key, expected, new, parts)

    client.consensus.compare_and_set = crashing_cas
    storage.append_atomic({{s: updates([(i, s, 0, 1)]) for i, s in enumerate("abc")}}, 20)
    os._exit(0)
""")


@pytest.mark.parametrize("inline", [0, 4096])
@pytest.mark.parametrize("crash_at", [1, 2, 3, 4, 5])
def test_real_crash_at_every_compare_and_set(tmp_path, crash_at, inline):
    """CAS 1 is the commit point (txns record), 2-4 apply to a, b, c. A crash at CAS 1 (before
    it happens) loses the whole transaction; any later crash leaves it whole after recovery."""
    data_dir = tmp_path / "persist"
    client = client_at(data_dir)
    for s in "abc":
        client.open_shard(s, TYPES)
    helpers = str(Path(__file__).parent)
    code = CHILD.format(helpers=helpers, data_dir=str(data_dir), crash_at=crash_at, inline=inline)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == (17 if crash_at <= 4 else 0), proc.stderr
    fresh = client_at(data_dir)
    before = {s: contents(fresh, s) for s in "abc"}
    applied = {s for s in "abc" if before[s]}
    if crash_at == 1:
        assert applied == set()
    else:
        assert applied == set("abc"[:crash_at - 2])  # a partial state on disk, before recovery
    staged = {k for s in "abc" for k in fresh.blob.list_keys(f"{s}/")}
    storage = StorageController(fresh)
    recovered = storage.recover()
    # A transaction that never committed leaves nothing behind: its staged parts are discarded.
    left = {k for s in "abc" for k in fresh.blob.list_keys(f"{s}/")}
    live = {k for s in "abc" for k in fresh.shard_state(s).part_keys if not k.startswith("inline/")}
    assert left == live
    if crash_at == 1 and not inline:
        assert len(staged) == 3 and not left
    after = {s: contents(fresh, s) for s in "abc"}
    if crash_at == 1:
        assert recovered == [] and after == {"a": {}, "b": {}, "c": {}}
    else:
        assert after == {"a": {(0, "a"): 1}, "b": {(1, "b"): 1}, "c": {(2, "c"): 1}}
        assert [e.ts for e in recovered] == ([20] if crash_at <= 4 else [])
        assert {s: fresh.shard_state(s).upper for s in "abc"} == {"a": 21, "b": 21, "c": 21}
    # Recovery is idempotent, and the shards take later writes.
    assert storage.recover() == []
    for s in "abc":
        storage.open(s, TYPES)
    storage.append_atomic({"a": updates([(9, "a", 0, 1)]), "c": updates([(9, "c", 0, 1)])}, 30)
    assert contents(fresh, "a")[(9, "a")] == 1
