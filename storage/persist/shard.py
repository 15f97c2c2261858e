"""A shard: one durable pTVC, i.e. updates (row, time, diff) with a `since` and an `upper`.

Every operation reads the state fresh from consensus and changes it only by compare-and-set, so
any number of `Shard` handles (threads, clients, processes) may share one shard.

>>> import tempfile, pathlib, pyarrow as pa
>>> from dataflow.types import INT8
>>> from storage.persist import PersistClient
>>> shard = PersistClient.open_local(pathlib.Path(tempfile.mkdtemp())).open_shard("s1", [INT8])
>>> shard.compare_and_append(pa.table({"c0": [7, 7], "time": pa.array([0, 1], pa.uint64()),
...                                    "diff": [1, 1]}), expected_upper=0, new_upper=2)
>>> shard.snapshot(1).to_pydict()
{'c0': [7], 'time': [1], 'diff': [2]}
"""

from __future__ import annotations

import base64

import logging
import time as _time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from dataflow.batch import SMALL_BATCH, consolidate, consolidate_hashed, row_hashes
from dataflow.types import SqlType, arrow_schema

from .compaction import DEFAULT_MAX_BATCHES, plan_merges
from .consensus import VersionedData
from .errors import ReadBeforeSince, ReadNotReady, ShardDropped, UpperMismatch
from .parts import PART_SUFFIX, decode_part, encode_part
from .partition import partition_rows
from .state import BatchDesc, PartDesc, ShardState
from .updates import advance_times, conform, filter_times, time_bounds

if TYPE_CHECKING:
    from .client import PersistClient

log = logging.getLogger(__name__)

# Keep this many old consensus versions around (for debugging); older ones are truncated.
_TRUNCATE_EVERY = 32
_READ_RETRIES = 20


class _PartMissing(Exception):
    """A part named by a state we read was deleted (compaction won a race); re-read the state."""


def consensus_key(shard_id: str) -> str:
    return f"shard/{shard_id}"


# Parts stored in consensus, written with the state change that first names it (`_write_part`).
CONSENSUS_PART_PREFIX = "db/"


def part_key(shard_id: str) -> str:
    """A fresh blob key; the leading wall-clock millis let garbage collection spare parts that a
    live writer may still be about to reference."""
    return f"{shard_id}/{int(_time.time() * 1000):013d}-{uuid.uuid4().hex}{PART_SUFFIX}"


def part_written_at_ms(key: str) -> int | None:
    name = key.rpartition("/")[2]
    stamp = name.partition("-")[0]
    return int(stamp) if len(stamp) == 13 and stamp.isdigit() else None


