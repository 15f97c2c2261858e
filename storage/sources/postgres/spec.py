"""What a PostgreSQL source ingests, as stored in its catalog definition: the upstream tables,
their columns (name, type OID, modifier, TEXT COLUMNS or not) and the subsource of each.

The source's outputs (one per table) and its progress relation (column `lsn`: the LSN from which
replication resumes, every upstream transaction that committed before it being ingested) are
what storage/sources/controller.py creates as subsources, exactly as for load generators.

    spec = PostgresSpec.from_definition(json.loads(source.definition))
    spec.outputs()           # [Output('orders', (Column('id', INT4, False), ...)), ...]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dataflow.types import INT8, Column, SqlType
from storage.sources.base import Output
from storage.sources.postgres.types import subsource_type

PROGRESS_COLUMNS = (Column("lsn", INT8, False),)


@dataclass(frozen=True)
class UpstreamColumn:
    name: str
    type_oid: int
    typmod: int
    type_name: str
    text: bool  # TEXT COLUMNS: ingested as its text form
    nullable: bool

    def sql_type(self, table: str) -> SqlType:
        return subsource_type(self.type_oid, self.typmod, self.type_name, f"{table}.{self.name}", self.text)

    def to_json(self) -> list:
        return [self.name, self.type_oid, self.typmod, self.type_name, self.text, self.nullable]


@dataclass(frozen=True)
class UpstreamTable:
    oid: int
    schema: str
    name: str
    output: str  # the subsource's name
    columns: tuple[UpstreamColumn, ...]

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def subsource_columns(self) -> tuple[Column, ...]:
        return tuple(Column(c.name, c.sql_type(self.qualified), c.nullable) for c in self.columns)

    def to_json(self) -> dict:
        return {"oid": self.oid, "schema": self.schema, "name": self.name, "output": self.output,
                "columns": [c.to_json() for c in self.columns]}

    @staticmethod
    def from_json(d: dict) -> "UpstreamTable":
        return UpstreamTable(d["oid"], d["schema"], d["name"], d["output"],
                             tuple(UpstreamColumn(*c) for c in d["columns"]))


@dataclass(frozen=True)
class PostgresSpec:
    connection: str  # the connection's id (catalog/secrets.py)
    publication: str
    slot: str
    tables: tuple[UpstreamTable, ...]

    kind: ClassVar[str] = "postgres"
    single_output: ClassVar[bool] = False
    progress_columns: ClassVar[tuple[Column, ...]] = PROGRESS_COLUMNS

    def outputs(self) -> list[Output]:
        return [Output(t.output, t.subsource_columns()) for t in self.tables]

    def to_definition(self, progress: str) -> dict:
        return {"type": "postgres", "connection": self.connection, "publication": self.publication,
                "slot": self.slot, "progress": progress, "tables": [t.to_json() for t in self.tables]}

    @staticmethod
    def from_definition(d: dict) -> "PostgresSpec":
        return PostgresSpec(d["connection"], d["publication"], d["slot"],
                            tuple(UpstreamTable.from_json(t) for t in d["tables"]))
