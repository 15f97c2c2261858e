"""A dataflow worker: one long-lived task of a replica (a Spark barrier task, or a thread in tests).

It holds its share of every collection the controller imports (tables' and materialized views'
contents, and the outputs of indexes), runs dataflows over them, and reports their output. It acts
only on controller commands, in their order, and steps dataflows only in response to a command, so
every worker of the replica steps the same dataflows to the same frontiers in the same order; the
exchanges inside a step then line up across workers by construction.

    run_worker(index=0, count=2, controller=("127.0.0.1", 7000), data_dir=Path("data"),
               all_gather=barrier_ctx.allGather)
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import select
import logging
import socket
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import (SMALL_BATCH, TIME, advance_times, concat, consolidate, consolidate_hashed, contents_at,
                           empty_batch, make_batch, negate, partition_rows, row_hashes, snapshot_at)
from dataflow.errors import SqlError, SqlState
from dataflow.peers import DataflowAborted, DataflowExchange, PeerNetwork
from dataflow.plan import (Get, IndexLookup, LetRec, Plan, any_node, children, collections_read, mentions_mz_now,
                           output_types, with_children)
from dataflow.exchange import LocalExchange
from dataflow.fast_peek import keys_table, lookup_keys
from dataflow.protocol import (AdvanceUpper, CreateDataflow, DataflowOutput, DropCollection, Stepped,
                               DropDataflow, FastPeek, FastPeeks, Hello, ImportCollection, Imported,
                               Messages, PeekResult, PeekResults, Shutdown, WorkerError)
from dataflow.operators.base import DEFAULT_STEP_LIMIT_BYTES
from dataflow.allocator import release_memory
from dataflow.arrangement import Arrangement, merge_due
from dataflow.render import Dataflow
from dataflow.scalar import compile_filter
from dataflow.transport import recv_frame, send_frame
from dataflow.types import SqlType, arrow_schema

log = logging.getLogger("slipstream.worker")

# A trace merges its two newest batches whenever it holds more than this many.
TRACE_MAX_BATCHES = 16
# A trace keeps its last whole read's answer for the next one while the answer is at most this
# many rows and at most this many batches came after it (`CollectionTrace.snapshot`).
READ_CACHE_ROWS = 4096
READ_CACHE_BATCHES = 64
# How much history a trace keeps (ms before its upper): reads AS OF an older time are refused.
HISTORY_MS = 5000
RELEASE_MEMORY_AFTER_ROWS = 100_000
# Within a dataflow's step, how often (seconds at most) the peeks that arrived are looked for.
PEEK_POLL_S = 0.0002


@dataclass
class CollectionTrace:
    """This worker's part of one collection: its updates, with times before
    `upper - 1 - HISTORY_MS` advanced as it goes (`compacted_to`): the collection can be read at
    any time from `compacted_to` on."""

    types: tuple[SqlType, ...]
    upper: int
    batches: list[pa.Table] = field(default_factory=list)
    # Each batch's `row_hashes`, once a merge has computed them (None until then, and for a few
    # rows, which consolidate as Python values): a merge re-hashing both batches' rows was ~80%
    # of its time, and each update is merged O(log n) times. 8 bytes per row.
    hashes: list[np.ndarray | None] = field(default_factory=list)
    compacted_to: int = 0
    error: SqlError | None = None
    # For an index's output: the index's own arrangement holds the updates, so the trace keeps
    # only the frontier and reads contents from it instead of holding a second copy.
    arranged: Callable[[], pa.Table] | None = None
    # The last whole read's answer (`snapshot`), kept while it is small, and the updates with
    # times after it (appended since, or already there): the next read at a later time
    # consolidates those few with it instead of the whole history. A 10-row view changing a
    # hundred times a second holds ~1,000 updates of the HISTORY_MS kept, which every read of
    # it consolidated.
    read_at: int | None = None
    read_rows: pa.Table | None = None
    after_read: list[pa.Table] = field(default_factory=list)

    def append(self, batch: pa.Table | None, upper: int) -> None:
        self.upper = max(self.upper, upper)
        # The readable history follows the upper alone, never this worker's share of the data
        # (how many rows it holds, when its batches merge): every worker must agree on it, or
        # they would start a new dataflow at different times and wait on each other's
        # exchanges for ever.
        self.compacted_to = max(self.compacted_to, self.upper - 1 - HISTORY_MS)
        if self.arranged is not None:
            return
        if batch is not None and batch.num_rows:
            schema = arrow_schema(self.types)
            batch = batch if batch.schema == schema else batch.cast(schema)
            self.batches.append(batch)
            self.hashes.append(None)
            if self.read_at is not None:
                if len(self.after_read) < READ_CACHE_BATCHES and \
                        pc.min(batch[TIME]).as_py() > self.read_at:
                    self.after_read.append(batch)
                else:  # (many writes and no read, or one at or before the read: read afresh)
                    self.forget_read()

    def snapshot(self, as_of: int) -> pa.Table:
        """The contents at `as_of` (from `compacted_to` on): consolidated, all at `as_of`."""
        if self.read_at is not None and as_of >= self.read_at:
            rows = snapshot_at(concat([self.read_rows] + self.after_read), as_of)
            later = self.after_read
        else:
            rows = snapshot_at(self.contents_from(as_of), as_of)
            later = [] if self.arranged is not None else self.batches
        after = pa.scalar(as_of, pa.uint64())
        later = [t for t in (b.filter(pc.greater(b[TIME], after)) for b in later) if t.num_rows]
        if self.arranged is None and rows.num_rows <= READ_CACHE_ROWS and len(later) < READ_CACHE_BATCHES:
            self.read_at, self.read_rows, self.after_read = as_of, rows, later
        else:
            self.forget_read()
        return rows

    def forget_read(self) -> None:
        self.read_at, self.read_rows, self.after_read = None, None, []

    def untidy(self) -> bool:
        """Whether `tidy` has a merge to do."""
        return self._merge_due() > 0

    def _merge_due(self) -> int:
        if len(self.batches) > TRACE_MAX_BATCHES:
            return 2
        return merge_due([b.num_rows for b in self.batches])

    def tidy(self) -> None:
        """One merge of the spine, if due. Size-tiered merging as in `Arrangement` (see
        `merge_due`), so an update is merged O(log n) times, never O(n) per append. The worker
        merges after its answers are out (`Worker.tidy_traces`), not while a step's readers
        wait: at 1M orders, folding the orders table's batches takes ~0.1 s now and then."""
        run = self._merge_due()
        if run:
            self._merge_last(run)

    def _merge_last(self, run: int) -> None:
        # In one chunk: a table of many small chunks (one per step's output) costs Arrow ~1 ms
        # per filter or take at a few hundred rows, which every read of the collection pays.
        both = advance_times(concat(self.batches[-run:]), self.compacted_to)
        if both.num_rows <= SMALL_BATCH:  # (consolidated as Python values: no hashes to keep)
            merged, hashes = consolidate(both), None
        else:
            kept = np.concatenate([h if h is not None else row_hashes(b)
                                   for b, h in zip(self.batches[-run:], self.hashes[-run:])])
            merged, hashes = consolidate_hashed(both, kept)
        self.batches[-run:] = [merged.combine_chunks()] if merged.num_rows else []
        self.hashes[-run:] = [hashes] if merged.num_rows else []

    def contents_from(self, as_of: int, keep: Callable[[pa.Table], pa.Table] | None = None) -> pa.Table:
        """Every update, times before `as_of` advanced to it: a dataflow's first input. Not
        consolidated: the dataflow's operators accept any multiset of updates. `keep`: a filter
        of rows (not of times) applied to each stored batch first, so that a point read of a
        large unindexed view copies only its matches, not the whole trace (at 1M orders a read
        of V2 by customer concatenated and re-timed ~50k updates per worker)."""
        if self.arranged is not None:
            parts = [self.arranged()]
        else:
            parts = self.batches
        if keep is not None:
            parts = [keep(b) for b in parts if b.num_rows]
        parts = [b for b in parts if b.num_rows]
        if not parts:
            return empty_batch(self.types)
        return advance_times(concat(parts), as_of)