class Shard:
    def __init__(self, client: "PersistClient", shard_id: str, types: Sequence[SqlType]) -> None:
        self.client = client
        self.shard_id = shard_id
        self.types: tuple[SqlType, ...] = tuple(types)
        self.schema: pa.Schema = arrow_schema(self.types)
        self._key = consensus_key(shard_id)
        # The state this handle last read or wrote: a writer's next compare-and-set starts
        # from it instead of reading the head again (a stale one only fails its CAS, then the
        # head is read as usual).
        self._known: ShardState | None = None

    def __repr__(self) -> str:
        return f"Shard({self.shard_id!r}, {[t.name for t in self.types]})"

    # ---- frontiers -------------------------------------------------------------------------

    def state(self) -> ShardState:
        """The current state, fresh from consensus."""
        head = self.client.consensus.head(self._key)
        if head is None:
            raise ShardDropped(self.shard_id)
        state = ShardState.decode(self.shard_id, head.seqno, head.data)
        if state.tombstone:
            raise ShardDropped(self.shard_id)
        self._known = state
        return state

    def upper(self) -> int:
        return self.state().upper

    def since(self) -> int:
        return self.state().since

    def wait_for_upper(self, past: int, timeout: float | None = None, poll_s: float = 0.005) -> int:
        """Block until upper > `past`; returns the upper. Raises TimeoutError after `timeout` s."""
        deadline = None if timeout is None else _time.monotonic() + timeout
        while True:
            upper = self.upper()
            if upper > past:
                return upper
            if deadline is not None and _time.monotonic() >= deadline:
                raise TimeoutError(f"shard {self.shard_id}: upper {upper} did not pass {past}")
            _time.sleep(poll_s)

    def downgrade_since(self, since: int) -> None:
        """Allow compaction up to `since`; a since below the current one is ignored."""

        def mutate(s: ShardState) -> ShardState:
            return s if since <= s.since else replace(s, since=since)

        self._apply(mutate)

    # ---- writes ----------------------------------------------------------------------------

    def compare_and_append(self, batch: pa.Table, expected_upper: int, new_upper: int,
                           consolidated: bool = False, hashes: np.ndarray | None = None) -> None:
        """Append updates with times in [expected_upper, new_upper) and advance upper to
        new_upper, iff the upper is still expected_upper (else UpperMismatch). `consolidated`:
        the caller has just consolidated the batch (no (row, time) twice, no zero diff), so it is
        not hashed and sorted a second time on the way to disk; `hashes`: then its rows'
        `row_hashes` if that consolidation made them, kept with the part for compaction."""
        if new_upper <= expected_upper:
            raise ValueError(f"new upper {new_upper} must be greater than expected upper {expected_upper}")
        conformed = conform(batch, self.schema)
        if conformed is not batch or not consolidated or (hashes is not None and len(hashes) != batch.num_rows):
            hashes = None  # (a cast column may hash differently)
        batch = conformed
        if batch.num_rows:
            lo, hi = time_bounds(batch)
            if lo < expected_upper or hi >= new_upper:
                raise ValueError(
                    f"shard {self.shard_id}: update times [{lo}, {hi}] fall outside "
                    f"[{expected_upper}, {new_upper})"
                )
            if not consolidated:
                batch = consolidate(batch)
        # Fail fast, before writing a part, when another writer already moved the upper.
        current = self._known
        if current is None or current.upper != expected_upper:
            current = self.state()
            if current.upper != expected_upper:
                raise UpperMismatch(self.shard_id, expected_upper, current.upper)
        with_state: dict[str, bytes] = {}  # (a small part: written by the state change itself)
        part = self._write_part(batch, hashes, with_state) if batch.num_rows else None
        try:
            new_state = self._apply(_appending(self.shard_id, part, expected_upper, new_upper), current,
                                    with_state)
        except BaseException:
            if part is not None and part.inline is None and part.key not in with_state:
                self.client.delete_parts([part.key])  # never made visible: ours to delete
            raise
        self._maybe_compact(new_state)

    def write_part(self, batch: pa.Table) -> PartDesc | None:
        """Write a batch's part (inline if small, else to blob, durable) without referencing it
        from the state; `append_part` links it later. None for an empty batch. Used by the
        transaction WAL (`txn.py`), which commits the part first and applies it afterwards."""
        batch = conform(batch, self.schema)
        if not batch.num_rows:
            return None
        return self._write_part(consolidate(batch))

    def append_part(self, part: PartDesc | None, expected_upper: int, new_upper: int) -> ShardState:
        """Reference an already written part as the batch [expected_upper, new_upper) and advance
        the upper, iff the upper is still expected_upper (else UpperMismatch)."""
        return self._apply(_appending(self.shard_id, part, expected_upper, new_upper))

    def _maybe_compact(self, new_state: ShardState) -> None:
        threshold = self.client.auto_compact_batches
        if threshold is not None and len(new_state.batches) > threshold:
            if self.client.compactor is not None:
                self.client.compactor.request(self)
                return
            try:
                self.compact()
            except Exception:  # the append is durable; compaction can run again later
                log.exception("shard %s: compaction after append failed", self.shard_id)

    # ---- reads -----------------------------------------------------------------------------

    def snapshot(self, as_of: int, partition: tuple[int, int] | None = None) -> pa.Table:
        """The collection at `as_of`: updates with time <= as_of, times set to as_of,
        consolidated. Requires since <= as_of < upper."""

        def check(s: ShardState) -> None:
            if as_of < s.since:
                raise ReadBeforeSince(self.shard_id, as_of, s.since)
            if as_of >= s.upper:
                raise ReadNotReady(self.shard_id, as_of, s.upper)

        def wanted(p: PartDesc, s: ShardState) -> bool:
            return p.min_time <= as_of

        _state, tables = self._read_parts(check, wanted)
        table = self._concat(tables)
        table = consolidate(advance_times(filter_times(table, upper_incl=as_of), as_of))
        return partition_rows(table, *partition) if partition else table

    def updates_between(self, lower: int, upper: int,
                        partition: tuple[int, int] | None = None) -> pa.Table:
        """Updates with lower <= time < upper, consolidated per (row, time). Requires
        since <= lower and upper <= the shard's upper. Times before since read as since (on every
        read, compacted or not), so with lower == since the result includes all history up to since."""
        if upper < lower:
            raise ValueError(f"upper {upper} is before lower {lower}")

        def check(s: ShardState) -> None:
            if lower < s.since:
                raise ReadBeforeSince(self.shard_id, lower, s.since)
            if upper > s.upper:
                raise ReadNotReady(self.shard_id, upper - 1, s.upper)

        def wanted(p: PartDesc, s: ShardState) -> bool:
            return max(p.max_time, s.since) >= lower and max(p.min_time, s.since) < upper

        state, tables = self._read_parts(check, wanted)
        if upper == lower:
            return self.schema.empty_table()
        table = advance_times(self._concat(tables), state.since)
        table = consolidate(filter_times(table, lower=lower, upper_incl=upper - 1))
        return partition_rows(table, *partition) if partition else table

    # ---- compaction ------------------------------------------------------------------------

    def compact(self, max_batches: int = DEFAULT_MAX_BATCHES) -> bool:
        """Merge batches geometrically, advancing times to since and consolidating. Returns
        whether the state changed. Replaced parts are deleted after the new state is durable."""
        state = self.state()
        runs = plan_merges([b.rows for b in state.batches], max_batches)
        if not runs:
            return False
        merged: list[tuple[tuple[int, ...], tuple[PartDesc, ...], int]] = []  # (ids, parts, since)
        written: list[str] = []
        try:
            for start, end in runs:
                group = state.batches[start:end]
                ids = tuple(b.id for b in group)
                with_data = [b for b in group if b.parts]
                if len(with_data) <= 1:  # nothing to combine: reuse the parts as they are
                    parts = with_data[0].parts if with_data else ()
                    merged.append((ids, parts, max(b.since for b in group)))
                    continue
                parts = [p for b in with_data for p in b.parts]
                tables = [self._load_part(p) for p in parts]
                table = advance_times(self._concat(tables), state.since)
                if table.num_rows <= SMALL_BATCH:  # (consolidated as Python values: no hashes)
                    table, hashes = consolidate(table), None
                else:
                    kept = np.concatenate([self._row_hashes(p, t) for p, t in zip(parts, tables)])
                    table, hashes = consolidate_hashed(table, kept)
                part = self._write_part(table, hashes) if table.num_rows else None
                if part is not None:
                    written.append(part.key)
                merged.append((ids, (part,) if part else (), state.since))
        except _PartMissing:  # someone else compacted these batches under us
            self.client.delete_parts(written)
            return False

        applied: list[tuple[int, ...]] = []

        def mutate(s: ShardState) -> ShardState:
            applied.clear()
            batches = list(s.batches)
            next_id = s.next_batch_id
            for ids, parts, since in merged:
                pos = _find_run(batches, ids)
                if pos is None:
                    continue
                first, last = batches[pos], batches[pos + len(ids) - 1]
                new = BatchDesc(next_id, first.lower, last.upper, since, parts)
                batches[pos:pos + len(ids)] = [new]
                next_id += 1
                applied.append(ids)
            if not applied:
                return s
            return replace(s, batches=tuple(batches), next_batch_id=next_id)

        try:
            new_state = self._apply(mutate)
        except BaseException:
            self.client.delete_parts(written)
            raise
        live = new_state.part_keys
        old_keys = {p.key for b in state.batches if any(b.id in ids for ids in applied) for p in b.parts}
        gone = (old_keys | set(written)) - live
        for key in gone:
            self.client.cache.discard(key)
        self.client.delete_parts(gone)
        return bool(applied)

    # ---- internals -------------------------------------------------------------------------

    def _apply(self, mutate: Callable[[ShardState], ShardState], current: ShardState | None = None,
               parts: dict[str, bytes] | None = None) -> ShardState:
        self._known = _apply_to(self.client, self.shard_id, mutate, current, parts)
        return self._known

    def _write_part(self, table: pa.Table, hashes: np.ndarray | None = None,
                    with_state: dict[str, bytes] | None = None) -> PartDesc:
        """Write `table` as a part (`hashes`: its rows' `row_hashes`, cached with it). Given
        `with_state`, a part of at most the client's `consensus_part_max_bytes` is not written
        but added there (key -> bytes), for the state change that names it to write."""
        # One record batch per part: a merge concatenates its inputs, and a part written in
        # their chunks is read back in as many, so each merge wrote more record batches than
        # the last (each compressed column by column): a 138k-row part of the orders shard
        # took ~220 ms to write instead of ~20 ms.
        if table.num_columns and table.column(0).num_chunks > 1:
            table = table.combine_chunks()
        key = part_key(self.shard_id)
        lo, hi = time_bounds(table)
        if table.nbytes <= self.client.inline_part_max_bytes:
            # Inline in the state (a stream, not a file: no footer to pay for on a few rows).
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            data = sink.getvalue().to_pybytes()
            return PartDesc(f"inline/{key}", table.num_rows, lo, hi, base64.b64encode(data).decode("ascii"))
        data = encode_part(table)
        if with_state is not None and len(data) <= self.client.consensus_part_max_bytes:
            key = CONSENSUS_PART_PREFIX + key
            with_state[key] = data
        else:
            self.client.blob.set(key, data)
        self.client.cache.put(key, table, hashes)
        return PartDesc(key, table.num_rows, lo, hi)

    def _row_hashes(self, part: PartDesc, table: pa.Table) -> np.ndarray:
        """The rows' hashes (time and diff left out), kept from the compaction that wrote the
        part if it is still cached, else computed."""
        kept = self.client.cache.hashes(part.key) if part.inline is None else None
        return kept if kept is not None and len(kept) == table.num_rows else row_hashes(table)

    def _load_part(self, part: PartDesc) -> pa.Table:
        if part.inline is not None:
            return pa.ipc.open_stream(base64.b64decode(part.inline)).read_all()
        table = self.client.cache.get(part.key)
        if table is None:
            data = self.client.part_bytes(part.key)
            if data is None:
                raise _PartMissing(part.key)
            table = decode_part(data, self.schema)
            self.client.cache.put(part.key, table)
        return table

    def _read_parts(self, check: Callable[[ShardState], None],
                    wanted: Callable[[PartDesc, ShardState], bool]) -> tuple[ShardState, list[pa.Table]]:
        for _ in range(_READ_RETRIES):
            state = self.state()
            check(state)
            try:
                tables = [self._load_part(p) for b in state.batches for p in b.parts if wanted(p, state)]
            except _PartMissing:
                continue
            return state, tables
        raise RuntimeError(f"shard {self.shard_id}: parts kept disappearing while reading")

    def _concat(self, tables: list[pa.Table]) -> pa.Table:
        if not tables:
            return self.schema.empty_table()
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _find_run(batches: list[BatchDesc], ids: tuple[int, ...]) -> int | None:
    for i, b in enumerate(batches):
        if b.id == ids[0]:
            if tuple(x.id for x in batches[i:i + len(ids)]) == ids:
                return i
            return None
    return None


