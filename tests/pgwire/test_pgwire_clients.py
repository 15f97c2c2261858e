"""Real clients (psql, psycopg 3, asyncpg) against the real PgServer over real sockets."""

from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
import threading
import time
from datetime import date, datetime, timezone
from decimal import Decimal

import asyncpg
import psycopg
import pytest

from pgwire_fake_adapter import ALL_TYPES_ROW

# ------------------------------------------------------------------------------------------ psql

psql_bin = shutil.which("psql")
needs_psql = pytest.mark.skipif(psql_bin is None, reason="psql not installed")


def run_psql(pg, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([psql_bin, "-X", "-h", pg.host, "-p", str(pg.port), "-U", "alice", "-d", "db",
                           *args], input=stdin, capture_output=True, text=True, timeout=20)


@needs_psql
def test_psql_select_and_types(pg):
    r = run_psql(pg, "-A", "-t", "-c", "select 1, 'x', 2.50", "-c", "select * from all_types")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "1|x|2.50",
        "t|-2|123456|-9876543210|1.5|0.1|-12345.678|héllo\tworld|v|2024-02-29 12:34:56.789|"
        "1999-12-31 23:59:59.5+00|2024-01-02",
    ]


@needs_psql
def test_psql_error_and_copy(pg):
    r = run_psql(pg, "-c", "select 1/0")
    assert r.returncode == 1 and "ERROR:  division by zero" in r.stderr
    r = run_psql(pg, "-c", "COPY (select * from generate(3)) TO STDOUT")
    assert r.stdout == "0\trow 0\n1\trow 1\n2\trow 2\n"
    r = run_psql(pg, "-c", "COPY (select * from generate(2)) TO STDOUT WITH (FORMAT CSV, HEADER)")
    assert r.stdout == "i,s\n0,row 0\n1,row 1\n"
    r = run_psql(pg, "-c", "COPY sink FROM STDIN", stdin="7\tseven\n8\teight\n\\.\n")
    assert r.returncode == 0 and r.stdout.strip() == "COPY 2", r.stderr
    assert b"7\tseven\n8\teight\n" in pg.adapter.copied


# -------------------------------------------------------------------------------------- psycopg

@pytest.mark.parametrize("binary", [False, True])
def test_psycopg_all_types(pg, binary):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        row = conn.execute("select * from all_types", binary=binary).fetchone()
        assert row == ALL_TYPES_ROW


@pytest.mark.parametrize("binary", [False, True])
def test_psycopg_params_and_prepared(pg, binary):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        cur = conn.cursor(binary=binary)
        args = (5, "hi", Decimal("-1.25"), datetime(2020, 5, 6, 7, 8, 9, 10, tzinfo=timezone.utc),
                date(1970, 1, 1), True, 2.5)
        q = ("select %s::int8, %s::text, %s::numeric, %s::timestamptz, %s::date, %s::bool, "
             "%s::float8")
        for _ in range(3):  # psycopg prepares on the second/third execution with prepare=True
            assert cur.execute(q, args, prepare=True).fetchone() == args
        assert cur.execute("select %s, %s", (None, "x")).fetchone() == (None, "x")


def test_psycopg_errors_notices_and_parameter_status(pg):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("select 1/0")
        assert conn.execute("select 1").fetchone() == (1,)
        notices = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("notice")
        assert notices == ["hello from the adapter"]
        conn.execute("set application_name = 'pg3app'")
        assert conn.info.parameter_status("application_name") == "pg3app"
        assert conn.info.server_version == 150000


def test_psycopg_startup_options(pg):
    with psycopg.connect(pg.dsn, application_name="app1",
                         options="-c search_path=a,b --cluster=quickstart") as conn:
        pid = conn.info.backend_pid
        session = next(s for s in pg.adapter.started_sessions if s.pid == pid)
        assert session.vars["application_name"] == "app1"
        assert session.vars["search_path"] == "a,b" and session.vars["cluster"] == "quickstart"
    with pytest.raises(psycopg.OperationalError, match='database "nope" does not exist'):
        psycopg.connect(f"host={pg.host} port={pg.port} user=x dbname=nope")


def test_psycopg_server_side_cursor_itersize(pg):
    with psycopg.connect(pg.dsn) as conn:  # not autocommit: DECLARE runs inside BEGIN
        with conn.cursor(name="cur1") as cur:
            cur.itersize = 3
            cur.execute("select * from generate(10)")
            rows = list(cur)
        assert rows == [(i, f"row {i}") for i in range(10)]
        conn.rollback()


def test_psycopg_stream_then_stop_keeps_connection_usable(pg):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        got = []
        for row in conn.cursor().stream("subscribe endless"):
            got.append(row)
            if len(got) == 3:
                break  # psycopg sends a CancelRequest and drains the result
        assert got == [(Decimal(1000 + k), 1, f"v{k}") for k in range(3)]
        assert conn.execute("select 42").fetchone() == (42,)