@dataclass
class RunningDataflow:
    command: CreateDataflow
    dataflow: Dataflow | None  # (None once failed: see `failed`)
    exchange: DataflowExchange
    inputs: tuple[str, ...]
    frontier: int
    pending: dict[str, list[pa.Table]]
    started: bool = False
    # For peeks: inputs answered by index lookups, id -> (key columns, keys batch).
    lookups: dict[str, tuple[tuple[int, ...], pa.Table]] = field(default_factory=dict)
    # Steps even when no input changed: a peek (runs once), or a plan with a temporal filter
    # (its output changes as time passes).
    always_step: bool = False
    # An index or view that failed here: it computes nothing more (its dataflow is freed) but
    # its collection's upper keeps following its inputs (`Worker._step_failed`).
    failed: SqlError | None = None
    # Per input fed by whole table writes since the last step: those writes' whole batches
    # (`AdvanceUpper.whole`), or None once a write came split (see `Worker._whole_inputs`).
    whole: dict[str, list[pa.Table] | None] = field(default_factory=dict)


def _prefiltering(conditions: tuple) -> Callable[[pa.Table], pa.Table] | None:
    """The rows of a batch meeting a fast peek's prefilter conditions (None: no conditions)."""
    if not conditions:
        return None
    filters = [compile_filter(c) for c in conditions]

    def keep(batch: pa.Table) -> pa.Table:
        for only in filters:
            if not batch.num_rows:
                break
            batch = only(batch)
        return batch
    return keep


class _Outbox:
    """A worker's messages to the controller, held back while it carries out a command and
    sent together when it is done (`Messages`: one frame, one unpickling). An answer to a
    read goes out at once, with everything held before it (the order is kept), so that no
    read waits for the other dataflows' steps."""

    def __init__(self, send: Callable[[object], None]) -> None:
        self.send, self.held = send, []

    def post(self, message: object) -> None:
        self.held.append(message)
        if isinstance(message, (PeekResult, PeekResults)):
            self.flush()

    def flush(self) -> None:
        held, self.held = self.held, []
        if len(held) == 1:
            self.send(held[0])
        elif held:
            self.send(Messages(held))


