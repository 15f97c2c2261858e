"""Binary COPY FROM STDIN (asyncpg's copy_records_to_table) into character(n) and varchar(n)
columns: checked and blank-padded as PostgreSQL stores them, like the text formats (found by
the client matrix: asyncpg's binary COPY stored char(4) 'ab' unpadded)."""

from __future__ import annotations

import struct

import pytest

from dataflow.errors import SqlError
from dataflow.types import SqlType, TypeKind
from server.adapter.copy_in import parse_copy


def _binary(rows: list[tuple[bytes | None, ...]]) -> bytes:
    out = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
    for row in rows:
        out += struct.pack("!h", len(row))
        for v in row:
            out += struct.pack("!i", -1) if v is None else struct.pack("!i", len(v)) + v
    return out + struct.pack("!h", -1)


def test_binary_copy_pads_character_n():
    types = [SqlType(TypeKind.BPCHAR, 4), SqlType(TypeKind.VARCHAR, 3)]
    cols = parse_copy(_binary([(b"ab", b"xy"), (b"abcd", b"abc"), (None, None), (b"a  ", b"z  ")]), types, "binary")
    assert cols[0].to_pylist() == ["ab  ", "abcd", None, "a   "]
    assert cols[1].to_pylist() == ["xy", "abc", None, "z  "]


@pytest.mark.parametrize("kind", [TypeKind.BPCHAR, TypeKind.VARCHAR])
def test_binary_copy_refuses_too_long(kind):
    t = SqlType(kind, 2)
    with pytest.raises(SqlError) as e:
        parse_copy(_binary([(b"abc",)]), [t], "binary")
    assert e.value.sqlstate == "22001" and str(e.value.message) == f"value too long for type {t.name}"
