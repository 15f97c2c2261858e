"""Kafka sources without a broker: formats, the Confluent wire format with real Avro bytes
(fastavro's encoder), Avro schemas as columns, INCLUDE'd metadata, and the envelopes (NONE,
UPSERT against a from-scratch recomputation, DEBEZIUM on Debezium's documented events)."""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from collections import Counter
from decimal import Decimal

import fastavro
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dataflow.errors import SqlError
from dataflow.jsonb import canonical
from dataflow.types import (BOOL, BYTEA, DATE, FLOAT4, FLOAT8, INT4, INT8, JSONB, TEXT, TIMESTAMP, UUID,
                            TypeKind)
from storage.sources.kafka import avro
from storage.sources.kafka.avro import DecodeError, SchemaCache
from storage.sources.kafka.envelope import (Messages, Schemas, UpsertState, envelope_debezium, envelope_none,
                                            envelope_upsert)
from storage.sources.kafka.formats import Format
from storage.sources.kafka.spec import KafkaSpec


def confluent(schema: dict, schema_id: int, record) -> bytes:
    """A message as a Confluent producer writes it: magic 0, schema id, Avro binary."""
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def rows_of(table) -> Counter:
    """An update batch as a multiset of (row, diff)."""
    n = table.num_columns - 2
    cols = [table.column(i).to_pylist() for i in range(n)]
    diffs = table.column("diff").to_pylist()
    out: Counter = Counter()
    for i, d in enumerate(diffs):
        out[tuple(c[i] for c in cols)] += d
    return +out if all(v > 0 for v in out.values()) else out


ORDER = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "ok", "type": "boolean"},
        {"name": "qty", "type": "int"},
        {"name": "w", "type": "float"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "raw", "type": "bytes"},
        {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "DONE"]}},
        {"name": "addr", "type": {"type": "record", "name": "Addr", "fields": [{"name": "city", "type": "string"}]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "score", "type": "double"},
    ],
}


def test_avro_schema_to_columns():
    cols = avro.avro_columns(json.dumps(ORDER), "data")
    assert [(c.name, c.type, c.nullable) for c in cols] == [
        ("id", INT8, False), ("ok", BOOL, False), ("qty", INT4, False), ("w", FLOAT4, False),
        ("price", cols[4].type, False), ("day", DATE, False), ("at_ms", TIMESTAMP, False),
        ("at_us", TIMESTAMP, True), ("ref", UUID, False), ("note", TEXT, True), ("raw", BYTEA, False),
        ("state", TEXT, False), ("addr", JSONB, False), ("tags", JSONB, False), ("score", FLOAT8, False)]
    assert cols[4].type.kind is TypeKind.NUMERIC and (cols[4].type.precision, cols[4].type.scale) == (10, 2)
    # A schema that is not a record: one column.
    assert [(c.name, c.type) for c in avro.avro_columns('"string"', "key")] == [("key", TEXT)]
    with pytest.raises(SqlError) as e:
        avro.avro_columns(json.dumps({"type": "record", "name": "r",
                                      "fields": [{"name": "u", "type": ["int", "string"]}]}), "data")
    assert e.value.sqlstate == "0A000"
    with pytest.raises(SqlError) as e:
        avro.avro_columns(json.dumps({"type": "record", "name": "r", "fields": [
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 0}}]}), "data")
    assert e.value.sqlstate == "0A000"


