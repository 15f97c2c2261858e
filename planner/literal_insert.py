"""`INSERT INTO t [(columns)] VALUES (...), (...)` of plain literals, without the general parser.

A bulk INSERT of literal rows (TPC-H's refresh functions insert ~7,500 rows in one statement)
spent ~0.3 ms per row in sqlglot's tokenizer and parser and in lowering every value to a typed
constant. A statement that is only literal rows is recognised with regular expressions instead
(`scan`), and each column's values become Arrow arrays by the same text-input rules COPY uses
(`dataflow.scalar.cast_text_columns`), when that gives PostgreSQL's answer for a literal stored
in that column:

* a quoted string (an unknown-typed literal: PostgreSQL reads it with the column type's input
  function) into any column;
* an integer into an integer, numeric or float column, a number with a decimal point into a
  numeric or float column (PostgreSQL's assignment casts give what its input functions read
  from the same digits, but for the sign of zero: `-0.0` is numeric zero, stored as 0);
* `NULL` into any column, `TRUE`/`FALSE` into a boolean one.

Anything else (expressions, casts, `E'...'` strings, exponents, `DEFAULT`, a column list that
leaves columns to their defaults, a number into a text column, `RETURNING`, ...) is planned by
the general path, which also reports the errors of statements that are not well formed.

Example:

    >>> s = scan("INSERT INTO li VALUES (1, 'a''b', 2.50), (2, NULL, -3)")
    >>> s.table, s.columns, s.values
    (('li',), None, (('1', '2'), ("'a''b'", 'NULL'), ('2.50', '-3')))
"""

from __future__ import annotations

import re

import pyarrow as pa

from dataflow.scalar import cast_text_columns
from dataflow.types import SqlType, TypeKind
from planner import mz_ast
from planner.pg_keywords import NON_UNRESERVED_KEYWORDS

_IDENT = r"[a-z_][a-z0-9_$]*"
_HEAD = re.compile(rf"\s*insert\s+into\s+({_IDENT}(?:\s*\.\s*{_IDENT}){{0,2}})\s*"
                   rf"(?:\(\s*({_IDENT}(?:\s*,\s*{_IDENT})*)\s*\)\s*)?values\s*", re.I)
_VALUE = r"(?:'(?:[^']|'')*'|-?(?:\d+(?:\.\d*)?|\.\d+)(?![\w.])|(?:null|true|false)\b)"
_ROW = rf"\(\s*{_VALUE}(?:\s*,\s*{_VALUE})*\s*\)"
_BODY = re.compile(rf"{_ROW}(?:\s*,\s*{_ROW})*\s*;?\s*", re.I)
_ROWS = re.compile(_ROW, re.I)
_VALUES = re.compile(_VALUE, re.I)
_DIGITS = re.compile(r"-?\d+")

_INTEGERS = {TypeKind.INT2, TypeKind.INT4, TypeKind.INT8}
_NUMBERS = _INTEGERS | {TypeKind.NUMERIC, TypeKind.FLOAT4, TypeKind.FLOAT8}


def scan(sql: str) -> mz_ast.LiteralInsert | None:
    """The statement as literal rows, or None when it is anything else (or not well formed)."""
    head = _HEAD.match(sql)
    if head is None or _BODY.fullmatch(sql, head.end()) is None:
        return None
    rows = [_VALUES.findall(r) for r in _ROWS.findall(sql, head.end())]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        return None
    flat = [v for r in rows for v in r]
    table = tuple(p.strip().lower() for p in head.group(1).split("."))
    columns = None if head.group(2) is None else tuple(c.strip().lower() for c in head.group(2).split(","))
    if any(word in NON_UNRESERVED_KEYWORDS for word in table + (columns or ())):
        return None  # (`INSERT INTO t (select) ...` is PostgreSQL's syntax error, not a column)
    return mz_ast.LiteralInsert(table, columns, tuple(tuple(flat[i::width]) for i in range(width)))


def column_arrays(values: tuple[tuple[str, ...], ...], types: list[SqlType]) -> list[pa.Array] | None:
    """Each column's literals as the column's values, in the rules above; None when a literal
    is one the general path must type (see the module's docstring)."""
    strings: list[pa.Array] = []
    for literals, t in zip(values, types):
        texts: list[str | None] = []
        for v in literals:
            first = v[0]
            if first == "'":
                texts.append(v[1:-1].replace("''", "'"))
            elif first in "nN":
                texts.append(None)
            elif first in "tTfF":
                if t.kind is not TypeKind.BOOL:
                    return None
                texts.append(v)
            else:
                if t.kind not in _NUMBERS or (t.kind in _INTEGERS and not _DIGITS.fullmatch(v)):
                    return None
                if first == "-" and not v.strip("-0."):
                    v = v[1:]  # (a number is negated as an integer or numeric: no negative zero)
                texts.append(v)
        strings.append(pa.array(texts, pa.string()))
    return cast_text_columns(strings, types)
