"""The transaction WAL: one durable commit point for a write that spans several shards.

Appending to each shard in turn is not atomic: a crash between two appends leaves the write
partly durable. Instead (the idea of Materialize's txn-wal, reduced to what a single writer
needs), a multi-shard write at timestamp `ts` goes in three steps:

1. *Stage*: each shard's updates are written as a part (inline in the record if small, else a
   durable blob under the shard's own prefix), referenced by nothing yet.
2. *Commit*: one compare-and-set of the consensus key `txns/wal` replaces the record with
   `{ts, shard -> part}`. This is the commit point: once it is durable the whole write is.
3. *Apply*: each shard gets its part as the batch `[upper, ts + 1)` by its ordinary
   compare-and-set. Applying is idempotent: a shard whose upper is already past `ts` has it.

A crash before step 2 leaves only unreferenced parts: the write never happened (the storage
controller's recovery deletes them, `PersistClient.collect_garbage`). A crash during step 3 leaves the record naming
shards that lack their part; `recover()` (at start-up, before anything reads the shards)
applies every entry of the record, so the write is then whole. The record keeps the last
committed entry until the next commit replaces it (no separate "tidy" write on the hot path);
recovery empties it.

Readers see a shard's data as "its own batches plus the record's entries up to the frontier":
the writer (the storage controller) applies an entry before it tells anyone the new frontier,
and recovery applies the record before any shard is read, so a reader that respects the
frontier never sees a partial transaction.

Invariant this relies on: while an entry is in the record and not applied, no other write goes
to its shards (the controller finishes a pending entry before any later append to them).
Single-shard writes do not use the WAL: one shard's compare-and-set is atomic on its own.

>>> import tempfile, pathlib, pyarrow as pa
>>> from dataflow.types import INT8
>>> from storage.persist import PersistClient
>>> client = PersistClient.open_local(pathlib.Path(tempfile.mkdtemp()))
>>> a, b = client.open_shard("a", [INT8]), client.open_shard("b", [INT8])
>>> rows = lambda v: pa.table({"c0": [v], "time": pa.array([0], pa.uint64()), "diff": [1]})
>>> wal = TxnWal(client)
>>> entry = wal.commit(5, {"a": (a, rows(1)), "b": (b, rows(2))})
>>> wal.pending()[0].ts, sorted(entry.writes)
(5, ['a', 'b'])
>>> wal.apply(entry), a.upper(), b.snapshot(5).to_pydict()
({'a': 6, 'b': 6}, 6, {'c0': [2], 'time': [5], 'diff': [1]})
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from .consensus import VersionedData
from .errors import ShardDropped, UpperMismatch
from .shard import Shard, _apply_to, _appending, _TRUNCATE_EVERY
from .state import PartDesc, ShardState

log = logging.getLogger(__name__)

TXNS_KEY = "txns/wal"
RECORD_VERSION = 1

# Fault injection for crash tests only: sleep this long before applying each shard of an entry,
# widening the window in which a kill leaves a committed transaction partly applied.
_APPLY_DELAY_S = float(os.environ.get("SLIPSTREAM_TXN_APPLY_DELAY_MS", "0") or 0) / 1000


@dataclass(frozen=True)
class TxnEntry:
    """One committed multi-shard write: at `ts`, shard id -> its staged part (None: no rows)."""

    ts: int
    writes: Mapping[str, PartDesc | None]

    def to_json(self) -> dict:
        return {"ts": self.ts,
                "writes": {s: (p.to_json() if p is not None else None) for s, p in self.writes.items()}}

    @staticmethod
    def from_json(d: dict) -> "TxnEntry":
        return TxnEntry(d["ts"], {s: (PartDesc.from_json(p) if p is not None else None)
                                  for s, p in d["writes"].items()})


class TxnWal:
    def __init__(self, client) -> None:
        self.client = client
        self.applied_count = 0  # shard appends made by apply() (for tests and logs)

    # ---- the record ------------------------------------------------------------------------

    def _head(self) -> tuple[int | None, list[TxnEntry]]:
        head = self.client.consensus.head(TXNS_KEY)
        if head is None:
            return None, []
        doc = json.loads(head.data)
        if doc.get("version") != RECORD_VERSION:
            raise ValueError(f"unsupported transaction WAL record version {doc.get('version')}")
        return head.seqno, [TxnEntry.from_json(e) for e in doc["entries"]]

    def pending(self) -> list[TxnEntry]:
        """The entries in the record (committed; applied or not)."""
        return self._head()[1]

    def _replace(self, expected: int | None, entries: list[TxnEntry]) -> bool:
        seqno = (expected or 0) + 1
        data = json.dumps({"version": RECORD_VERSION, "entries": [e.to_json() for e in entries]},
                          separators=(",", ":")).encode()
        ok = self.client.consensus.compare_and_set(TXNS_KEY, expected, VersionedData(seqno, data))
        if ok and seqno % _TRUNCATE_EVERY == 0:
            self.client.consensus.truncate(TXNS_KEY, seqno)
        return ok

    # ---- commit, apply, recover ------------------------------------------------------------

    def stage(self, batches: Mapping[str, tuple[Shard, pa.Table]]) -> dict[str, PartDesc | None]:
        """Step 1: write every shard's part, durable and referenced by nothing."""
        return {shard_id: shard.write_part(batch) for shard_id, (shard, batch) in batches.items()}

    def commit_staged(self, ts: int, parts: Mapping[str, PartDesc | None]) -> TxnEntry:
        """Step 2, the commit point: one compare-and-set makes the whole write durable. Entries
        already in the record must have been applied (the caller's invariant); they are dropped."""
        entry = TxnEntry(ts, dict(parts))
        while True:
            seqno, entries = self._head()
            if any(e.ts >= ts for e in entries):
                raise ValueError(f"transaction WAL: commit at {ts} is not after {max(e.ts for e in entries)}")
            if self._replace(seqno, [entry]):
                return entry

    def commit(self, ts: int, batches: Mapping[str, tuple[Shard, pa.Table]]) -> TxnEntry:
        """Stage and commit: durable (all of it) on return, applied to no shard yet."""
        return self.commit_staged(ts, self.stage(batches))

    def apply(self, entry: TxnEntry, only: set[str] | None = None) -> dict[str, int]:
        """Step 3: give each shard its part at `entry.ts` unless it already has it. Returns the
        shards' uppers afterwards (dropped shards are skipped). `only`: a subset (tests)."""
        return {id: s.upper for id, s in self.apply_states(entry, only).items()}

    def apply_states(self, entry: TxnEntry, only: set[str] | None = None) -> dict[str, ShardState]:
        """`apply`, returning each shard's state afterwards (for the caller's compaction)."""
        uppers: dict[str, ShardState] = {}
        for shard_id, part in entry.writes.items():
            if only is not None and shard_id not in only:
                continue
            if _APPLY_DELAY_S:
                time.sleep(_APPLY_DELAY_S)
            try:
                uppers[shard_id], applied = self._apply_one(shard_id, part, entry.ts)
                if applied:
                    self.applied_count += 1
            except ShardDropped:
                log.info("transaction at %d: shard %s was dropped; skipping it", entry.ts, shard_id)
        return uppers

    def _apply_one(self, shard_id: str, part: PartDesc | None, ts: int) -> tuple[ShardState, bool]:
        while True:
            state = self.client.shard_state(shard_id)
            if state is None:
                raise ShardDropped(shard_id)
            if state.upper > ts:
                return state, False  # applied before (or a crash right after its CAS)
            try:
                new = _apply_to(self.client, shard_id, _appending(shard_id, part, state.upper, ts + 1))
                return new, True
            except UpperMismatch:  # moved under us (only by this same entry): look again
                continue

    def recover(self) -> list[TxnEntry]:
        """Finish every committed entry (apply it to the shards that lack it), then empty the
        record. Run before anything reads the shards. Returns the entries that some shard still
        lacked (the ones a crash interrupted)."""
        seqno, entries = self._head()
        finished = []
        for entry in sorted(entries, key=lambda e: e.ts):
            before = self.applied_count
            self.apply(entry)
            if self.applied_count > before:
                finished.append(entry)
        if entries:
            self._replace(seqno, [])
        return finished
