"""The registry of system relations and the little language their columns are declared in.

    @relation("pg_catalog", "pg_am", 2601, "oid oid, amname name, amhandler regproc, amtype char")
    def pg_am(snap): return [(2, "heap", 0, "t"), (403, "btree", 0, "i")]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from catalog.system.snapshot import CatalogSnapshot
from dataflow.types import (BOOL, CHAR, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, NAME, NUMERIC, OID,
                            REGCLASS, REGPROC, REGTYPE, TEXT, TIMESTAMPTZ, Column, SqlType, array_of)

# Schema OIDs: pg_catalog and public are PostgreSQL's own.
SYSTEM_SCHEMAS = {"pg_catalog": 11, "information_schema": 13182, "mz_catalog": 16001, "mz_internal": 16002}
PUBLIC_SCHEMA_OID = 2200


def schema_oid(name: str) -> int:
    return SYSTEM_SCHEMAS.get(name, PUBLIC_SCHEMA_OID)


_TYPES: dict[str, SqlType] = {
    "bool": BOOL, "int2": INT2, "int4": INT4, "int8": INT8, "float4": FLOAT4, "float8": FLOAT8,
    "numeric": NUMERIC, "text": TEXT, "name": NAME, "char": CHAR, "oid": OID, "regclass": REGCLASS,
    "regtype": REGTYPE, "regproc": REGPROC, "timestamptz": TIMESTAMPTZ, "date": DATE,
    # Kept as one-dimensional arrays: int2vector and oidvector print as `{1,2}` here, `1 2` in
    # PostgreSQL; aclitem[] as text[]; pg_node_tree as text.
    "int2[]": array_of(INT2), "oid[]": array_of(OID), "text[]": array_of(TEXT), "char[]": array_of(CHAR),
    "name[]": array_of(NAME), "int2vector": array_of(INT2), "oidvector": array_of(OID),
    "aclitem[]": array_of(TEXT), "pg_node_tree": TEXT, "xid": INT8,
}


def columns(spec: str) -> tuple[Column, ...]:
    out = []
    for part in spec.split(","):
        name, type_word = part.split()
        out.append(Column(name, _TYPES[type_word]))
    return tuple(out)


Rows = Callable[[CatalogSnapshot], Iterable[tuple]]


@dataclass(frozen=True)
class SystemRelation:
    schema: str
    name: str
    oid: int
    columns: tuple[Column, ...]
    rows: Rows
    kind: str = "r"  # pg_class.relkind: PostgreSQL's catalogs are tables, the rest are views

    @property
    def id(self) -> str:
        """A catalog id for plans and dependency lists: 's' and the OID."""
        return f"s{self.oid}"


_REGISTRY: dict[tuple[str, str], SystemRelation] = {}


def relation(schema: str, name: str, oid: int, spec: str, kind: str = "r") -> Callable[[Rows], Rows]:
    def register(fn: Rows) -> Rows:
        rel = SystemRelation(schema, name, oid, columns(spec), fn, kind)
        assert (schema, name) not in _REGISTRY and all(r.oid != oid for r in _REGISTRY.values()), name
        _REGISTRY[(schema, name)] = rel
        return fn
    return register


def empty(schema: str, name: str, oid: int, spec: str) -> None:
    """A catalog PostgreSQL has and Slipstream has nothing for (triggers, policies, ...)."""
    relation(schema, name, oid, spec)(lambda snap: ())


def lookup(name: tuple[str, ...]) -> SystemRelation | None:
    """A (schema, name) pair; None when there is no such system relation."""
    if len(name) != 2:
        return None
    return _REGISTRY.get((name[0], name[1]))


def all_relations() -> list[SystemRelation]:
    return list(_REGISTRY.values())
