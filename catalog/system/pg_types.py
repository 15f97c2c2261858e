"""The rows of pg_type: every type Slipstream has, with PostgreSQL's OIDs and attributes.

Each scalar type has its array type (typcategory 'A', typelem the element, typinput array_in).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from dataflow.types import ARRAY_OIDS, SqlType, TypeKind


@dataclass(frozen=True)
class TypeRow:
    oid: int
    name: str
    length: int
    byval: bool
    category: str
    preferred: bool
    io: str  # the stem of its I/O functions: int4 -> int4in, int4out, int4recv, int4send
    align: str
    array_oid: int = 0
    elem: int = 0
    typtype: str = "b"
    collation: int = 0
    kind: TypeKind | None = None


_D = 100  # the default collation, for the string types

SCALARS = [
    TypeRow(16, "bool", 1, True, "B", True, "bool", "c", kind=TypeKind.BOOL),
    TypeRow(17, "bytea", -1, False, "U", False, "bytea", "i", kind=TypeKind.BYTEA),
    TypeRow(18, "char", 1, True, "Z", False, "char", "c", kind=TypeKind.CHAR),
    TypeRow(19, "name", 64, False, "S", False, "name", "c", elem=18, collation=950, kind=TypeKind.NAME),
    TypeRow(20, "int8", 8, True, "N", False, "int8", "d", kind=TypeKind.INT8),
    TypeRow(21, "int2", 2, True, "N", False, "int2", "s", kind=TypeKind.INT2),
    TypeRow(22, "int2vector", -1, False, "A", False, "int2vector", "i", elem=21),
    TypeRow(23, "int4", 4, True, "N", False, "int4", "i", kind=TypeKind.INT4),
    TypeRow(24, "regproc", 4, True, "N", False, "regproc", "i", kind=TypeKind.REGPROC),
    TypeRow(25, "text", -1, False, "S", True, "text", "i", collation=_D, kind=TypeKind.TEXT),
    TypeRow(26, "oid", 4, True, "N", True, "oid", "i", kind=TypeKind.OID),
    TypeRow(30, "oidvector", -1, False, "A", False, "oidvector", "i", elem=26),
    TypeRow(114, "json", -1, False, "U", False, "json_", "i", kind=TypeKind.JSON),
    TypeRow(194, "pg_node_tree", -1, False, "Z", False, "pg_node_tree_", "i", collation=_D),
    TypeRow(700, "float4", 4, True, "N", False, "float4", "i", kind=TypeKind.FLOAT4),
    TypeRow(701, "float8", 8, True, "N", True, "float8", "d", kind=TypeKind.FLOAT8),
    TypeRow(705, "unknown", -2, False, "X", False, "unknown", "c", typtype="p"),
    TypeRow(1042, "bpchar", -1, False, "S", False, "bpchar", "i", collation=_D, kind=TypeKind.BPCHAR),
    TypeRow(1043, "varchar", -1, False, "S", False, "varchar", "i", collation=_D, kind=TypeKind.VARCHAR),
    TypeRow(1082, "date", 4, True, "D", False, "date_", "i", kind=TypeKind.DATE),
    TypeRow(1083, "time", 8, True, "D", False, "time_", "d", kind=TypeKind.TIME),
    TypeRow(1266, "timetz", 12, False, "D", False, "timetz_", "d", kind=TypeKind.TIMETZ),
    TypeRow(1114, "timestamp", 8, True, "D", False, "timestamp_", "d", kind=TypeKind.TIMESTAMP),
    TypeRow(1184, "timestamptz", 8, True, "D", True, "timestamptz_", "d", kind=TypeKind.TIMESTAMPTZ),
    TypeRow(1186, "interval", 16, False, "T", True, "interval_", "d", kind=TypeKind.INTERVAL),
    TypeRow(1700, "numeric", -1, False, "N", False, "numeric_", "i", kind=TypeKind.NUMERIC),
    TypeRow(2205, "regclass", 4, True, "N", False, "regclass", "i", kind=TypeKind.REGCLASS),
    TypeRow(2206, "regtype", 4, True, "N", False, "regtype", "i", kind=TypeKind.REGTYPE),
    TypeRow(2249, "record", -1, False, "P", False, "record_", "d", typtype="p"),
    TypeRow(2276, "any", 4, True, "P", False, "any_", "i", typtype="p"),
    TypeRow(2277, "anyarray", -1, False, "P", False, "anyarray_", "d", typtype="p"),
    TypeRow(2278, "void", 4, True, "P", False, "void_", "i", typtype="p"),
    TypeRow(2283, "anyelement", 4, True, "P", False, "anyelement_", "i", typtype="p"),
    TypeRow(2275, "cstring", -2, False, "P", False, "cstring_", "c", typtype="p"),
    TypeRow(2279, "trigger", 4, True, "P", False, "trigger_", "i", typtype="p"),
    TypeRow(2280, "language_handler", 4, True, "P", False, "language_handler_", "i", typtype="p"),
    TypeRow(2281, "internal", 8, True, "P", False, "internal_", "d", typtype="p"),
    TypeRow(2776, "anynonarray", 4, True, "P", False, "anynonarray_", "i", typtype="p"),
    TypeRow(3838, "event_trigger", 4, True, "P", False, "event_trigger_", "i", typtype="p"),
    TypeRow(4089, "regnamespace", 4, True, "N", False, "regnamespace", "i", kind=TypeKind.REGNAMESPACE),
    TypeRow(4096, "regrole", 4, True, "N", False, "regrole", "i", kind=TypeKind.REGROLE),
    TypeRow(27, "tid", 6, False, "U", False, "tid", "s"),
    TypeRow(28, "xid", 4, True, "U", False, "xid", "i"),
    TypeRow(29, "cid", 4, True, "U", False, "cid", "i"),
    TypeRow(2950, "uuid", 16, False, "U", False, "uuid_", "c", kind=TypeKind.UUID),
    TypeRow(3802, "jsonb", -1, False, "U", False, "jsonb_", "i", kind=TypeKind.JSONB),
]

_ARRAY_OID_OF = {r.oid: ARRAY_OIDS[r.kind] for r in SCALARS if r.kind in ARRAY_OIDS}
_ARRAY_OID_OF[22] = 1006
_ARRAY_OID_OF[30] = 1013


def _array_row(elem: TypeRow) -> TypeRow:
    return TypeRow(_ARRAY_OID_OF[elem.oid], "_" + elem.name, -1, False, "A", False, "array_",
                   "d" if elem.align == "d" else "i", elem=elem.oid, collation=elem.collation)


@functools.cache
def all_types() -> tuple[TypeRow, ...]:
    """Every type's row (fixed for the life of the process, so computed once)."""
    rows = [TypeRow(**{**r.__dict__, "array_oid": _ARRAY_OID_OF.get(r.oid, 0)}) for r in SCALARS]
    rows += [_array_row(r) for r in SCALARS if r.oid in _ARRAY_OID_OF]
    return tuple(rows)


def io_functions(row: TypeRow) -> tuple[str, str, str, str]:
    """typinput, typoutput, typreceive, typsend."""
    stem = row.io
    return stem + "in", stem + "out", stem + "recv", stem + "send"


@functools.cache
def type_names() -> dict[int, str]:
    """oid -> the name regtype and format_type print: `integer`, `character varying`, `text[]`."""
    out: dict[int, str] = {}
    for r in all_types():
        if r.kind is not None:
            out[r.oid] = SqlType(r.kind).name
        elif r.elem and r.category == "A" and r.name.startswith("_"):
            base = out.get(r.elem)
            out[r.oid] = (base or r.name[1:]) + "[]"
        else:
            out[r.oid] = r.name
    for r in all_types():  # arrays of the named scalars
        if r.category == "A" and r.elem in out and r.name.startswith("_"):
            out[r.oid] = out[r.elem] + "[]"
    return out


@functools.cache
def _typnames() -> dict[int, str]:
    return {r.oid: r.name for r in all_types()}


def typname_of(oid: int) -> str | None:
    """pg_type.typname of a type OID (int4, _text, ...)."""
    return _typnames().get(oid)
