"""The coordinator: environmentd's core, which sequences everything that touches time.

It owns the catalog, the timestamp oracle, the storage controller and one compute controller per
cluster (`server.compute_clusters`). Table writes take a write timestamp from the oracle, become
durable in persist, then flow to every cluster; every write (and a tick each second) advances
*all* tables' uppers together, so a read at the oracle's read timestamp can always complete. A
materialized view is computed by its cluster, where its output stays as a collection other
queries read; a sink task per view makes it durable in persist and forwards what it wrote to the
other clusters, which read the view as an import of its shard. Indexes serve only their cluster.

The adapter (`server.adapter`) turns SQL into calls on this class.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from catalog.durable import DEFAULT_DATABASE, Catalog, creation_order, drop_closure
from catalog.items import CatalogItem, ItemKind
from catalog.clusters import ClusterSpec
from catalog.replicas import ReplicaStatus
from dataflow.allocator import release_memory
from dataflow.batch import advance_times, concat, consolidate, consolidate_keeping_hashes
from dataflow.controller import ComputeController, StepOutput
from dataflow.errors import SqlError, SqlState
from dataflow.plan import ArrangeBy, Get, Plan, collections_read
from dataflow.render import evaluate_constant
from dataflow.types import Column
from planner.index_lookup import use_index_lookups
from planner.shared_arrangements import use_shared_arrangements
from server.compute_clusters import ComputeClusters
from server.constant_results import ConstantResults
from server.daemon_threads import DaemonThreads
from server.oracle import TimestampOracle
from storage.controller import StorageController
from storage.persist import PersistClient
from storage.persist.errors import ShardDropped

log = logging.getLogger("slipstream.coordinator")

TICK_SECONDS = 1.0
COMPACT_EVERY_TICKS = 30
MV_SINK_INTERVAL_SECONDS = 1.0
# Small writes (a few rows) go inline into persist's consensus state: one fsync, not three.
INLINE_PART_MAX_BYTES = 4096
# A table write's part up to this size is written into consensus in the same transaction as the
# state that names it: one fsync, not three (persist's consensus.py). Larger ones go to files.
CONSENSUS_PART_MAX_BYTES = 256 << 10
# environmentd reads shards only to reconcile views and to compact: a small part cache will do.
PERSIST_CACHE_BYTES = 32 << 20
RELEASE_MEMORY_AFTER_ROWS = 100_000


@dataclass
class CoordinatorConfig:
    data_dir: Path
    workers: int = 2
    spark_master: str | None = None  # default: local mode with a slot per replica worker, see start()
    advertise_host: str = "127.0.0.1"
    spark_conf: dict[str, str] = field(default_factory=dict)
    replica_memory_bytes: int | None = None  # each replica's memory limit (server/limits.py)


class Coordinator:
    def __init__(self, config: CoordinatorConfig) -> None:
        self.config = config
        self.catalog: Catalog | None = None
        self.storage: StorageController | None = None
        self.compute = ComputeClusters()  # a compute controller per cluster, by cluster id
        # Per materialized view: the upper of what its sink wrote and forwarded to the clusters
        # that import it (a cluster created later imports the shard up to there).
        self._view_uppers: dict[str, int] = {}
        self.oracle: TimestampOracle | None = None
        self.write_lock = asyncio.Lock()
        self.cluster_lock = asyncio.Lock()  # CREATE / DROP / ALTER CLUSTER [REPLICA], one at a time
        self.errors: dict[str, SqlError] = {}  # collections whose dataflow hit an evaluation error
        self._tasks: list[asyncio.Task] = []
        self._constant_threads = DaemonThreads()  # evaluates plans that read no collection
        self._constant_results = ConstantResults()
        self._sinks: dict[str, asyncio.Task] = {}
        self._pending_writes: list[tuple[dict[str, pa.Table], asyncio.Future]] = []
        self.last_write: dict[str, int] = {}  # table id -> timestamp of its latest data write
        self._committer: asyncio.Task | None = None
        self.spark_context = None
        from storage.sources.controller import SourceController
        self.sources = SourceController(self)  # load-generator ingestion (storage/sources)

    # -- start-up -------------------------------------------------------------------------------

    async def start(self) -> None:
        from dataflow.spark_host import make_spark_context

        data_dir = self.config.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog.open(data_dir / "catalog.sqlite")
        self.storage = StorageController(PersistClient.open_local(data_dir / "persist",
                                                                 inline_part_max_bytes=INLINE_PART_MAX_BYTES,
                                                                 consensus_part_max_bytes=CONSENSUS_PART_MAX_BYTES,
                                                                 cache_bytes=PERSIST_CACHE_BYTES,
                                                                 compact_in_background=True))
        # Finish the multi-table transactions a crash left committed but not applied to every
        # table's shard, before anything reads the shards.
        recovered = await asyncio.to_thread(self.storage.recover)
        if recovered:
            log.info("recovered %d committed multi-table transaction(s) from the transaction WAL "
                     "(at %s)", len(recovered), ", ".join(str(e.ts) for e in recovered))
        catalog = self.catalog
        catalog.source_statistics = self.sources.statistics  # mz_internal.mz_source_statistics
        self.oracle = TimestampOracle(
            load=lambda: int(catalog.get_setting("oracle_high_water") or 0),
            store=lambda v: catalog.set_setting("oracle_high_water", str(v)))
        catalog.cluster_replicas = self.replica_statuses  # mz_cluster_replicas and SHOW CLUSTER REPLICAS
        clusters = catalog.clusters()
        if catalog.get_setting("clusters") is None:
            catalog.set_clusters(clusters)  # a fresh catalog (or one from before clusters): record it
        sizes = [r.workers(self.config.workers) for c in clusters.clusters for r in c.replicas]
        # Local mode: a task slot per worker of every replica, room for one more replica of the
        # default size (CREATE CLUSTER [REPLICA]), and one for other Spark work.
        master = self.config.spark_master or f"local[{sum(sizes) + self.config.workers + 1}]"
        self.spark_context = await asyncio.to_thread(make_spark_context, master, "slipstream", self.config.spark_conf)
        for spec in clusters.clusters:
            self.compute.controllers[spec.id] = await self.start_cluster(spec)
        await self._bootstrap()
        await self.sources.start()
        self._tasks.append(asyncio.ensure_future(self._tick_loop()))

    def _new_controller(self, spec: ClusterSpec) -> ComputeController:
        first = spec.replicas[0]
        controller = ComputeController(first.workers(self.config.workers), self.config.data_dir / "persist",
                                       advertise_host=self.config.advertise_host,
                                       listen_host="0.0.0.0" if self.config.advertise_host != "127.0.0.1" else "127.0.0.1",
                                       replica_name=first.name,
                                       replica_memory_bytes=self.config.replica_memory_bytes,
                                       cluster=spec.name)
        controller.errors = self.errors  # one record of errored collections
        return controller

    async def start_cluster(self, spec: ClusterSpec) -> ComputeController:
        """A controller running every replica of `spec`, holding nothing yet (the caller imports
        the collections: `_bootstrap` at start, `add_cluster` for a new one)."""
        controller = self._new_controller(spec)
        try:
            await controller.start(self.spark_context)
            for replica in spec.replicas[1:]:
                await controller.add_replica(replica.name, replica.workers(self.config.workers))
        except BaseException:
            await controller.close()
            raise
        return controller

    def add_cluster(self, spec: ClusterSpec, controller: ComputeController) -> None:
        """Make a started controller one of the clusters: it imports every table and source
        relation at the tables' frontier and every materialized view's shard up to what its sink
        forwarded, and from now on receives their updates. The caller holds the write lock (no
        write is between its shard append and its advance)."""
        upper = self.read_ts() + 1
        for item in self.catalog.items():
            types = tuple(c.type for c in item.columns)
            if item.is_input:
                controller.import_collection(item.id, types, upper)
            elif item.kind is ItemKind.MATERIALIZED_VIEW and item.id in self._view_uppers:
                controller.import_collection(item.id, types, self._view_uppers[item.id])
        self.compute.controllers[spec.id] = controller

    async def remove_cluster(self, cluster_id: str) -> None:
        controller = self.compute.controllers.pop(cluster_id, None)
        if controller is not None:
            controller.fail_all(SqlError(SqlState.UNDEFINED_OBJECT, f"cluster '{controller.cluster}' was dropped"))
            await controller.close()

    def cluster_named(self, name: str) -> tuple[ClusterSpec, ComputeController]:
        """The cluster a statement names (IN CLUSTER, the session's `cluster`); 42704 if none."""
        spec = self.catalog.clusters().by_name(name)
        controller = self.compute.get(spec.id) if spec is not None else None
        if controller is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name}'",
                           hint="SHOW CLUSTERS lists them; SET cluster = <name> picks the session's.")
        return spec, controller

    def _cluster_of(self, item: CatalogItem) -> tuple[str, ComputeController | None]:
        """(name, controller) of the cluster that computes a materialized view or index."""
        spec = self.catalog.clusters().by_id(item.cluster_id)
        if spec is None:
            return f"<dropped cluster {item.cluster_id}>", None
        return spec.name, self.compute.get(spec.id)

    async def _bootstrap(self) -> None:
        """Bring back every object: import shards, restart indexes, then materialized views."""
        ts = self.oracle.allocate_write_ts()
        self.oracle.applied(ts)
        upper = ts + 1
        items = self.catalog.items()
        for item in items:
            types = tuple(c.type for c in item.columns)
            if item.is_input:  # tables and sources' relations
                await asyncio.to_thread(self.storage.open, item.id, types)
                self.compute.import_collection(item.id, types, upper)
            elif item.kind is ItemKind.MATERIALIZED_VIEW:
                # Its dataflow re-creates the view's contents in its cluster's workers; the shard
                # is for durability and is reconciled by the self-correcting sink. The other
                # clusters import the shard as it is and follow what the sink writes.
                await asyncio.to_thread(self.storage.open, item.id, types)
                self._import_view_elsewhere(item)
        for item in items:
            if item.kind is ItemKind.INDEX:
                self._start_index(item, ts)
        for item in items:
            if item.kind is ItemKind.MATERIALIZED_VIEW:
                name, _ = self._cluster_of(item)
                self._start_materialized_view(item, self._plan_definition(item, name), ts)

    def _import_view_elsewhere(self, item: CatalogItem) -> None:
        """Every cluster but the view's own imports its shard at the shard's upper."""
        upper = self.storage.upper(item.id)
        self._view_uppers[item.id] = upper
        types = tuple(c.type for c in item.columns)
        for cluster_id, controller in self.compute.controllers.items():
            if cluster_id != item.cluster_id:
                controller.import_collection(item.id, types, upper)

    def _forward_view(self, item_id: str, owner: str | None, batch: pa.Table, upper: int) -> None:
        """What a view's sink wrote to its shard (updates at times below `upper`) goes to the
        clusters that import the view, exactly as the shard now holds it."""
        self._view_uppers[item_id] = upper
        updates = {item_id: batch} if batch.num_rows else {}
        for cluster_id, controller in self.compute.controllers.items():
            if cluster_id != owner and item_id in controller.collections:
                controller.advance(updates, (item_id,), upper)

    def replica_statuses(self) -> list[ReplicaStatus]:
        statuses = []
        for cluster in self.catalog.clusters().clusters:
            controller = self.compute.get(cluster.id)
            running = controller.replicas if controller is not None else {}
            for spec in cluster.replicas:
                replica = running.get(spec.name)
                if replica is not None:
                    statuses.append(ReplicaStatus(spec.id, spec.name, replica.workers, replica.live,
                                                  replica.status_changed, cluster.id, cluster.name))
        return statuses

    def _plan_definition(self, item: CatalogItem, cluster: str) -> Plan:
        """A view's definition planned to run on `cluster` (a name: the indexes it may read)."""
        from planner import plan_statement
        from planner.parse import parse

        (stmt,) = parse(item.definition)
        return plan_statement(self.catalog, stmt, maintained="an index", cluster=cluster).plan

    def plan_of_relation(self, item: CatalogItem, cluster: str) -> Plan:
        """A plan reading all of a relation on `cluster`: its shard, or a view's definition."""
        types = tuple(c.type for c in item.columns)
        if item.kind in (ItemKind.TABLE, ItemKind.MATERIALIZED_VIEW) or item.is_input:
            return Get(item.id, types)
        return self._plan_definition(item, cluster)

    def _start_index(self, item: CatalogItem, as_of: int) -> None:
        name, controller = self._cluster_of(item)
        if controller is None:
            log.error("index %s belongs to cluster %s, which does not exist; not maintained", item.id, name)
            return
        queue = controller.create_dataflow(item.id, self._index_plan(item, name), as_of, "index")
        self._sinks[item.id] = asyncio.ensure_future(self._run_index_errors(item.id, queue))

    def _index_plan(self, item: CatalogItem, cluster: str) -> Plan:
        """An index's dataflow: its relation arranged by the key. An index of a view reads the
        indexes of its cluster created before it in place, as a materialized view does (and is
        re-planned alike when one is dropped or rebuilt)."""
        plan = ArrangeBy(self.plan_of_relation(self.catalog.get(item.index_on), cluster), item.index_key)
        return use_shared_arrangements(plan, self.catalog, cluster, reader=item.id)

    async def _run_index_errors(self, id: str, queue: asyncio.Queue) -> None:
        while True:
            item = await queue.get()
            if isinstance(item, StepOutput) and item.errors:
                self.errors.setdefault(id, item.errors[0])

    def _start_materialized_view(self, item: CatalogItem, plan: Plan, as_of: int) -> None:
        name, controller = self._cluster_of(item)
        if controller is None:
            log.error("materialized view %s belongs to cluster %s, which does not exist; not maintained",
                      item.id, name)
            return
        # Its joins probe the indexes of its cluster in place (shared arrangements). Dropping
        # such an index re-plans the view without it (`drop`), and an index rebuilt after an
        # error has its readers rebuilt with it (`_rebuild_errored`).
        plan = use_shared_arrangements(plan, self.catalog, name, reader=item.id)
        queue = controller.create_dataflow(item.id, plan, as_of, "persist")
        self._sinks[item.id] = asyncio.ensure_future(self._run_persist_sink(item.id, queue, as_of,
                                                                            item.cluster_id))

    async def _run_persist_sink(self, id: str, queue: asyncio.Queue, as_of: int, owner: str | None = None) -> None:
        """Make a materialized view's output durable in its shard, and forward what was written
        to the other clusters (`owner` computes the view). Readers in its own cluster do not wait
        for this (they read the view in the workers), so steps that queue up are written as one
        append; other clusters see the view up to its last append."""
        first = True
        while True:
            items = [await queue.get()]
            while not queue.empty():
                items.append(queue.get_nowait())
            steps: list[StepOutput] = []
            for item in items:
                if isinstance(item, tuple) and item[0] == "rehydrate":
                    first, steps, as_of = True, [], item[1]
                elif isinstance(item, StepOutput):
                    if item.errors:
                        self.errors.setdefault(id, item.errors[0])
                    steps.append(item)
            if not steps:
                continue
            batch = concat([s.batch for s in steps])
            upper = steps[-1].upper
            try:
                if first:
                    written = await asyncio.to_thread(self.storage.correct_and_append, id, batch, upper, as_of)
                    first = False
                else:
                    written = await asyncio.to_thread(self._append_view_steps, id, batch, upper)
                self._forward_view(id, owner, written, self.storage.upper(id))
            except KeyError:
                return  # the view was dropped while this step was in flight
            # Batch the next second's steps into one append: keeps view writes off the disk path
            # that table writes (which clients wait for) take.
            await asyncio.sleep(MV_SINK_INTERVAL_SECONDS)

    def _append_view_steps(self, id: str, batch: pa.Table, upper: int) -> pa.Table:
        """(In a thread: at 1M orders a second of V2's steps is ~200k updates, whose
        consolidation would stall every session's event loop.) Append a view's queued step
        outputs: times before the shard's upper advanced to it, consolidated once."""
        shard_upper = self.storage.upper(id)
        written = consolidate(advance_times(batch, shard_upper)) if batch.num_rows else batch
        self.storage.append(id, written, max(upper, shard_upper), consolidated=True)
        return written

    async def close(self) -> None:
        self.sources.close()
        for t in self._tasks + list(self._sinks.values()):
            t.cancel()
        await self.compute.close()
        if self.spark_context is not None:
            await asyncio.to_thread(self.spark_context.stop)
        if self.storage is not None:
            self.storage.persist.close()  # (background compaction: the merge under way ends)
        if self.catalog is not None:
            self.catalog.close()

    # -- time -----------------------------------------------------------------------------------

    def table_ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.catalog.items() if i.is_input)  # with sources' relations

    async def _tick_loop(self) -> None:
        ticks = 0
        while True:
            await asyncio.sleep(TICK_SECONDS)
            try:
                async with self.write_lock:
                    ts = self.oracle.allocate_write_ts()
                    self.compute.advance({}, self.table_ids(), ts + 1)
                    self.oracle.applied(ts)
                ticks += 1
                if ticks % COMPACT_EVERY_TICKS == 0:
                    await self._compact_shards()
            except Exception:
                log.exception("tick failed")

    async def _compact_shards(self) -> None:
        for item in self.catalog.items():
            if not (item.kind is ItemKind.MATERIALIZED_VIEW or item.is_input) or not self.storage.holds(item.id):
                continue  # (not a shard, or one CREATE has not opened yet / DROP has closed)
            if item.kind is ItemKind.MATERIALIZED_VIEW and \
                    self._view_uppers.get(item.id) != self.storage.upper(item.id):
                # An append not yet forwarded: other clusters may still import the
                # shard at the forwarded upper, whose history must stay readable.
                continue
            holds = [h for h in (self.sources.compaction_hold(item), self.compute.import_hold(item.id))
                     if h is not None]
            try:
                await asyncio.to_thread(self.storage.compact, item.id, min(holds) if holds else None)
            except ShardDropped:
                continue  # dropped while this pass ran

    def read_ts(self) -> int:
        return self.oracle.read_ts()

    # -- writes ---------------------------------------------------------------------------------

    async def write_locked(self, updates: dict[str, pa.Table]) -> int:
        """Commit row updates (batches of row columns + time + diff; time is overwritten) to tables
        at one new timestamp. The caller holds `write_lock`. Durable when this returns."""
        ts = self.oracle.allocate_write_ts()
        timed: dict[str, pa.Table] = {}
        hashes: dict[str, np.ndarray | None] = {}  # rows' hashes, made by consolidating: kept by persist
        for id, batch in updates.items():
            batch, hashes[id] = consolidate_keeping_hashes(advance_times(batch, ts))
            if batch.num_rows:
                timed[id] = batch
        if len(timed) > 1:
            # Several tables: one commit point (persist's transaction WAL), then each shard.
            await asyncio.to_thread(self.storage.append_atomic, timed, ts)
        for id, batch in timed.items():
            if len(timed) == 1:
                await asyncio.to_thread(self.storage.append, id, batch, ts + 1, True,  # (consolidated above)
                                        hashes.get(id))
            self.last_write[id] = ts
        self.compute.advance(timed, self.table_ids(), ts + 1)
        self.oracle.applied(ts)
        if timed and self.errors:
            self._rebuild_errored(ts, list(timed))
        if sum(b.num_rows for b in timed.values()) >= RELEASE_MEMORY_AFTER_ROWS:
            # A bulk load leaves large temporaries in the allocators; give them back to the OS.
            release_memory()
        return ts

    def _rebuild_errored(self, as_of: int, written: list[str]) -> None:
        """Views and indexes whose dataflow hit an evaluation error are rebuilt from the inputs as
        of this write, if it wrote one of their inputs (transitively): an error belongs to the
        rows that raised it, so once they are gone the view answers again (the old dataflow
        skipped the failing batch; its state cannot be trusted). A rebuild that fails again keeps
        the view in error until the next write to its inputs. One that ran out of its replica's
        memory is not rebuilt (every write would recompute it only to fail again): it answers
        its error until it is dropped."""
        affected = {id for id in set(drop_closure(self.catalog, written)) & set(self.errors)
                    if self.errors[id].sqlstate != SqlState.OUT_OF_MEMORY}
        if not affected:
            return
        # A view probing a rebuilt index in place would probe the old one's arrangement: its
        # dataflow is rebuilt with the index.
        affected |= {reader for reader in self.compute.readers_of(affected) if reader in self.catalog}
        log.info("rebuilding dataflows after evaluation errors: %s", sorted(affected))
        # Inputs before their readers: a reader rebuilt first would read the errored input and
        # take its error again (text order put 'u10' before 'u9').
        for id in creation_order(self.catalog, affected):
            self.errors.pop(id, None)
            try:
                item = self.catalog.get(id)
            except SqlError:
                continue  # dropped meanwhile
            self._rebuild(item, as_of)

    def _rebuild(self, item: CatalogItem, as_of: int) -> None:
        """Replace the dataflow of an index or materialized view by a newly planned one from
        `as_of`, whose first output corrects what the old one produced."""
        name, controller = self._cluster_of(item)
        if controller is None:
            return
        old = self._sinks.pop(item.id, None)
        if old is not None:
            old.cancel()
        if item.kind is ItemKind.INDEX:
            queue = controller.rebuild_dataflow(item.id, self._index_plan(item, name), as_of, "index")
            self._sinks[item.id] = asyncio.ensure_future(self._run_index_errors(item.id, queue))
        elif item.kind is ItemKind.MATERIALIZED_VIEW:
            plan = use_shared_arrangements(self._plan_definition(item, name), self.catalog, name, reader=item.id)
            queue = controller.rebuild_dataflow(item.id, plan, as_of, "persist")
            self._sinks[item.id] = asyncio.ensure_future(self._run_persist_sink(item.id, queue, as_of,
                                                                               item.cluster_id))

    async def write(self, updates: dict[str, pa.Table]) -> int:
        """Commit blind writes (INSERT, COPY). Writes that arrive while another commit is on disk
        are grouped into the next commit, at one timestamp with one append per table: concurrent
        writers share the cost of the fsync instead of queueing behind each other's."""
        future = asyncio.get_running_loop().create_future()
        self._pending_writes.append((updates, future))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.ensure_future(self._group_commit())
        return await future

    async def _group_commit(self) -> None:
        while self._pending_writes:
            async with self.write_lock:
                group, self._pending_writes = self._pending_writes, []
                merged: dict[str, list[pa.Table]] = {}
                for updates, _ in group:
                    for id, batch in updates.items():
                        merged.setdefault(id, []).append(batch)
                try:
                    ts = await self.write_locked({id: concat(b) for id, b in merged.items()})
                except BaseException as e:
                    for _, future in group:
                        if not future.done():
                            future.set_exception(e)
                    if isinstance(e, asyncio.CancelledError):
                        raise
                    continue
                for _, future in group:
                    if not future.done():
                        future.set_result(ts)

    # -- reads ----------------------------------------------------------------------------------

    def check_readable(self, plan: Plan, cluster: str = "quickstart") -> ComputeController:
        """The controller of `cluster` (a name), once it holds everything `plan` reads."""
        _, controller = self.cluster_named(cluster)
        for id in collections_read(plan):
            if id in self.errors:
                raise self.errors[id]
            if id not in controller.collections:
                raise SqlError(SqlState.UNDEFINED_TABLE,
                               "query could not complete because a relation it reads was dropped")
        return controller

    async def peek(self, plan: Plan, ts: int | None = None, cluster: str = "quickstart") -> pa.Table:
        """The plan's result, computed by `cluster` (a name: the one the plan was planned for,
        whose indexes it may read)."""
        if not collections_read(plan):
            # Catalog queries and constants: nothing the workers hold is read, so the answer is
            # computed here, without a round trip (they are hot: clients introspect constantly).
            # In a thread: a large constant (generate_series) must not hold up other sessions.
            at = self.read_ts() if ts is None else ts
            return await self._constant_results.result(
                plan, at, lambda: self._constant_threads.run(evaluate_constant, plan, at))
        controller = self.check_readable(plan, cluster)
        plan = use_shared_arrangements(use_index_lookups(plan, self.catalog, cluster), self.catalog, cluster)
        return await controller.peek(plan, self.read_ts() if ts is None else ts)

    # -- DDL ------------------------------------------------------------------------------------

    async def create_table(self, schema: str, name: str, columns: tuple[Column, ...], create_sql: str,
                           database: str = DEFAULT_DATABASE) -> CatalogItem:
        async with self.write_lock:
            item = self.catalog.create(ItemKind.TABLE, schema, name, columns, create_sql, database=database)
            types = tuple(c.type for c in columns)
            await asyncio.to_thread(self.storage.open, item.id, types)
            self.compute.import_collection(item.id, types, self.read_ts() + 1)
            return item

    async def create_view(self, schema: str, name: str, columns: tuple[Column, ...], create_sql: str,
                          definition: str, depends_on: tuple[str, ...],
                          database: str = DEFAULT_DATABASE, pg_definitions: tuple[str, str] | None = None) -> CatalogItem:
        async with self.write_lock:
            return self.catalog.create(ItemKind.VIEW, schema, name, columns, create_sql,
                                       definition=definition, depends_on=depends_on, database=database,
                                       pg_definitions=pg_definitions)

    async def create_materialized_view(self, schema: str, name: str, columns: tuple[Column, ...],
                                       create_sql: str, definition: str, depends_on: tuple[str, ...],
                                       plan: Plan, database: str = DEFAULT_DATABASE,
                                       cluster: str = "quickstart", pg_definitions: tuple[str, str] | None = None) -> CatalogItem:
        """`plan` was planned for `cluster` (a name), which computes the view."""
        async with self.write_lock:
            spec, _ = self.cluster_named(cluster)
            item = self.catalog.create(ItemKind.MATERIALIZED_VIEW, schema, name, columns, create_sql,
                                       definition=definition, depends_on=depends_on, database=database,
                                       cluster_id=spec.id, pg_definitions=pg_definitions)
            types = tuple(c.type for c in columns)
            await asyncio.to_thread(self.storage.open, item.id, types)
            self._import_view_elsewhere(item)
            self._start_materialized_view(item, plan, self.read_ts())
            return item

    async def create_index(self, schema: str, name: str, on: CatalogItem, key: tuple[int, ...],
                           create_sql: str, cluster: str = "quickstart") -> CatalogItem:
        async with self.write_lock:
            spec, _ = self.cluster_named(cluster)
            item = self.catalog.create(ItemKind.INDEX, schema, name, on.columns, create_sql,
                                       depends_on=(on.id,), index_on=on.id, index_key=key,
                                       database=on.database, cluster_id=spec.id)
            self._start_index(item, self.read_ts())
            return item

    async def create_namespace(self, kind: str, database: str, name: str | None) -> None:
        async with self.write_lock:
            if kind == "database":
                self.catalog.create_database(database)
            else:
                self.catalog.create_schema(database, name)

    async def drop_namespace(self, kind: str, database: str, schemas: tuple[str, ...], ids: tuple[str, ...]) -> None:
        """The objects in the schemas (and what depends on them) first, then the schemas."""
        if ids:
            await self.drop(list(ids), cascade=True)
        async with self.write_lock:
            self.catalog.drop_namespaces(database, list(schemas), kind == "database")

    async def drop(self, ids: list[str], cascade: bool) -> list[CatalogItem]:
        """Drop objects (and with cascade their dependents); 2BP01 if others depend on them."""
        async with self.write_lock:
            order = drop_closure(self.catalog, ids)
            extra = [i for i in order if i not in ids]
            if extra and not cascade:
                item = self.catalog.get(ids[0])
                dep = self.catalog.get(extra[0])
                raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                               f'cannot drop {item.kind.value} "{item.name}": still depended upon by {dep.kind.value} "{dep.name}"',
                               hint="Use DROP ... CASCADE to drop the dependent objects too.")
            dropped = [self.catalog.get(i) for i in order]
            by_id = {item.id: item for item in dropped}
            # Dataflows reading what goes that the catalog does not know as its dependents: a
            # SUBSCRIBE ends with an error; a view or index that reads an index being dropped
            # (an indexed view is read through its index) is re-planned without it, below.
            rebuild = []
            for reader, read in self.compute.readers_of(set(order)).items():
                if reader in by_id:
                    continue
                if reader not in self.catalog:
                    gone = by_id[min(read)]
                    self.compute.end_dataflow(reader, SqlError(
                        SqlState.UNDEFINED_TABLE,
                        f'query could not complete because {gone.kind.value} "{gone.name}" was dropped'))
                else:
                    rebuild.append(reader)
            for item in dropped:
                if item.kind is ItemKind.SOURCE:
                    self.sources.stop(item.id)
                task = self._sinks.pop(item.id, None)
                if task is not None:
                    task.cancel()
            self.catalog.drop(order)
            if rebuild:
                log.info("re-planning %s without the dropped %s", sorted(rebuild), sorted(order))
                as_of = self.read_ts()
                for id in creation_order(self.catalog, rebuild):
                    try:
                        self._rebuild(self.catalog.get(id), as_of)
                    except SqlError as e:  # it answers the error; the drop goes on
                        log.error("re-planning %s after a drop failed: %s", id, e.message)
                        self.errors[id] = e
            for item in dropped:
                self.compute.drop_dataflow(item.id)
                self.compute.drop_collection(item.id)
                self.errors.pop(item.id, None)
                self._view_uppers.pop(item.id, None)
            for item in dropped:
                if item.kind is ItemKind.MATERIALIZED_VIEW or item.is_input:
                    await asyncio.to_thread(self.storage.drop, item.id)
            return dropped
