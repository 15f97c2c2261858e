"""Object identifiers: the oid type and the reg* types that print as names.

An oid is an unsigned 32-bit number, kept as int64. `regclass`, `regtype` and `regproc` are
oids whose text form is a name: `'pg_class'::regclass` is 1259 and `1259::regclass::text` is
`pg_class`. Turning names into oids and back needs the catalog, so the planner does it
(planner/catalog_casts.py) and hands the engine the mapping it needs as a constant:

>>> oids_to_names('[[1259, "pg_class"], [23, "integer"]]', pa.array([1259, 7, None])).to_pylist()
['pg_class', '7', None]
"""

from __future__ import annotations

import json
from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState
from dataflow.types import SqlType

MAX_OID = 2 ** 32 - 1
NAMEDATALEN = 64  # PostgreSQL's identifiers keep at most 63 bytes


def truncate_name(s: str) -> str:
    """A string as a value of type name: cut to 63 bytes (on a character boundary)."""
    b = s.encode()
    if len(b) < NAMEDATALEN:
        return s
    return b[:NAMEDATALEN - 1].decode(errors="ignore")


def _out_of_range() -> SqlError:
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range")


def parse_oid(text: str, t: SqlType) -> int:
    """oidin: a decimal number; negative 32-bit values wrap around as in PostgreSQL."""
    try:
        v = int(text.strip(), 10)
    except ValueError:
        raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION,
                       f'invalid input syntax for type {t.name}: "{text}"') from None
    return oid_of_int(v, None)


def oid_of_int(v: int, src: SqlType | None) -> int:
    if -(2 ** 31) <= v < 0:
        return v + 2 ** 32
    if not 0 <= v <= MAX_OID:
        raise _out_of_range()
    return v


def int_of_oid(v: int, dst: SqlType) -> int:
    """oid -> integer wraps the upper half to negative numbers; -> bigint keeps the value."""
    if dst.name == "integer" and v > 2 ** 31 - 1:
        return v - 2 ** 32
    return v


def oid_array(arr: pa.Array) -> pa.Array:
    """Integers as oids (int64): negative int4 values wrap, others outside 0..2^32-1 are 22003."""
    wide = arr.cast(pa.int64())
    neg = pc.less(wide, 0)
    if pc.any(pc.or_(pc.less(wide, -(2 ** 31)), pc.greater(wide, MAX_OID))).as_py():
        raise _out_of_range()
    if pc.any(neg).as_py():
        wide = pc.if_else(neg, pc.add(wide, 2 ** 32), wide)
    return wide


def oids_to_names(mapping: str, arr: pa.Array) -> pa.Array:
    """Oids -> names with a mapping (JSON of [oid, name] pairs); an oid with no object prints as
    its number, as regclassout does."""
    keys, values = _oid_arrays(mapping)
    idx = pc.index_in(arr.cast(pa.int64()), keys)
    return pc.if_else(pc.is_null(idx), arr.cast(pa.string()), values.take(idx))


@lru_cache(maxsize=64)
def _oid_arrays(mapping: str) -> tuple[pa.Array, pa.Array]:
    items = json.loads(mapping)
    return pa.array([k for k, _ in items], pa.int64()), pa.array([v for _, v in items], pa.string())


def names_to_oids(mapping: str, arr: pa.Array, type_name: str, missing: SqlError | None) -> pa.Array:
    """Names -> oids with a mapping (JSON of [name, oid] pairs); numeric text is an oid as
    such. A name not found raises `missing` (or gives NULL when `missing` is None: to_regclass)."""
    pairs = _pairs(mapping)
    keys = pa.array([k for k, _ in pairs], pa.string())
    vals = pa.array([v for _, v in pairs], pa.int64())
    stripped = pc.utf8_trim_whitespace(arr)
    idx = pc.index_in(stripped, keys)
    out = vals.take(idx)
    numeric = pc.match_substring_regex(stripped, r"^[0-9]+$")
    if pc.any(numeric).as_py():
        out = pc.if_else(pc.fill_null(numeric, False), stripped.cast(pa.int64(), safe=False), out)
    lost = pc.and_(arr.is_valid(), pc.is_null(out))
    if missing is not None and pc.any(lost).as_py():
        bad = arr.filter(lost)[0].as_py()
        raise SqlError(missing.sqlstate, missing.message.replace("{}", bad), hint=missing.hint)
    return out


@lru_cache(maxsize=64)
def _pairs(text: str) -> tuple[tuple[str, int], ...]:
    return tuple((k, int(v)) for k, v in json.loads(text))


def missing_error(kind: str) -> SqlError:
    """The error for a name that names nothing ("{}" stands for the name)."""
    if kind == "regclass":
        return SqlError(SqlState.UNDEFINED_TABLE, 'relation "{}" does not exist')
    if kind == "regtype":
        return SqlError(SqlState.UNDEFINED_OBJECT, 'type "{}" does not exist')
    if kind == "regnamespace":
        return SqlError("3F000", 'schema "{}" does not exist')
    if kind == "regrole":
        return SqlError(SqlState.UNDEFINED_OBJECT, 'role "{}" does not exist')
    return SqlError(SqlState.UNDEFINED_FUNCTION, 'function "{}" does not exist')


@lru_cache(maxsize=64)
def lookup_arrays(mapping: str) -> tuple[pa.Array, pa.Array]:
    """A JSON list of [oid, text] pairs as two aligned arrays (keys int64, values string)."""
    return _oid_arrays(mapping)


@lru_cache(maxsize=64)
def oid_set(members: str) -> pa.Array:
    return pa.array(json.loads(members), pa.int64())
