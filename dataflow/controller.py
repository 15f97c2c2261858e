"""The compute controller: environmentd's side of the dataflow workers.

It runs one compute cluster's replicas (each a Spark barrier job, `dataflow.spark_host`), sends
every worker of every replica the same commands in the same order, and merges what comes back.
Replicas compute the same dataflows deterministically, so the controller keeps one output stream
per dataflow: a step's output is taken from whichever replica reaches it first and the others'
copies are dropped (`_merge_step`); a peek takes the first replica whose workers all answered.
Losing one replica is then invisible to readers while another one is up: it is restarted, imports
the tables from persist, rebuilds its dataflows and rejoins the stream once it catches up.

    compute = ComputeController(workers=2, data_dir=...)
    await compute.start(spark_context)              # the first replica; waits for its workers
    await compute.add_replica("r2", workers=2)      # a second one computing the same dataflows
    compute.import_collection("u1", types, upper)
    outputs = compute.create_dataflow("t7", plan, as_of, "subscribe")   # an asyncio.Queue
    rows = await compute.peek(plan, as_of)          # a consolidated Arrow batch
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import DIFF, TIME, concat, consolidate, empty_batch, partition_rows
from dataflow.errors import SqlError, SqlState
from dataflow.fast_peek import FastPeekPlan, fast_peek_plan, route
from dataflow.plan import Plan, collections_read, output_types
from dataflow.protocol import (AdvanceUpper, CreateDataflow, DataflowOutput, DropCollection,
                               DropDataflow, FastPeek, FastPeeks, Hello, ImportCollection, Imported,
                               Messages, PeekResult, PeekResults, Shutdown, Stepped, WorkerError)
from dataflow.transport import encode_frame, read_frame_async
from dataflow.types import SqlType

log = logging.getLogger("slipstream.compute")

# Table advances a replica's workers may have been sent and not yet applied; later ones are
# held and merged (see ComputeController.advance).
MAX_ADVANCES_IN_FLIGHT = 2
# A table advance with at most this many rows goes whole to every worker (`AdvanceUpper.whole`):
# each keeps its own part, and a dataflow's first exchange of those rows becomes a local
# partition instead of a round between the workers.
WHOLE_ADVANCE_MAX_ROWS = 1024
REPLICA_START_SECONDS = 300  # how long a replica's workers may take to connect


@dataclass
class StepOutput:
    """One step of a dataflow, merged across workers: updates at times < upper."""

    batch: pa.Table
    upper: int
    errors: list[SqlError]


@dataclass
class _Progress:
    """One replica's side of a dataflow: its workers' outputs not yet merged, and where its next
    merged step starts (None: the next one is its first, the whole contents at its as_of)."""

    as_of: int
    parts: list[deque]
    lower: int | None = None


@dataclass
class _DataflowState:
    command: CreateDataflow
    queue: asyncio.Queue
    frontier: int | None = None  # upper of the last step put on the queue (None: nothing yet)
    start_as_of: int | None = None  # the as_of of the first output that started the stream
    # The stream lost every replica that could continue it: the next replica's first output (a
    # whole snapshot) is taken, after telling the reader (persist sinks correct the shard).
    resnapshot: bool = False
    progress: dict[str, _Progress] = field(default_factory=dict)
    empty: pa.Table | None = None  # the output's empty batch, for steps that changed nothing


@dataclass
class _Peek:
    future: asyncio.Future
    sent_to: set[str]
    results: dict[str, list[PeekResult]] = field(default_factory=dict)
    # A fast-path peek: how many of each replica's workers answer it (the others hold none of
    # its keys); None: every worker.
    answering: dict[str, int] | None = None


@dataclass
class Replica:
    """One replica: `workers` Spark barrier tasks connected to their own listening socket."""

    name: str
    workers: int
    server: asyncio.base_events.Server | None = None
    writers: dict[int, asyncio.StreamWriter] = field(default_factory=dict)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    job: object | None = None  # the SparkReplica
    syncing: bool = True  # until it holds every collection and dataflow, commands wait in `backlog`
    backlog: list[object] = field(default_factory=list)
    dropped: bool = False
    status_changed: float = field(default_factory=time.time)  # when it last went online or offline
    # Flow control of table advances (see ComputeController.advance): the uppers of the
    # AdvanceUppers sent that some worker has not acknowledged yet, each worker's last
    # acknowledged one, and those held back meanwhile, to go as one.
    in_flight: deque = field(default_factory=deque)
    stepped: dict[int, int] = field(default_factory=dict)
    held: list["_Advance"] = field(default_factory=list)

    def busy(self) -> bool:
        """Whether the workers have as many advances to apply as they may be sent (one being
        applied and the next waiting: they never wait for the controller between steps)."""
        return len(self.in_flight) >= MAX_ADVANCES_IN_FLIGHT

    def acknowledge(self, worker: int, upper: int) -> None:
        self.stepped[worker] = max(self.stepped.get(worker, 0), upper)
        done = min(self.stepped.get(w, 0) for w in range(self.workers))
        while self.in_flight and self.in_flight[0] <= done:
            self.in_flight.popleft()

    def reset_flow(self) -> None:
        """(Re)started workers: nothing in flight, nothing held (they import from persist)."""
        self.in_flight, self.stepped, self.held = deque(), {}, []

    @property
    def live(self) -> bool:
        return not self.syncing and not self.dropped


class ReplicaLost(SqlError):
    def __init__(self) -> None:
        super().__init__(SqlState.INTERNAL_ERROR, "the compute replica restarted; retry the query",
                         hint="SUBSCRIBE again to resume from the current time")


class ComputeController:
    def __init__(self, workers: int, data_dir: Path, listen_host: str = "127.0.0.1",
                 advertise_host: str = "127.0.0.1", replica_name: str = "r1",
                 replica_memory_bytes: int | None = None, cluster: str = "quickstart") -> None:
        self.cluster = cluster  # the cluster's name (logs, Spark job names)
        self.workers = workers  # the first replica's size
        self.replica_memory_bytes = replica_memory_bytes  # each replica's memory limit (None: none)
        self.first_replica = replica_name
        self.data_dir = data_dir
        self.listen_host = listen_host
        self.advertise_host = advertise_host
        self.replicas: dict[str, Replica] = {}
        self._spark_context = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.collections: dict[str, tuple[tuple[SqlType, ...], int]] = {}  # id -> (types, upper)
        # Imports sent and not yet read: id -> {(replica, worker): the time the worker reads at}.
        # Persist must not compact the shard past it (`import_hold`): a worker busy with earlier
        # commands reads later, after more writes, and a shard compacted meanwhile cannot give it
        # the contents at that time (the replica failed and restarted).
        self._importing: dict[str, dict[tuple[str, int], int]] = {}
        # Collections (views, indexes) whose dataflow hit an evaluation error, recorded as soon
        # as the workers report it (the owner may share its own dict here).
        self.errors: dict[str, SqlError] = {}
        self._since: dict[str, int] = {}  # id -> earliest time every replica can read it at
        self._dataflows: dict[str, _DataflowState] = {}
        self._peeks: dict[str, _Peek] = {}
        # Fast-path peeks not yet sent, per (replica, worker): sent together once the event loop
        # has run every session that wants one (see _send_fast_peeks).
        self._fast_outbox: dict[tuple[str, int], list[FastPeek]] = {}
        self._owners: dict = {}  # point lookups' owning workers (see fast_peek.route)
        self._ids = itertools.count(1)
        self._closing = False

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, spark_context) -> None:
        self._loop = asyncio.get_running_loop()
        self._spark_context = spark_context
        await self.add_replica(self.first_replica, self.workers)

    async def add_replica(self, name: str, workers: int) -> None:
        """Start a replica and bring it to the state of the others (every collection and
        dataflow); returns once it computes alongside them."""
        replica = Replica(name, workers)
        self.replicas[name] = replica
        try:
            await self._start_job(replica)
        except BaseException:
            self.replicas.pop(name, None)
            replica.dropped = True
            self._stop_job(replica)
            raise
        self._sync(replica)

    async def drop_replica(self, name: str) -> None:
        replica = self.replicas.pop(name)
        replica.dropped = True
        self._forget(replica)
        await self._shut_down(replica)

    async def _shut_down(self, replica: Replica) -> None:
        """Tell its workers to stop, then end its job."""
        for writer in replica.writers.values():
            try:
                writer.write(encode_frame(Shutdown()))
                await writer.drain()
                writer.close()
            except (ConnectionError, RuntimeError):
                pass
        self._stop_job(replica)

    def slots_in_use(self) -> int:
        return sum(r.workers for r in self.replicas.values())

    async def _start_job(self, replica: Replica) -> None:
        from dataflow.spark_host import SparkReplica

        replica.syncing = True
        replica.reset_flow()
        replica.connected.clear()
        if replica.server is None:
            replica.server = await asyncio.start_server(
                lambda r, w: self._on_worker(replica, r, w), self.listen_host, 0)
        port = replica.server.sockets[0].getsockname()[1]
        replica.job = SparkReplica(self._spark_context, replica.workers, (self.advertise_host, port), self.data_dir,
                                   self.advertise_host, lambda error: self._on_job_exit(replica, error),
                                   name=f"{self.cluster}.{replica.name}",
                                   memory_limit_bytes=self.replica_memory_bytes)
        replica.job.start()
        await asyncio.wait_for(replica.connected.wait(), timeout=REPLICA_START_SECONDS)
        log.info("replica %s.%s of %d workers connected", self.cluster, replica.name, replica.workers)

    def _stop_job(self, replica: Replica) -> None:
        if replica.job is not None:
            replica.job.stop()
        if replica.server is not None:
            replica.server.close()

    def _on_job_exit(self, replica: Replica, error: BaseException | None) -> None:
        if self._closing or self._loop is None or replica.dropped:
            return
        self._loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._restart(replica, error)))

    async def _restart(self, replica: Replica, error: BaseException | None) -> None:
        log.error("replica %s failed (%s); restarting it and rehydrating dataflows", replica.name, error)
        self._forget(replica)
        replica.writers.clear()
        await self._start_job(replica)
        if not replica.dropped:  # (dropped while it started)
            self._sync(replica)

    def _imported(self, id: str, done) -> None:
        waiting = self._importing.get(id)
        if waiting is not None:
            for key in [k for k in waiting if done(k)]:
                del waiting[key]
            if not waiting:
                del self._importing[id]

    def import_hold(self, id: str) -> int | None:
        """The earliest time a worker still has to read collection `id` at (None: none)."""
        waiting = self._importing.get(id)
        return min(waiting.values()) if waiting else None

    def _forget(self, replica: Replica) -> None:
        """`replica` computes nothing any more: take it out of every peek and dataflow; what only
        it could have continued fails (peeks, SUBSCRIBEs) or starts over from a snapshot."""
        for id in list(self._importing):  # a restarted replica imports afresh
            self._imported(id, lambda key: key[0] == replica.name)
        if not replica.syncing:
            replica.syncing, replica.status_changed = True, time.time()
        replica.reset_flow()
        for id, peek in list(self._peeks.items()):
            peek.sent_to.discard(replica.name)
            peek.results.pop(replica.name, None)
            if not peek.sent_to and not peek.future.done():
                del self._peeks[id]
                peek.future.set_exception(ReplicaLost())
        for id, state in list(self._dataflows.items()):
            state.progress.pop(replica.name, None)
            self._check_continuity(state)

    def _check_continuity(self, state: _DataflowState) -> None:
        """If no replica left can continue the dataflow's stream: a SUBSCRIBE ends with an error
        (its reader must not see a gap); an index's or view's stream starts over from the next
        snapshot. A replica yet to send its first output can give that snapshot; one that is
        ahead of the stream cannot join it and starts over (rare: it would have had to lose the
        only replica in step while it was catching up)."""
        if state.frontier is None or any(self._continues(state, p) for p in state.progress.values()):
            return
        id = state.command.id
        if state.command.sink == "subscribe":
            state.queue.put_nowait(ReplicaLost())
            self.drop_dataflow(id)
            return
        state.resnapshot = True
        if not any(p.lower is None for p in state.progress.values()):
            for name in list(state.progress):
                log.warning("replica %s restarts to rebuild %s from a snapshot", name, id)
                other = self.replicas.get(name)
                if other is not None and other.job is not None:
                    other.job.stop()

    @staticmethod
    def _continues(state: _DataflowState, progress: _Progress) -> bool:
        """Whether the replica's next step can extend the stream: it is in step, or its first
        output is still to come from the same as_of as the one that started the stream."""
        if progress.lower is None:
            return progress.as_of == state.start_as_of and not state.resnapshot
        return progress.lower <= state.frontier

    def _sync(self, replica: Replica) -> None:
        """Send a (re)started replica the controller's state as it is now: every collection and
        dataflow, including those created while it started. Their commands in its backlog are
        therefore already covered and must not be sent again (a second CreateDataflow would emit
        its snapshot twice into the same sink)."""
        covered: set[str] = set(self.collections) | set(self._dataflows)
        for id, (types, upper) in list(self.collections.items()):
            if id in self._dataflows and self._dataflows[id].command.sink in ("index", "persist"):
                continue  # produced by a dataflow, which is re-created below
            self._send_all(replica, ImportCollection(id, types, upper))
            self._since[id] = max(self._since.get(id, 0), upper - 1)
        for state in list(self._dataflows.values()):
            command = state.command
            as_of = max(command.as_of, self._as_of_for(command.plan))
            if command.sink in ("index", "persist"):
                self._since[command.id] = max(self._since.get(command.id, 0), as_of)
            state.progress[replica.name] = _Progress(as_of, [deque() for _ in range(replica.workers)])
            # Fresh workers have no collection to correct against: not a replacement.
            self._send_all(replica, dataclasses.replace(command, as_of=as_of, replaces=False))
        replica.syncing, replica.status_changed = False, time.time()
        backlog, replica.backlog = replica.backlog, []
        for command in backlog:
            if isinstance(command, (ImportCollection, CreateDataflow, DropDataflow)) and command.id in covered:
                continue
            if isinstance(command, CreateDataflow) and command.sink == "peek":
                peek = self._peeks.get(command.id)
                if peek is None:
                    continue  # answered by another replica meanwhile
                if command.as_of < self._as_of_for(command.plan):
                    # The new job holds no history before its imports: it cannot answer a read
                    # at that time, and answering at another would break the read's timestamp.
                    if not peek.sent_to:
                        del self._peeks[command.id]
                        peek.future.set_exception(ReplicaLost())
                    continue
                peek.sent_to.add(replica.name)
            self._send_all(replica, command)
        log.info("replica %s in sync: %d collections, %d dataflows", replica.name, len(self.collections),
                 len(self._dataflows))

    def _as_of_for(self, plan: Plan) -> int:
        """The earliest time at which every replica can read every input of `plan`."""
        from dataflow.plan import collections_read

        return max([self._since.get(i, 0) for i in collections_read(plan)] + [0])

    def fail_all(self, error: SqlError) -> None:
        """The cluster is going away (DROP CLUSTER): every peek in flight and every SUBSCRIBE on
        it ends with `error` rather than waiting for replicas that will never answer."""
        for peek in self._peeks.values():
            if not peek.future.done():
                peek.future.set_exception(error)
        self._peeks.clear()
        for state in self._dataflows.values():
            if state.command.sink == "subscribe":
                state.queue.put_nowait(error)

    async def close(self) -> None:
        self._closing = True
        for replica in self.replicas.values():
            await self._shut_down(replica)

    # -- worker connections ---------------------------------------------------------------------

    async def _on_worker(self, replica: Replica, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        hello = None
        try:
            hello = await read_frame_async(reader)
            assert isinstance(hello, Hello), hello
            replica.writers[hello.index] = writer
            if len(replica.writers) == replica.workers:
                replica.connected.set()
            while True:
                self._on_message(replica, await read_frame_async(reader))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:
            log.exception("compute controller: bad message from a worker of replica %s", replica.name)
        if hello is not None and not self._closing and not replica.dropped \
                and replica.writers.get(hello.index) is writer:
            # A worker is gone: its peers cannot make progress either. End the job; Spark's exit
            # callback then starts it again, and the new job rehydrates every dataflow.
            log.error("worker %d of replica %s disconnected; stopping the replica", hello.index, replica.name)
            replica.writers.pop(hello.index, None)
            self._forget(replica)
            replica.job.stop()

    def _on_message(self, replica: Replica, message: object) -> None:
        if isinstance(message, Messages):
            for m in message.messages:
                self._on_message(replica, m)
        elif isinstance(message, DataflowOutput):
            state = self._dataflows.get(message.id)
            if state is None or message.generation != state.command.generation:
                return  # dropped, or a rebuilt dataflow's predecessor still talking
            progress = state.progress.get(replica.name)
            if progress is None:
                return  # the replica left this dataflow's stream
            progress.parts[message.worker].append(message)
            while all(progress.parts) and self._dataflows.get(message.id) is state:
                parts = [q.popleft() for q in progress.parts]
                upper = min(p.upper for p in parts)
                self._merge_step(state, progress, parts, upper)
        elif isinstance(message, PeekResult):
            self._on_peek_result(replica, message)
        elif isinstance(message, PeekResults):
            for result in message.answers():
                self._on_peek_result(replica, result)
        elif isinstance(message, Stepped):
            self._stepped(replica, message)
        elif isinstance(message, Imported):
            self._imported(message.id, lambda key: key == (replica.name, message.worker))
        elif isinstance(message, WorkerError):
            log.error("worker %d of replica %s reported: %s", message.worker, replica.name, message.message)

    def _on_peek_result(self, replica: Replica, message: PeekResult) -> None:
        peek = self._peeks.get(message.id)
        if peek is None or replica.name not in peek.sent_to:
            return
        results = peek.results.setdefault(replica.name, [])
        results.append(message)
        answering = replica.workers if peek.answering is None else peek.answering[replica.name]
        if len(results) == answering:
            del self._peeks[message.id]
            errors = [r.error for r in results if r.error is not None]
            if errors:
                peek.future.set_exception(errors[0])
            else:
                peek.future.set_result(_merge_parts([r.batch for r in results]))

    def _merge_step(self, state: _DataflowState, progress: _Progress, parts: list[DataflowOutput],
                    upper: int) -> None:
        """Put one replica's step on the dataflow's stream if it extends it. A first step (the
        contents at the replica's as_of) starts the stream; a later step covers [lower, upper), and
        only its updates at or after the stream's frontier are new (another replica may have
        delivered the rest; updates keep their exact times, so the cut is by time)."""
        lower, progress.lower = progress.lower, upper
        as_of = max(p.as_of for p in parts)
        if lower is None:
            if state.frontier is None or state.resnapshot:  # it starts the stream
                if state.resnapshot:
                    state.resnapshot = False
                    state.queue.put_nowait(("rehydrate", as_of))
                state.start_as_of = as_of
            elif as_of == state.start_as_of:
                # The contents at the stream's own start (times up to as_of advanced to it) and
                # later updates at their exact times: past the frontier it continues the stream.
                lower = as_of
            else:
                # A later start (a restarted replica): nothing to add until it is in step. If it
                # was counted on to continue the stream (its worker started later than asked),
                # nobody can now.
                self._check_continuity(state)
                return
        if lower is not None and (state.frontier is None or state.resnapshot or lower > state.frontier
                                  or upper <= state.frontier):
            return  # not adjacent to the stream (nothing yet, a gap) or already delivered
        errors = [e for p in parts for e in p.errors]
        batches = [p.batch for p in parts if p.batch is not None]
        if not batches:
            if state.empty is None:
                state.empty = empty_batch(output_types(state.command.plan))
            batch = state.empty
        elif state.command.sink in ("index", "persist"):
            batch = concat(batches)  # (a view's sink consolidates what it writes)
        else:  # a row's updates on two workers may cancel: a subscriber must not see them
            batch = consolidate(concat(batches))
        if lower is not None and lower < state.frontier and batch.num_rows:
            batch = batch.filter(pc.greater_equal(batch[TIME], state.frontier))
        state.frontier = upper
        if state.command.sink in ("index", "persist"):
            types, _ = self.collections.get(state.command.id, ((), 0))
            self.collections[state.command.id] = (types, upper)
            if errors:
                self.errors.setdefault(state.command.id, errors[0])
        state.queue.put_nowait(StepOutput(batch, upper, errors))

    def _send_all(self, replica: Replica, command: object) -> None:
        self._release_held(replica)  # (commands reach workers in the order they were given)
        if isinstance(command, ImportCollection):
            waiting = self._importing.setdefault(command.id, {})
            for w in range(replica.workers):
                waiting[(replica.name, w)] = max(command.upper - 1, 0)
        frame = encode_frame(command)
        for writer in replica.writers.values():
            if not writer.is_closing():
                writer.write(frame)

    def _broadcast(self, command: object) -> None:
        """Send `command` to every replica; one that is (re)starting gets it once it is in sync
        (table appends excepted: it imports them from persist)."""
        for replica in self.replicas.values():
            if replica.syncing:
                if not isinstance(command, AdvanceUpper):
                    replica.backlog.append(command)
            else:
                self._send_all(replica, command)

    # -- commands -------------------------------------------------------------------------------

    def import_collection(self, id: str, types: tuple[SqlType, ...], upper: int) -> None:
        self.collections[id] = (tuple(types), upper)
        self._since[id] = max(upper - 1, 0)
        self._broadcast(ImportCollection(id, tuple(types), upper))

    def drop_collection(self, id: str) -> None:
        self.collections.pop(id, None)
        self._importing.pop(id, None)
        self._broadcast(DropCollection(id))

    def advance(self, updates: dict[str, pa.Table], ids: tuple[str, ...], upper: int) -> None:
        """Append `updates` (times < upper) to collections and advance all of `ids` to `upper`.

        Flow control: while a replica's workers have an advance to apply after the one they
        are applying, this one is held back, and the advances held meanwhile go as one command
        once they take the next: one step of every dataflow for many writes (each update keeps
        its own time, so what every time reads is unchanged; operators take several times per
        step). An idle replica gets each advance at once."""
        for id in ids:
            if id in self.collections:
                types, _ = self.collections[id]
                self.collections[id] = (types, upper)
        whole = sum(b.num_rows for b in updates.values()) <= WHOLE_ADVANCE_MAX_ROWS
        split: dict[int, dict[int, dict[str, pa.Table]]] = {}
        for replica in self.replicas.values():
            if replica.syncing:
                continue  # it imports these from persist at the new uppers
            if replica.workers == 1 or whole:
                replica.held.append(_Advance({w: dict(updates) for w in range(replica.workers)}, ids, upper,
                                             whole=replica.workers > 1))
            else:
                if replica.workers not in split:
                    split[replica.workers] = _split(updates, replica.workers)
                replica.held.append(_Advance(split[replica.workers], ids, upper))
            if not replica.busy():
                self._release_held(replica)

    def _release_held(self, replica: Replica) -> None:
        """Send the advances held for `replica`, merged into one per worker."""
        if not replica.held:
            return
        held, replica.held = replica.held, []
        ids = tuple(dict.fromkeys(id for a in held for id in a.ids))
        upper = held[-1].upper
        whole = all(a.whole for a in held)
        if not whole:  # (whole and split advances merge as split ones)
            held = [_Advance(_split(a.by_worker[0], replica.workers), a.ids, a.upper) if a.whole else a
                    for a in held]
        try:
            merged = {w: _merged_updates([a.by_worker[w] for a in held]) for w in replica.writers}
        except pa.ArrowInvalid:  # (batches of one table that do not concatenate: one by one)
            log.exception("advances to %d could not be merged; sending them one by one", upper)
            for a in held:
                self._send_advance(replica, a)
            return
        self._send_advance(replica, _Advance(merged, ids, upper, whole))

    def _send_advance(self, replica: Replica, advance: "_Advance") -> None:
        frame = None
        for w, writer in replica.writers.items():
            if not writer.is_closing():
                if frame is None or not advance.whole:  # a whole advance is the same for every worker
                    frame = encode_frame(AdvanceUpper(advance.by_worker[w], advance.ids, advance.upper,
                                                      advance.whole))
                writer.write(frame)
        replica.in_flight.append(advance.upper)

    def _stepped(self, replica: Replica, message: Stepped) -> None:
        replica.acknowledge(message.worker, message.upper)
        if replica.held and not replica.busy():
            self._release_held(replica)

    def upper_of(self, id: str) -> int:
        return self.collections[id][1]

    def _new_state(self, command: CreateDataflow) -> _DataflowState:
        state = _DataflowState(command, asyncio.Queue())
        for replica in self.replicas.values():
            if not replica.syncing:  # a syncing replica gets its progress when it syncs
                state.progress[replica.name] = _Progress(command.as_of, [deque() for _ in range(replica.workers)])
        self._dataflows[command.id] = state
        return state

    def create_dataflow(self, id: str, plan: Plan, as_of: int, sink: str, until: int | None = None) -> asyncio.Queue:
        """Start a dataflow; its merged StepOutputs (or an exception) arrive on the returned queue."""
        command = CreateDataflow(id, plan, as_of, sink, until)
        state = self._new_state(command)
        if sink in ("index", "persist"):
            self.collections[id] = (output_types(plan), as_of)
            self._since[id] = as_of
        self._broadcast(command)
        return state.queue

    def rebuild_dataflow(self, id: str, plan: Plan, as_of: int, sink: str) -> asyncio.Queue:
        """Replace the dataflow of collection `id` by a new one from `as_of` (after an evaluation
        error: the old one's state is incomplete). The collection stays; the new dataflow's first
        output is the correction from the old contents (see `CreateDataflow.replaces`)."""
        old = self._dataflows.pop(id, None)
        if old is not None:
            self._broadcast(DropDataflow(id))
        generation = (old.command.generation + 1) if old is not None else 1
        command = CreateDataflow(id, plan, as_of, sink, None, replaces=True, generation=generation)
        state = self._new_state(command)
        self._broadcast(command)
        return state.queue

    def readers_of(self, ids: set[str]) -> dict[str, set[str]]:
        """Dataflow id -> which of `ids` its plan reads (peeks aside)."""
        found = {}
        for id, state in self._dataflows.items():
            read = collections_read(state.command.plan) & ids
            if read:
                found[id] = read
        return found

    def end_dataflow(self, id: str, error: SqlError) -> None:
        """Stop dataflow `id` and hand its reader `error` (a SUBSCRIBE whose input is dropped)."""
        state = self._dataflows.get(id)
        if state is not None:
            state.queue.put_nowait(error)
            self.drop_dataflow(id)

    def drop_dataflow(self, id: str) -> None:
        if self._dataflows.pop(id, None) is not None:
            self._broadcast(DropDataflow(id))
        if id in self.collections:
            self.collections.pop(id, None)
            self._broadcast(DropCollection(id))

    def new_id(self, prefix: str = "t") -> str:
        return f"{prefix}{next(self._ids)}"

    async def peek(self, plan: Plan, as_of: int) -> pa.Table:
        """The plan's result at `as_of`, consolidated: rows with their multiplicities in `diff`.
        Every replica computes it; the first whose workers have all answered gives the result."""
        fast = fast_peek_plan(plan)
        live = [r for r in self.replicas.values() if not r.syncing]
        if fast is not None and live:
            return await self._fast_peek(fast, as_of, live)
        id = self.new_id("p")
        future = asyncio.get_running_loop().create_future()
        self._peeks[id] = _Peek(future, {r.name for r in self.replicas.values() if not r.syncing})
        self._broadcast(CreateDataflow(id, plan, as_of, "peek"))
        try:
            return await future
        finally:
            if self._peeks.pop(id, None) is not None:  # not answered (cancelled): stop it
                self._broadcast(DropDataflow(id))

    async def _fast_peek(self, plan: FastPeekPlan, as_of: int, replicas: list[Replica]) -> pa.Table:
        """A peek answered without a dataflow (see dataflow.fast_peek), by the workers of each
        live replica that hold its rows."""
        id = self.new_id("p")
        routes = {r.name: route(plan, r.workers, self._owners) for r in replicas}
        if not all(routes.values()):  # no key to look up: nothing can match
            return empty_batch(output_types(plan.chain))
        future = asyncio.get_running_loop().create_future()
        self._peeks[id] = _Peek(future, set(routes), answering={n: len(r) for n, r in routes.items()})
        if not self._fast_outbox:
            asyncio.get_running_loop().call_soon(self._send_fast_peeks)
        for name, parts in routes.items():
            for worker, part in parts.items():
                self._fast_outbox.setdefault((name, worker), []).append(FastPeek(id, part, as_of))
        try:
            return await future
        finally:
            if self._peeks.pop(id, None) is not None:  # not answered (cancelled): forget it
                self._broadcast(DropDataflow(id))

    def _send_fast_peeks(self) -> None:
        """One message per worker for every fast-path peek asked for since the last call (the
        sessions that ran in this turn of the event loop share it). A replica lost meanwhile
        gets none: `_forget` has taken it out of those peeks."""
        outbox, self._fast_outbox = self._fast_outbox, {}
        for (name, worker), peeks in outbox.items():
            replica = self.replicas.get(name)
            writer = None if replica is None or replica.syncing else replica.writers.get(worker)
            if writer is not None and not writer.is_closing():
                writer.write(encode_frame(FastPeeks(peeks)))


@dataclass
class _Advance:
    """A table advance for one replica: per worker, the updates it gets (`whole`: every worker
    gets all of them and keeps its own part), the ids advanced, the new upper."""

    by_worker: dict[int, dict[str, pa.Table]]
    ids: tuple[str, ...]
    upper: int
    whole: bool = False


def _split(updates: dict[str, pa.Table], workers: int) -> dict[int, dict[str, pa.Table]]:
    """Each worker's part of `updates` (`partition_rows`, as the workers split a whole advance)."""
    cut = {id: partition_rows(batch, workers) for id, batch in updates.items()}
    return {w: {id: p[w] for id, p in cut.items()} for w in range(workers)}


def _merged_updates(advances: list[dict[str, pa.Table]]) -> dict[str, pa.Table]:
    """One worker's updates of several advances, per collection in the order written (each
    update keeps its time)."""
    parts: dict[str, list[pa.Table]] = {}
    for updates in advances:
        for id, batch in updates.items():
            parts.setdefault(id, []).append(batch)
    return {id: b[0] if len(b) == 1 else pa.concat_tables(b) for id, b in parts.items()}


def _merge_parts(parts: list[pa.Table]) -> pa.Table:
    """The workers' answers to a read as one batch. Each worker's part is consolidated and holds
    its share of the collection (positive counts), so the union of them is the answer as it
    is; only parts with other counts (not expected) are consolidated together."""
    batch = concat(parts)
    if len(parts) == 1 or batch.num_rows == 0:
        return batch
    if pc.min(batch[DIFF]).as_py() > 0:
        return batch
    return consolidate(batch)
