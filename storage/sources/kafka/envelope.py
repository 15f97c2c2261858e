"""From a batch of Kafka messages to the updates of a Kafka source's relation: decoding (formats.py)
then the envelope (Materialize's ENVELOPE NONE | UPSERT | DEBEZIUM).

* **NONE**: every message with a value is one row, inserted (append-only). A message without a
  value (a tombstone) has nothing to append and is skipped.
* **UPSERT**: the relation holds the latest value of every key. Within a batch the last message
  of a key wins; its key's previous row (if any) is retracted and the new one inserted; a
  tombstone (NULL value) retracts and forgets the key. The state (`UpsertState`) is keyed: a
  dict from key to the row's position in an Arrow table of rows, compacted when dead rows
  outnumber live ones, so it stays proportional to the number of keys, not of messages. The key
  columns are always in the relation, so the state is exactly the relation's contents: a
  restart rebuilds it from the relation's shard (`UpsertState.load`).

      k1 -> {"a": 1}       +(k1, {"a": 1})
      k1 -> {"a": 2}       -(k1, {"a": 1})  +(k1, {"a": 2})
      k1 -> NULL           -(k1, {"a": 2})

* **DEBEZIUM**: each value is a Debezium change event (`before`, `after`, `op`; in JSON
  optionally wrapped in `{"schema": ..., "payload": ...}`): `c` / `r` insert `after`, `u`
  retracts `before` and inserts `after`, `d` retracts `before`. An update or delete without a
  `before` image (the upstream table is not REPLICA IDENTITY FULL) is an error, never a guess.
  Tombstones and `m` (logical message) events are skipped, `t` (truncate) is an error.

Rows are built column-wise: each column of the batch is one Arrow array (NULL keys scattered in
with one `take`), and the updates go through dataflow.batch.consolidate, so a key set to the
value it had cancels out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from dataflow.batch import concat, consolidate
from dataflow.jsonb import canonical
from dataflow.types import SqlType, arrow_schema
from storage.sources.base import updates
from storage.sources.kafka import avro
from storage.sources.kafka.avro import DecodeError, SchemaCache
from storage.sources.kafka.formats import decode, decode_data
from storage.sources.kafka.spec import KafkaSpec


@dataclass
class Messages:
    """A batch of consumed messages, column-wise."""

    keys: list[bytes | None]
    values: list[bytes | None]
    partitions: np.ndarray  # int32
    offsets: np.ndarray  # int64
    timestamps_ms: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.values)

    def take(self, idx: np.ndarray) -> "Messages":
        return Messages([self.keys[i] for i in idx], [self.values[i] for i in idx], self.partitions[idx],
                        self.offsets[idx], self.timestamps_ms[idx])

    @staticmethod
    def of(records: list[tuple[bytes | None, bytes | None, int, int, int]]) -> "Messages":
        """From (key, value, partition, offset, timestamp ms) tuples."""
        if not records:
            return Messages([], [], np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64))
        keys, values, parts, offs, ts = zip(*records)
        return Messages(list(keys), list(values), np.array(parts, np.int32), np.array(offs, np.int64),
                        np.array(ts, np.int64))


@dataclass
class Schemas:
    """The Avro schemas decoding needs (None for formats that have none)."""

    key: SchemaCache | None = None
    value: SchemaCache | None = None


def _scatter(arr: pa.Array, present: np.ndarray) -> pa.Array:
    """`arr` holds values for the rows where `present`; NULL elsewhere (one take)."""
    if present.all():
        return arr
    pos = np.cumsum(present) - 1
    return arr.take(pa.array(pos, mask=~present))


def key_arrays(spec: KafkaSpec, msgs: Messages, schemas: Schemas) -> list[pa.Array]:
    present = np.fromiter((k is not None for k in msgs.keys), bool, len(msgs))
    payloads = [k for k in msgs.keys if k is not None]
    arrays = decode(spec.key, payloads, schemas.key, spec.key.columns("key"))
    return [_scatter(a, present) for a in arrays]


def metadata_arrays(spec: KafkaSpec, msgs: Messages) -> list[pa.Array]:
    out = []
    for what, _ in spec.includes:
        if what == "partition":
            out.append(pa.array(msgs.partitions, pa.int32()))
        elif what == "offset":
            out.append(pa.array(msgs.offsets, pa.int64()))
        elif what == "timestamp":
            out.append(pa.array(msgs.timestamps_ms * 1000, pa.int64()).cast(pa.timestamp("us")))
    return out


def _types(spec: KafkaSpec) -> tuple[SqlType, ...]:
    return tuple(c.type for c in spec.columns())


def _rows(spec: KafkaSpec, msgs: Messages, schemas: Schemas, with_key: bool) -> list[pa.Array]:
    """Every column of the relation for messages that all have a value."""
    key = key_arrays(spec, msgs, schemas) if with_key else []
    value = decode(spec.value, msgs.values, schemas.value, spec.value.columns("value"))
    return key + value + metadata_arrays(spec, msgs)


def envelope_none(spec: KafkaSpec, msgs: Messages, schemas: Schemas) -> pa.Table:
    keep = np.fromiter((v is not None for v in msgs.values), bool, len(msgs))
    sub = msgs if keep.all() else msgs.take(np.flatnonzero(keep))
    types = _types(spec)
    if not len(sub):
        return arrow_schema(list(types)).empty_table()
    return updates(types, _rows(spec, sub, schemas, spec.include_key()), 1)


# -- upsert -------------------------------------------------------------------------------------

def key_identity(arrays: list[pa.Array]) -> list[Any]:
    """A hashable identity per row of the key columns (equal decoded keys, equal identity)."""
    if len(arrays) == 1:
        return arrays[0].to_pylist()
    return list(zip(*(a.to_pylist() for a in arrays)))


@dataclass
class UpsertState:
    """Key -> the key's current row. Rows live in an Arrow table (`store`, the relation's columns);
    the index maps each live key to its row's position. Superseded rows stay in the store until
    they outnumber the live ones (and 1024), then the store is compacted."""

    types: tuple[SqlType, ...]
    nkey: int
    index: dict = field(default_factory=dict)
    store: pa.Table | None = None
    dead: int = 0

    def __post_init__(self) -> None:
        if self.store is None:
            self.store = self._schema().empty_table()

    def _schema(self) -> pa.Schema:
        return pa.schema([pa.field(f"c{i}", t.arrow) for i, t in enumerate(self.types)])

    @property
    def size(self) -> int:
        """Rows held (live and not yet compacted away)."""
        return self.store.num_rows

    def load(self, contents: pa.Table | None) -> None:
        """The state of a relation holding `contents` (its shard's consolidated snapshot)."""
        self.index, self.dead = {}, 0
        if contents is None or not contents.num_rows:
            self.store = self._schema().empty_table()
            return
        contents = consolidate(contents)
        diffs = contents.column("diff").to_numpy()
        if (diffs != 1).any():
            raise DecodeError("the upsert source's relation holds a row more than once; cannot rebuild its state")
        n = len(self.types)
        self.store = pa.Table.from_arrays([contents.column(i).combine_chunks() for i in range(n)],
                                          schema=self._schema())
        ids = key_identity([self.store.column(i).combine_chunks() for i in range(self.nkey)])
        self.index = {k: i for i, k in enumerate(ids)}
        if len(self.index) != len(ids):
            raise DecodeError("the upsert source's relation holds a key twice; cannot rebuild its state")

    def apply(self, ids: list[Any], rows: pa.Table, has_value: np.ndarray) -> pa.Table:
        """The updates of a batch: `ids` one key identity per message, `has_value` which messages
        have a value (the others are tombstones), `rows` the relation's row of each message
        with a value, in order."""
        last: dict[Any, int] = {}
        for i, k in enumerate(ids):
            last[k] = i
        winners = np.fromiter(last.values(), np.int64, len(last))
        winners.sort()
        row_of = np.cumsum(has_value) - 1
        old: list[int] = []
        index = self.index
        for i in winners:
            p = index.pop(ids[i], None)
            if p is not None:
                old.append(p)
        ins = winners[has_value[winners]]
        base = self.store.num_rows
        for j, i in enumerate(ins):
            index[ids[i]] = base + j
        retract = self.store.take(pa.array(old, pa.int64()))
        insert = rows.take(pa.array(row_of[ins], pa.int64()))
        insert = pa.Table.from_arrays(insert.columns, schema=self._schema())
        self.store = pa.concat_tables([self.store, insert])
        self.dead += len(old)
        if self.dead > max(1024, len(index)):
            self.compact()
        out = concat([updates(self.types, list(retract.columns), -1), updates(self.types, list(insert.columns), 1)])
        return consolidate(out) if out.num_rows else out

    def compact(self) -> None:
        items = sorted(self.index.items(), key=lambda kv: kv[1])
        self.store = self.store.take(pa.array([p for _, p in items], pa.int64())).combine_chunks()
        self.index = {k: i for i, (k, _) in enumerate(items)}
        self.dead = 0


def envelope_upsert(spec: KafkaSpec, msgs: Messages, schemas: Schemas, state: UpsertState) -> pa.Table:
    if any(k is None for k in msgs.keys):
        off = next(i for i, k in enumerate(msgs.keys) if k is None)
        raise DecodeError(f"record with NULL key in ENVELOPE UPSERT source (partition {msgs.partitions[off]}, "
                          f"offset {msgs.offsets[off]})")
    keys = key_arrays(spec, msgs, schemas)
    ids = key_identity(keys)
    has_value = np.fromiter((v is not None for v in msgs.values), bool, len(msgs))
    types = _types(spec)
    idx = np.flatnonzero(has_value)
    sub = msgs.take(idx)
    if len(sub):
        value = decode(spec.value, sub.values, schemas.value, spec.value.columns("value"))
        cols = [k.take(pa.array(idx)) for k in keys] + value + metadata_arrays(spec, sub)
    else:
        cols = [pa.array([], t.arrow) for t in types]
    cols = [c.cast(t.arrow) if c.type != t.arrow else c for c, t in zip(cols, types)]
    rows = pa.Table.from_arrays(cols, names=[f"c{i}" for i in range(len(types))])
    return state.apply(ids, rows, has_value)


# -- debezium -----------------------------------------------------------------------------------

def _event(d: Any) -> dict:
    if isinstance(d, dict) and "payload" in d and "schema" in d:
        d = d["payload"]
    if not isinstance(d, dict) or "op" not in d:
        raise DecodeError("not a Debezium change event (no op field)")
    return d


def envelope_debezium(spec: KafkaSpec, msgs: Messages, schemas: Schemas) -> pa.Table:
    keep = np.flatnonzero(np.fromiter((v is not None for v in msgs.values), bool, len(msgs)))
    sub = msgs.take(keep)
    types = _types(spec)
    if not len(sub):
        return arrow_schema(list(types)).empty_table()
    events = [_event(d) for d in decode_data(spec.value, sub.values, schemas.value)]
    before_at: list[int] = []
    after_at: list[int] = []
    befores: list[Any] = []
    afters: list[Any] = []
    for i, e in enumerate(events):
        op = e.get("op")
        if op in ("c", "r", "u"):
            if e.get("after") is None:
                raise DecodeError(f"Debezium event with op '{op}' has no after image "
                                  f"(partition {sub.partitions[i]}, offset {sub.offsets[i]})")
            after_at.append(i)
            afters.append(e["after"])
        if op in ("u", "d"):
            if e.get("before") is None:
                raise DecodeError(
                    f"Debezium event with op '{op}' has no before image (partition {sub.partitions[i]}, offset "
                    f"{sub.offsets[i]}): the upstream table must be REPLICA IDENTITY FULL")
            before_at.append(i)
            befores.append(e["before"])
        elif op == "t":
            raise DecodeError(f"Debezium truncate event (partition {sub.partitions[i]}, offset {sub.offsets[i]}): "
                              "truncation is not supported")
        elif op not in ("c", "r", "m"):
            raise DecodeError(f"unknown Debezium op {op!r} (partition {sub.partitions[i]}, offset {sub.offsets[i]})")
    value_cols = spec.value_columns()

    def part(data: list[Any], at: list[int], diff: int) -> pa.Table | None:
        if not at:
            return None
        where = sub.take(np.array(at, np.int64))
        if spec.value.kind == "json":
            values = [pa.array([canonical(d) for d in data], pa.string())]
        else:
            values = avro.record_columns(data, value_cols, True)
        key = key_arrays(spec, where, schemas) if spec.include_key() else []
        return updates(types, key + values + metadata_arrays(spec, where), diff)

    out = concat([t for t in (part(befores, before_at, -1), part(afters, after_at, 1)) if t is not None],
                 arrow_schema(list(types)))
    return consolidate(out) if out.num_rows else out