def test_confluent_wire_format_avro_values():
    rid = uuid.UUID("6f1c2d1e-8a0b-4b8e-9a52-1b2c3d4e5f60")
    at = dt.datetime(2024, 3, 1, 12, 30, 15, 123000, tzinfo=dt.timezone.utc)
    rec = {"id": 7, "ok": True, "qty": -3, "w": 1.5, "price": Decimal("12.34"), "day": dt.date(2024, 2, 29),
           "at_ms": at, "at_us": dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=dt.timezone.utc),
           "ref": rid, "note": None, "raw": b"\x00\xff", "state": "DONE", "addr": {"city": "Oslo"},
           "tags": ["a", "b"], "score": 0.1}
    msg = confluent(ORDER, 42, rec)
    assert msg[0] == 0 and avro.schema_id_of(msg) == 42
    spec = KafkaSpec("c", "orders", None, Format("avro", "r", json.dumps(ORDER), 42))
    cache = SchemaCache(avro.parse_schema(json.dumps(ORDER)), {42: avro.parse_schema(json.dumps(ORDER))})
    out = envelope_none(spec, Messages.of([(None, msg, 0, 5, 1000)]), Schemas(value=cache))
    (row,) = rows_of(out)
    assert row == (7, True, -3, 1.5, Decimal("12.34"), dt.date(2024, 2, 29), dt.datetime(2024, 3, 1, 12, 30, 15, 123000),
                   dt.datetime(2024, 3, 1, 12, 30, 15, 123456), str(rid), None, b"\x00\xff", "DONE",
                   '{"city": "Oslo"}', '["a", "b"]', 0.1)
    # Not framed, or framed with an id the registry did not give: errors, never a guess.
    with pytest.raises(DecodeError):
        envelope_none(spec, Messages.of([(None, msg[5:], 0, 6, 0)]), Schemas(value=cache))
    with pytest.raises(DecodeError, match="unknown schema id 9"):
        envelope_none(spec, Messages.of([(None, b"\x00\x00\x00\x00\x09" + msg[5:], 0, 6, 0)]), Schemas(value=cache))


def test_avro_schema_resolution_old_writer_new_reader():
    v1 = {"type": "record", "name": "U", "fields": [{"name": "id", "type": "long"}]}
    v2 = {"type": "record", "name": "U", "fields": [{"name": "id", "type": "long"},
                                                    {"name": "email", "type": ["null", "string"], "default": None}]}
    spec = KafkaSpec("c", "users", None, Format("avro", "r", json.dumps(v2), 2))
    cache = SchemaCache(avro.parse_schema(json.dumps(v2)),
                        {1: avro.parse_schema(json.dumps(v1)), 2: avro.parse_schema(json.dumps(v2))})
    msgs = Messages.of([(None, confluent(v1, 1, {"id": 1}), 0, 0, 0),
                        (None, confluent(v2, 2, {"id": 2, "email": "a@b"}), 0, 1, 0)])
    assert rows_of(envelope_none(spec, msgs, Schemas(value=cache))) == Counter({(1, None): 1, (2, "a@b"): 1})
    assert cache.missing([confluent(v1, 3, {"id": 1}), None]) == {3}


def test_unnamed_formats_key_and_metadata():
    spec = KafkaSpec("c", "t", Format("text"), Format("json"),
                     (("key", None), ("partition", None), ("offset", "off"), ("timestamp", "ts")))
    assert [(c.name, c.type) for c in spec.columns()] == [
        ("key", TEXT), ("data", JSONB), ("partition", INT4), ("off", INT8), ("ts", TIMESTAMP)]
    msgs = Messages.of([(b"k1", b'{"b": 1.50, "a": [true, null]}', 2, 10, 1_700_000_000_123),
                        (None, b' "x" ', 0, 11, 0),
                        (b"k3", None, 1, 12, 0)])  # a tombstone: nothing to append
    got = rows_of(envelope_none(spec, msgs, Schemas()))
    assert got == Counter({("k1", '{"a": [true, null], "b": 1.50}', 2, 10, dt.datetime(2023, 11, 14, 22, 13, 20, 123000)): 1,
                           (None, '"x"', 0, 11, dt.datetime(1970, 1, 1)): 1})
    bad = Messages.of([(None, b"{nope", 0, 0, 0)])
    with pytest.raises(DecodeError, match="jsonb"):
        envelope_none(spec, bad, Schemas())
    text = KafkaSpec("c", "t", None, Format("text"))
    assert [c.name for c in text.columns()] == ["text"]
    with pytest.raises(DecodeError, match="text"):
        envelope_none(text, Messages.of([(None, b"ok", 0, 0, 0), (None, b"\xff\xfe", 0, 1, 0)]), Schemas())
    raw = KafkaSpec("c", "t", Format("bytes"), Format("bytes"), (("key", "k"),))
    assert rows_of(envelope_none(raw, Messages.of([(b"\x01", b"\xff", 0, 0, 0)]), Schemas())) == \
        Counter({(b"\x01", b"\xff"): 1})
    clash = KafkaSpec("c", "t", None, Format("text"), (("offset", "text"),))
    with pytest.raises(SqlError) as e:
        clash.columns()
    assert e.value.sqlstate == "42701"


# -- upsert ---------------------------------------------------------------------------------------

UPSERT = KafkaSpec("c", "t", Format("text"), Format("json"), (("offset", None),), "upsert")


