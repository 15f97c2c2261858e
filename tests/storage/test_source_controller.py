"""The source controller in-process, over a real catalog, persist and timestamp oracle (the
compute replica stubbed): a source's writes go through the coordinator's write path, a crash in
the middle of a write (an output appended, the progress relation not) is undone on restart, so
the data equals the committed offset's exactly, and a failing ingestion is reported as stalled."""

from __future__ import annotations

import asyncio
from pathlib import Path

from catalog.durable import Catalog
from dataflow.batch import consolidate
from planner.parse import parse
from planner.planning import plan_statement
from server.coordinator import Coordinator, CoordinatorConfig
from server.oracle import TimestampOracle
from storage.controller import StorageController
from storage.persist import PersistClient


class StubCompute:
    def __init__(self) -> None:
        self.collections: dict = {}

    def import_collection(self, id, types, upper):
        self.collections[id] = (types, upper)

    def advance(self, updates, ids, upper):
        pass

    def drop_collection(self, id):
        self.collections.pop(id, None)

    def drop_dataflow(self, id):
        pass

    def readers_of(self, ids):
        return {}  # no dataflows run here

    def end_dataflow(self, id, error):
        pass


def open_coordinator(data: Path) -> Coordinator:
    coord = Coordinator(CoordinatorConfig(data_dir=data))
    coord.catalog = Catalog.open(data / "catalog.sqlite")
    coord.catalog.source_statistics = coord.sources.statistics
    coord.storage = StorageController(PersistClient.open_local(data / "persist"))
    catalog = coord.catalog
    coord.oracle = TimestampOracle(load=lambda: int(catalog.get_setting("hw") or 0),
                                   store=lambda v: catalog.set_setting("hw", str(v)))
    coord.compute = StubCompute()
    for item in catalog.items():
        if item.is_input:
            coord.storage.open(item.id, tuple(c.type for c in item.columns))
            coord.compute.import_collection(item.id, tuple(c.type for c in item.columns), 1)
    return coord


def rows(coord: Coordinator, name: str) -> list:
    item = coord.catalog.resolve((name,))
    snap = coord.storage.snapshot(item.id)
    if snap is None:
        return []
    out = []
    for r in consolidate(snap).to_pylist():
        assert r["diff"] > 0
        out += [r["c0"]] * r["diff"]
    return sorted(out)


async def create(coord: Coordinator, sql: str):
    plan = plan_statement(coord.catalog, parse(sql)[0])
    return await coord.sources.create(plan)


async def wait_offset(coord: Coordinator, source, at_least: int) -> int:
    for _ in range(400):
        s = coord.sources.stats.get(source.id)
        if s is not None and s.offset_committed >= at_least:
            return s.offset_committed
        await asyncio.sleep(0.01)
    raise AssertionError(f"offset stuck at {coord.sources.stats[source.id]}")


def test_partial_write_is_undone_on_restart(tmp_path: Path):
    async def first():
        coord = open_coordinator(tmp_path)
        source = await create(coord, "CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '10ms')")
        await wait_offset(coord, source, 10)
        coord.sources.close()
        await asyncio.sleep(0.3)
        (offset,) = rows(coord, "c_progress")  # a write in flight at close() may have finished
        assert rows(coord, "c") == list(range(1, offset + 1))
        # A crash in the middle of the next write: the data shard got the batch, progress did not.
        gen = coord.sources.generator(source)
        batch = gen.generate(offset, offset + 5)[None]
        ts = coord.oracle.allocate_write_ts()
        from dataflow.batch import advance_times
        coord.storage.append(source.id, advance_times(batch, ts), ts + 1)
        assert rows(coord, "c") == list(range(1, offset + 6))
        coord.catalog.close()
        return offset

    offset = asyncio.run(first())

    async def second():
        coord = open_coordinator(tmp_path)
        source = coord.catalog.resolve(("c",))
        assert await coord.sources.recover(source) == offset
        assert rows(coord, "c") == list(range(1, offset + 1))  # the partial batch is retracted
        await coord.sources.start()
        await wait_offset(coord, source, offset + 10)
        coord.sources.close()
        await asyncio.sleep(0.3)
        (final,) = rows(coord, "c_progress")
        assert final >= offset + 10
        assert rows(coord, "c") == list(range(1, final + 1))  # no gap, no duplicate
        coord.catalog.close()

    asyncio.run(second())


def test_failing_ingestion_is_reported_then_recovers(tmp_path: Path, monkeypatch):
    import storage.sources.controller as ctl
    monkeypatch.setattr(ctl, "RETRY_SECONDS", (0.05,))

    async def run():
        coord = open_coordinator(tmp_path)
        real = coord.write_locked
        failing = {"on": True}

        async def write_locked(updates):
            if failing["on"]:
                raise OSError("disk on fire")
            return await real(updates)

        coord.write_locked = write_locked
        source = await create(coord, "CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '10ms')")
        for _ in range(200):
            s = coord.sources.stats[source.id]
            if s.status == "stalled":
                break
            await asyncio.sleep(0.01)
        assert s.status == "stalled" and "disk on fire" in s.error
        failing["on"] = False
        await wait_offset(coord, source, 3)
        assert coord.sources.stats[source.id].status == "running"
        assert coord.sources.stats[source.id].error is None
        coord.sources.close()
        coord.catalog.close()

    asyncio.run(run())


def test_interrupted_create_source_is_completed_at_start(tmp_path: Path):
    async def first():
        coord = open_coordinator(tmp_path)
        await create(coord, "CREATE SOURCE a FROM LOAD GENERATOR AUCTION (TICK INTERVAL '1h') FOR ALL TABLES")
        coord.sources.close()
        await asyncio.sleep(0.3)
        # As if the crash came after the source and two subsources were stored.
        gone = [coord.catalog.resolve((n,)).id for n in ("bids", "users", "a_progress")]
        coord.catalog.drop(gone)
        for id in gone:
            coord.storage.drop(id)
        coord.catalog.close()

    asyncio.run(first())

    async def second():
        coord = open_coordinator(tmp_path)
        await coord.sources.start()
        source = coord.catalog.resolve(("a",))
        await wait_offset(coord, source, 1)
        assert len(rows(coord, "users")) == 400 and rows(coord, "a_progress") == [1]
        coord.sources.close()
        await asyncio.sleep(0.3)
        coord.catalog.close()

    asyncio.run(second())