def _appending(shard_id: str, part: PartDesc | None, expected_upper: int,
               new_upper: int) -> Callable[[ShardState], ShardState]:
    """The state change of an append: `part` (or nothing) as the batch [expected_upper, new_upper)."""

    def mutate(s: ShardState) -> ShardState:
        if s.upper != expected_upper:
            raise UpperMismatch(shard_id, expected_upper, s.upper)
        batches = list(s.batches)
        next_id = s.next_batch_id
        if part is None and batches:
            # Nothing new: the last batch's description simply covers more time.
            batches[-1] = replace(batches[-1], upper=new_upper)
        else:
            lower = expected_upper
            if batches and not batches[-1].parts:  # fold an empty trailing batch into this one
                lower = batches.pop().lower
            parts = (part,) if part is not None else ()
            batches.append(BatchDesc(next_id, lower, new_upper, 0, parts))
            next_id += 1
        return replace(s, upper=new_upper, batches=tuple(batches), next_batch_id=next_id,
                       parts_ever=s.parts_ever + (part is not None))

    return mutate


def _apply_to(client: "PersistClient", shard_id: str, mutate: Callable[[ShardState], ShardState],
              guess: ShardState | None = None, parts: dict[str, bytes] | None = None) -> ShardState:
    """Read the shard's head, derive the next state, compare-and-set; retry on a lost race.
    `mutate` may raise to abort; returning its input unchanged means nothing to do. `guess`:
    the state as last known, tried first without reading the head (if it is stale, its
    compare-and-set fails and the head is read); only for a `mutate` that always changes the
    state and does not raise on the guess (an append whose upper the guess shows). `parts`:
    written in the same compare-and-set as the new state (see consensus.py)."""
    consensus = client.consensus
    key = consensus_key(shard_id)
    while True:
        if guess is not None:
            current, guess = guess, None
        else:
            head = consensus.head(key)
            if head is None:
                raise ShardDropped(shard_id)
            current = ShardState.decode(shard_id, head.seqno, head.data)
            if current.tombstone:
                raise ShardDropped(shard_id)
        new = mutate(current)
        if new is current:
            return current
        seqno = current.seqno + 1
        if consensus.compare_and_set(key, current.seqno, VersionedData(seqno, new.encode()), parts):
            if seqno % _TRUNCATE_EVERY == 0:
                consensus.truncate(key, seqno)
            return new.with_seqno(seqno)
