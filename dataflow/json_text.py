"""SQL values as PostgreSQL's `json` text (datum_to_json): what json_build_object,
json_build_array, to_json, json_agg and json_object_agg write.

json keeps text as written, unlike jsonb: numbers keep their scale (`1.50`), floats their
output form (`1e+20`), nested json its spacing; arrays are `[1,2]` without spaces while
json_build_array separates with `, ` and objects write `"k" : v`.

>>> import pyarrow as pa
>>> from dataflow.types import INT4, TEXT, array_of
>>> json_texts(pa.array([1, None]), INT4)
['1', None]
>>> json_texts(pa.array(['a"b']), TEXT)
['"a\\\\"b"']
>>> json_texts(pa.array(['{1,NULL}']), array_of(INT4))
['[1,null]']
"""

from __future__ import annotations

import re
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState
from dataflow.jsonb import quote
from dataflow.types import TEXT, SqlType, TypeKind

_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})
_SHORT_OFFSET = re.compile(r"([+-]\d\d)$")


def _number(text: str) -> str:
    return quote(text) if text in _NON_FINITE else text


def _timestamp(text: str) -> str:
    return quote(text.replace(" ", "T", 1))


def _timestamptz(text: str) -> str:
    # ISO 8601 as PostgreSQL writes it in json: 2020-01-01T08:00:00+00:00
    return quote(_SHORT_OFFSET.sub(r"\1:00", text.replace(" ", "T", 1)))


def _bool(text: str) -> str:
    return "true" if text in ("t", "true") else "false"


def _verbatim(text: str) -> str:
    return text


def _converter(t: SqlType) -> Callable[[str], str]:
    """How the text output of a value of type t becomes its json text."""
    k = t.kind
    if t.is_integer or k in (TypeKind.NUMERIC, TypeKind.FLOAT4, TypeKind.FLOAT8):
        return _number
    if k is TypeKind.BOOL:
        return _bool
    if k in (TypeKind.JSON, TypeKind.JSONB):
        return _verbatim
    if k is TypeKind.TIMESTAMP:
        return _timestamp
    if k is TypeKind.TIMESTAMPTZ:
        return _timestamptz
    if k is TypeKind.ARRAY:
        element = _converter(t.element)

        def array(text: str) -> str:
            from dataflow.arrays import split
            return "[" + ",".join("null" if x is None else element(x) for x in split(text)) + "]"
        return array
    return quote


def _text_output(a: pa.Array, t: SqlType) -> pa.Array:
    from dataflow.scalar import _unconstrained_numeric_text, cast_array
    if t.kind is TypeKind.NUMERIC and t.scale is None:
        return _unconstrained_numeric_text(a)
    if t.kind in (TypeKind.JSON, TypeKind.JSONB, TypeKind.ARRAY) or pa.types.is_string(a.type):
        return a.cast(pa.string())
    return cast_array(a, TEXT)


def json_texts(a: pa.Array | pa.ChunkedArray, t: SqlType) -> list[str | None]:
    """Each value's json text; None for SQL NULL. One Python call per distinct value."""
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if pa.types.is_null(a.type) or t.kind is TypeKind.UNKNOWN:
        a = a.cast(pa.string())
    texts = _text_output(a, t)
    uniq = pc.unique(texts)
    conv = _converter(t)
    out = pa.array([None if v is None else conv(v) for v in uniq.to_pylist()], pa.string())
    return out.take(pc.index_in(texts, uniq)).to_pylist()


def key_texts(a: pa.Array | pa.ChunkedArray, t: SqlType) -> list[str | None]:
    """Object keys: a scalar's json text, quoted when it is not a string already."""
    if t.kind in (TypeKind.ARRAY, TypeKind.JSON, TypeKind.JSONB):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "key value must be scalar, not array, composite, or json")
    return [None if k is None else (k if k.startswith('"') else quote(k)) for k in json_texts(a, t)]
