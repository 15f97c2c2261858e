"""A Kafka source's ingestion task: consume the topic, decode and apply the envelope per batch,
and commit each batch with its offsets through the coordinator's write path.

    start:  retract a partial write (the controller's `recover`), read the progress relation
            (partition -> next offset), rebuild the upsert state from the relation (UPSERT),
            assign every partition of the topic and seek each to its next offset
    loop:   getmany (up to MAX_MESSAGES) -> Messages -> fetch unknown Avro writer schemas ->
            envelope (decode + NONE / UPSERT / DEBEZIUM) -> one write: the relation's updates
            and the progress relation's changed rows, at one oracle timestamp

Offsets are Slipstream's own (the progress relation), not a consumer group's: the write that
makes a batch visible also records how far it reached, so a restart resumes exactly after the
last committed message of every partition, with no message lost or ingested twice. Consumer
group offsets are never committed (GROUP ID PREFIX only names the group). A message that does
not decode stalls the source with the error (mz_source_statuses), as Materialize's
non-upsert sources; the controller retries from the committed offsets.

Not run on the development machine (no broker there): `offsets.py`-style bookkeeping below and
the envelopes are unit-tested without one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import numpy as np
import pyarrow as pa

from catalog.items import CatalogItem
from dataflow.batch import concat, consolidate
from dataflow.errors import SqlError
from dataflow.types import INT4, INT8
from storage.sources.base import SourceStatistics, updates
from storage.sources.kafka import avro
from storage.sources.kafka.avro import DecodeError, SchemaCache
from storage.sources.kafka.envelope import (Messages, Schemas, UpsertState, envelope_debezium, envelope_none,
                                            envelope_upsert)
from storage.sources.kafka.spec import KafkaSpec

log = logging.getLogger("slipstream.sources.kafka")

MAX_MESSAGES = 50_000
POLL_MS = 500
SOURCE_ERROR = "XX000"


# -- offsets bookkeeping (pure) -------------------------------------------------------------------

def offsets_of(held: pa.Table | None) -> dict[int, int]:
    """partition -> next offset, from the progress relation's contents."""
    if held is None or not held.num_rows:
        return {}
    held = consolidate(held)
    parts = held.column(0).to_numpy()
    offs = held.column(1).to_numpy()
    diffs = held.column("diff").to_numpy()
    return {int(p): int(o) for p, o, d in zip(parts, offs, diffs) if d > 0}


def advance(offsets: dict[int, int], msgs: Messages) -> dict[int, int]:
    """The offsets after a batch: per partition, one past its last message (vectorised)."""
    out = dict(offsets)
    if not len(msgs):
        return out
    parts = msgs.partitions.astype(np.int64)
    uniq, inverse = np.unique(parts, return_inverse=True)
    top = np.full(len(uniq), -1, np.int64)
    np.maximum.at(top, inverse, msgs.offsets)
    for p, o in zip(uniq.tolist(), top.tolist()):
        out[p] = max(out.get(p, 0), o + 1)
    return out


def progress_updates(old: dict[int, int], new: dict[int, int]) -> pa.Table | None:
    """The progress relation's updates from `old` to `new`: each changed partition's row
    retracted and its new row inserted."""
    changed = [p for p in new if old.get(p) != new[p]]
    if not changed:
        return None
    parts = []
    gone = [p for p in changed if p in old]
    if gone:
        parts.append(updates((INT4, INT8), [np.array(gone, np.int32), np.array([old[p] for p in gone], np.int64)], -1))
    parts.append(updates((INT4, INT8), [np.array(changed, np.int32), np.array([new[p] for p in changed], np.int64)], 1))
    return concat(parts)


def apply_envelope(spec: KafkaSpec, msgs: Messages, schemas: Schemas, state: UpsertState | None) -> pa.Table:
    if spec.envelope == "upsert":
        assert state is not None
        return envelope_upsert(spec, msgs, schemas, state)
    if spec.envelope == "debezium":
        return envelope_debezium(spec, msgs, schemas)
    return envelope_none(spec, msgs, schemas)


# -- the task ---------------------------------------------------------------------------------------

def _now_ms() -> int:
    return int(time.time() * 1000)