def recompute(history: list[tuple[str, str | None, int]]) -> Counter:
    """The upsert relation from scratch: the last message of each key, unless a tombstone."""
    last: dict[str, tuple[str | None, int]] = {}
    for k, v, off in history:
        last[k] = (v, off)
    return Counter({(k, json.dumps(json.loads(v), sort_keys=True) if v is not None else None, off): 1
                    for k, (v, off) in last.items() if v is not None})


def _canon(c: Counter) -> Counter:
    return Counter({(k, json.dumps(json.loads(v), sort_keys=True), o): n for (k, v, o), n in c.items()})


message = st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]),
                    st.one_of(st.none(), st.integers(0, 3).map(lambda i: json.dumps({"v": i}))))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(message, max_size=12), max_size=8))
def test_upsert_matches_recomputation_at_every_batch(batches):
    state = UpsertState(tuple(c.type for c in UPSERT.columns()), 1)
    relation: Counter = Counter()
    history: list = []
    offset = 0
    for batch in batches:
        records = []
        for k, v in batch:
            records.append((k.encode(), None if v is None else v.encode(), 0, offset, 0))
            history.append((k, v, offset))
            offset += 1
        out = envelope_upsert(UPSERT, Messages.of(records), Schemas(), state)
        # Every retraction is of a row the relation holds.
        for row, d in rows_of(out).items():
            relation[row] += d
            assert relation[row] >= 0
        relation = +relation
        assert _canon(relation) == recompute(history)
        assert len(state.index) == len(relation) <= 5


def test_upsert_state_stays_proportional_to_keys():
    state = UpsertState(tuple(c.type for c in UPSERT.columns()), 1)
    offset = 0
    for _ in range(200):  # 200 batches of 50 updates to 10 keys: 10,000 messages
        records = [(f"k{i % 10}".encode(), json.dumps({"v": offset + i}).encode(), 0, offset + i, 0)
                   for i in range(50)]
        out = envelope_upsert(UPSERT, Messages.of(records), Schemas(), state)
        offset += 50
        assert out.num_rows <= 20  # at most one retraction and one insertion per key
        assert len(state.index) == 10
        assert state.size <= 1024 + 2 * 10 + 50
    # A tombstone forgets its key; the relation's rebuilt state equals the live one.
    envelope_upsert(UPSERT, Messages.of([(b"k3", None, 0, offset, 0)]), Schemas(), state)
    assert len(state.index) == 9
    live = Counter()
    for k, p in state.index.items():
        live[tuple(state.store.column(i)[p].as_py() for i in range(3))] += 1
    rebuilt = UpsertState(state.types, 1)
    from storage.sources.base import updates
    rebuilt.load(updates(state.types, [[r[i] for r in live] for i in range(3)], 1))
    assert set(rebuilt.index) == set(state.index) and rebuilt.size == 9


def test_upsert_null_key_is_an_error():
    state = UpsertState(tuple(c.type for c in UPSERT.columns()), 1)
    with pytest.raises(DecodeError, match="NULL key"):
        envelope_upsert(UPSERT, Messages.of([(None, b"{}", 3, 9, 0)]), Schemas(), state)