def test_psycopg_cancel_endless_copy(pg):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        rows: list[bytes] = []
        errors: list[BaseException] = []

        def consume():
            try:
                with conn.cursor().copy("COPY (subscribe endless) TO STDOUT") as copy:
                    for data in copy:
                        rows.append(bytes(data))
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        t = threading.Thread(target=consume)
        t.start()
        deadline = time.time() + 5
        while len(rows) < 3 and time.time() < deadline:
            time.sleep(0.02)
        assert rows[:3] == [b"1000\t1\tv0\n", b"1001\t1\tv1\n", b"1002\t1\tv2\n"]
        conn.cancel_safe(timeout=5)  # (plain cancel() holds the GIL, and the server shares our process)
        t.join(5)
        assert not t.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], psycopg.errors.QueryCanceled)
        assert conn.execute("select 'still here'").fetchone() == ("still here",)


def test_psycopg_copy_in_and_pipeline(pg):
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        with conn.cursor().copy("COPY sink FROM STDIN") as copy:
            copy.write_row((1, "a\tb"))
            copy.write_row((2, None))
        assert b"1\ta\\tb\n2\t\\N\n" in pg.adapter.copied
        with conn.pipeline():
            c1 = conn.execute("select 1")
            c2 = conn.execute("select %s::int4", (2,))
        assert c1.fetchone() == (1,) and c2.fetchone() == (2,)


# -------------------------------------------------------------------------------------- asyncpg

def arun(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_asyncpg_binary_codecs_and_prepared(pg):
    async def main():
        conn = await asyncpg.connect(host=pg.host, port=pg.port, user="alice", database="db")
        try:
            row = await conn.fetchrow("select * from all_types")
            assert tuple(row) == ALL_TYPES_ROW
            stmt = await conn.prepare("select $1::int8, $2::text, $3::numeric, $4::timestamptz, "
                                      "$5::date, $6::bool, $7::float8, $8::int2, $9::timestamp")
            args = (-(2**62), "ünïcode", Decimal("123456789.000012345"),
                    datetime(1999, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc), date(2100, 12, 31),
                    False, -0.125, 32767, datetime(2000, 1, 1))
            assert tuple(await stmt.fetchrow(*args)) == args
            assert [p.name for p in stmt.get_parameters()] == ["int8", "text", "numeric",
                                                              "timestamptz", "date", "bool",
                                                              "float8", "int2", "timestamp"]
            with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
                await conn.fetch("select 1/0")
            assert await conn.fetchval("select 3") == 3
        finally:
            await conn.close()
    arun(main())


def test_asyncpg_cursor_prefetch(pg):
    async def main():
        conn = await asyncpg.connect(host=pg.host, port=pg.port, user="alice", database="db")
        try:
            async with conn.transaction():
                got = [tuple(r) async for r in conn.cursor("select * from generate(10)", prefetch=3)]
                assert got == [(i, f"row {i}") for i in range(10)]
                cur = await conn.cursor("select * from generate(7)")
                assert [tuple(r) for r in await cur.fetch(4)] == [(i, f"row {i}") for i in range(4)]
                assert len(await cur.fetch(10)) == 3
        finally:
            await conn.close()
    arun(main())


def test_asyncpg_copy_out_in_and_cancel(pg):
    async def main():
        conn = await asyncpg.connect(host=pg.host, port=pg.port, user="alice", database="db")
        try:
            buf = io.BytesIO()
            tag = await conn.copy_from_query("select * from generate(4)", output=buf)
            assert tag == "COPY 4"
            assert buf.getvalue() == b"".join(b"%d\trow %d\n" % (i, i) for i in range(4))
            tag = await conn.copy_to_table("sink", source=io.BytesIO(b"5\tfive\n6\tsix\n"))
            assert tag == "COPY 2"

            chunks: list[bytes] = []
            three = asyncio.Event()

            async def sink(data: bytes):
                chunks.append(data)
                if b"v2" in b"".join(chunks):
                    three.set()

            task = asyncio.ensure_future(conn.copy_from_query("subscribe endless", output=sink))
            await asyncio.wait_for(three.wait(), 5)
            task.cancel()  # asyncpg sends a CancelRequest
            with pytest.raises(asyncio.CancelledError):
                await task
            assert b"".join(chunks).startswith(b"1000\t1\tv0\n")
            assert await conn.fetchval("select 'alive'") == "alive"
        finally:
            await conn.close()
    arun(main())
    assert b"5\tfive\n6\tsix\n" in pg.adapter.copied


@needs_psql
def test_psql_ctrl_c_cancels_endless_copy(pg):
    import signal

    proc = subprocess.Popen([psql_bin, "-X", "-h", pg.host, "-p", str(pg.port), "-U", "alice",
                             "-c", "COPY (subscribe endless) TO STDOUT"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # psql's stdout is a block-buffered pipe, so watch the server for the running COPY instead.
        deadline = time.time() + 10
        while time.time() < deadline and not any(
                conn._running is not None for conn in pg.server._registry.connections()):
            time.sleep(0.02)
        time.sleep(0.3)  # let the three batches go out
        proc.send_signal(signal.SIGINT)  # psql turns ^C into a CancelRequest
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert "canceling statement due to user request" in err
    assert out.startswith("1000\t1\tv0\n1001\t1\tv1\n1002\t1\tv2\n")
