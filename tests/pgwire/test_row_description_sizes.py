"""RowDescription's type size is pg_type.typlen, as PostgreSQL sends it: node-postgres exposes it
(`field.dataTypeSize`) and the client matrix found time, interval and uuid sent as -1."""

from __future__ import annotations

import struct

import psycopg
import pytest

from dataflow.types import Column
from planner.typing import type_from_oid
from server.pgwire.protocol import row_description

TYPES = ["bool", "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar", "bytea",
         "date", "time", "timestamp", "timestamptz", "interval", "uuid", "jsonb", "oid", "\"char\"", "name",
         "int4[]", "text[]", "uuid[]"]


def _sizes(message: bytes) -> list[int]:
    (count,) = struct.unpack_from(">h", message, 5)
    pos, out = 7, []
    for _ in range(count):
        pos = message.index(b"\x00", pos) + 1
        _, _, _, size, _, _ = struct.unpack_from(">ihihih", message, pos)
        out.append(size)
        pos += 18
    return out


def test_type_sizes_are_postgres_typlen(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        cur = conn.execute("SELECT " + ", ".join(f"NULL::{t}" for t in TYPES))
        oids = [d.type_code for d in cur.description]
        want = [d.internal_size for d in cur.description]
    types = [type_from_oid(oid) for oid in oids]
    assert all(types), dict(zip(TYPES, types))
    got = _sizes(row_description([Column(f"c{i}", t) for i, t in enumerate(types)], [0] * len(types)))
    assert dict(zip(TYPES, got)) == dict(zip(TYPES, [-1 if w is None else w for w in want]))
