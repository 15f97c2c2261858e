"""The storage controller: environmentd's owner of every persist shard.

Tables are written here (the adapter's INSERT/UPDATE/DELETE, at timestamps from the oracle), and
materialized views' dataflow output is written here by a self-correcting sink. All calls are
synchronous disk work; environmentd runs them on a worker thread.

Self-correction: when a materialized view's dataflow (re)starts at `as_of`, its first output is the
view's full contents at `as_of`. The sink writes the difference between that and what the shard
already holds, at the dataflow's as_of (or the shard's upper if later); so a restart after a crash,
or a replica that re-ran from a later time, converges the shard to the right contents without a gap
or a duplicate.

Atomic multi-table writes: `append_atomic` commits a write to several tables through persist's
transaction WAL (one compare-and-set is the commit point), then appends to each table's shard;
`recover` (at start-up) finishes a transaction a crash left partly applied. A write to one table
keeps the direct path (one shard compare-and-set is atomic by itself).
"""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import advance_times, concat, consolidate, negate
from dataflow.types import SqlType
from storage.persist import PersistClient, TxnEntry, TxnWal


class StorageController:
    def __init__(self, persist: PersistClient) -> None:
        self.persist = persist
        self._shards: dict[str, object] = {}
        self._uppers: dict[str, int] = {}
        self._lock = threading.Lock()
        self.txns = TxnWal(persist)
        # A committed transaction whose application to the shards failed part-way (an I/O error):
        # it is finished before any later append to one of its shards.
        self._unapplied: TxnEntry | None = None
        self._txn_lock = threading.Lock()

    def open(self, id: str, types: tuple[SqlType, ...]) -> int:
        """Open (creating if needed) a shard; returns its upper."""
        shard = self.persist.open_shard(id, types)
        with self._lock:
            self._shards[id] = shard
            self._uppers[id] = shard.upper()
            return self._uppers[id]

    def recover(self, collect_garbage: bool = True) -> list[TxnEntry]:
        """Finish (apply to every shard) the transactions committed before a crash, then discard
        what never committed: parts staged (or written by an append) that no state references.
        Call at start-up, before anything reads or writes the shards (so no writer can be between
        its part write and its compare-and-set). Returns the entries that needed finishing."""
        finished = self.txns.recover()
        if collect_garbage:
            for shard_id in self.persist.list_shards():
                self.persist.collect_garbage(shard_id, grace_s=0)
        return finished

    def append_atomic(self, batches: dict[str, pa.Table], ts: int) -> None:
        """Write updates (times == ts) to several tables at `ts` atomically, and advance each
        one's upper to ts + 1: all of it is durable on return, or (after a crash) none of it
        or all of it after `recover`. One table: the direct path of `append`."""
        if len(batches) <= 1:
            for id, batch in batches.items():
                self.append(id, batch, ts + 1)
            return
        with self._txn_lock:
            self._finish_unapplied()
            shards = {id: (self._shards[id], batch) for id, batch in batches.items()}
            for id in batches:
                if self._uppers[id] > ts:
                    raise AssertionError(f"append to {id} at {ts} < upper {self._uppers[id]}")
            entry = self.txns.commit(ts, shards)  # the commit point
            self._unapplied = entry
            states = self.txns.apply_states(entry)
            self._unapplied = None
            for id, state in states.items():
                if id in self._uppers:
                    self._uppers[id] = state.upper
                    self._shards[id]._maybe_compact(state)  # as compare_and_append does

    def _finish_unapplied(self) -> None:
        entry = self._unapplied
        if entry is not None:
            for id, upper in self.txns.apply(entry).items():
                if id in self._uppers:
                    self._uppers[id] = upper
            self._unapplied = None

    def upper(self, id: str) -> int:
        return self._uppers[id]

    def append(self, id: str, batch: pa.Table, new_upper: int, consolidated: bool = False,
               hashes: np.ndarray | None = None) -> None:
        """Append updates with times in [upper, new_upper) and advance the shard's upper; durable on
        return. The caller assigns times after the shard's upper (tables: the oracle's write ts).
        `consolidated`: the caller has consolidated the batch already (`hashes`: its rows'
        `row_hashes`, if it has them)."""
        if self._unapplied is not None and id in self._unapplied.writes:
            with self._txn_lock:
                self._finish_unapplied()
        shard = self._shards[id]
        expected = self._uppers[id]
        if new_upper <= expected:
            if batch.num_rows:
                raise AssertionError(f"append to {id} at {new_upper} <= upper {expected}")
            return
        shard.compare_and_append(batch, expected, new_upper, consolidated, hashes)
        self._uppers[id] = new_upper

    def holds(self, id: str) -> bool:
        """Whether shard `id` is open here (created and not dropped)."""
        return id in self._uppers

    def snapshot(self, id: str) -> pa.Table | None:
        """The shard's current contents (at upper - 1), or None when it was never written."""
        upper = self._uppers[id]
        if upper == 0:
            return None
        return self._shards[id].snapshot(upper - 1)

    def snapshot_at(self, id: str, as_of: int) -> pa.Table | None:
        """The shard's contents at `as_of` (>= its since), or None when it was never written."""
        if self._uppers[id] == 0:
            return None
        return self._shards[id].snapshot(as_of)

    def correct_and_append(self, id: str, desired_first: pa.Table, new_upper: int,
                           as_of: int | None = None) -> pa.Table:
        """The self-correcting write of a (re)started view: make the shard hold `desired_first`
        (the dataflow's first step from `as_of`, times < new_upper) by writing the difference at
        the later of `as_of` and the shard's upper. Returns the updates written."""
        upper = self._uppers[id]
        held = self.snapshot(id)
        # The correction takes effect when the new dataflow's output does (its as_of, the earliest
        # time in its first output), not at the shard's old upper: nothing is known about the view
        # in between, so the shard keeps saying what it said until then.
        at = upper
        if as_of is not None:
            at = max(upper, as_of)
        elif desired_first.num_rows:
            at = max(upper, pc.min(desired_first.column("time")).as_py())
        parts = [desired_first]
        if held is not None and held.num_rows:
            parts.append(negate(held))
        diff = consolidate(advance_times(concat(parts), at))
        target = max(new_upper, at + (1 if diff.num_rows else 0))
        self.append(id, diff, target, consolidated=True)
        return diff

    def drop(self, id: str) -> None:
        with self._lock:
            self._shards.pop(id, None)
            self._uppers.pop(id, None)
        self.persist.drop_shard(id)

    def compact(self, id: str, hold: int | None = None) -> None:
        """Let persist merge the shard's batches, keeping history only from upper - 1, or from
        `hold` when that is earlier (a source's RETENTION WINDOW reads it back that far)."""
        shard = self._shards.get(id)
        if shard is None:
            return
        upper = self._uppers[id]
        since = upper - 1 if hold is None else min(upper - 1, hold)
        if since > 0:
            shard.downgrade_since(since)
        shard.compact()
