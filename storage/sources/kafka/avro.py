"""Avro in Kafka messages: the Confluent wire format, Avro schemas as Slipstream columns, and
decoding a batch of messages into Arrow columns (and encoding rows, for sinks).

**Wire format** (Confluent Schema Registry's framing): byte 0 is the magic byte 0, bytes 1-4 the
writer schema's registry id (big-endian), then the Avro binary encoding of one datum.

    b"\\x00\\x00\\x00\\x00\\x07" + avro_binary      -> schema id 7

**Columns** (as Materialize maps Avro): a top-level record is flattened, one column per field in
order; `["null", T]` (either order) makes a nullable column of T's type; logical types map to the
SQL type they mean. A schema that is not a record is one column (named `key` for keys, `data` for
values):

    boolean -> boolean        int -> integer              long -> bigint
    float -> real             double -> double precision  string / enum -> text
    bytes / fixed -> bytea    date -> date                time-millis/micros -> time
    timestamp-millis/micros -> timestamp (UTC, no time zone, as Materialize)
    local-timestamp-millis/micros -> timestamp            uuid -> uuid
    decimal(p, s) -> numeric(p, s) (p <= 38)
    nested record / array / map -> jsonb (Materialize: record / list / map types, which Slipstream
                                          lacks; the value is the same, as a JSON document)

Other unions (two non-null branches) are refused with 0A000, as is decimal beyond 38 digits.

**Decoding** uses fastavro (a C extension) per message with the writer schema the message names
and the source's schema as reader schema (Avro schema resolution: fields added with defaults,
promoted types), then builds each column as one Arrow array. Decoding is pure: the schemas a
batch needs are looked up first (storage/sources/kafka/registry.py), so this module never waits
on the network.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa

from dataflow.errors import SqlError, SqlState
from dataflow.jsonb import canonical
from dataflow.types import (
    BOOL, BYTEA, DATE, FLOAT4, FLOAT8, INT4, INT8, JSONB, TEXT, TIME, TIMESTAMP, UUID, Column, SqlType,
    TypeKind, numeric,
)

MAGIC = 0
HEADER = struct.Struct(">bI")  # magic byte, schema id


class DecodeError(Exception):
    """A message that does not decode in the source's format (the message's position is added
    by the caller)."""


# -- wire format -----------------------------------------------------------------------------------

def frame(schema_id: int, payload: bytes) -> bytes:
    """The Confluent wire format of an Avro datum."""
    return HEADER.pack(MAGIC, schema_id) + payload


def schema_id_of(message: bytes) -> int:
    """The registry id of the schema that wrote `message` (DecodeError if it is not framed)."""
    if len(message) < HEADER.size or message[0] != MAGIC:
        raise DecodeError("not in the Confluent wire format (magic byte 0, then a 4-byte schema id)")
    return HEADER.unpack_from(message)[1]


def schema_ids(messages: list[bytes | None]) -> set[int]:
    return {schema_id_of(m) for m in messages if m is not None}


# -- schema -> columns -------------------------------------------------------------------------------

def parse_schema(text: str | dict) -> Any:
    """A schema (JSON text or parsed) as fastavro's parsed form (named types resolved)."""
    try:
        raw = json.loads(text) if isinstance(text, str) else text
        return fastavro.parse_schema(raw, _write_hint=False)
    except Exception as e:  # noqa: BLE001 - reported in the user's words
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"invalid Avro schema: {e}") from None


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def named_types(schema: Any, into: dict | None = None) -> dict[str, dict]:
    """Every named type (record, enum, fixed) of a parsed schema by its full name, so a later
    reference by name (as Debezium's `after: ["null", "Value"]`) resolves to its definition."""
    into = {} if into is None else into
    if isinstance(schema, list):
        for b in schema:
            named_types(b, into)
    elif isinstance(schema, dict):
        if "name" in schema and schema.get("type") in ("record", "error", "enum", "fixed"):
            into.setdefault(schema["name"], schema)
        for f in schema.get("fields", ()):
            named_types(f["type"], into)
        for k in ("items", "values"):
            if k in schema:
                named_types(schema[k], into)
        if isinstance(schema.get("type"), (dict, list)):
            named_types(schema["type"], into)
    return into


def _resolve(t: Any, names: dict[str, dict]) -> Any:
    if isinstance(t, str) and t not in _PRIMITIVES:
        found = names.get(t) or next((v for k, v in names.items() if k.rsplit(".", 1)[-1] == t), None)
        if found is None:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"Avro schema names an unknown type {t}")
        return found
    return t


def _strip_null(t: Any, names: dict[str, dict] | None = None) -> tuple[Any, bool]:
    """(the non-null branch, nullable) of a type; unions of two non-null types are refused."""
    names = names or {}
    if isinstance(t, list):
        branches = [b for b in t if b != "null"]
        if len(branches) != 1:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           "Avro unions of more than one non-null type not yet supported")
        return _resolve(branches[0], names), len(branches) < len(t)
    return _resolve(t, names), False


def _sql_type(t: Any) -> SqlType:
    if isinstance(t, str):
        return {"boolean": BOOL, "int": INT4, "long": INT8, "float": FLOAT4, "double": FLOAT8,
                "string": TEXT, "bytes": BYTEA}.get(t) or _refuse(t)
    if isinstance(t, list):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "Avro unions nested in other unions not yet supported")
    logical = t.get("logicalType")
    base = t.get("type")
    if logical == "decimal" and base in ("bytes", "fixed"):
        precision, scale = int(t["precision"]), int(t.get("scale", 0))
        if precision > 38:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"Avro decimal with precision {precision} not yet supported (at most 38 digits)")
        return numeric(precision, scale)
    if logical == "date" and base == "int":
        return DATE
    if logical in ("time-millis", "time-micros"):
        return TIME
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        return TIMESTAMP
    if logical == "uuid" and base == "string":
        return UUID
    if base in ("record", "error", "array", "map"):
        return JSONB
    if base == "enum":
        return TEXT
    if base == "fixed":
        return BYTEA
    if isinstance(base, (str, dict, list)):
        return _sql_type(base)
    return _refuse(str(base))