class Worker:
    def __init__(self, index: int, count: int, data_dir: Path, network: PeerNetwork | None,
                 send: Callable[[object], None], memory_limit_bytes: int | None = None,
                 arrived_peeks: Callable[[Callable[[FastPeek], bool]], list[FastPeek]] | None = None) -> None:
        self.index = index
        # Fast-path peeks the controller sent while this worker was stepping (read ahead of the
        # commands queued before them, which they need not wait for): checked after each
        # dataflow's step, so a read of a view is answered once that view has stepped, not
        # once every dataflow has.
        self.arrived_peeks = arrived_peeks
        self.count = count
        # This worker's share of the replica's memory limit, in bytes Arrow holds (the engine's
        # state and batches): a dataflow step that grows past it fails that dataflow (53200).
        self.memory_limit_bytes = memory_limit_bytes
        self.data_dir = data_dir
        self.network = network
        self.send = send
        self.collections: dict[str, CollectionTrace] = {}
        self.dataflows: dict[str, RunningDataflow] = {}  # insertion order = creation order
        # The index dataflows created here (id -> (key, generation)), whatever became of them
        # since: what a one-off join may read in place (`_shared_arrangements`).
        self.index_keys: dict[str, tuple[tuple[int, ...], int]] = {}
        # What this worker did lately (commands, steps), logged when an exchange times out: the
        # workers of a replica must take the same steps, and this shows where two parted.
        self.history: collections.deque = collections.deque(maxlen=400)
        self.clock_upper = 0  # the tables' frontier: what input-less dataflows follow
        self._persist = None
        # Per collection, the upper of the last updates fed to its readers anywhere in the
        # replica (the controller's AdvanceUpper names every table written, and every worker
        # knows which dataflows ran): a dataflow whose frontier is past it for all its inputs
        # has nothing to do in this step on any worker, so every worker skips it alike.
        self.dirty_upper: dict[str, int] = {}
        # Fast-path peeks whose collection has not yet reached their time, in arrival order.
        self.waiting_peeks: list[FastPeek] = []
        self._peeks_polled = 0.0  # when arrived peeks were last looked for (perf_counter)
        self.release_due = False  # a step moved many rows: see release_if_due

    # -- commands -------------------------------------------------------------------------------

    def tidy_traces(self) -> None:
        """Merge the collections' spines (see CollectionTrace.tidy), one merge at a time, with
        the fast-path peeks that arrive meanwhile answered between merges (a trace's contents
        are the same merged or not)."""
        for trace in list(self.collections.values()):
            while trace.untidy():
                trace.tidy()
                self._answer_arrived_peeks()

    def release_if_due(self) -> None:
        """After a command whose steps moved many rows: free memory back to the OS."""
        if self.release_due:
            self.release_due = False
            release_memory()

    def handle(self, command: object) -> None:
        self.history.append(_summary(command))
        if isinstance(command, AdvanceUpper):
            for id in command.updates:
                self.dirty_upper[id] = max(self.dirty_upper.get(id, 0), command.upper)
            for id in command.ids:
                trace = self.collections.get(id)
                if trace is not None:
                    batch = command.updates.get(id)
                    own = partition_rows(batch, self.count)[self.index] if command.whole and batch is not None \
                        else batch
                    trace.append(own, command.upper)
                    self._feed(id, own)
                    if batch is not None:
                        self._note_whole(id, batch if command.whole else None)
            self.clock_upper = max(self.clock_upper, command.upper)
            self._step_all()
            self._answer_peeks()
            self.send(Stepped(self.index, command.upper))
        elif isinstance(command, FastPeeks):
            self.waiting_peeks.extend(command.peeks)
            self._answer_peeks()
        elif isinstance(command, ImportCollection):
            self._import(command)
        elif isinstance(command, CreateDataflow):
            self._create(command)
            self._step_all()
            self._answer_peeks()
        elif isinstance(command, DropDataflow):
            running = self.dataflows.pop(command.id, None)
            if running is not None:
                running.exchange.forget()
                self._free(running)
            if self.waiting_peeks:  # a cancelled fast-path peek
                self.waiting_peeks = [p for p in self.waiting_peeks if p.id != command.id]
        elif isinstance(command, DropCollection):
            self.collections.pop(command.id, None)
            self.index_keys.pop(command.id, None)
        else:
            raise TypeError(f"unknown command {command!r}")

    def _import(self, command: ImportCollection) -> None:
        from storage.persist import PersistClient  # imported lazily: only workers with persist need it

        if self._persist is None:
            # Workers read a shard once, into their traces: caching its parts would hold it twice.
            self._persist = PersistClient.open_local(self.data_dir, cache_bytes=0)
        from storage.persist.errors import ShardDropped
        trace = CollectionTrace(command.types, command.upper)
        try:
            shard = self._persist.open_shard(command.id, command.types)
            # Read exactly the updates before the commanded upper: writes after it reach this
            # worker as AdvanceUpper commands, even if they are already in persist when this runs.
            read_upper = min(shard.upper(), command.upper)
            if read_upper > 0:
                snap = shard.snapshot(read_upper - 1, partition=(self.index, self.count))
                trace.append(snap, command.upper)
        except ShardDropped:
            # Dropped after the controller sent this command (CREATE then DROP in quick
            # succession, even while this worker reads it): its DropCollection follows; nothing
            # will read it meanwhile.
            log.info("collection %s was dropped before this worker imported it", command.id)
            self.send(Imported(command.id, self.index))
            return
        self.send(Imported(command.id, self.index))
        trace.compacted_to = max(command.upper - 1, 0)
        self.collections[command.id] = trace
        self.clock_upper = max(self.clock_upper, command.upper)

    def _create(self, command: CreateDataflow) -> None:
        lookups: dict[str, tuple[tuple[int, ...], pa.Table]] = {}
        if command.sink == "peek":
            plan, lookups = _extract_lookups(command.plan)
            command = dataclasses.replace(command, plan=plan)
        inputs = tuple(sorted(collections_read(command.plan)))
        as_of = command.as_of
        for id in inputs:
            trace = self.collections.get(id)
            if trace is None:
                self._report_failure(command, _dropped())
                return
            if trace.error is not None and id not in self.dataflows:
                # Its dataflow failed and is gone: the collection will not advance any more.
                self._report_failure(command, trace.error)
                return
            as_of = max(as_of, trace.compacted_to)
        if as_of != command.as_of and command.sink == "peek":
            # A peek must see exactly its time; that history is gone.
            self._report_failure(command, _history_gone(command.as_of, as_of))
            return
        if as_of != command.as_of:  # a long-running dataflow may start from the newer state
            command = dataclasses.replace(command, as_of=as_of)
        if command.replaces and command.id in self.collections:
            # Readers of the collection wait for the rebuilt dataflow's first output (the old
            # one's contents and error stand until then).
            trace = self.collections[command.id]
            trace.upper = min(trace.upper, as_of)
        exchange = DataflowExchange(self.network, command.id, self.index, self.count, command.generation)
        try:
            # One join step may not build more than the worker's whole share of the memory limit.
            step_limit = DEFAULT_STEP_LIMIT_BYTES if self.memory_limit_bytes is None \
                else min(DEFAULT_STEP_LIMIT_BYTES, self.memory_limit_bytes)
            # One-off reads, materialized views and indexes probe the indexes they read in place
            # (the controller rebuilds a view or index whose index is rebuilt or dropped;
            # SUBSCRIBE keeps arrangements of its own).
            shared = self._shared_arrangements(inputs) if command.sink in ("peek", "persist", "index") else None
            dataflow = Dataflow(command.plan, as_of, exchange, step_limit_bytes=step_limit, shared=shared,
                                pause=self._answer_peeks_midstep if self.arrived_peeks is not None else None)
        except SqlError as e:
            self._report_failure(command, e)
            return
        except Exception as e:  # an engine bug building it: fail this dataflow, not the replica
            log.exception("worker %d: building dataflow %s failed", self.index, command.id)
            self._report_failure(command, SqlError(
                SqlState.INTERNAL_ERROR, f"internal error building dataflow {command.id}: {type(e).__name__}: {e}"))
            return
        if command.sink == "index" and dataflow.arrangement() is not None:
            self.index_keys[command.id] = (tuple(dataflow.arrangement().key), command.generation)
        pending: dict[str, list[pa.Table]] = {}
        for id in inputs:
            # A lookup input is read at step time, from the index's arrangement.
            pending[id] = [] if id in lookups else [consolidate(self.collections[id].contents_from(as_of))]
        always = command.sink == "peek" or any_node(command.plan, mentions_mz_now)
        self.history.append(f"created {command.id} as_of={as_of} inputs=" + ",".join(
            f"{id}@{self.collections[id].upper}" for id in inputs))
        self.dataflows[command.id] = RunningDataflow(command, dataflow, exchange, inputs, as_of, pending,
                                                     lookups=lookups, always_step=always)

    def _shared_arrangements(self, inputs: tuple[str, ...]) -> dict:
        """The indexes among `inputs` a join may read in place: id -> (key, arrangement).

        Which ones is decided from the commands alone (`index_keys`), never from this worker's
        state: a join over a shared index exchanges one side instead of two, and workers that
        decided differently would wait on each other's exchanges. An index that failed on this
        worker (and not yet on the others) lends an empty arrangement: the join reports that
        index's error, as it would have anyway."""
        shared = {}
        for id in inputs:
            entry = self.index_keys.get(id)
            if entry is None:
                continue
            key, generation = entry
            running = self.dataflows.get(id)
            arrangement = running.dataflow.arrangement() if running is not None and running.dataflow is not None \
                and running.command.sink == "index" else None

            def current(id=id, generation=generation) -> bool:
                # (a rebuilt index holds its rows at the rebuild's time: not this read's)
                return self.index_keys.get(id, (None, None))[1] == generation
            shared[id] = (key, arrangement if arrangement is not None else Arrangement(key), current)
        return shared

    # -- fast-path peeks ------------------------------------------------------------------------

    def _answer_peeks(self) -> None:
        """Answer every waiting fast-path peek its collection can now answer, in one message."""
        if not self.waiting_peeks:
            return
        ready: list[tuple[FastPeek, CollectionTrace | None]] = []
        waiting: list[FastPeek] = []
        for peek in self.waiting_peeks:
            trace = self.collections.get(peek.plan.source)
            # (a collection whose dataflow failed and is gone will not advance: its error now)
            stalled = trace is not None and trace.error is not None and peek.plan.source not in self.dataflows
            if trace is not None and trace.upper <= peek.as_of and not stalled:
                waiting.append(peek)
            else:
                ready.append((peek, trace))
        self.waiting_peeks = waiting
        if ready:
            tables: list[pa.Table] = []
            grouped = self._point_lookups(ready, tables)
            self.send(PeekResults([grouped.get(peek.id) or self._answer_peek(peek, trace) for peek, trace in ready],
                                  tables))

    def _point_lookups(self, ready: list[tuple[FastPeek, CollectionTrace | None]],
                       tables: list[pa.Table]) -> dict[str, PeekResult]:
        """Concurrent point lookups in one index, answered together: one probe of the
        arrangement for all their keys and one run of their chain for all the rows found, per
        time and chain (a prepared statement's executions share both; a probe's and a chain's
        cost is mostly per call). Each answer is a slice of one output table, which the
        message carries once (`tables`). Peek id -> answer; peeks not answered here (alone in
        their index, or whose group failed: an error, a memory limit) are left out, to be
        answered one by one, which reports their errors as usual."""
        groups: dict[tuple[str, tuple[int, ...]], list[FastPeek]] = {}
        for peek, trace in ready:
            plan = peek.plan
            if plan.keys is not None and len(plan.keys) == 1 and trace is not None \
                    and trace.error is None and peek.as_of >= trace.compacted_to:
                groups.setdefault((plan.source, plan.key), []).append(peek)
        answers: dict[str, PeekResult] = {}
        for (source, key), peeks in groups.items():
            arrangement = self._index_arrangement(source)
            if len(peeks) < 2 or arrangement is None:
                continue
            try:
                probe = keys_table(peeks[0].plan.types, key, [p.plan.keys[0] for p in peeks])
                owner, found = arrangement.matches(probe, tuple(range(len(key))))
            except Exception:  # (key values that do not make one column: each peek looks up its own)
                log.exception("worker %d: batched lookup in %s failed", self.index, source)
                continue
            runs: dict[tuple[int, Plan], list[int]] = {}
            for i, peek in enumerate(peeks):
                runs.setdefault((peek.as_of, peek.plan.chain), []).append(i)
            for (as_of, chain), members in runs.items():
                output = self._run_chain(source, chain, as_of, found, owner, members, len(peeks))
                if output is None:
                    continue
                table, starts = output
                tables.append(table)
                for j, i in enumerate(members):
                    answers[peeks[i].id] = PeekResult(peeks[i].id, self.index, None, None,
                                                      (len(tables) - 1, int(starts[j]), int(starts[j + 1] - starts[j])))
        return answers

    def _run_chain(self, source: str, chain: Plan, as_of: int, found: pa.Table, owner: np.ndarray,
                   members: list[int], peeks: int) -> tuple[pa.Table, np.ndarray] | None:
        """The chain over the rows `found` of collection `source` for the peeks `members`
        (positions in `owner`'s numbering), at `as_of`: one table sorted by peek, and where each
        peek's rows start (len(members) + 1 bounds). The peek's position rides along as a row column while the
        rows are consolidated (two peeks of one key keep their own copies) and as the time
        through the chain (a chain of Map/Filter/Project never looks at times unless it
        mentions mz_now(), which keeps peeks apart). None if the chain fails or the memory
        limit is passed: the peeks are then answered one by one."""
        if any_node(chain, mentions_mz_now):
            return None
        position = np.full(peeks, -1, dtype=np.int64)
        position[members] = np.arange(len(members))
        mine = position[owner]
        held_before = pa.total_allocated_bytes()
        try:
            rows = found if len(members) == peeks else found.filter(pa.array(mine >= 0))
            mine = mine[mine >= 0]
            data = [rows.column(i) for i in range(rows.num_columns - 2)]
            tagged = snapshot_at(make_batch(data + [pa.array(mine)], rows["time"], rows["diff"]), as_of)
            n = tagged.num_columns - 3
            by_peek = pa.array(tagged.column(n).to_numpy().astype(np.uint64))
            rows = make_batch([tagged.column(i) for i in range(n)], by_peek, tagged["diff"])
            dataflow = Dataflow(chain, 0, LocalExchange())
            output = dataflow.step({source: rows}, len(members) + 1)
            if dataflow.errors:
                return None
            tags = output["time"].to_numpy()
            order = np.argsort(tags, kind="stable")
            output = output.take(pa.array(order)).set_column(
                output.num_columns - 2, "time", pa.array(np.full(output.num_rows, as_of, dtype=np.uint64)))
            starts = np.searchsorted(tags[order], np.arange(len(members) + 1))
        except SqlError:  # (an error in the chain: the one-by-one path reports it for its peek)
            return None
        except Exception:  # a bug here: answered one by one all the same, but said
            log.exception("worker %d: batched chain over %s failed", self.index, source)
            return None
        if self._over_memory_limit(held_before):
            return None
        return output, starts

    def _answer_peek(self, peek: FastPeek, trace: CollectionTrace | None) -> PeekResult:
        """One fast-path peek: the rows of its collection (or its keys' rows in the index) at its
        time, through its Map/Filter/Project chain; errors as a peek dataflow would report them."""
        plan = peek.plan

        def failed(error: SqlError) -> PeekResult:
            return PeekResult(peek.id, self.index, None, error)

        if trace is None:
            return failed(_dropped())
        if trace.error is not None:
            return failed(trace.error)
        if peek.as_of < trace.compacted_to:
            return failed(_history_gone(peek.as_of, trace.compacted_to))
        held_before = pa.total_allocated_bytes()
        try:
            if plan.keys is not None:
                rows = self._lookup(plan.source, plan.key, keys_table(plan.types, plan.key, plan.keys), peek.as_of)
            else:
                if plan.prefilter:
                    rows = contents_at(trace.contents_from(peek.as_of, _prefiltering(plan.prefilter)), peek.as_of)
                else:
                    rows = trace.snapshot(peek.as_of)
            if isinstance(plan.chain, Get):
                output = rows  # no chain (`SELECT * FROM v`): the snapshot is the answer
            else:
                dataflow = Dataflow(plan.chain, peek.as_of, LocalExchange())
                output = dataflow.step({plan.source: rows}, peek.as_of + 1)
                if dataflow.errors:
                    return failed(dataflow.errors[0])
        except SqlError as e:
            return failed(e)
        except Exception as e:  # an engine bug: fail this read, keep the replica serving
            log.exception("worker %d: peek %s failed", self.index, peek.id)
            return failed(SqlError(SqlState.INTERNAL_ERROR, f"internal error in peek {peek.id}: {type(e).__name__}: {e}"))
        if self._over_memory_limit(held_before):
            return failed(self._out_of_memory())
        return PeekResult(peek.id, self.index, output, None)

    def _index_arrangement(self, id: str) -> Arrangement | None:
        """The arrangement of index `id` here, if it runs here and has not failed."""
        index = self.dataflows.get(id)
        return None if index is None or index.dataflow is None else index.dataflow.arrangement()

    def _lookup(self, id: str, key: tuple[int, ...], keys: pa.Table, as_of: int) -> pa.Table:
        """The rows of index `id` with one of `keys`, as of `as_of`."""
        arrangement = self._index_arrangement(id)
        if arrangement is None:  # not an arranged index here: its contents, arranged for this read
            arrangement = Arrangement(key)  # (the chain need not re-check the keys: see fast_peek)
            arrangement.insert(self.collections[id].contents_from(as_of))
        found = arrangement.lookup(keys, tuple(range(len(key))))
        if found.num_rows == 0:
            return empty_batch(self.collections[id].types)
        return contents_at(found, as_of)

    def _note_whole(self, id: str, whole: pa.Table | None) -> None:
        """A table write to `id` arrived, whole (`whole`) or split (None): the same on every
        worker, whatever part of it this one holds."""
        for running in self.dataflows.values():
            if id in running.pending:
                seen = running.whole.get(id, [])
                if seen is None or whole is None:
                    running.whole[id] = None
                else:
                    if whole.num_rows:
                        seen.append(whole)
                    running.whole[id] = seen

    def _whole_inputs(self, running: RunningDataflow, target: int) -> dict[str, pa.Table]:
        """The inputs whose updates in this step every worker holds whole, and their whole
        batches: those fed only whole writes since the last step, all of which this step
        consumes. Decided from the commands alone, so every worker names the same ones. An
        input whose updates are not all consumed keeps its state as split (None) until a step
        consumes everything fed so far."""
        out: dict[str, pa.Table] = {}
        for id in list(running.whole):
            trace = self.collections.get(id)
            if trace is None or trace.upper > target:
                running.whole[id] = None  # (some may be left for a later step)
                continue
            seen = running.whole.pop(id)
            if seen and running.started:
                # (consolidated as the parts are: see `_step`)
                out[id] = seen[0] if len(seen) == 1 else consolidate(concat(seen))
        return out

    def _feed(self, id: str, batch: pa.Table | None) -> None:
        if batch is None or batch.num_rows == 0:
            return
        for running in self.dataflows.values():
            if id in running.pending:
                running.pending[id].append(batch)

    def _free(self, running: RunningDataflow) -> None:
        """Give back a dropped or failed dataflow's memory now. Its operators form reference
        cycles that only the cyclic garbage collector frees, and a worker allocates too few
        Python objects for that to run soon: the Arrow buffers its state holds (gigabytes for
        a large join) would stay until then."""
        if running.command.sink != "peek":  # (peeks are small and many)
            gc.collect()
            release_memory()

    def _fail(self, running: RunningDataflow, error: SqlError, target: int | None = None) -> None:
        """End a dataflow with `error` (`target`: the step it failed in, if it did in one): its
        collection (if any) answers the error from now on.

        An index's or view's dataflow stays listed, failed, with its state freed: its
        collection's upper keeps following its inputs (`_step_failed`), so the dataflows that
        read it step exactly when they do on the workers where it has not failed yet (its peers
        learn of the failure a little later): otherwise a reader would step on one worker and
        not on another, and each would wait in a different exchange."""
        command = running.command
        if command.sink in ("index", "persist"):
            running.failed, running.dataflow = error, None
            trace = self.collections.get(command.id)
            if trace is None:  # it failed in its first step: readers get the error, not "unknown"
                trace = self.collections[command.id] = CollectionTrace(output_types(command.plan), running.frontier)
                trace.compacted_to = command.as_of
            trace.error = error
            trace.arranged, trace.batches, trace.hashes = None, [], []  # (its rows are gone with its state)
            trace.forget_read()
            if target is not None and target > running.frontier:
                self._step_failed(running, target)  # (this step's, as the other workers take it)
        else:
            self.dataflows.pop(command.id, None)
        self._free(running)
        self._report_failure(command, error)

    def _idle(self, running: RunningDataflow) -> bool:
        """None of its inputs changed since its last step (the same on every worker): its step
        computes nothing and exchanges nothing."""
        return running.started and not running.always_step and \
            self._quiet_inputs(running) >= set(running.inputs)

    def _quiet_inputs(self, running: RunningDataflow) -> frozenset[str]:
        """The inputs that changed on no worker since the dataflow's last step, decided from
        the commands alone (`dirty_upper`), so every worker names the same ones; none before
        its first step or for a dataflow that steps as time passes."""
        if not running.started or running.always_step:
            return frozenset()
        return frozenset(id for id in running.inputs if self.dirty_upper.get(id, 0) <= running.frontier)

    def _step_failed(self, running: RunningDataflow, target: int) -> None:
        """A failed index or view's step: nothing computed, its collection's upper (and the
        record of its change) advanced as if it had stepped."""
        command = running.command
        idle = self._idle(running)
        running.frontier, running.started = target, True
        if not idle:
            self.dirty_upper[command.id] = target
        trace = self.collections.get(command.id)
        if trace is not None:
            trace.append(None, target)

    def _report_failure(self, command: CreateDataflow, error: SqlError) -> None:
        """A dataflow that could not start here. Its peers may have started it (an input this
        worker found dropped when it came to import it, while a faster peer imported it first):
        they are told, as for a failure in a step, so none waits in an exchange for this one."""
        self.history.append(f"failed {command.id}: {error.message[:80]}")
        if self.network is not None and self.count > 1:
            DataflowExchange(self.network, command.id, self.index, self.count, command.generation).abort(error)
        if command.sink == "peek":
            self.send(PeekResult(command.id, self.index, None, error))
        else:
            self.send(DataflowOutput(command.id, self.index, None,
                                     command.as_of, [error], command.generation, command.as_of))

    # -- stepping -------------------------------------------------------------------------------

    def _over_memory_limit(self, held_before: int) -> bool:
        """Whether the step just made grew this worker's memory past its limit. Only a step
        that grew counts: what the worker already held (tables, other views) is not this
        dataflow's doing, and failing it would free nothing."""
        if self.memory_limit_bytes is None:
            return False
        held = pa.total_allocated_bytes()
        if held > self.memory_limit_bytes and held > held_before:
            # Finished dataflows' operators form reference cycles that only the cyclic garbage
            # collector frees, with the Arrow buffers they hold: collect before deciding.
            gc.collect()
            held = pa.total_allocated_bytes()
        return held > self.memory_limit_bytes and held > held_before

    def _out_of_memory(self) -> SqlError:
        limit_mb = self.memory_limit_bytes / (1 << 20)
        return SqlError(
            SqlState.OUT_OF_MEMORY,
            f"out of memory: this result needs more than the replica's memory limit allows "
            f"({limit_mb:,.0f} MB per worker, {limit_mb * self.count:,.0f} MB for the replica)",
            hint="Make the query or view smaller (a filter, fewer columns, a missing join condition), "
                 "or start the server with a larger --replica-memory-limit.")

    def _input_upper(self, running: RunningDataflow) -> int:
        if not running.inputs:
            return self.clock_upper
        return min(self.collections[id].upper for id in running.inputs)  # (_step fails one with an input gone)

    def _step_all(self) -> None:
        for id in list(self.dataflows):
            running = self.dataflows.get(id)
            if running is not None:
                self._step(running)
                self._answer_arrived_peeks()

    def _answer_peeks_midstep(self) -> None:
        """Within a dataflow's step, between its operators (`Runtime.pause`): the arrived peeks,
        at most every PEEK_POLL_S (a poll is a system call; an operator's work is often less).
        A DELETE's read of the orders index waited ~1.5 ms for the views' steps after the
        write before it: the index had stepped first, the views were still stepping."""
        now = time.perf_counter()
        if now - self._peeks_polled >= PEEK_POLL_S:
            self._answer_arrived_peeks()

    def _answer_arrived_peeks(self) -> None:
        """Between two pieces of a command's work: answer the fast-path peeks the controller
        sent meanwhile (read ahead of the queued commands) and those now answerable."""
        self._peeks_polled = time.perf_counter()
        if self.arrived_peeks is not None:
            self.waiting_peeks.extend(self.arrived_peeks(lambda p: p.plan.source in self.collections))
        if self.waiting_peeks:
            self._answer_peeks()

    def _step(self, running: RunningDataflow) -> None:
        command = running.command
        if running.failed is not None:
            running.whole.clear()
            if all(id in self.collections for id in running.inputs):
                target = self._input_upper(running)
                if target > running.frontier:
                    self._step_failed(running, target)
            return
        if any(id not in self.collections for id in running.inputs):
            # An input was dropped under it (the controller ends such dataflows first; this is
            # the worker's own guard, alike on every worker since they all hold the same ids).
            self._fail(running, _dropped())
            return
        target = self._input_upper(running)
        if command.sink == "peek":
            target = min(target, command.as_of + 1)
        if command.until is not None:
            target = min(target, max(command.until, running.frontier))
        if target <= running.frontier:
            return
        peer_failure = running.exchange.aborted()
        if peer_failure is not None:   # failed on another worker: fail here too, at once
            self._fail(running, peer_failure, target)
            return
        inputs: dict[str, pa.Table] = {}
        for id, batches in running.pending.items():
            if not batches:
                continue
            # Consolidated, so that a row inserted and deleted within one step is never seen by
            # the dataflow (whose expressions could raise an error for a row that never existed).
            updates = consolidate(concat(batches)) if len(batches) > 1 else batches[0]
            times = updates.column("time")
            ready = pc.less(times, pa.scalar(target, pa.uint64()))
            inputs[id] = updates.filter(ready)
            rest = updates.filter(pc.invert(ready))
            running.pending[id] = [rest] if rest.num_rows else []
        for id, (key, keys) in running.lookups.items():
            inputs[id] = self._lookup(id, key, keys, command.as_of)
        whole = self._whole_inputs(running, target)
        errors: list[SqlError] = []
        for id in running.inputs:
            trace = self.collections.get(id)
            if trace is not None and trace.error is not None:
                errors.append(trace.error)
        running.exchange.step_number += 1
        self.history.append(f"step {command.id} #{running.exchange.step_number} {running.frontier}->{target}")
        seen = len(running.dataflow.errors)
        idle = self._idle(running)
        if idle and any(b.num_rows for b in inputs.values()):
            # Cannot happen (every update fed is recorded in dirty_upper): never drop one.
            raise AssertionError(f"dataflow {command.id} has input but none of its inputs changed")
        held_before = pa.total_allocated_bytes()
        try:
            # An idle step runs nothing (no exchanges): its output is empty on every worker.
            output = empty_batch(output_types(command.plan)) if idle else \
                running.dataflow.step(inputs, target, self._quiet_inputs(running), whole)
        except ConnectionError:
            raise  # a peer died: the whole replica restarts
        except DataflowAborted as e:  # it failed on another worker, which told every worker
            self._fail(running, e.error, target)
            return
        except Exception as e:  # an engine bug: fail this dataflow, keep the replica serving others
            log.exception("worker %d: dataflow %s failed", self.index, command.id)
            if isinstance(e, TimeoutError):
                log.error("worker %d: recent history:\n%s", self.index, "\n".join(self.history))
            error = SqlError(SqlState.INTERNAL_ERROR, f"internal error in dataflow {command.id}: {type(e).__name__}: {e}")
            # Its peers may be waiting for this worker's part of an exchange: fail it there too.
            running.exchange.abort(error)
            self._fail(running, error, target)
            return
        if self._over_memory_limit(held_before):
            error = self._out_of_memory()
            running.exchange.abort(error)   # peers fail it too (one may hold less)
            self._fail(running, error, target)
            return
        errors.extend(running.dataflow.errors[seen:])
        if sum(b.num_rows for b in inputs.values()) >= RELEASE_MEMORY_AFTER_ROWS:
            # Hydration leaves large temporaries in the allocators: once the command is done
            # (its other dataflows' steps too), they go back to the OS (`release_if_due`).
            self.release_due = True
        first_step = not running.started
        running.frontier = target
        running.started = True
        sink = command.sink
        if sink in ("index", "persist") and not idle:
            self.dirty_upper[command.id] = target
        if sink == "peek":
            self.send(PeekResult(command.id, self.index, None if errors else output, errors[0] if errors else None))
            self.dataflows.pop(command.id, None)
        elif sink in ("index", "persist"):
            # The output stays here as collection `id`, which other dataflows and peeks read
            # without a round trip through the controller.
            trace = self.collections.get(command.id)
            if trace is None:
                trace = self.collections[command.id] = CollectionTrace(output_types(command.plan), 0)
                trace.compacted_to = command.as_of
                arrangement = running.dataflow.arrangement()
                if sink == "index" and arrangement is not None:
                    trace.arranged = arrangement.updates
            elif command.replaces and first_step:
                # A rebuilt dataflow's first output is the whole collection: what its readers
                # get is the difference from what they got from the errored one.
                output = consolidate(concat([output, negate(trace.contents_from(command.as_of))]))
                trace.error = None
                arrangement = running.dataflow.arrangement()
                if sink == "index" and arrangement is not None:
                    trace.arranged = arrangement.updates
            if errors:
                trace.error = errors[0]
            trace.append(output, target)
            if sink == "index":
                self._compact_index(running, trace)
            self._feed(command.id, output)
            # The controller tracks every collection's upper; a materialized view's output also goes
            # to the controller to be made durable in persist.
            sent = output if sink == "persist" and output.num_rows else None
            self.send(DataflowOutput(command.id, self.index, sent, target, errors, command.generation,
                                     command.as_of))
        else:
            self.send(DataflowOutput(command.id, self.index, output if output.num_rows else None, target,
                                     errors, command.generation, command.as_of))
        if command.until is not None and target >= command.until:
            self.dataflows.pop(command.id, None)


    def _compact_index(self, running: RunningDataflow, trace: CollectionTrace) -> None:
        """Let an index's arrangement forget the history nobody can read any more: times before
        its collection's readable history, and before the frontier of every dataflow reading it
        (a join probes the arrangement in place at its own times: a peek's time was readable
        when the peek was made but may have left the history since; a view may lag). A
        fast-path peek is refused once its time leaves the history, so it never reads before it. Without this an index
        kept every update it ever saw: a table of 1,000 rows updated 5,000 times held 11,000
        (tests/dataflow/test_index_compaction.py)."""
        arrangement = running.dataflow.arrangement() if running.dataflow is not None else None
        if arrangement is None:
            return
        since = trace.compacted_to
        for other in self.dataflows.values():
            if running.command.id in other.inputs:  # (a peek's frontier is its time until it steps)
                since = min(since, other.frontier)
        arrangement.compact(since)


