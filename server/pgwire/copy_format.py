"""COPY ... TO STDOUT row formatting: PostgreSQL's text format and CSV.

Text format: tab-separated, `\\N` for NULL, backslash escapes for backslash, tab, newline,
carriage return, backspace, form feed and vertical tab. CSV: comma-separated, NULL as an
unquoted empty field, quoting (with doubled quotes) for fields that contain the delimiter, a
quote, CR or LF, for the empty string, and for the end-of-data marker `\\.`.

>>> fmt = CopyFormatter([Column("a", INT4), Column("b", TEXT)], "text")
>>> fmt.row((1, "x\\ty")), fmt.row((None, None))
(b'1\\tx\\\\ty\\n', b'\\\\N\\t\\\\N\\n')
>>> CopyFormatter([Column("a", INT4), Column("b", TEXT)], "csv").row((1, "x,y"))
b'1,"x,y"\\n'
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from dataflow.types import INT4, TEXT, Column  # noqa: F401 - INT4, TEXT: the doctest
from server.pgwire.codec import CodecContext, text_encoder

_TEXT_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r",
                               "\b": "\\b", "\f": "\\f", "\v": "\\v"})
_CSV_SPECIAL = (",", '"', "\n", "\r")


def _csv_field(s: str) -> str:
    if s == "" or s == "\\." or any(c in s for c in _CSV_SPECIAL):
        return '"' + s.replace('"', '""') + '"'
    return s


def _needs_escaping(col: Column) -> bool:
    """Numbers, booleans and datetimes never contain characters that need escaping."""
    return col.type.is_text or col.type.oid not in (16, 20, 21, 23, 700, 701, 1700, 1082, 1114, 1184)


class CopyFormatter:
    """Formats rows (tuples of Python values) as COPY lines, with the encoders chosen once."""

    def __init__(self, columns: Sequence[Column], fmt: str = "text",
                 ctx: CodecContext = CodecContext()) -> None:
        if fmt not in ("text", "csv"):
            raise ValueError(f"unsupported COPY format {fmt!r}")
        self.csv = fmt == "csv"
        self.columns = list(columns)
        self._fields: list[Callable[[Any], str]] = []
        for col in self.columns:
            enc = text_encoder(col.type, ctx)
            if self.csv:
                self._fields.append(lambda v, enc=enc: _csv_field(enc(v).decode()))
            elif _needs_escaping(col):
                self._fields.append(lambda v, enc=enc: enc(v).decode().translate(_TEXT_ESCAPES))
            else:
                self._fields.append(lambda v, enc=enc: enc(v).decode())
        self._null = "" if self.csv else "\\N"
        self._sep = "," if self.csv else "\t"

    def header(self) -> bytes:
        names = [_csv_field(c.name) if self.csv else c.name.translate(_TEXT_ESCAPES)
                 for c in self.columns]
        return (self._sep.join(names) + "\n").encode()

    def row(self, row: Sequence[Any]) -> bytes:
        null = self._null
        return (self._sep.join([null if v is None else f(v) for f, v in zip(self._fields, row)])
                + "\n").encode()
