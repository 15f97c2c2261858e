"""DataRow encoding with the per-column encoders chosen once per result.

>>> enc = RowEncoder([Column("a", INT4), Column("b", TEXT)], [0, 0])
>>> enc.encode((1, None))
b'D\\x00\\x00\\x00\\x0f\\x00\\x02\\x00\\x00\\x00\\x011\\xff\\xff\\xff\\xff'
"""

from __future__ import annotations

import struct
from typing import Any, Sequence

from dataflow.errors import SqlError, SqlState
from dataflow.types import INT4, TEXT, Column  # noqa: F401 - INT4, TEXT: the doctest
from server.pgwire.codec import CodecContext, encoder

_I32 = struct.Struct(">i")
_HEAD = struct.Struct(">cih")
_NULL = b"\xff\xff\xff\xff"


def expand_formats(codes: Sequence[int], n: int, what: str = "result") -> list[int]:
    """Bind's format codes: none = all text, one = applies to all, else one per column."""
    if not codes:
        return [0] * n
    if any(c not in (0, 1) for c in codes):
        raise SqlError(SqlState.PROTOCOL_VIOLATION, f"unsupported format code: {codes[0]}")
    if len(codes) == 1:
        return [codes[0]] * n
    if len(codes) != n:
        raise SqlError(SqlState.PROTOCOL_VIOLATION,
                       f"bind message has {len(codes)} {what} formats but query has {n} columns")
    return list(codes)


class RowEncoder:
    """Encodes tuples of Python values as complete DataRow messages."""

    def __init__(self, columns: Sequence[Column], formats: Sequence[int],
                 ctx: CodecContext = CodecContext()) -> None:
        self.ncols = len(columns)
        self._encoders = [encoder(c.type, f == 1, ctx) for c, f in zip(columns, formats)]

    def encode(self, row: Sequence[Any]) -> bytes:
        parts: list[bytes] = []
        append = parts.append
        pack = _I32.pack
        for enc, v in zip(self._encoders, row):
            if v is None:
                append(_NULL)
            else:
                b = enc(v)
                append(pack(len(b)))
                append(b)
        body = b"".join(parts)
        return _HEAD.pack(b"D", len(body) + 6, self.ncols) + body

    def encode_many(self, rows: Sequence[Sequence[Any]]) -> bytes:
        enc = self.encode
        return b"".join([enc(r) for r in rows])