def _summary(command: object) -> str:
    """One line about a command, for the worker's history."""
    if isinstance(command, AdvanceUpper):
        rows = {id: b.num_rows for id, b in command.updates.items() if b is not None and b.num_rows}
        return f"advance {command.upper} ids={len(command.ids)} rows={rows}"
    if isinstance(command, CreateDataflow):
        return (f"create {command.id} {command.sink} as_of={command.as_of} gen={command.generation}"
                f"{' replaces' if command.replaces else ''}")
    if isinstance(command, ImportCollection):
        return f"import {command.id} upper={command.upper}"
    return f"{type(command).__name__} {getattr(command, 'id', '')}"


def _dropped() -> SqlError:
    # (workers know relations by id only; the user never named one)
    return SqlError(SqlState.UNDEFINED_TABLE, "query could not complete because a relation it reads was dropped")


def _history_gone(as_of: int, earliest: int) -> SqlError:
    return SqlError(SqlState.DATA_EXCEPTION,
                    f"Timestamp ({as_of}) is not valid for all inputs: the earliest readable time is {earliest}",
                    hint=f"Reads can go back at most {HISTORY_MS} ms.")


def _extract_lookups(plan):
    """Replace IndexLookup leaves by Gets of the index; return the keys to look up per index."""
    lookups: dict[str, tuple[tuple[int, ...], pa.Table]] = {}
    # Each node object is rewritten once (and a node with nothing to rewrite below it is kept):
    # a sub-plan several nodes read (outer joins share their inputs) stays one shared operator,
    # and the walk stays linear in the plan, not in its paths.
    done: dict[int, Any] = {}

    def visit(node):
        key = id(node)
        if key not in done:
            done[key] = rewrite(node)
        return done[key]

    def rewrite(node):
        if isinstance(node, IndexLookup):
            lookups[node.id] = (node.key, lookup_keys(node))
            return Get(node.id, node.types)
        kids = children(node)
        if not kids or isinstance(node, LetRec):
            return node  # (lookups are only planned outside loops)
        new = tuple(visit(k) for k in kids)
        if all(a is b for a, b in zip(new, kids)):
            return node
        return with_children(node, new)

    return visit(plan), lookups


