"""The formats of a Kafka message's key or value (Materialize's FORMAT / KEY FORMAT / VALUE
FORMAT): what columns a format gives and how a batch of payloads decodes into them.

    FORMAT BYTES   one column `data bytea` (the payload as is)
    FORMAT TEXT    one column `text text` (UTF-8; a payload that is not UTF-8 is an error)
    FORMAT JSON    one column `data jsonb` (one JSON document per message)
    FORMAT AVRO USING CONFLUENT SCHEMA REGISTRY CONNECTION csr
                   the Avro schema's columns (storage/sources/kafka/avro.py)

A key in an unnamed format (BYTES, TEXT, JSON) is one column named `key`.

    fmt = Format("text")
    decode(fmt, [b"a", b"b"], None)       # [<pa.StringArray ["a", "b"]>]

BYTES and TEXT decode a whole batch in one Arrow call (TEXT's UTF-8 check included); JSON and
Avro parse each message (there is no batch parser for jsonb's exact number semantics or for
schemaless Avro), then build each column as one array.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from dataflow.jsonb import canonical
from dataflow.types import BYTEA, JSONB, TEXT, Column
from storage.sources.kafka import avro
from storage.sources.kafka.avro import DecodeError, SchemaCache

FORMATS = ("bytes", "text", "json", "avro")


@dataclass(frozen=True)
class Format:
    kind: str  # 'bytes' | 'text' | 'json' | 'avro'
    registry: str | None = None  # avro: the CONFLUENT SCHEMA REGISTRY connection's id
    schema: str | None = None  # avro: the reader schema (JSON text) fetched at CREATE SOURCE
    schema_id: int | None = None  # avro: its registry id

    def columns(self, single_name: str) -> tuple[Column, ...]:
        """The columns this format decodes into; `single_name` names an unnamed format's one
        column when it is a key (`key`)."""
        if self.kind == "avro":
            return avro.avro_columns(self.schema, single_name if single_name == "key" else "data")
        name = {"bytes": "data", "text": "text", "json": "data"}[self.kind] if single_name != "key" else "key"
        return (Column(name, {"bytes": BYTEA, "text": TEXT, "json": JSONB}[self.kind], True),)

    def flattened(self) -> bool:
        return self.kind == "avro" and avro.record_schema(avro.parse_schema(self.schema)) is not None

    def to_json(self) -> dict:
        return {"kind": self.kind, "registry": self.registry, "schema": self.schema, "schema_id": self.schema_id}

    @staticmethod
    def from_json(d: dict | None) -> "Format | None":
        return None if d is None else Format(d["kind"], d.get("registry"), d.get("schema"), d.get("schema_id"))


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant,
                            object_pairs_hook=dict)


def json_document(payload: bytes) -> Any:
    """One JSON document (as jsonb parses: exact numbers, last duplicate key wins)."""
    try:
        text = payload.decode("utf-8")
        doc, end = _DECODER.raw_decode(text.lstrip())
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise DecodeError(f"failed to decode as jsonb: {e}") from None
    if text.lstrip()[end:].strip():
        raise DecodeError("failed to decode as jsonb: trailing characters after the document")
    return doc


def decode_text(payloads: list[bytes]) -> pa.Array:
    arr = pa.array(payloads, pa.binary())
    try:
        return arr.cast(pa.string())
    except pa.ArrowInvalid:
        for i, p in enumerate(payloads):
            try:
                p.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DecodeError(f"message {i}: failed to decode as text: {e}") from None
        raise


def decode(fmt: Format, payloads: list[bytes], cache: SchemaCache | None,
           columns: tuple[Column, ...] | None = None) -> list[pa.Array]:
    """The columns of a batch of (non-null) payloads."""
    if fmt.kind == "bytes":
        return [pa.array(payloads, pa.binary())]
    if fmt.kind == "text":
        return [decode_text(payloads)]
    if fmt.kind == "json":
        return [pa.array([canonical(json_document(p)) for p in payloads], pa.string())]
    assert cache is not None and columns is not None
    data = avro.decode_data(payloads, cache)
    return avro.record_columns(data, columns, fmt.flattened())


def decode_data(fmt: Format, payloads: list[bytes], cache: SchemaCache | None) -> list[Any]:
    """Each payload as a Python value (JSON documents, Avro data): what the Debezium envelope
    reads its before / after / op from."""
    if fmt.kind == "json":
        return [json_document(p) for p in payloads]
    if fmt.kind == "avro":
        assert cache is not None
        return avro.decode_data(payloads, cache)
    raise DecodeError(f"ENVELOPE DEBEZIUM needs FORMAT JSON or AVRO, not {fmt.kind.upper()}")
