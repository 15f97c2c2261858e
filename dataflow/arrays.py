"""One-dimensional arrays: PostgreSQL's text form, read and written.

An array value is kept as PostgreSQL's output text of it (Arrow `string`), e.g. `{1,2,NULL}`,
`{"a b",c}`, `{t,f}`: equal arrays have equal text, so `=`, GROUP BY, DISTINCT and joins need
nothing special (text order is not PostgreSQL's element order: ORDER BY, `<` and min/max go
through `dataflow.sort_keys`).
Inside Python an array is a list of element values (the element type's Python form, None for
NULL); `read` turns text into that list through the element type's text input, `write` back.

>>> from dataflow.types import INT4, TEXT
>>> write(read('{1, 2,NULL}', INT4), INT4), write(['a b', '', None, 'x"y', 'NULL'], TEXT)
('{1,2,NULL}', '{"a b","",NULL,"x\\\\"y","NULL"}')
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

from dataflow.errors import SqlError, SqlState
from dataflow.types import SqlType, TypeKind


def malformed(text: str, detail: str) -> SqlError:
    return SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"', detail=detail)


def split(text: str) -> list[str | None]:
    """The element texts of a one-dimensional array literal (None for an unquoted NULL)."""
    s = text.strip()
    if s.startswith("["):  # explicit bounds '[1:2]={...}': the bounds are dropped
        eq = s.find("=")
        if eq < 0:
            raise malformed(text, 'Array value must start with "{" or dimension information.')
        s = s[eq + 1:].strip()
    if not s.startswith("{"):
        raise malformed(text, 'Array value must start with "{" or dimension information.')
    if not s.endswith("}"):
        raise malformed(text, "Unexpectedly found end of input.")
    body = s[1:-1]
    out: list[str | None] = []
    if not body.strip():
        return out
    if not any(c in body for c in '"\\{}'):
        # Nothing quoted or escaped (a list of numbers, thousands of ids): one split, the same
        # elements and the same refusal of an empty one as the scan below.
        items = [x.strip() for x in body.split(",")]
        if all(items):
            return [None if x.upper() == "NULL" else x for x in items]
    i, n = 0, len(body)
    while True:
        while i < n and body[i].isspace():
            i += 1
        if i < n and body[i] == "{":
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
        if i < n and body[i] == '"':
            i += 1
            buf = []
            while i < n and body[i] != '"':
                if body[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(body[i])
                i += 1
            if i >= n:
                raise malformed(text, "Unexpected end of input.")
            i += 1
            out.append("".join(buf))
            while i < n and body[i].isspace():
                i += 1
        else:
            buf = []
            while i < n and body[i] != ",":
                if body[i] == "\\" and i + 1 < n:
                    i += 1
                elif body[i] in '{}"':
                    raise malformed(text, f'Unexpected "{body[i]}" character.')
                buf.append(body[i])
                i += 1
            item = "".join(buf).strip()
            if not item:
                raise malformed(text, "Unexpected \",\" character." if i < n else "Unexpected \"}\" character.")
            out.append(None if item.upper() == "NULL" else item)
        if i >= n:
            break
        if body[i] != ",":
            raise malformed(text, f'Unexpected "{body[i]}" character.')
        i += 1
    return out


def read(text: str, element: SqlType, cast: Callable[[str, SqlType], Any] | None = None) -> list[Any]:
    """Element values of `text` as values of `element` (PostgreSQL's element input rules)."""
    if cast is None and element.kind in _INT_BOUNDS:
        plain = plain_ints(text, element.kind)
        if plain is not None:
            return list(plain)
        ints = _read_ints(split(text), element)
        if ints is not None:
            return ints
    if cast is None:
        from planner.casts import cast_value  # the same text input as everywhere
        from dataflow.types import TEXT
        cast = lambda v, t: cast_value(v, TEXT, t)  # noqa: E731
    return [None if x is None else cast(x, element) for x in split(text)]


_INT_BOUNDS = {TypeKind.INT2: 2 ** 15, TypeKind.INT4: 2 ** 31, TypeKind.INT8: 2 ** 63}
# Arrays up to this long (text) are parsed once for all their readers (`plain_ints`).
_MEMO_MAX_CHARS = 1 << 20


def plain_ints(text: str, kind: TypeKind) -> tuple[int, ...] | None:
    """The elements of an integer array written plainly (`{1,-2,3}`: no quotes, spaces or
    NULLs), within the bounds of `kind` (INT2, INT4 or INT8); None for any other text.

    A DELETE's `id = ANY($1)` with 5,000 ids is read by several steps of one statement (the
    plan cache, the index lookup, the fast-path peek): parsing 5,000 ints costs ~0.8 ms, so
    arrays of up to a megabyte of text are parsed once (a small memo of recent texts).

    >>> plain_ints('{1,-2,3}', TypeKind.INT4), plain_ints('{1, 2}', TypeKind.INT4), plain_ints('{40000}', TypeKind.INT2)
    ((1, -2, 3), None, None)
    """
    if len(text) <= _MEMO_MAX_CHARS:
        return _plain_ints_memo(text, kind)
    return _plain_ints(text, kind)


def _plain_ints(text: str, kind: TypeKind) -> tuple[int, ...] | None:
    if not _PLAIN_INTS.fullmatch(text):
        return None
    ints = tuple(map(int, text[1:-1].split(","))) if len(text) > 2 else ()
    bound = _INT_BOUNDS[kind]
    return ints if not ints or (-bound <= min(ints) and max(ints) < bound) else None


_plain_ints_memo = functools.lru_cache(maxsize=8)(_plain_ints)
_PLAIN_INT = re.compile(r"[+-]?[0-9]+")
_PLAIN_INTS = re.compile(r"\{(?:[+-]?[0-9]+(?:,[+-]?[0-9]+)*)?\}")


def _read_ints(items: list[str | None], element: SqlType) -> list[int | None] | None:
    """Integer elements read without the general cast, or None when one is not a plain
    in-range integer (the general cast then reads them all and refuses it in its own words)."""
    bound = _INT_BOUNDS[element.kind]
    out: list[int | None] = []
    for x in items:
        if x is None:
            out.append(None)
            continue
        if _PLAIN_INT.fullmatch(x) is None:
            return None
        v = int(x)
        if not -bound <= v < bound:
            return None
        out.append(v)
    return out


def _needs_quotes(s: str) -> bool:
    return s == "" or s.upper() == "NULL" or any(c in s for c in '{},"\\') or any(c.isspace() for c in s)


def element_text(value: Any, element: SqlType) -> str:
    if element.kind is TypeKind.BOOL:
        return "t" if value else "f"
    from planner.casts import text_of
    return text_of(value, element)


def write(values: list[Any], element: SqlType) -> str:
    if element.kind in _INT_BOUNDS and all(v is None or type(v) is int for v in values):
        return "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"
    parts = []
    for v in values:
        if v is None:
            parts.append("NULL")
            continue
        s = element_text(v, element)
        if _needs_quotes(s):
            s = '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(s)
    return "{" + ",".join(parts) + "}"


def canonical(text: str, element: SqlType) -> str:
    return write(read(text, element), element)
