"""What the catalog holds: one `CatalogItem` per named object.

Ids are Materialize-style global ids: 'u1', 'u2', ... for user objects, never reused. Tables and
materialized views own a persist shard named by their id; views are stored as their SELECT text
and inlined by the planner; indexes are arrangements maintained by the compute layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from dataflow.types import Column


class ItemKind(str, Enum):
    TABLE = "table"
    VIEW = "view"
    MATERIALIZED_VIEW = "materialized view"
    INDEX = "index"
    SOURCE = "source"  # storage/sources: a load generator (COUNTER's data is the source itself)
    SUBSOURCE = "subsource"  # one output relation of a source (and its progress relation)

    @property
    def relkind(self) -> str:
        """pg_class.relkind (sources read like tables, as in Materialize's pg_class)."""
        return {"table": "r", "view": "v", "materialized view": "m", "index": "i", "source": "r",
                "subsource": "r"}[self.value]


@dataclass(frozen=True)
class CatalogItem:
    id: str
    oid: int
    kind: ItemKind
    database: str
    schema: str
    name: str
    columns: tuple[Column, ...]
    # The statement that created the object, as the user wrote it (SHOW CREATE, restart).
    create_sql: str
    # For views and materialized views: the defining SELECT text; the planner re-plans it.
    definition: str | None = None
    # Ids of the objects this one reads (for DROP ... CASCADE and dependency errors).
    depends_on: tuple[str, ...] = ()
    # For indexes: the indexed object's id and the key column positions in it.
    index_on: str | None = None
    index_key: tuple[int, ...] = ()
    owner: str = "slipstream"
    # For materialized views and indexes: the id of the compute cluster whose replicas compute
    # them (catalog/clusters.py); None for everything else.
    cluster_id: str | None = None
    # For views and materialized views: the definition as PostgreSQL prints it, written by the
    # planner at creation: (pretty: pg_get_viewdef(v, true), psql's \d+; plain: pg_get_viewdef(v),
    # pg_views). None: `definition` is shown as written.
    pg_definitions: tuple[str, str] | None = None

    @property
    def is_input(self) -> bool:
        """Written from outside the dataflows, at oracle timestamps, into a shard the workers
        import: tables, subsources, and a source that is itself a relation (COUNTER)."""
        return self.kind in (ItemKind.TABLE, ItemKind.SUBSOURCE) or (self.kind is ItemKind.SOURCE and bool(self.columns))

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


class CatalogReader(Protocol):
    """What the planner may ask the catalog."""

    def resolve(self, name: tuple[str, ...], search_path: tuple[str, ...] = ("public",),
                database: str = "slipstream") -> CatalogItem:
        """Look up a relation by (possibly qualified) name; raises SqlError 42P01 if absent."""

    def try_resolve(self, name: tuple[str, ...], search_path: tuple[str, ...] = ("public",),
                    database: str = "slipstream") -> CatalogItem | None:
        ...

    def get(self, id: str) -> CatalogItem:
        ...

    def items(self) -> list[CatalogItem]:
        ...

    def indexes_on(self, id: str) -> list[CatalogItem]:
        ...
