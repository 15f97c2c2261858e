"""bytea and uuid through real drivers, against PostgreSQL: psycopg binds them in text and
binary format and asyncpg in binary (OIDs 17 and 2950), both read them back in either format,
and COPY and a table round trip keep every byte."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

BYTES = [b"", b"\x00", b"\x00\xff\x5c\x27", bytes(range(256))]
UUIDS = [uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid.UUID(int=0), uuid.UUID(int=2 ** 128 - 1)]
QUERIES = [
    ("SELECT %s::bytea, octet_length(%s::bytea), encode(%s::bytea, 'hex')", BYTES),
    ("SELECT %s::uuid, %s::uuid::text, %s::uuid > 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", UUIDS),
]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_binds_and_reads_bytea_and_uuid(slipstream, pg_oracle, binary):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for sql, values in QUERIES:
            for v in values:
                got = ss.execute(sql, (v, v, v), binary=binary).fetchall()
                want = pg.execute(sql, (v, v, v), binary=binary).fetchall()
                assert got == want, (sql, v)


def test_bytea_and_uuid_columns_round_trip(slipstream, unique_prefix):
    t = f"{unique_prefix}bu"
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {t} (id int, b bytea, u uuid)")
        rows = [(i, b, u) for i, (b, u) in enumerate(zip(BYTES, UUIDS + [None]))]
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", rows)
        with conn.cursor().copy(f"COPY {t} FROM STDIN") as copy:
            copy.write_row((10, b"\x01\x02", UUIDS[0]))
        got = conn.execute(f"SELECT id, b, u FROM {t} ORDER BY id").fetchall()
        assert got == rows + [(10, b"\x01\x02", UUIDS[0])]
        got = conn.execute(f"SELECT id, b, u FROM {t} ORDER BY id", binary=True).fetchall()
        assert got == rows + [(10, b"\x01\x02", UUIDS[0])]


def test_asyncpg_binds_bytea_and_uuid_in_binary(slipstream, pg_oracle):
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            out = []
            for b in BYTES:
                out.append(tuple(await conn.fetchrow("SELECT $1::bytea, length($1::bytea)", b)))
            for u in UUIDS:
                out.append(tuple(await conn.fetchrow("SELECT $1::uuid, $1::uuid = $2::uuid", u, UUIDS[0])))
            return out
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))
