"""SUBSCRIBE output formats as Materialize documents them: COPY (SUBSCRIBE ...) TO STDOUT via
psql and psycopg, and DECLARE ... CURSOR FOR SUBSCRIBE + FETCH via psycopg and asyncpg.

Columns: mz_timestamp (numeric), [mz_progressed (bool) WITH (PROGRESS)], mz_diff (int8),
then the view's columns. Snapshot first, at one timestamp; SNAPSHOT = false skips it; progress
rows are NULL except mz_timestamp; timestamps never decrease."""

from __future__ import annotations

import asyncio
import decimal
import threading

import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psql_argv, psycopg_connect
from tests.support.subscribe import (PsqlCopyReader, Reconstruction, parse_copy_text,
                                     psycopg_fetch, psycopg_fetch_until)

pytestmark = pytest.mark.e2e

NUMERIC_OID, BOOL_OID, INT8_OID = 1700, 16, 20


def make_table(server, table: str, rows: list[tuple[int, str]]) -> None:
    with psycopg_connect(server) as conn:
        conn.execute(f"CREATE TABLE {table} (id int, name text)")
        conn.execute(f"INSERT INTO {table} VALUES "
                     + ", ".join(f"({i}, '{n}')" for i, n in rows))


def insert_later(server, table: str, row: tuple[int, str], delay: float = 0.5) -> threading.Timer:
    def run():
        with psycopg_connect(server) as conn:
            conn.execute(f"INSERT INTO {table} VALUES ({row[0]}, '{row[1]}')")
    timer = threading.Timer(delay, run)
    timer.start()
    return timer


