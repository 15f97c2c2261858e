"""Upstream PostgreSQL column types as Slipstream types, and text values decoded column-wise.

A subsource has the upstream table's columns with the Slipstream type of each upstream type
(`column_type`): the built-in scalar types Slipstream has (and one-dimensional arrays of them)
keep their type and modifiers (numeric(p,s) with p <= 38, varchar(n), character(n)); any other
type (inet, money, enums, domains, geometric types, ...) is refused with 0A000 naming the column
and its type, unless the column is listed in the source's TEXT COLUMNS option, which ingests it as
`text` (its PostgreSQL output form), as Materialize's TEXT COLUMNS does.

Values arrive in PostgreSQL's text output form (pgoutput's 't' values; the snapshot's COPY CSV),
with the session settings of replication.SESSION_SETTINGS. `decode_columns` turns whole columns
of them into Arrow arrays and casts them with the engine's vectorised text casts (the same rules
as `'...'::type`), so no value is converted one by one in Python.

>>> column_type(1700, 655366).name
'numeric(10,2)'
>>> column_type(1043, 14).name
'character varying(10)'
>>> decode_columns([[b'1', None]], (INT4,))[0].to_pylist()
[1, None]
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from dataflow.errors import SqlError, SqlState
from dataflow.types import (
    BOOL, BYTEA, CHAR, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, INTERVAL, JSON, JSONB, NAME, NUMERIC,
    NUMERIC_MAX_PRECISION, OID, TEXT, TIME, TIMESTAMP, TIMESTAMPTZ, TIMETZ, UUID, SqlType, TypeKind,
    array_of, bpchar, numeric, varchar,
)

_SCALARS: dict[int, SqlType] = {
    16: BOOL, 21: INT2, 23: INT4, 20: INT8, 700: FLOAT4, 701: FLOAT8, 25: TEXT, 1114: TIMESTAMP,
    1184: TIMESTAMPTZ, 1082: DATE, 1083: TIME, 1266: TIMETZ, 1186: INTERVAL, 17: BYTEA, 2950: UUID,
    3802: JSONB, 114: JSON, 26: OID, 19: NAME, 18: CHAR,
}
# Modified types: numeric(p,s), varchar(n), character(n).
_MODIFIED = {1700: "numeric", 1043: "varchar", 1042: "bpchar"}
# Array type OID -> element type OID (pg_type.typelem) for the element types above.
_ARRAYS = {1000: 16, 1005: 21, 1007: 23, 1016: 20, 1021: 700, 1022: 701, 1009: 25, 1115: 1114,
           1185: 1184, 1182: 1082, 1183: 1083, 1270: 1266, 1187: 1186, 1001: 17, 2951: 2950,
           3807: 3802, 199: 114, 1028: 26, 1003: 19, 1002: 18, 1231: 1700, 1015: 1043, 1014: 1042}


class UnsupportedType(Exception):
    pass


def column_type(type_oid: int, typmod: int) -> SqlType:
    """The Slipstream type of an upstream column; UnsupportedType when there is none."""
    if type_oid in _SCALARS:
        return _SCALARS[type_oid]
    kind = _MODIFIED.get(type_oid)
    if kind == "numeric":
        if typmod < 4:
            return NUMERIC
        precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
        if precision > NUMERIC_MAX_PRECISION or scale > precision:
            raise UnsupportedType(f"numeric({precision},{scale}) (Slipstream's numeric holds 38 digits)")
        return numeric(precision, scale)
    if kind == "varchar":
        return varchar(typmod - 4 if typmod >= 4 else None)
    if kind == "bpchar":
        return bpchar(typmod - 4 if typmod >= 4 else None)
    if type_oid in _ARRAYS:
        element = column_type(_ARRAYS[type_oid], -1)
        return array_of(element)
    raise UnsupportedType("")


def subsource_type(type_oid: int, typmod: int, type_name: str, column: str, text_column: bool) -> SqlType:
    """column_type, or text for a TEXT COLUMNS column; 0A000 naming the column otherwise."""
    if text_column:
        return TEXT
    try:
        return column_type(type_oid, typmod)
    except UnsupportedType as e:
        detail = str(e) or None
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                       f'column "{column}" has unsupported type {type_name}', detail=detail,
                       hint=f"Ingest it as text: add it to the source's TEXT COLUMNS option, e.g. "
                            f"(PUBLICATION '...', TEXT COLUMNS ({column})).") from None


def decode_columns(columns: Sequence[Sequence[bytes | None]] | Sequence[pa.Array],
                   types: Sequence[SqlType]) -> list[pa.Array]:
    """Columns of text values (bytes or None, or Arrow string/binary arrays) as Arrow arrays of
    the subsource's types, each cast in one vectorised pass."""
    from dataflow.scalar import cast_array, check_fits, fit_length_array

    out: list[pa.Array] = []
    for values, t in zip(columns, types):
        if isinstance(values, (pa.Array, pa.ChunkedArray)):
            arr = values
        else:
            arr = pa.array(values, type=pa.binary())
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if arr.type != pa.string():
            arr = arr.cast(pa.string())  # checks UTF-8 once for the whole column
        if t.kind in (TypeKind.TEXT, TypeKind.NAME, TypeKind.JSON) and t.length is None:
            out.append(arr if t.kind is not TypeKind.JSON else cast_array(arr, t))
            continue
        if t.length is not None:
            values_ = cast_array(arr, SqlType(t.kind))
            check_fits(values_, t.length, t.name)
            out.append(fit_length_array(values_, t))
        else:
            out.append(cast_array(arr, t))
    return out
