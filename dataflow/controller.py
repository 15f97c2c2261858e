"""The compute controller: environmentd's side of the dataflow workers.

It starts a replica (a Spark barrier job, `dataflow.spark_host`), accepts its workers' connections,
sends every worker the same commands in the same order, and merges what the workers send back:
each dataflow's per-step output from all workers becomes one batch with one upper; peeks gather
one result per worker.

    compute = ComputeController(workers=2, data_dir=...)
    await compute.start(spark)                      # waits for every worker to say Hello
    compute.import_collection("u1", types, upper)
    outputs = compute.create_dataflow("t7", plan, as_of, "subscribe")   # an asyncio.Queue
    rows = await compute.peek(plan, as_of)          # a consolidated Arrow batch
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from dataflow.batch import concat, consolidate, partition
from dataflow.errors import SqlError, SqlState
from dataflow.plan import Plan
from dataflow.protocol import (AdvanceUpper, CreateDataflow, DataflowOutput, DropCollection,
                               DropDataflow, Hello, ImportCollection, PeekResult, Shutdown,
                               WorkerError)
from dataflow.transport import encode_frame, read_frame_async
from dataflow.types import SqlType

log = logging.getLogger("slipstream.compute")


@dataclass
class StepOutput:
    """One step of a dataflow, merged across workers: updates at times < upper."""

    batch: pa.Table
    upper: int
    errors: list[SqlError]


@dataclass
class _DataflowState:
    command: CreateDataflow
    queue: asyncio.Queue
    per_worker: list[deque] = field(default_factory=list)


class ReplicaLost(SqlError):
    def __init__(self) -> None:
        super().__init__(SqlState.INTERNAL_ERROR, "the compute replica restarted; retry the query",
                         hint="SUBSCRIBE again to resume from the current time")


class ComputeController:
    def __init__(self, workers: int, data_dir: Path, listen_host: str = "127.0.0.1",
                 advertise_host: str = "127.0.0.1") -> None:
        self.workers = workers
        self.data_dir = data_dir
        self.listen_host = listen_host
        self.advertise_host = advertise_host
        self._writers: dict[int, asyncio.StreamWriter] = {}
        self._all_connected = asyncio.Event()
        self._server: asyncio.base_events.Server | None = None
        self._replica = None
        self._spark = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.collections: dict[str, tuple[tuple[SqlType, ...], int]] = {}  # id -> (types, upper)
        # Collections (views, indexes) whose dataflow hit an evaluation error, recorded as soon
        # as the workers report it (the owner may share its own dict here).
        self.errors: dict[str, SqlError] = {}
        self._since: dict[str, int] = {}  # id -> earliest time the replica can read it at
        self._dataflows: dict[str, _DataflowState] = {}
        self._peeks: dict[str, tuple[asyncio.Future, list]] = {}
        self._ids = itertools.count(1)
        self._closing = False
        self._restarting = False
        self._backlog: list[object] = []

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, spark) -> None:
        self._loop = asyncio.get_running_loop()
        self._spark = spark
        self._server = await asyncio.start_server(self._on_worker, self.listen_host, 0)
        await self._start_replica()

    async def _start_replica(self) -> None:
        from dataflow.spark_host import SparkReplica

        port = self._server.sockets[0].getsockname()[1]
        self._all_connected.clear()
        self._replica = SparkReplica(self._spark, self.workers, (self.advertise_host, port), self.data_dir,
                                     self.advertise_host, self._on_replica_exit)
        self._replica.start()
        await asyncio.wait_for(self._all_connected.wait(), timeout=300)
        log.info("replica of %d workers connected", self.workers)

    def _on_replica_exit(self, error: BaseException | None) -> None:
        if self._closing or self._loop is None:
            return
        self._loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._restart_replica(error)))

    async def _restart_replica(self, error: BaseException | None) -> None:
        log.error("replica failed (%s); restarting it and rehydrating dataflows", error)
        # Until the new replica holds every collection and dataflow again, new commands wait in a
        # backlog (table appends are dropped: the re-import reads them from persist).
        self._restarting = True
        self._fail_all_transient()
        self._writers.clear()
        await self._start_replica()
        # The new replica gets the controller's state as it is now: every collection and dataflow,
        # including those created while it started. Their commands in the backlog are therefore
        # already covered and must not be sent again (a second CreateDataflow would emit its
        # snapshot twice into the same sink).
        covered: set[str] = set(self.collections) | set(self._dataflows)
        for id, (types, upper) in list(self.collections.items()):
            if id in self._dataflows and self._dataflows[id].command.sink in ("index", "persist"):
                continue  # produced by a dataflow, which is re-created below
            self._broadcast_now(ImportCollection(id, types, upper))
            self._since[id] = max(upper - 1, 0)
        for state in list(self._dataflows.values()):
            command = state.command
            state.per_worker = [deque() for _ in range(self.workers)]
            as_of = max(command.as_of, self._as_of_for(command.plan))
            # Fresh workers have no collection to correct against: not a replacement.
            state.command = dataclasses.replace(command, as_of=as_of, replaces=False)
            if command.sink in ("index", "persist"):
                self._since[command.id] = as_of
            state.queue.put_nowait(("rehydrate", as_of))
            self._broadcast_now(state.command)
        self._restarting = False
        backlog, self._backlog = self._backlog, []
        for command in backlog:
            if isinstance(command, (ImportCollection, CreateDataflow, DropDataflow)) and command.id in covered:
                continue
            if isinstance(command, CreateDataflow):
                # Issued during the restart: it reads the state the new replica imported, which
                # holds every write applied before it was issued.
                command = dataclasses.replace(command, as_of=max(command.as_of, self._as_of_for(command.plan)),
                                              replaces=False)
            self._broadcast_now(command)
        log.info("replica rehydrated: %d collections, %d dataflows", len(self.collections), len(self._dataflows))

    def _as_of_for(self, plan: Plan) -> int:
        """The earliest time at which the replica can read every input of `plan`."""
        from dataflow.plan import collections_read

        return max([self._since.get(i, 0) for i in collections_read(plan)] + [0])

    def _fail_all_transient(self) -> None:
        for id, (future, _) in list(self._peeks.items()):
            if not future.done():
                future.set_exception(ReplicaLost())
        self._peeks.clear()
        for id, state in list(self._dataflows.items()):
            if state.command.sink == "subscribe":
                state.queue.put_nowait(ReplicaLost())
                del self._dataflows[id]

    async def close(self) -> None:
        self._closing = True
        self._broadcast(Shutdown())
        for w in self._writers.values():
            try:
                await w.drain()
                w.close()
            except (ConnectionError, RuntimeError):
                pass
        if self._replica is not None:
            self._replica.stop()
        if self._server is not None:
            self._server.close()

    # -- worker connections ---------------------------------------------------------------------

    async def _on_worker(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = None
        try:
            hello = await read_frame_async(reader)
            assert isinstance(hello, Hello), hello
            self._writers[hello.index] = writer
            if len(self._writers) == self.workers:
                self._all_connected.set()
            while True:
                self._on_message(await read_frame_async(reader))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:
            log.exception("compute controller: bad message from a worker")
        if hello is not None and not self._closing and self._replica is not None \
                and self._writers.get(hello.index) is writer:
            # A worker is gone: its peers cannot make progress either. End the job; Spark's exit
            # callback then starts a fresh replica, which rehydrates every dataflow.
            log.error("worker %d disconnected; stopping the replica", hello.index)
            self._writers.pop(hello.index, None)
            self._replica.stop()

    def _on_message(self, message: object) -> None:
        if isinstance(message, DataflowOutput):
            state = self._dataflows.get(message.id)
            if state is None or message.generation != state.command.generation:
                return  # dropped, or a rebuilt dataflow's predecessor still talking
            state.per_worker[message.worker].append(message)
            while all(state.per_worker):
                parts = [q.popleft() for q in state.per_worker]
                errors = [e for p in parts for e in p.errors]
                batch = consolidate(concat([p.batch for p in parts]))
                upper = min(p.upper for p in parts)
                if state.command.sink in ("index", "persist"):
                    types, _ = self.collections.get(state.command.id, ((), 0))
                    self.collections[state.command.id] = (types, upper)
                    if errors:
                        self.errors.setdefault(state.command.id, errors[0])
                state.queue.put_nowait(StepOutput(batch, upper, errors))
        elif isinstance(message, PeekResult):
            entry = self._peeks.get(message.id)
            if entry is None:
                return
            future, results = entry
            results.append(message)
            if len(results) == self.workers:
                del self._peeks[message.id]
                errors = [r.error for r in results if r.error is not None]
                if errors:
                    future.set_exception(errors[0])
                else:
                    future.set_result(consolidate(concat([r.batch for r in results])))
        elif isinstance(message, WorkerError):
            log.error("worker %d reported: %s", message.worker, message.message)

    def _send(self, worker: int, command: object) -> None:
        writer = self._writers.get(worker)
        if writer is not None and not writer.is_closing():
            writer.write(encode_frame(command))

    def _broadcast(self, command: object) -> None:
        if self._restarting:
            if not isinstance(command, AdvanceUpper):
                self._backlog.append(command)
            return
        self._broadcast_now(command)

    def _broadcast_now(self, command: object) -> None:
        frame = encode_frame(command)
        for writer in self._writers.values():
            if not writer.is_closing():
                writer.write(frame)

    # -- commands -------------------------------------------------------------------------------

    def import_collection(self, id: str, types: tuple[SqlType, ...], upper: int) -> None:
        self.collections[id] = (tuple(types), upper)
        self._since[id] = max(upper - 1, 0)
        self._broadcast(ImportCollection(id, tuple(types), upper))

    def drop_collection(self, id: str) -> None:
        self.collections.pop(id, None)
        self._broadcast(DropCollection(id))

    def advance(self, updates: dict[str, pa.Table], ids: tuple[str, ...], upper: int) -> None:
        """Append `updates` (times < upper) to collections and advance all of `ids` to `upper`."""
        for id in ids:
            if id in self.collections:
                types, _ = self.collections[id]
                self.collections[id] = (types, upper)
        if self._restarting:
            return  # the new replica imports these from persist at the new uppers
        if self.workers == 1:
            self._broadcast(AdvanceUpper(updates, ids, upper))
            return
        parts = {id: partition(batch, tuple(range(batch.num_columns - 2)), self.workers)
                 for id, batch in updates.items()}
        for w in range(self.workers):
            self._send(w, AdvanceUpper({id: p[w] for id, p in parts.items()}, ids, upper))

    def upper_of(self, id: str) -> int:
        return self.collections[id][1]

    def create_dataflow(self, id: str, plan: Plan, as_of: int, sink: str, until: int | None = None) -> asyncio.Queue:
        """Start a dataflow; its merged StepOutputs (or an exception) arrive on the returned queue."""
        command = CreateDataflow(id, plan, as_of, sink, until)
        state = _DataflowState(command, asyncio.Queue(), [deque() for _ in range(self.workers)])
        self._dataflows[id] = state
        if sink in ("index", "persist"):
            from dataflow.plan import output_types

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
        state = _DataflowState(command, asyncio.Queue(), [deque() for _ in range(self.workers)])
        self._dataflows[id] = state
        self._broadcast(command)
        return state.queue

    def drop_dataflow(self, id: str) -> None:
        if self._dataflows.pop(id, None) is not None:
            self._broadcast(DropDataflow(id))
        if id in self.collections:
            self.collections.pop(id, None)
            self._broadcast(DropCollection(id))

    def new_id(self, prefix: str = "t") -> str:
        return f"{prefix}{next(self._ids)}"

    async def peek(self, plan: Plan, as_of: int) -> pa.Table:
        """The plan's result at `as_of`, consolidated: rows with their multiplicities in `diff`."""
        id = self.new_id("p")
        future = asyncio.get_running_loop().create_future()
        self._peeks[id] = (future, [])
        self._broadcast(CreateDataflow(id, plan, as_of, "peek"))
        try:
            return await future
        finally:
            if self._peeks.pop(id, None) is not None:
                self._broadcast(DropDataflow(id))