def test_upsert_avro_record_key():
    key_schema = {"type": "record", "name": "K", "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}
    val_schema = {"type": "record", "name": "V", "fields": [{"name": "x", "type": ["null", "long"], "default": None}]}
    spec = KafkaSpec("c", "t", Format("avro", "r", json.dumps(key_schema), 1), Format("avro", "r", json.dumps(val_schema), 2),
                     (), "upsert")
    assert [c.name for c in spec.columns()] == ["a", "b", "x"]
    schemas = Schemas(SchemaCache(avro.parse_schema(json.dumps(key_schema)), {1: avro.parse_schema(json.dumps(key_schema))}),
                      SchemaCache(avro.parse_schema(json.dumps(val_schema)), {2: avro.parse_schema(json.dumps(val_schema))}))
    state = UpsertState(tuple(c.type for c in spec.columns()), 2)
    k1 = confluent(key_schema, 1, {"a": 1, "b": "x"})
    k2 = confluent(key_schema, 1, {"a": 1, "b": "y"})
    out1 = envelope_upsert(spec, Messages.of([(k1, confluent(val_schema, 2, {"x": 10}), 0, 0, 0),
                                              (k2, confluent(val_schema, 2, {"x": None}), 0, 1, 0)]), schemas, state)
    assert rows_of(out1) == Counter({(1, "x", 10): 1, (1, "y", None): 1})
    out2 = envelope_upsert(spec, Messages.of([(k1, confluent(val_schema, 2, {"x": 11}), 0, 2, 0),
                                              (k2, None, 0, 3, 0)]), schemas, state)
    assert rows_of(out2) == Counter({(1, "x", 10): -1, (1, "x", 11): 1, (1, "y", None): -1})


# -- debezium -------------------------------------------------------------------------------------

# Debezium's PostgreSQL connector documentation's events for a `customers` table (REPLICA IDENTITY
# FULL, so updates and deletes carry the whole old row), JSON with the schema/payload wrapper.
SOURCE = {"version": "2.5.4.Final", "connector": "postgresql", "name": "PostgreSQL_server", "ts_ms": 1559033904863,
          "snapshot": "false", "db": "postgres", "schema": "public", "table": "customers", "txId": 555,
          "lsn": 24023128, "xmin": None}
ANNE = {"id": 1, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
ANNE2 = {**ANNE, "first_name": "Anne Marie"}


def dbz_json(before, after, op) -> bytes:
    return json.dumps({"schema": {"type": "struct", "name": "PostgreSQL_server.public.customers.Envelope"},
                       "payload": {"before": before, "after": after, "source": SOURCE, "op": op,
                                   "ts_ms": 1559033904863}}).encode()


def test_debezium_json_events():
    spec = KafkaSpec("c", "PostgreSQL_server.public.customers", None, Format("json"), (), "debezium")
    assert [(c.name, c.type) for c in spec.columns()] == [("data", JSONB)]
    rel = Counter()
    for batch in ([(None, dbz_json(None, ANNE, "c"), 0, 0, 0)],
                  [(None, dbz_json(ANNE, ANNE2, "u"), 0, 1, 0), (None, dbz_json(ANNE2, None, "d"), 0, 2, 0),
                   (b'{"id": 1}', None, 0, 3, 0)],  # the tombstone after a delete
                  [(None, dbz_json(None, ANNE, "r"), 0, 4, 0)]):
        for row, d in rows_of(envelope_debezium(spec, Messages.of(batch), Schemas())).items():
            rel[row] += d
        rel = +rel
    assert rel == Counter({(canonical(ANNE),): 1})  # jsonb's key order
    with pytest.raises(DecodeError, match="REPLICA IDENTITY FULL"):
        envelope_debezium(spec, Messages.of([(None, dbz_json(None, None, "d"), 0, 5, 0)]), Schemas())


def test_debezium_avro_envelope():
    value = {"type": "record", "name": "Value", "namespace": "dbserver1.inventory.customers",
             "fields": [{"name": "id", "type": "int"}, {"name": "first_name", "type": "string"},
                        {"name": "last_name", "type": "string"}, {"name": "email", "type": "string"}]}
    envelope = {"type": "record", "name": "Envelope", "namespace": "dbserver1.inventory.customers",
                "fields": [{"name": "before", "type": ["null", value], "default": None},
                           {"name": "after", "type": ["null", "Value"], "default": None},
                           {"name": "op", "type": "string"},
                           {"name": "ts_ms", "type": ["null", "long"], "default": None}]}
    key = {"type": "record", "name": "Key", "namespace": "dbserver1.inventory.customers",
           "fields": [{"name": "id", "type": "int"}]}
    text = json.dumps(envelope)
    spec = KafkaSpec("c", "dbserver1.inventory.customers", Format("avro", "r", json.dumps(key), 3),
                     Format("avro", "r", text, 4), (), "debezium")
    assert [(c.name, c.type) for c in spec.columns()] == [("id", INT4), ("first_name", TEXT), ("last_name", TEXT),
                                                          ("email", TEXT)]
    parsed = avro.parse_schema(text)
    schemas = Schemas(value=SchemaCache(parsed, {4: parsed}))
    enc = lambda b, a, op: confluent(envelope, 4, {"before": b, "after": a, "op": op, "ts_ms": 1})  # noqa: E731
    anne = {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
    anne2 = {**anne, "email": "anne@example.com"}
    out = envelope_debezium(spec, Messages.of([(None, enc(None, anne, "c"), 0, 0, 0),
                                               (None, enc(anne, anne2, "u"), 0, 1, 0)]), Schemas(value=schemas.value))
    assert rows_of(out) == Counter({(1004, "Anne", "Kretchmar", "anne@example.com"): 1})
    out = envelope_debezium(spec, Messages.of([(None, enc(anne2, None, "d"), 0, 2, 0)]), schemas)
    assert rows_of(out) == Counter({(1004, "Anne", "Kretchmar", "anne@example.com"): -1})


# -- offsets bookkeeping and sink encoding (no broker needed) ---------------------------------------

def test_offsets_advance_and_progress_updates():
    from storage.sources.kafka.ingest import advance, offsets_of, progress_updates
    msgs = Messages.of([(None, b"x", 0, 5, 0), (None, b"x", 2, 9, 0), (None, b"x", 0, 7, 0), (None, b"x", 2, 3, 0)])
    new = advance({0: 5, 1: 4}, msgs)
    assert new == {0: 8, 1: 4, 2: 10}
    prog = progress_updates({0: 5, 1: 4}, new)
    assert rows_of(prog) == Counter({(0, 5): -1, (0, 8): 1, (2, 10): 1})
    # The progress relation's contents after both writes give the offsets back (restart).
    from dataflow.batch import concat
    first = progress_updates({}, {0: 5, 1: 4})
    assert offsets_of(concat([first, prog])) == new
    assert progress_updates(new, new) is None


def _enc(envelope, key, fmt="json"):
    from dataflow.types import Column, numeric
    from storage.sources.kafka.sink import SinkEncoding, sink_schemas
    cols = (Column("id", INT4, False), Column("v", TEXT), Column("amount", numeric(10, 2)), Column("doc", JSONB))
    options = {"key": key, "envelope": envelope, "format": {"kind": fmt}}
    if fmt == "avro":
        ks, vs = sink_schemas("t", cols, tuple(key) if key else None, envelope)
        options["format"] = {"kind": "avro", "key_schema": ks, "key_schema_id": 1, "value_schema": vs,
                             "value_schema_id": 2}
    return SinkEncoding.of(cols, options)


def test_sink_upsert_json_messages():
    from storage.sources.kafka.sink import encode_updates
    enc = _enc("upsert", ["id"])
    msgs = encode_updates(enc, [
        (1, 1, (1, "a", Decimal("1.50"), '{"x": 1}')), (1, 1, (2, "b", None, None)),
        (2, -1, (1, "a", Decimal("1.50"), '{"x": 1}')), (2, 1, (1, "c", Decimal("2.00"), None)),
        (3, -1, (2, "b", None, None))])
    assert msgs == [
        (1, b'{"id":1}', b'{"id":1,"v":"a","amount":1.50,"doc":{"x":1}}'),
        (1, b'{"id":2}', b'{"id":2,"v":"b","amount":null,"doc":null}'),
        (2, b'{"id":1}', b'{"id":1,"v":"c","amount":2.00,"doc":null}'),
        (3, b'{"id":2}', None)]  # a tombstone
    with pytest.raises(SqlError) as e:
        encode_updates(enc, [(4, 1, (5, "x", None, None)), (4, 1, (5, "y", None, None))])
    assert e.value.sqlstate == "23505"


def test_sink_debezium_avro_messages():
    from storage.sources.kafka.sink import encode_updates
    enc = _enc("debezium", ["id"], "avro")
    msgs = encode_updates(enc, [(7, -1, (1, "a", Decimal("1.50"), None)), (7, 1, (1, "b", Decimal("1.50"), None))])
    assert len(msgs) == 1
    ts, key, value = msgs[0]
    assert avro.schema_id_of(key) == 1 and avro.schema_id_of(value) == 2
    read = fastavro.schemaless_reader(io.BytesIO(value[5:]), enc.value_schema)
    assert read["before"]["v"] == "a" and read["after"]["v"] == "b" and read["after"]["amount"] == Decimal("1.50")
    assert fastavro.schemaless_reader(io.BytesIO(key[5:]), enc.key_schema) == {"id": 1}
    # Without a key, each change is a message of its own.
    plain = _enc("debezium", None)
    out = encode_updates(plain, [(1, 2, (1, "a", None, None)), (2, -1, (1, "a", None, None))])
    assert [json.loads(v) for _, _, v in out] == [
        {"before": None, "after": {"id": 1, "v": "a", "amount": None, "doc": None}}] * 2 + [
        {"before": {"id": 1, "v": "a", "amount": None, "doc": None}, "after": None}]
