"""Running sources inside environmentd: creation, ingestion tasks, restart recovery, statistics.

Each source has an ingestion task that, when ticks are due, generates their updates (vectorised,
in a thread) and commits them through the coordinator's write path under the write lock: one
oracle timestamp, each output's shard appended, then the progress relation (the next tick), then
the updates go to the workers and every input's upper advances, exactly as a table write. So a
read at the oracle's read timestamp sees a source and the tables at one consistent time, and
views, SELECT and SUBSCRIBE over a subsource work as over a table.

Ticks are paced by when they are due (tick 0's time + k x TICK INTERVAL, AS OF ticks at once):
a task that falls behind (slow disk, a restart) catches up by generating every due tick in one
write, so nothing is skipped and rows carry the time their tick was due.

Restart: the committed offset is the progress relation's value. The progress shard is appended
after the data shards, so a crash in the middle of a write can leave an output shard holding a
batch whose progress was never written: its upper is then past the progress shard's. Recovery
retracts that partial batch (the shard's contents at the progress upper minus its contents now)
before ingestion resumes at the committed offset, so nothing is duplicated or lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from catalog.items import CatalogItem, ItemKind
from dataflow.batch import concat, consolidate, negate
from dataflow.errors import SqlError, SqlState
from dataflow.types import INT8, Column
from storage.sources import make_generator
from storage.sources.base import Generator, LoadGenOptions, SourceStatistics, updates
from storage.sources.growth import growth, source_config
from storage.sources.retention import RetentionState, compaction_hold, expired

if TYPE_CHECKING:
    from server.coordinator import Coordinator

log = logging.getLogger("slipstream.sources")

PROGRESS_COLUMNS = (Column("offset", INT8, False),)
MAX_TICKS_PER_WRITE = 100_000
RETRY_SECONDS = (0.5, 1, 2, 5, 10, 30)


def now_ms() -> int:
    return int(time.time() * 1000)


class SourceController:
    def __init__(self, coord: "Coordinator") -> None:
        self.coord = coord
        self.tasks: dict[str, asyncio.Task] = {}
        self.stats: dict[str, SourceStatistics] = {}
        from storage.sources.webhook_ingest import WebhookIngest
        self.webhooks = WebhookIngest(coord)  # webhook sources: appended by HTTP requests
        from storage.sources.kafka.sink import KafkaSinks
        self.kafka_sinks = KafkaSinks(coord)  # CREATE SINK ... INTO KAFKA

    # -- catalog ----------------------------------------------------------------------------

    def sources(self) -> list[CatalogItem]:
        """The sources with an ingestion task (webhook sources have none: requests append)."""
        return [i for i in self.coord.catalog.items()
                if i.kind is ItemKind.SOURCE and source_config(i).get("type") != "webhook"]

    def parts(self, source: CatalogItem) -> tuple[dict[str | None, str], str]:
        """(output name -> collection id, progress id) of a source."""
        outputs: dict[str | None, str] = {}
        progress = None
        if source.columns:
            outputs[None] = source.id
        for i in self.coord.catalog.items():
            if i.kind is ItemKind.SUBSOURCE and i.depends_on == (source.id,):
                cfg = source_config(i)
                if cfg.get("output") == "progress":
                    progress = i.id
                else:
                    outputs[cfg["output"]] = i.id
        return outputs, progress

    def retention_window(self, item: CatalogItem) -> int | None:
        """The RETENTION WINDOW (ms) that applies to `item`'s rows: a webhook source's, or a
        load generator's for its growing outputs; None for everything else."""
        return growth(item, self.coord.catalog)[1]

    def compaction_hold(self, item: CatalogItem) -> int | None:
        """The time before which `item`'s shard may not be compacted, or None (no limit)."""
        window = self.retention_window(item)
        return None if window is None else compaction_hold(window, self.coord.read_ts())

    def generator(self, source: CatalogItem) -> Generator:
        """The source's outputs and how to fill them: a load generator, or what a PostgreSQL
        source ingests (storage/sources/postgres/spec.py)."""
        cfg = source_config(source)
        if cfg.get("type") == "postgres":
            from storage.sources.postgres.spec import PostgresSpec
            return PostgresSpec.from_definition(cfg)
        if cfg.get("type") == "kafka":
            from storage.sources.kafka.spec import KafkaSpec
            return KafkaSpec.from_definition(cfg)
        return make_generator(cfg["generator"], LoadGenOptions.from_json(cfg["options"]))

    async def create_from_spec(self, plan, spec, definition: dict) -> CatalogItem:
        """CREATE SOURCE for a source whose outputs `spec` knows (PostgreSQL): the catalog
        entries and shards as `create`, then its ingestion task."""
        coord, catalog = self.coord, self.coord.catalog
        single = spec.outputs()[0].columns if spec.single_output else ()  # Kafka: the source is the relation
        names = [plan.name] + [o.name for o in spec.outputs() if o.name is not None] + [plan.progress_name]
        async with coord.write_lock:
            for n in names:
                existing = catalog.try_resolve((plan.database, plan.schema, n))
                if existing is not None:
                    raise SqlError(SqlState.DUPLICATE_TABLE, f'{_word(existing)} "{n}" already exists')
            if len(set(names)) != len(names):
                dup = next(n for n in names if names.count(n) > 1)
                raise SqlError(SqlState.DUPLICATE_TABLE, f'source "{dup}" already exists')
            source = catalog.create(ItemKind.SOURCE, plan.schema, plan.name, single, plan.create_sql,
                                    database=plan.database, definition=json.dumps(definition))
            await self._create_subsources(source, spec)
        self.start_source(source)
        return source

    async def create(self, plan) -> CatalogItem:
        """CREATE SOURCE: the source, its subsources and progress relation in the catalog, their
        shards opened and imported by the workers; then its ingestion task starts."""
        if source_config_type(plan) == "webhook":
            return await self.webhooks.create(plan)
        coord = self.coord
        catalog = coord.catalog
        options = LoadGenOptions(**{**plan.options}).with_base(now_ms())
        gen = make_generator(plan.generator, options)
        outs = gen.outputs()
        names = [plan.name] + list(plan.subsources) + [plan.progress_name]
        async with coord.write_lock:
            for n in names:
                existing = catalog.try_resolve((plan.database, plan.schema, n))
                if existing is not None:
                    raise SqlError(SqlState.DUPLICATE_TABLE, f'{_word(existing)} "{n}" already exists')
            if len(set(names)) != len(names):
                raise SqlError(SqlState.DUPLICATE_TABLE, f'source "{plan.progress_name}" already exists')
            definition = json.dumps({"type": "load-generator", "generator": plan.generator,
                                     "options": options.to_json(), "progress": plan.progress_name,
                                     "retention_ms": plan.retention_ms})
            single = outs[0].columns if gen.single_output else ()
            source = catalog.create(ItemKind.SOURCE, plan.schema, plan.name, single, plan.create_sql,
                                    database=plan.database, definition=definition)
            await self._create_subsources(source, gen)
        self.start_source(source)
        return source

    async def _create_subsources(self, source: CatalogItem, gen: Generator) -> list[CatalogItem]:
        """The subsources (and progress relation) of `source` the catalog lacks, created, their
        shards opened and imported. The caller holds the write lock. At CREATE SOURCE that is all
        of them; at start, those a crash in the middle of CREATE SOURCE left uncreated."""
        coord, catalog = self.coord, self.coord.catalog
        outputs, progress = self.parts(source)
        cfg = source_config(source)
        wanted = [(o.name, o.columns) for o in gen.outputs() if o.name is not None and o.name not in outputs]
        if progress is None:
            wanted.append((None, getattr(gen, "progress_columns", PROGRESS_COLUMNS)))
        created = []
        for name, columns in wanted:
            if name is None:
                progress_name = cfg.get("progress", f"{source.name}_progress")
                created.append(catalog.create(
                    ItemKind.SUBSOURCE, source.schema, progress_name, columns,
                    f"CREATE SUBSOURCE {progress_name} (PROGRESS OF {source.name})", database=source.database,
                    definition=json.dumps({"source": source.id, "output": "progress"}), depends_on=(source.id,)))
            else:
                created.append(catalog.create(
                    ItemKind.SUBSOURCE, source.schema, name, columns,
                    f"CREATE SUBSOURCE {name} (FROM SOURCE {source.name})", database=source.database,
                    definition=json.dumps({"source": source.id, "output": name}), depends_on=(source.id,)))
        upper = coord.read_ts() + 1
        for item in created + ([source] if source.columns else []):
            types = tuple(c.type for c in item.columns)
            if item.id in coord.compute.collections:
                continue
            await asyncio.to_thread(coord.storage.open, item.id, types)
            coord.compute.import_collection(item.id, types, upper)
        return created

    # -- tasks ------------------------------------------------------------------------------

    async def start(self) -> None:
        """At environmentd start (after the shards were imported): resume every source."""
        self.webhooks.start()
        self.kafka_sinks.start()
        for source in self.sources():
            outputs, progress = self.parts(source)
            if progress is None or (not source.columns and len(outputs) < len(self.generator(source).outputs())):
                log.warning("source %s: completing its subsources (CREATE SOURCE was interrupted)", source.name)
                async with self.coord.write_lock:
                    await self._create_subsources(source, self.generator(source))
            self.start_source(source)

    def start_source(self, source: CatalogItem) -> None:
        stats = self.stats[source.id] = SourceStatistics(source.id, last_status_change_ms=now_ms())
        self.tasks[source.id] = asyncio.ensure_future(self._ingest(source, stats))

    def stop(self, id: str) -> None:
        task = self.tasks.pop(id, None)
        if task is not None:
            task.cancel()
        self.stats.pop(id, None)
        self.webhooks.forget(id)
        for key in [k for k, s in self.stats.items() if s.per_output.get("source") == id]:
            self.stats.pop(key)  # a PostgreSQL source's per-subsource statuses
        try:
            source = self.coord.catalog.get(id)
        except SqlError:
            return
        if source_config(source).get("type") == "postgres":  # DROP SOURCE: release the slot upstream
            from storage.sources.postgres.ingest import drop_slot_later
            drop_slot_later(self.coord, source, task)

    def close(self) -> None:
        self.kafka_sinks.close()
        self.webhooks.close()
        for id in list(self.tasks):
            task = self.tasks.pop(id)
            task.cancel()

    def _alive(self, id: str) -> bool:
        try:
            self.coord.catalog.get(id)
            return True
        except SqlError:
            return False

    async def _ingest(self, source: CatalogItem, stats: SourceStatistics) -> None:
        attempt, failed_at = 0, -1
        while True:
            try:
                await self._run(source, stats)
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:  # reported in mz_internal.mz_source_statuses, then retried
                log.exception("source %s failed", source.name)
                if stats.offset_committed != failed_at:  # progress since the last failure
                    attempt, failed_at = 0, stats.offset_committed
                _status(stats, "stalled", f"{type(e).__name__}: {e}" if not isinstance(e, SqlError) else e.message)
                await asyncio.sleep(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
                attempt += 1

    async def _run(self, source: CatalogItem, stats: SourceStatistics) -> None:
        if source_config(source).get("type") == "postgres":
            from storage.sources.postgres.ingest import run_postgres
            return await run_postgres(self, source, stats)
        if source_config(source).get("type") == "kafka":
            from storage.sources.kafka.ingest import run_kafka
            return await run_kafka(self, source, stats)
        gen = self.generator(source)
        outputs, progress = self.parts(source)
        offset = await self.recover(source)
        stats.offset_committed = stats.offset_known = offset
        stats.snapshot_committed = offset >= gen.first_batch_end()
        _status(stats, "running")
        up_to = gen.options.up_to
        window = source_config(source).get("retention_ms")
        retention = None if window is None else RetentionState(window, self.coord.read_ts())
        growing = [id for name, id in outputs.items() if name in gen.growing()]
        while up_to is None or offset < up_to:
            if offset < gen.first_batch_end():
                end = gen.first_batch_end()
            else:
                wait = (int(gen.due_ms(offset)) - now_ms()) / 1000
                if wait > 0:
                    await asyncio.sleep(wait)
                # Every tick due by now (catch-up after a stall or restart), in one write.
                now = now_ms()
                due = gen.options.as_of + (now - gen.options.base_ms) // gen.options.tick_ms + 1
                end = max(offset + 1, min(due, offset + MAX_TICKS_PER_WRITE))
            if up_to is not None:
                end = min(end, up_to)
            stats.offset_known = end
            batches = await asyncio.to_thread(gen.generate, offset, end) if end - offset > 1000 or \
                gen.kind == "tpch" else gen.generate(offset, end)
            writes: dict[str, pa.Table] = {}
            rows = nbytes = 0
            for name, id in outputs.items():
                b = batches.get(name)
                if b is not None and b.num_rows:
                    writes[id] = b
                    rows += b.num_rows
                    nbytes += b.nbytes
            cut = None if retention is None else retention.due(self.coord.read_ts())
            if cut is not None:
                # Rows older than the window leave with this write (storage/sources/retention.py).
                retracting = False
                for id in growing:
                    gone = await asyncio.to_thread(expired, self.coord.storage, id, cut)
                    if gone is not None:
                        retracting = True
                        writes[id] = concat([writes[id], gone]) if id in writes else gone
                        rows += gone.num_rows
                        retention.retracted_rows += gone.num_rows
            # The progress relation last: its value claims every write before it.
            prog = [updates((INT8,), [np.array([end], np.int64)], 1)]
            if offset > 0:
                prog.append(updates((INT8,), [np.array([offset], np.int64)], -1))
            writes[progress] = concat(prog)
            stats.messages_received += end - offset
            stats.updates_staged += rows
            stats.bytes_received += nbytes
            # Shielded: stopping the task (shutdown) lets a write in flight finish, so a clean
            # stop never leaves an output ahead of the progress relation.
            ts = await asyncio.shield(asyncio.ensure_future(self._commit(source.id, writes)))
            if ts is None:
                return  # dropped meanwhile
            offset = end
            if cut is not None and retracting:
                retention.last_write_ts = ts
            stats.updates_committed += rows
            stats.offset_committed = offset
            stats.snapshot_committed = offset >= gen.first_batch_end()
            stats.write_frontier = ts + 1
            stats.lag_ms = max(0, now_ms() - int(gen.due_ms(offset - 1)))
            if stats.status != "running":
                _status(stats, "running")
        _status(stats, "running")  # UP TO reached: complete, nothing more to ingest

    async def _commit(self, id: str, writes: dict[str, pa.Table]) -> int | None:
        async with self.coord.write_lock:
            if not self._alive(id):
                return None
            return await self.coord.write_locked(writes)

    async def recover(self, source: CatalogItem) -> int:
        """The committed offset, after retracting any batch a crash left without progress."""
        coord = self.coord
        outputs, progress = self.parts(source)
        storage = coord.storage
        async with coord.write_lock:
            prog_upper = storage.upper(progress)
            held = await asyncio.to_thread(storage.snapshot, progress)
            offset = 0
            if held is not None and held.num_rows:
                held = consolidate(held)
                values = held.column(0).to_numpy()
                diffs = held.column("diff").to_numpy()
                offset = int(values[diffs > 0].max()) if (diffs > 0).any() else 0
            fixes: dict[str, pa.Table] = {}
            for id in outputs.values():
                upper = storage.upper(id)
                if upper <= prog_upper:
                    continue
                now_held = await asyncio.to_thread(storage.snapshot, id)
                try:
                    before = await asyncio.to_thread(storage.snapshot_at, id, prog_upper - 1) if prog_upper > 0 else None
                except Exception:  # noqa: BLE001 - compacted past it: nothing left to compare with
                    log.error("source %s: cannot read output %s at %s to undo a partial write",
                              source.name, id, prog_upper - 1)
                    continue
                parts = [negate(now_held)] if now_held is not None else []
                if before is not None:
                    parts.append(before)
                if parts:
                    fix = consolidate(concat(parts))
                    if fix.num_rows:
                        fixes[id] = fix
                log.warning("source %s: output %s holds a batch past its progress; retracting it",
                            source.name, id)
            if fixes:
                await coord.write_locked(fixes)
        return offset

    # -- statistics -------------------------------------------------------------------------

    def statistics(self) -> list[SourceStatistics]:
        return list(self.stats.values()) + list(self.webhooks.stats.values())


def source_config_type(plan) -> str:
    """'webhook' for CREATE SOURCE ... FROM WEBHOOK's plan, else 'load-generator'."""
    config = getattr(plan, "config", None)
    return config.get("type", "load-generator") if isinstance(config, dict) else "load-generator"


def _status(stats: SourceStatistics, status: str, error: str | None = None) -> None:
    if stats.status != status or stats.error != error:
        stats.last_status_change_ms = now_ms()
    stats.status, stats.error = status, error


def _word(item: CatalogItem) -> str:
    return {ItemKind.TABLE: "table", ItemKind.VIEW: "view", ItemKind.MATERIALIZED_VIEW: "materialized view",
            ItemKind.INDEX: "index"}.get(item.kind, "source")
