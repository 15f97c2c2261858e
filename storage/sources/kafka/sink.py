"""Kafka sinks: a relation's changelog (what SUBSCRIBE streams: the contents at the start, then
each change at its timestamp) encoded as messages with Materialize's envelopes, and the task that
produces them.

* **ENVELOPE UPSERT** (KEY required): per timestamp and key, the key's new row is the message's
  value; a key whose rows were all retracted gets a tombstone (NULL value). Two rows for one key
  at one time is an error (the KEY is not unique), never a guess.
* **ENVELOPE DEBEZIUM**: the value is `{"before": row or null, "after": row or null}`: per
  timestamp and key, the retracted row is `before` and the inserted one `after` (an update is
  one message); without a KEY each retraction and insertion is a message of its own.

      +(1, 'a') at t1                 key {"id": 1}  value {"id": 1, "v": "a"}        (UPSERT)
      -(1, 'a') +(1, 'b') at t2       key {"id": 1}  value {"id": 1, "v": "b"}
      -(1, 'b') at t3                 key {"id": 1}  value NULL (tombstone)

FORMAT JSON writes each row as a JSON object (numbers as JSON numbers, numeric exactly, dates
and times as ISO strings, bytea as "\\x…" hex, jsonb embedded); FORMAT AVRO writes the Confluent
wire format with the schemas registered at CREATE SINK (`<topic>-key`, `<topic>-value`).

Delivery is at least once: the task records the last timestamp the broker acknowledged
(catalog/sinks.py `progress_ts`); after a restart it starts again from the relation's current
contents (for UPSERT a rewrite of every key's latest value, which consumers of an upsert topic
absorb; keys deleted while the server was down get no tombstone). The task is not run on the
development machine (no broker there); `encode_updates` is what the tests cover.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dataflow.errors import SqlError, SqlState
from dataflow.types import Column, TypeKind
from storage.sources.kafka import avro

log = logging.getLogger("slipstream.sinks.kafka")
RETRY_SECONDS = (0.5, 1, 2, 5, 10, 30)


def sink_schemas(name: str, columns: tuple[Column, ...], key: tuple[str, ...] | None,
                 envelope: str) -> tuple[dict | None, dict]:
    """(key schema or None, value schema) of an Avro sink."""
    row = avro.record_schema_of("row", columns)
    key_schema = None
    if key:
        by_name = {c.name: c for c in columns}
        key_schema = avro.record_schema_of("key", tuple(by_name[k] for k in key))
    if envelope == "debezium":
        value = {"type": "record", "name": "envelope", "fields": [
            {"name": "before", "type": ["null", row], "default": None},
            {"name": "after", "type": ["null", "row"], "default": None}]}
        return key_schema, value
    return key_schema, row


@dataclass(frozen=True)
class SinkEncoding:
    columns: tuple[Column, ...]
    key: tuple[int, ...] | None  # positions of the KEY columns
    envelope: str  # 'upsert' | 'debezium'
    format: str  # 'json' | 'avro'
    key_schema: Any = None  # avro: parsed schemas and their registry ids
    key_schema_id: int = 0
    value_schema: Any = None
    value_schema_id: int = 0

    @staticmethod
    def of(columns: tuple[Column, ...], options: dict) -> "SinkEncoding":
        names = [c.name for c in columns]
        key = tuple(names.index(k) for k in options["key"]) if options.get("key") else None
        fmt = options["format"]
        if fmt["kind"] == "avro":
            return SinkEncoding(columns, key, options["envelope"], "avro",
                                avro.parse_schema(fmt["key_schema"]) if fmt.get("key_schema") else None,
                                fmt.get("key_schema_id", 0), avro.parse_schema(fmt["value_schema"]),
                                fmt["value_schema_id"])
        return SinkEncoding(columns, key, options["envelope"], "json")

    # -- one row ------------------------------------------------------------------------------

    def _json_value(self, v: Any, c: Column) -> Any:
        if v is None:
            return None
        k = c.type.kind
        if k in (TypeKind.JSONB, TypeKind.JSON):
            return json.loads(v, parse_float=Decimal)
        if isinstance(v, (bytes, bytearray)):
            return "\\x" + bytes(v).hex()
        if isinstance(v, (dt.date, dt.time, dt.datetime)):
            return v.isoformat()
        if isinstance(v, (Decimal, int, float, bool, str)):
            return v
        return str(v)

    def _record(self, row: tuple, cols: tuple[int, ...] | None = None) -> dict:
        idx = range(len(self.columns)) if cols is None else cols
        if self.format == "json":
            return {self.columns[i].name: self._json_value(row[i], self.columns[i]) for i in idx}
        out = {}
        for i in idx:
            v = row[i]
            if v is not None and self.columns[i].type.kind in (TypeKind.JSONB, TypeKind.JSON) and not isinstance(v, str):
                v = json.dumps(v)
            out[self.columns[i].name] = v
        return out

    def _bytes(self, record: Any, schema: Any, schema_id: int) -> bytes:
        if self.format == "json":
            return _dumps(record)
        return avro.encode(schema, schema_id, record)

    def key_bytes(self, row: tuple) -> bytes | None:
        if self.key is None:
            return None
        return self._bytes(self._record(row, self.key), self.key_schema, self.key_schema_id)

    def value_bytes(self, record: Any) -> bytes:
        return self._bytes(record, self.value_schema, self.value_schema_id)


def _json_text(v: Any) -> str:
    """JSON text with numeric values written exactly (json.dumps would quote or round them)."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + _json_text(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_json_text(x) for x in v) + "]"
    if isinstance(v, Decimal):
        return str(v) if v.is_finite() else json.dumps(str(v))
    if isinstance(v, float):
        return repr(v) if v == v and abs(v) != float("inf") else json.dumps(str(v))
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v))