def _refuse(t: str) -> SqlType:
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"Avro type {t} not yet supported")


def avro_columns(schema: Any, single_name: str, names: dict[str, dict] | None = None) -> tuple[Column, ...]:
    """The columns of an Avro schema (parsed or JSON text): a record's fields, else one column.
    `names`: the named types of the schema this one is part of."""
    if isinstance(schema, str):
        schema = parse_schema(schema)
    names = named_types(schema, dict(names or {}))
    t, nullable = _strip_null(schema, names)
    if isinstance(t, dict) and t.get("type") in ("record", "error"):
        cols = []
        for f in t["fields"]:
            ft, fnull = _strip_null(f["type"], names)
            cols.append(Column(f["name"], _sql_type(ft), fnull or nullable))
        return tuple(cols)
    return (Column(single_name, _sql_type(t), True),)


def record_schema(schema: Any, names: dict[str, dict] | None = None) -> dict | None:
    """The record type of a schema (through a nullable union), or None."""
    t, _ = _strip_null(schema, named_types(schema, dict(names or {})))
    return t if isinstance(t, dict) and t.get("type") in ("record", "error") else None


# -- decoding ----------------------------------------------------------------------------------------

@dataclass
class SchemaCache:
    """Writer schemas by registry id (parsed), and the reader schema a source was created with."""

    reader: Any
    writers: dict[int, Any]

    def missing(self, messages: list[bytes | None]) -> set[int]:
        return schema_ids(messages) - set(self.writers)


def decode_data(messages: list[bytes], cache: SchemaCache) -> list[Any]:
    """One Avro datum per framed message (Python values: dicts for records)."""
    out = []
    reader = cache.reader
    for m in messages:
        sid = schema_id_of(m)
        writer = cache.writers.get(sid)
        if writer is None:
            raise DecodeError(f"unknown schema id {sid}")
        try:
            out.append(fastavro.schemaless_reader(io.BytesIO(memoryview(m)[HEADER.size:]), writer, reader))
        except Exception as e:  # noqa: BLE001 - the message is reported
            raise DecodeError(f"Avro decoding failed: {e}") from None
    return out


def json_value(v: Any) -> Any:
    """A decoded Avro value as a JSON-able value (nested records, arrays and maps -> jsonb)."""
    if isinstance(v, dict):
        return {k: json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, float):
        return Decimal(repr(v)) if v == v and v not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, (str, int, bool, Decimal)) or v is None:
        return v
    return str(v)  # dates, times, uuids


def column_array(values: list[Any], t: SqlType) -> pa.Array:
    """One column's Python values (as fastavro returns them) as an Arrow array of t."""
    if t.kind is TypeKind.JSONB:
        return pa.array([None if v is None else canonical(json_value(v)) for v in values], pa.string())
    if t.kind is TypeKind.UUID:
        return pa.array([None if v is None else str(v) for v in values], pa.string())
    if t.kind is TypeKind.NUMERIC:
        return pa.array(values, pa.decimal128(38, t.effective_scale))
    return pa.array(values, t.arrow)


def record_columns(data: list[Any], columns: tuple[Column, ...], flattened: bool) -> list[pa.Array]:
    """The columns of decoded data: a record's fields (flattened), else the datum itself."""
    if not flattened:
        return [column_array(data, columns[0].type)]
    return [column_array([None if d is None else d.get(c.name) for d in data], c.type) for c in columns]


# -- encoding (sinks) ------------------------------------------------------------------------------

def encode(schema: Any, schema_id: int, record: Any) -> bytes:
    """One datum in the Confluent wire format."""
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, record)
    return frame(schema_id, buf.getvalue())


_AVRO_OF = {TypeKind.BOOL: "boolean", TypeKind.INT2: "int", TypeKind.INT4: "int", TypeKind.INT8: "long",
            TypeKind.FLOAT4: "float", TypeKind.FLOAT8: "double", TypeKind.TEXT: "string",
            TypeKind.VARCHAR: "string", TypeKind.BPCHAR: "string", TypeKind.BYTEA: "bytes",
            TypeKind.JSONB: "string", TypeKind.JSON: "string"}


def avro_type(t: SqlType) -> Any:
    """The Avro type a sink writes for a SQL type (Materialize's sink mapping, where it has one)."""
    k = t.kind
    if k in _AVRO_OF:
        return _AVRO_OF[k]
    if k is TypeKind.NUMERIC:
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision or 38,
                "scale": t.effective_scale}
    if k is TypeKind.DATE:
        return {"type": "int", "logicalType": "date"}
    if k is TypeKind.TIME:
        return {"type": "long", "logicalType": "time-micros"}
    if k in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if k is TypeKind.UUID:
        return {"type": "string", "logicalType": "uuid"}
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"Avro sinks of type {t.name} not yet supported")


def record_schema_of(name: str, columns: tuple[Column, ...]) -> dict:
    """An Avro record schema for rows of these columns (nullable columns as ["null", T])."""
    fields = []
    for c in columns:
        t = avro_type(c.type)
        fields.append({"name": c.name, "type": ["null", t] if c.nullable else t})
    return {"type": "record", "name": name, "fields": fields}
