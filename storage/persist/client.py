"""PersistClient: opens shards over one blob store and one consensus.

>>> import tempfile, pathlib
>>> from dataflow.types import INT8, TEXT
>>> client = PersistClient.open_local(pathlib.Path(tempfile.mkdtemp()))
>>> shard = client.open_shard("u1", [INT8, TEXT])
>>> shard.upper(), shard.since(), client.list_shards()
(0, 0, ['u1'])
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from dataflow.types import SqlType, arrow_schema

from .blob import Blob, LocalBlob
from .compactor import Compactor
from .consensus import Consensus, SqliteConsensus, VersionedData
from .errors import SchemaMismatch, ShardDropped
from .parts import PartCache
from .shard import CONSENSUS_PART_PREFIX, Shard, consensus_key, part_written_at_ms
from .state import ShardState

# Appends compact once a shard has more batches than this (None: only explicit compact()):
# inline, or on the client's compactor thread (`compact_in_background`, the server's choice).
DEFAULT_AUTO_COMPACT_BATCHES = 16


class PersistClient:
    def __init__(self, blob: Blob, consensus: Consensus, *, cache_bytes: int = 256 << 20,
                 auto_compact_batches: int | None = DEFAULT_AUTO_COMPACT_BATCHES,
                 inline_part_max_bytes: int = 0, consensus_part_max_bytes: int = 0,
                 compact_in_background: bool = False) -> None:
        self.blob = blob
        # Parts whose encoding is at most this size are kept inline in the shard state (0 = never).
        self.inline_part_max_bytes = inline_part_max_bytes
        # An append's part of at most this size is written into consensus with the state change
        # that names it (one fsync, not a file's three; see consensus.py), 0 = never. Larger
        # parts, and those compaction writes, go to blob storage.
        self.consensus_part_max_bytes = consensus_part_max_bytes
        self.consensus = consensus
        self.cache = PartCache(cache_bytes)
        self.auto_compact_batches = auto_compact_batches
        self.compactor = Compactor() if compact_in_background else None

    def close(self) -> None:
        """Stop background compaction (after the merge under way)."""
        if self.compactor is not None:
            self.compactor.close()

    @classmethod
    def open_local(cls, data_dir: Path, **kwargs) -> "PersistClient":
        """The embedded default: parts under data_dir/blob, state in data_dir/consensus.sqlite."""
        data_dir = Path(data_dir)
        return cls(LocalBlob(data_dir / "blob"), SqliteConsensus(data_dir / "consensus.sqlite"), **kwargs)

    def open_shard(self, shard_id: str, types: Sequence[SqlType]) -> Shard:
        """The shard, created empty (since=0, upper=0) if absent. Raises SchemaMismatch if it
        exists with different column types and ShardDropped if it was dropped."""
        _validate_shard_id(shard_id)
        schema = tuple(str(f.type) for f in arrow_schema(tuple(types)))[:-2]
        key = consensus_key(shard_id)
        head = self.consensus.head(key)
        if head is None:
            initial = ShardState.initial(shard_id, schema)
            self.consensus.compare_and_set(key, None, VersionedData(1, initial.encode()))
            head = self.consensus.head(key)  # ours, or the racing creator's
        state = ShardState.decode(shard_id, head.seqno, head.data)
        if state.tombstone:
            raise ShardDropped(shard_id)
        if state.schema != schema:
            raise SchemaMismatch(shard_id, state.schema, schema)
        return Shard(self, shard_id, types)

    def drop_shard(self, shard_id: str) -> None:
        """Tombstone the shard's state, then delete all its parts (including orphans). Idempotent."""
        _validate_shard_id(shard_id)
        key = consensus_key(shard_id)
        while True:
            head = self.consensus.head(key)
            if head is None:
                break
            state = ShardState.decode(shard_id, head.seqno, head.data)
            if state.tombstone:
                break
            dead = replace(state, batches=(), tombstone=True)
            if self.consensus.compare_and_set(key, head.seqno, VersionedData(head.seqno + 1, dead.encode())):
                self.consensus.truncate(key, head.seqno + 1)
                break
        keys = self.part_keys(shard_id)
        for part_key in keys:
            self.cache.discard(part_key)
        self.delete_parts(keys)

    # ---- parts, wherever they are (blob storage, or consensus: `CONSENSUS_PART_PREFIX`) -------

    def part_bytes(self, key: str) -> bytes | None:
        if key.startswith(CONSENSUS_PART_PREFIX):
            return self.consensus.part(key)
        return self.blob.get(key)

    def part_keys(self, shard_id: str) -> list[str]:
        """Every stored part of the shard (referenced or not)."""
        return self.blob.list_keys(f"{shard_id}/") + self.consensus.part_keys(f"{CONSENSUS_PART_PREFIX}{shard_id}/")

    def delete_parts(self, keys: Iterable[str]) -> None:
        in_consensus = []
        for key in keys:
            if key.startswith(CONSENSUS_PART_PREFIX):
                in_consensus.append(key)
            else:
                self.blob.delete(key)
        self.consensus.delete_parts(in_consensus)

    def collect_garbage(self, shard_id: str, grace_s: float = 3600.0) -> int:
        """Delete parts no state references (left by crashed writers or lost races) that are
        older than `grace_s`, so a writer between its part write and its CAS is never robbed.
        Returns how many parts were deleted."""
        state = self.shard_state(shard_id)
        if state is None:
            return 0
        live = state.part_keys
        cutoff_ms = (time.time() - grace_s) * 1000
        dead = [key for key in self.part_keys(shard_id) if key not in live
                and (written := part_written_at_ms(key)) is not None and written <= cutoff_ms]
        self.delete_parts(dead)
        return len(dead)

    def shard_state(self, shard_id: str) -> ShardState | None:
        """The shard's current state without type checks (None if absent or dropped)."""
        head = self.consensus.head(consensus_key(shard_id))
        if head is None:
            return None
        state = ShardState.decode(shard_id, head.seqno, head.data)
        return None if state.tombstone else state

    def list_shards(self) -> list[str]:
        """Ids of all live (not dropped) shards."""
        out = []
        for key in self.consensus.scan("shard/"):
            head = self.consensus.head(key)
            shard_id = key[len("shard/"):]
            if head is not None and not ShardState.decode(shard_id, head.seqno, head.data).tombstone:
                out.append(shard_id)
        return out


def _validate_shard_id(shard_id: str) -> None:
    if not shard_id or "/" in shard_id or shard_id in (".", "..") or shard_id.startswith(".tmp-"):
        raise ValueError(f"invalid shard id {shard_id!r}: must be non-empty and contain no '/'")
