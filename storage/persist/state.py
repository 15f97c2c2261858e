"""A shard's durable state: frontiers plus the batches that hold its updates, encoded as JSON.

The state is the single source of truth for what a shard contains. It lives in consensus and is
replaced wholesale by compare-and-set; blob parts not named here are garbage.

Invariants:
- batches are ordered and contiguous: batches[0].lower == 0 (or the first batch's lower after
  truncation), batches[i].upper == batches[i+1].lower, batches[-1].upper == upper;
- every update in a batch has `lower <= time < upper`, except that compaction may have advanced
  times to the batch's `since` (always <= the shard's since);
- since never decreases, upper never decreases.

>>> s = ShardState.initial("s1", ("int64",))
>>> ShardState.decode("s1", 1, s.encode()) == s.with_seqno(1)
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

STATE_VERSION = 1


@dataclass(frozen=True)
class PartDesc:
    """One immutable part (an Arrow IPC file) in blob storage, with stats used to skip it on reads."""

    key: str
    rows: int
    min_time: int
    max_time: int
    # A small part's encoded bytes (base64) kept in the state itself instead of in blob storage:
    # a tiny write then costs one consensus commit instead of a blob write plus a commit.
    inline: str | None = None

    def to_json(self) -> dict:
        d = {"key": self.key, "rows": self.rows, "min_time": self.min_time, "max_time": self.max_time}
        if self.inline is not None:
            d["inline"] = self.inline
        return d

    @staticmethod
    def from_json(d: dict) -> "PartDesc":
        return PartDesc(d["key"], d["rows"], d["min_time"], d["max_time"], d.get("inline"))


@dataclass(frozen=True)
class BatchDesc:
    """Updates for times in [lower, upper), held in zero or more parts. `id` is unique within
    the shard and identifies the batch's contents (its parts) across upper extensions."""

    id: int
    lower: int
    upper: int
    since: int = 0
    parts: tuple[PartDesc, ...] = ()

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.parts)

    def to_json(self) -> dict:
        return {"id": self.id, "lower": self.lower, "upper": self.upper, "since": self.since,
                "parts": [p.to_json() for p in self.parts]}

    @staticmethod
    def from_json(d: dict) -> "BatchDesc":
        return BatchDesc(d["id"], d["lower"], d["upper"], d["since"],
                         tuple(PartDesc.from_json(p) for p in d["parts"]))


@dataclass(frozen=True)
class ShardState:
    shard_id: str
    seqno: int  # the consensus version this state was read at (not encoded: consensus owns it)
    since: int
    upper: int
    schema: tuple[str, ...]  # Arrow type of each row column, to catch a reopen with other types
    batches: tuple[BatchDesc, ...] = ()
    next_batch_id: int = 0
    tombstone: bool = False
    parts_ever: int = field(default=0)  # parts ever written; purely informational

    @staticmethod
    def initial(shard_id: str, schema: tuple[str, ...]) -> "ShardState":
        return ShardState(shard_id=shard_id, seqno=0, since=0, upper=0, schema=schema)

    def with_seqno(self, seqno: int) -> "ShardState":
        return replace(self, seqno=seqno)

    @property
    def part_keys(self) -> set[str]:
        return {p.key for b in self.batches for p in b.parts}

    def encode(self) -> bytes:
        doc = {
            "version": STATE_VERSION,
            "shard_id": self.shard_id,
            "since": self.since,
            "upper": self.upper,
            "schema": list(self.schema),
            "batches": [b.to_json() for b in self.batches],
            "next_batch_id": self.next_batch_id,
            "tombstone": self.tombstone,
            "parts_ever": self.parts_ever,
        }
        return json.dumps(doc, separators=(",", ":")).encode()

    @staticmethod
    def decode(shard_id: str, seqno: int, data: bytes) -> "ShardState":
        doc = json.loads(data)
        if doc.get("version") != STATE_VERSION:
            raise ValueError(f"shard {shard_id}: unsupported persist state version {doc.get('version')}")
        return ShardState(
            shard_id=doc["shard_id"],
            seqno=seqno,
            since=doc["since"],
            upper=doc["upper"],
            schema=tuple(doc["schema"]),
            batches=tuple(BatchDesc.from_json(b) for b in doc["batches"]),
            next_batch_id=doc["next_batch_id"],
            tombstone=doc["tombstone"],
            parts_ever=doc.get("parts_ever", 0),
        )
