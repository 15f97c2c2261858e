"""json and jsonb values: parsing, PostgreSQL's canonical jsonb text, and SQL values as JSON.

A jsonb value is kept as PostgreSQL's output text of it (Arrow `string`): object keys sorted by
length then bytes, the last of duplicate keys kept, `", "` and `": "` between items, numbers as
numeric prints them. Equal documents therefore have equal text, so `=`, GROUP BY, DISTINCT
and joins need nothing special. A json value is its input text, checked.

Inside Python a document is dict / list / str / Decimal / bool / None (JSON null).

>>> canonical(parse('{"b": 1, "a": [1.50, true, null], "aa": {"x": "y\\\\n"}, "b": 1e2}'))
'{"a": [1.50, true, null], "b": 100, "aa": {"x": "y\\\\n"}}'
"""

from __future__ import annotations

import datetime as dt
import re
import json
from decimal import Decimal
from typing import Any

from dataflow.errors import SqlError, SqlState


def bad_json(text: str, kind: str = "json", detail: str | None = None) -> SqlError:
    return SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f"invalid input syntax for type {kind}",
                    detail=detail or f'Token "{text[:40]}" is invalid.')


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _pairs(items: list[tuple[str, Any]]) -> dict:
    return dict(items)  # the last of duplicate keys wins, as in jsonb


def parse(text: str, kind: str = "jsonb") -> Any:
    try:
        return json.loads(text, parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant,
                          object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        raise bad_json(text.strip(), kind) from None


def _key_order(k: str) -> tuple[int, bytes]:
    b = k.encode()
    return len(b), b


def _number(d: Decimal) -> str:
    if d.is_zero():
        d = d.copy_abs()
    return format(d, "f")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote(s: str) -> str:
    out = ['"']
    for ch in s:
        e = _ESCAPES.get(ch)
        if e is not None:
            out.append(e)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(v: Any) -> str:
    """PostgreSQL's jsonb output text."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Decimal):
        return _number(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _number(Decimal(repr(v)))
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, list):
        return "[" + ", ".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{quote(k)}: {canonical(v[k])}" for k in sorted(v, key=_key_order)) + "}"
    raise TypeError(v)


def normalize(text: str) -> str:
    """A jsonb input text as its canonical text."""
    return canonical(parse(text))


def check_json(text: str) -> str:
    """A json input text, checked and kept as written."""
    parse(text, "json")
    return text


def typeof(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (Decimal, int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def as_text(v: Any) -> str | None:
    """The ->> form of a value: strings unquoted, JSON null as SQL NULL, the rest as jsonb text."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return canonical(v)


def from_sql(value: Any) -> Any:
    """A SQL value (Python form) as a JSON value, as to_jsonb does: numbers stay numbers,
    timestamps become ISO 8601 strings, jsonb text is parsed by the caller."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return Decimal(repr(value))
    if isinstance(value, Decimal):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.isoformat()
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def path_elements(text: str) -> list[str]:
    """A text[] literal used as a path (`'{a,0,"b c"}'`) as its elements."""
    s = text.strip()
    if not (s.startswith("{") and s.endswith("}")):
        raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"',
                       detail='Array value must start with "{" or dimension information.')
    body = s[1:-1]
    out, cur, quoted, i, had = [], [], False, 0, False
    while i < len(body):
        ch = body[i]
        if quoted:
            if ch == "\\" and i + 1 < len(body):
                cur.append(body[i + 1])
                i += 1
            elif ch == '"':
                quoted = False
            else:
                cur.append(ch)
        elif ch == '"':
            quoted, had = True, True
        elif ch == ",":
            out.append("".join(cur).strip() if not had else "".join(cur))
            cur, had = [], False
        else:
            cur.append(ch)
        i += 1
    if body.strip() or had:
        out.append("".join(cur).strip() if not had else "".join(cur))
    return out


def get_path(v: Any, path: list[str]) -> tuple[bool, Any]:
    """(found, value) of #> : keys for objects, integers (negative from the end) for arrays."""
    for p in path:
        if isinstance(v, dict):
            if p not in v:
                return False, None
            v = v[p]
        elif isinstance(v, list):
            try:
                i = int(p)
            except ValueError:
                return False, None
            if i < 0:
                i += len(v)
            if not 0 <= i < len(v):
                return False, None
            v = v[i]
        else:
            return False, None
    return True, v


def contains(a: Any, b: Any, top: bool = True) -> bool:
    """a @> b, PostgreSQL's jsonb containment (a scalar array contains its scalar at top level)."""
    if isinstance(b, dict):
        return isinstance(a, dict) and all(k in a and contains(a[k], bv, False) for k, bv in b.items())
    if isinstance(b, list):
        if not isinstance(a, list):
            return False
        return all(any(contains(x, y, False) for x in a) for y in b)
    if isinstance(a, list) and top:
        return any(_scalar_equal(x, b) for x in a)
    return _scalar_equal(a, b)


def _scalar_equal(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    return type(a) is type(b) and a == b if not isinstance(a, Decimal) else isinstance(b, Decimal) and a == b


def strip_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: strip_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [strip_nulls(x) for x in v]
    return v


def pretty(v: Any, indent: int = 0) -> str:
    """jsonb_pretty: four spaces per level, as PostgreSQL prints."""
    pad = "    " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{\n" + "    " * indent + "}"
        items = [f"{pad}{quote(k)}: {pretty(v[k], indent + 1)}" for k in sorted(v, key=_key_order)]
        return "{\n" + ",\n".join(items) + "\n" + "    " * indent + "}"
    if isinstance(v, list):
        if not v:
            return "[\n" + "    " * indent + "]"
        return "[\n" + ",\n".join(pad + pretty(x, indent + 1) for x in v) + "\n" + "    " * indent + "]"
    return canonical(v)


# ---- members of an object, as written (json_each, jsonb_each) ------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant)


def top_kind(text: str) -> str:
    """'object', 'array' or 'scalar': the kind of a (checked) JSON text's top-level value."""
    i = _WS.match(text).end()
    c = text[i:i + 1]
    return "object" if c == "{" else "array" if c == "[" else "scalar"


def members(text: str) -> list[tuple[str, str]]:
    """The (key, value text) pairs of a checked JSON object text, in written order, duplicates
    kept, each value's text exactly as written (the C scanner finds where each value ends). For
    jsonb's canonical text these are its unique keys in jsonb order and each value's canonical
    text; for json, PostgreSQL's json_each answer."""
    i = _WS.match(text, _WS.match(text).end() + 1).end()  # past "{"
    out: list[tuple[str, str]] = []
    if text[i] == "}":
        return out
    while True:
        key, i = json.decoder.scanstring(text, i + 1)
        i = _WS.match(text, i).end() + 1  # past ":"
        i = _WS.match(text, i).end()
        _, end = _DECODER.raw_decode(text, i)
        out.append((key, text[i:end]))
        i = _WS.match(text, end).end()
        if text[i] == "}":
            return out
        i = _WS.match(text, i + 1).end()  # past ","


def value_text(raw: str) -> str | None:
    """A JSON value's text as the `_text` functions give it (->>): a string unescaped, null as
    SQL NULL, anything else as written."""
    if raw == "null":
        return None
    if raw[:1] != '"':
        return raw
    s = json.loads(raw)
    if "\x00" in s:
        raise SqlError("22P05", "unsupported Unicode escape sequence", detail="\\u0000 cannot be converted to text.")
    return s