def test_copy_subscribe_with_psql(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a"), (2, "b"), (3, "c")])
    reader = PsqlCopyReader(psql_argv(slipstream, "-c", f"COPY (SUBSCRIBE {table}) TO STDOUT"))
    try:
        snapshot = [parse_copy_text(line) for line in reader.read_lines(3)]
        assert len({r[0] for r in snapshot}) == 1, f"snapshot at one timestamp: {snapshot}"
        assert sorted(tuple(r[1:]) for r in snapshot) == \
            [("1", "1", "a"), ("1", "2", "b"), ("1", "3", "c")]
        assert snapshot[0][0].isdigit()
        insert_later(slipstream, table, (4, "d"), delay=0).join()
        (change,) = [parse_copy_text(line) for line in reader.read_lines(1)]
        assert change[1:] == ["1", "4", "d"]
        assert int(change[0]) > int(snapshot[0][0])
    finally:
        reader.close()


def test_copy_subscribe_with_progress_via_psql(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a")])
    reader = PsqlCopyReader(psql_argv(
        slipstream, "-c", f"COPY (SUBSCRIBE {table} WITH (PROGRESS)) TO STDOUT"))
    try:
        rows = []
        while sum(1 for r in rows if r[1] == "t") < 2:
            rows.extend(parse_copy_text(line) for line in reader.read_lines(1))
        data = [r for r in rows if r[1] == "f"]
        assert [r[2:] for r in data] == [["1", "1", "a"]]
        for r in rows:
            assert r[1] in ("t", "f")
            if r[1] == "t":
                assert r[2:] == [None, None, None]
        stamps = [int(r[0]) for r in rows]
        assert stamps == sorted(stamps)
    finally:
        reader.close()


def test_copy_subscribe_with_psycopg_and_cancel(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a"), (2, "b")])
    timer = insert_later(slipstream, table, (3, "c"), delay=1.0)
    got: list[tuple] = []
    with psycopg_connect(slipstream) as conn:
        with pytest.raises(psycopg.errors.QueryCanceled):
            with conn.cursor().copy(f"COPY (SUBSCRIBE {table}) TO STDOUT") as copy:
                for row in copy.rows():
                    got.append(row)
                    if len(got) == 3:
                        conn.cancel_safe()
        timer.join()
        # The connection survives the cancel.
        assert conn.execute("SELECT 1").fetchone() == (1,)
    snapshot, change = got[:2], got[2]
    assert snapshot[0][0] == snapshot[1][0]
    assert sorted(r[1:] for r in snapshot) == [("1", "1", "a"), ("1", "2", "b")]
    assert change[1:] == ("1", "3", "c") and int(change[0]) > int(snapshot[0][0])


def test_declare_fetch_with_psycopg(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a"), (2, "b")])
    with psycopg_connect(slipstream) as conn, psycopg_connect(slipstream) as writer:
        conn.execute("BEGIN")
        conn.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {table}")
        cur = conn.execute("FETCH ALL c WITH (timeout = '1s')")
        assert [d.name for d in cur.description] == ["mz_timestamp", "mz_diff", "id", "name"]
        assert [d.type_code for d in cur.description][:2] == [NUMERIC_OID, INT8_OID]
        snapshot = cur.fetchall()
        snapshot += psycopg_fetch_until(conn, "c", lambda r: len(snapshot) + len(r) >= 2)
        assert isinstance(snapshot[0][0], decimal.Decimal)
        assert len({r[0] for r in snapshot}) == 1
        assert sorted(r[1:] for r in snapshot) == [(1, 1, "a"), (1, 2, "b")]
        writer.execute(f"DELETE FROM {table} WHERE id = 1")
        change = psycopg_fetch_until(conn, "c", lambda r: len(r) >= 1)
        assert [r[1:] for r in change] == [(-1, 1, "a")] and change[0][0] > snapshot[0][0]
        # Nothing more: a FETCH with a timeout returns no rows instead of blocking.
        assert psycopg_fetch(conn, "c", "1s") == []
        conn.execute("COMMIT")


def test_declare_fetch_progress_and_no_snapshot_with_psycopg(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a"), (2, "b")])
    with psycopg_connect(slipstream) as conn, psycopg_connect(slipstream) as writer:
        conn.execute("BEGIN")
        conn.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {table} "
                     f"WITH (SNAPSHOT = false, PROGRESS)")
        cur = conn.execute("FETCH ALL c WITH (timeout = '1s')")
        assert [d.name for d in cur.description] == \
            ["mz_timestamp", "mz_progressed", "mz_diff", "id", "name"]
        assert [d.type_code for d in cur.description][:3] == [NUMERIC_OID, BOOL_OID, INT8_OID]
        rows = cur.fetchall()
        assert all(r[1] for r in rows), f"SNAPSHOT = false gave data rows: {rows}"
        writer.execute(f"INSERT INTO {table} VALUES (5, 'e')")
        rows += psycopg_fetch_until(conn, "c", lambda rs: any(not r[1] for r in rs) and
                                    rs[-1][1] and rs[-1][0] > max(r[0] for r in rs if not r[1]))
        view = Reconstruction()
        view.apply(rows, progress=True)  # checks NULLs in progress rows, monotone timestamps
        assert view.rows() == [(5, "e")]
        conn.execute("COMMIT")


def test_declare_fetch_with_asyncpg(slipstream, unique_prefix):
    table = f"{unique_prefix}t"
    make_table(slipstream, table, [(1, "a"), (2, "b"), (3, "c")])

    async def scenario():
        conn = await asyncpg_connect(slipstream)
        writer = await asyncpg_connect(slipstream)
        try:
            async with conn.transaction():
                await conn.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {table} WITH (PROGRESS)")
                rows = []
                while not any(r["mz_progressed"] for r in rows) or \
                        len([r for r in rows if not r["mz_progressed"]]) < 3:
                    rows.extend(await conn.fetch("FETCH ALL c WITH (timeout = '1s')"))
                assert list(rows[0].keys()) == ["mz_timestamp", "mz_progressed", "mz_diff",
                                                "id", "name"]
                data = [r for r in rows if not r["mz_progressed"]]
                assert isinstance(data[0]["mz_timestamp"], decimal.Decimal)
                assert len({r["mz_timestamp"] for r in data}) == 1
                assert sorted((r["mz_diff"], r["id"], r["name"]) for r in data) == \
                    [(1, 1, "a"), (1, 2, "b"), (1, 3, "c")]
                await writer.execute(f"UPDATE {table} SET name = 'z' WHERE id = 2")
                more = []
                while len([r for r in more if not r["mz_progressed"]]) < 2:
                    more.extend(await conn.fetch("FETCH ALL c WITH (timeout = '1s')"))
                view = Reconstruction()
                view.apply([tuple(r) for r in rows + more], progress=True)
                assert view.rows() == [(1, "a"), (2, "z"), (3, "c")]
                changed = [r for r in more if not r["mz_progressed"]]
                assert changed[0]["mz_timestamp"] == changed[1]["mz_timestamp"]
        finally:
            await conn.close()
            await writer.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))