def _dumps(v: Any) -> bytes:
    return _json_text(v).encode()


def encode_updates(enc: SinkEncoding, updates: list[tuple[int, int, tuple]]) -> list[tuple[int, bytes | None, bytes | None]]:
    """(timestamp, key, value) messages for (timestamp, diff, row) updates, in timestamp order."""
    by_time: dict[int, list[tuple[int, tuple]]] = {}
    for ts, diff, row in updates:
        by_time.setdefault(ts, []).append((diff, row))
    out: list[tuple[int, bytes | None, bytes | None]] = []
    for ts in sorted(by_time):
        if enc.key is None:
            for diff, row in by_time[ts]:
                rec = enc._record(row)
                value = {"before": rec, "after": None} if diff < 0 else {"before": None, "after": rec}
                out.extend((ts, None, enc.value_bytes(value)) for _ in range(abs(diff)))
            continue
        groups: dict[tuple, dict[tuple, int]] = {}
        for diff, row in by_time[ts]:
            k = tuple(row[i] for i in enc.key)
            g = groups.setdefault(k, {})
            g[row] = g.get(row, 0) + diff
        for k, rows in groups.items():
            inserted = [r for r, d in rows.items() if d > 0]
            retracted = [r for r, d in rows.items() if d < 0]
            if len(inserted) > 1 or any(d > 1 for d in rows.values()):
                raise SqlError("23505",
                               f"the sink's KEY is not unique: key {k!r} has more than one row at time {ts}",
                               hint="Choose KEY columns that identify a row of the relation.")
            if not inserted and not retracted:
                continue
            any_row = (inserted or retracted)[0]
            key = enc.key_bytes(any_row)
            if enc.envelope == "upsert":
                out.append((ts, key, enc.value_bytes(enc._record(inserted[0])) if inserted else None))
            else:
                out.append((ts, key, enc.value_bytes({
                    "before": enc._record(retracted[0]) if retracted else None,
                    "after": enc._record(inserted[0]) if inserted else None})))
    return out


class KafkaSinks:
    """The running sinks' tasks (one per sink): subscribe to the relation, encode, produce."""

    def __init__(self, coord) -> None:
        self.coord = coord
        self.tasks: dict[str, asyncio.Task] = {}
        self.status: dict[str, tuple[str, str | None]] = {}

    def start(self) -> None:
        for sink in self.coord.catalog.sinks.sinks():
            self.start_sink(sink)

    def start_sink(self, sink) -> None:
        self.tasks[sink.id] = asyncio.ensure_future(self._supervise(sink))

    def stop(self, id: str) -> None:
        task = self.tasks.pop(id, None)
        if task is not None:
            task.cancel()
        self.status.pop(id, None)

    def close(self) -> None:
        for id in list(self.tasks):
            self.stop(id)

    async def _supervise(self, sink) -> None:
        attempt = 0
        while True:
            try:
                await self._run(sink)
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - reported, retried
                log.warning("sink %s failed: %s", sink.name, e)
                self.status[sink.id] = ("stalled", e.message if isinstance(e, SqlError) else str(e))
                await asyncio.sleep(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
                attempt += 1

    async def _run(self, sink) -> None:
        from aiokafka import AIOKafkaProducer

        from planner.parse import parse
        from planner.planning import plan_statement
        from server.adapter.subscribe import subscribe_rows
        from storage.sources.kafka.client import kafka_params
        catalog = self.coord.catalog
        relation = catalog.get(sink.relation)
        conn = catalog.secrets.connection(sink.options["connection"])
        if conn is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, "the sink's connection no longer exists")
        enc = SinkEncoding.of(relation.columns, sink.options)
        quoted = ".".join('"' + p.replace('"', '""') + '"' for p in (relation.database, relation.schema, relation.name))
        plan = plan_statement(catalog, parse(f"SUBSCRIBE TO {quoted}")[0], database=relation.database)
        producer = AIOKafkaProducer(**kafka_params(catalog, conn.options).client_kwargs(), acks="all",
                                    enable_idempotence=True)
        await producer.start()
        try:
            self.status[sink.id] = ("running", None)
            async for rows in subscribe_rows(self.coord, plan):
                updates = [(int(r[0]), int(r[1]), tuple(r[2:])) for r in rows]
                messages = encode_updates(enc, updates)
                futures = [await producer.send(sink.options["topic"], value=v, key=k) for _, k, v in messages]
                if futures:
                    await asyncio.gather(*futures)
                    catalog.sinks.set_progress(sink.id, messages[-1][0])
        finally:
            await producer.stop()
