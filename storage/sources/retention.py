"""A retention window for append-only sources: rows leave the source a window after they arrived.

`CREATE SOURCE ... WITH (RETENTION WINDOW = '1 hour')` (webhook sources; the COUNTER and
AUCTION load generators, whose counter, auctions and bids only grow). Slipstream's own option:
Materialize's `RETAIN HISTORY` keeps old *versions* readable and never deletes a row.

A *pass* retracts every row that arrived at or before `cut = now - window` and is still there:
the source's contents as of `cut` (persist keeps that much history for such a shard: the
coordinator's compaction holds its since at `now - window`, `compaction_hold`), negated and
written at a new timestamp like any write, so views over the source see the rows deleted.
Compaction then advances both the insert and its retraction to the since and they cancel, so
the shard holds about a window of rows however long the source runs.

The contents as of `cut` already count the retractions written at or before `cut`, but not
the later ones, so a pass runs only once the previous pass's write is itself at or before the
cut: one pass per window, and a row leaves between one and two windows after it arrived.
After a restart the last pass is unknown, so the first pass waits a window (rows may then stay
up to two windows plus the time the server was down).

    t=0 .. 60 s   rows arrive             (window 60 s)
    t=60 s        pass: cut = 0      -> rows of t <= 0 retracted, written at ts 60 s
    t=120 s       pass: cut = 60 s   -> rows of (0, 60 s] retracted (the t=60 s retractions are counted)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from dataflow.batch import consolidate, negate


@dataclass
class RetentionState:
    """One source's retention: its window, and the time at or after which its last pass wrote
    (at start-up, the time it started: a pass before the restart wrote no later)."""

    window_ms: int
    last_write_ts: int
    retracted_rows: int = field(default=0)

    def due(self, now_ts: int) -> int | None:
        """The cut of a pass that may run now, or None."""
        cut = now_ts - self.window_ms
        return cut if cut >= self.last_write_ts else None

    def poll_seconds(self) -> float:
        """How often to look for a pass (each look reads the rows older than the cut)."""
        return min(max(self.window_ms / 4000, 0.1), 60.0)


def expired(storage, shard_id: str, cut: int) -> pa.Table | None:
    """The retractions of the rows shard `shard_id` held as of `cut` (None: nothing to retract).
    The caller holds the since at or before `cut` (`compaction_hold`)."""
    upper = storage.upper(shard_id)
    if upper == 0:
        return None
    held = storage.snapshot_at(shard_id, min(cut, upper - 1))
    if held is None or not held.num_rows:
        return None
    held = consolidate(held)
    return negate(held) if held.num_rows else None


# Compaction holds this much more history than a pass needs (at most a window more): a pass
# computes its cut, then reads; a compaction in between (with a later time) must not have
# passed the cut.
HOLD_MARGIN_MS = 10_000


def compaction_hold(window_ms: int, read_ts: int) -> int:
    """How far the shard of a source with a retention window may be compacted: a pass must
    still read it as of its cut."""
    return max(read_ts - window_ms - min(HOLD_MARGIN_MS, window_ms), 0)