async def _fill_schemas(spec: KafkaSpec, msgs: Messages, schemas: Schemas, registries: dict) -> None:
    for part, fmt, payloads in (("key", spec.key, msgs.keys), ("value", spec.value, msgs.values)):
        cache: SchemaCache | None = getattr(schemas, part)
        if fmt is None or fmt.kind != "avro" or cache is None:
            continue
        if part == "key" and not spec.include_key():
            continue
        for sid in cache.missing(payloads):
            cache.writers[sid] = avro.parse_schema(await registries[fmt.registry].schema(sid))


async def run_kafka(ctl, source: CatalogItem, stats: SourceStatistics) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from storage.sources.controller import _status
    from storage.sources.kafka.client import Registry, kafka_params, registry_params
    coord, catalog = ctl.coord, ctl.coord.catalog
    cfg = json.loads(source.definition)
    spec = KafkaSpec.from_definition(cfg)
    outputs, progress = ctl.parts(source)
    await ctl.recover(source)
    offsets = offsets_of(await asyncio.to_thread(coord.storage.snapshot, progress))
    state = None
    if spec.envelope == "upsert":
        nkey = len(spec.key_columns())
        state = UpsertState(tuple(c.type for c in spec.columns()), nkey)
        state.load(await asyncio.to_thread(coord.storage.snapshot, source.id))
    registries: dict[str, Registry] = {}
    schemas = Schemas()
    for part, fmt in (("key", spec.key), ("value", spec.value)):
        if fmt is not None and fmt.kind == "avro":
            conn = catalog.secrets.connection(fmt.registry)
            if conn is None:
                raise SqlError(SOURCE_ERROR, "the source's schema registry connection no longer exists")
            registries.setdefault(fmt.registry, Registry(registry_params(catalog, conn.options)))
            parsed = avro.parse_schema(fmt.schema)
            setattr(schemas, part, SchemaCache(parsed, {fmt.schema_id: parsed}))
    conn = catalog.secrets.connection(spec.connection)
    if conn is None:
        raise SqlError(SOURCE_ERROR, "the source's Kafka connection no longer exists")
    consumer = AIOKafkaConsumer(**kafka_params(catalog, conn.options).client_kwargs(), enable_auto_commit=False,
                                auto_offset_reset="earliest", group_id=None, max_poll_records=MAX_MESSAGES)
    await consumer.start()
    try:
        partitions = None
        if spec.topic in await consumer.topics():  # fetches the cluster's metadata
            partitions = consumer.partitions_for_topic(spec.topic)
        if not partitions:
            raise SqlError(SOURCE_ERROR, f'topic "{spec.topic}" does not exist')
        tps = [TopicPartition(spec.topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        for tp in tps:
            if tp.partition in offsets:
                consumer.seek(tp, offsets[tp.partition])
            else:
                await consumer.seek_to_beginning(tp)
        stats.offset_committed = stats.offset_known = sum(offsets.values())
        stats.snapshot_committed = True
        _status(stats, "running")
        while True:
            got = await consumer.getmany(timeout_ms=POLL_MS, max_records=MAX_MESSAGES)
            records = [(r.key, r.value, r.partition, r.offset, r.timestamp) for rs in got.values() for r in rs]
            if not records:
                continue
            msgs = Messages.of(records)
            stats.messages_received += len(msgs)
            stats.bytes_received += sum(len(v) for v in msgs.values if v is not None)
            await _fill_schemas(spec, msgs, schemas, registries)
            try:
                batch = await asyncio.to_thread(apply_envelope, spec, msgs, schemas, state)
            except DecodeError as e:
                raise SqlError(SOURCE_ERROR, f"Kafka source {source.name}: {e}") from None
            new = advance(offsets, msgs)
            writes = {}
            if batch.num_rows:
                writes[source.id] = batch
            prog = progress_updates(offsets, new)
            if prog is not None:
                writes[progress] = prog
            stats.updates_staged += batch.num_rows
            ts = await asyncio.shield(asyncio.ensure_future(ctl._commit(source.id, writes)))
            if ts is None:
                return  # dropped meanwhile
            offsets = new
            stats.updates_committed += batch.num_rows
            stats.offset_known = stats.offset_committed = sum(offsets.values())
            stats.write_frontier = ts + 1
            stats.lag_ms = max(0, _now_ms() - int(msgs.timestamps_ms.max()))
    finally:
        await consumer.stop()
