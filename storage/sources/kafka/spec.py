"""What a Kafka source ingests, as stored in its catalog definition: the topic, the connection,
the key and value formats, the INCLUDE'd metadata and the envelope; and the columns of its one
output relation, which follow from them (Materialize's order: key columns, value columns, then
the metadata columns in INCLUDE order).

    spec = KafkaSpec("u3", "orders", key=Format("text"), value=Format("json"),
                     includes=(("key", None), ("offset", None)), envelope="upsert")
    spec.columns()   # key text, data jsonb, offset bigint

The source is the relation itself (like COUNTER); its progress subsource holds one row per
partition: (partition, the next offset to read), so a restart resumes exactly after the last
committed message of every partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dataflow.errors import SqlError, SqlState
from dataflow.types import INT4, INT8, JSONB, TIMESTAMP, Column
from storage.sources.base import Output
from storage.sources.kafka import avro
from storage.sources.kafka.formats import Format

PROGRESS_COLUMNS = (Column("partition", INT4, False), Column("offset", INT8, False))
ENVELOPES = ("none", "upsert", "debezium")
METADATA = {"partition": INT4, "offset": INT8, "timestamp": TIMESTAMP}


@dataclass(frozen=True)
class KafkaSpec:
    connection: str  # the KAFKA connection's id (catalog/secrets.py)
    topic: str
    key: Format | None
    value: Format
    includes: tuple[tuple[str, str | None], ...] = ()  # ('key' | 'partition' | 'offset' | 'timestamp', AS name)
    envelope: str = "none"
    group_id_prefix: str | None = None

    kind: ClassVar[str] = "kafka"
    single_output: ClassVar[bool] = True
    progress_columns: ClassVar[tuple[Column, ...]] = PROGRESS_COLUMNS

    # -- columns ----------------------------------------------------------------------------

    def include_key(self) -> bool:
        """The key's columns are in the output: INCLUDE KEY, and always for ENVELOPE UPSERT (the
        output then holds the upsert state itself, one row per key)."""
        return self.envelope == "upsert" or any(w == "key" for w, _ in self.includes)

    def key_columns(self) -> tuple[Column, ...]:
        if self.key is None:
            return ()
        cols = self.key.columns("key")
        alias = next((a for w, a in self.includes if w == "key"), None)
        if alias is not None:
            if len(cols) != 1:
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                               "INCLUDE KEY AS name for a key of several columns not yet supported",
                               hint="Leave out AS: the key record's fields become columns.")
            cols = (Column(alias, cols[0].type, True),)
        return cols

    def value_columns(self) -> tuple[Column, ...]:
        if self.envelope == "debezium":
            if self.value.kind == "json":
                return (Column("data", JSONB, False),)
            parsed = avro.parse_schema(self.value.schema)
            names = avro.named_types(parsed)
            record = avro.record_schema(parsed)
            after = next((f for f in (record or {}).get("fields", []) if f["name"] == "after"), None)
            if after is None:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                               "ENVELOPE DEBEZIUM needs a value schema with before and after fields",
                               hint="The topic's value schema is not a Debezium envelope.")
            inner = avro.record_schema(after["type"], names)
            if inner is None:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "the Debezium envelope's after field is not a record")
            return avro.avro_columns(inner, "data", names)
        return self.value.columns("value")

    def metadata_columns(self) -> tuple[Column, ...]:
        return tuple(Column(a or w, METADATA[w], False) for w, a in self.includes if w != "key")

    def columns(self) -> tuple[Column, ...]:
        cols = (self.key_columns() if self.include_key() else ()) + self.value_columns() + self.metadata_columns()
        names = [c.name for c in cols]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise SqlError(SqlState.DUPLICATE_COLUMN, f'column "{dup}" specified more than once',
                           hint="Rename one with INCLUDE ... AS name.")
        return cols

    def outputs(self) -> list[Output]:
        return [Output(None, self.columns())]

    # -- catalog definition -----------------------------------------------------------------

    def to_definition(self, progress: str) -> dict:
        return {"type": "kafka", "connection": self.connection, "topic": self.topic,
                "key_format": None if self.key is None else self.key.to_json(),
                "value_format": self.value.to_json(), "includes": [list(i) for i in self.includes],
                "envelope": self.envelope, "group_id_prefix": self.group_id_prefix, "progress": progress}

    @staticmethod
    def from_definition(d: dict) -> "KafkaSpec":
        return KafkaSpec(d["connection"], d["topic"], Format.from_json(d.get("key_format")),
                         Format.from_json(d["value_format"]), tuple((w, a) for w, a in d.get("includes", [])),
                         d.get("envelope", "none"), d.get("group_id_prefix"))