def run_worker(index: int, count: int, controller: tuple[str, int], data_dir: Path,
               all_gather: Callable[[str], list[str]] | None = None, advertise_host: str = "127.0.0.1",
               memory_limit_bytes: int | None = None) -> None:
    """Connect to the controller and the peers, then serve commands until shutdown or disconnect."""
    network = None
    if count > 1:
        assert all_gather is not None, "several workers need an all-gather to find each other"
        listener = PeerNetwork.listen()
        port = listener.getsockname()[1]
        addresses = [tuple(a.rsplit(":", 1)) for a in all_gather(f"{advertise_host}:{port}")]
        network = PeerNetwork(index, count, listener)
        network.connect([(h, int(p)) for h, p in addresses])
    sock = socket.create_connection(controller, timeout=60)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lock = threading.Lock()

    def send(message: object) -> None:
        with lock:
            send_frame(sock, message)

    send(Hello(index, count))
    commands = _Commands(sock)
    outbox = _Outbox(send)
    worker = Worker(index, count, data_dir, network, outbox.post, memory_limit_bytes, commands.arrived_peeks)
    try:
        while True:
            command = commands.next()
            if isinstance(command, Shutdown):
                return
            try:
                worker.handle(command)
            finally:
                outbox.flush()
            worker.tidy_traces()
            outbox.flush()
            worker.release_if_due()
    except ConnectionError:
        log.info("worker %d: controller went away", index)
    except BaseException:
        message = traceback.format_exc()
        log.error("worker %d failed: %s", index, message)
        try:
            send(WorkerError(index, message))
        except OSError:
            pass
        raise
    finally:
        sock.close()


class _Commands:
    """The controller's commands, in order; except that fast-path peeks (which step nothing
    and exchange nothing, see dataflow/fast_peek.py) may be taken out early, while a command
    sent before them is still being handled."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._queued: collections.deque = collections.deque()

    def next(self) -> object:
        return self._queued.popleft() if self._queued else recv_frame(self._sock)

    def arrived_peeks(self, ready: Callable[[FastPeek], bool]) -> list[FastPeek]:
        """The peeks of the FastPeeks commands that have arrived with nothing queued before
        them (whole frames: the controller writes each at once), if every one of their peeks is
        `ready` (its collection is here). Anything else is queued, and so is everything after
        it: a peek never overtakes a command sent before it but the one being handled (a view
        created or rebuilt by it must be read after)."""
        peeks: list[FastPeek] = []
        while not self._queued and select.select([self._sock], [], [], 0)[0]:
            command = recv_frame(self._sock)
            if isinstance(command, FastPeeks) and all(ready(p) for p in command.peeks):
                peeks.extend(command.peeks)
            else:
                self._queued.append(command)
        return peeks
