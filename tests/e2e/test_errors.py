"""Errors carry PostgreSQL's SQLSTATE, and the connection keeps working after each one."""

from __future__ import annotations

import asyncio

import asyncpg
import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e


def error_cases(p: str) -> list[tuple[str, str]]:
    return [
        (f"SELECT * FROM {p}no_such_table", "42P01"),
        ("SELEC 1", "42601"),
        ("SELECT 1 + true", "42883"),              # operator does not exist: integer + boolean
        (f"SELECT * FROM {p}nums WHERE x", "42804"),  # argument of WHERE must be boolean
        (f"INSERT INTO {p}nums VALUES ('abc')", "22P02"),  # invalid input syntax for integer
        (f"SELECT x / (x - x) FROM {p}nums", "22012"),
        (f"CREATE TABLE {p}nums (x int)", "42P07"),
        (f"LISTEN {p}channel", "0A000"),
        # Found by the protocol fuzzer (tests/fuzz/protocol.py): internal errors before.
        (f"DELETE FROM FROM {p}nums WHERE x = 3", "42601"),
        (f"INSERT INTO VALUES {p}nums (1), (2)", "42601"),
        ("SELECT " + "(" * 5000 + "1" + ")" * 5000, "54001"),   # stack depth limit exceeded
        ("SELECT 1::float8((1)) / 3", "42601"),                  # type modifiers must be constants
    ]


def test_error_sqlstates_with_psycopg(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE TABLE {p}nums (x int)")
        conn.execute(f"INSERT INTO {p}nums VALUES (1), (2)")
        for sql, sqlstate in error_cases(p):
            with pytest.raises(psycopg.Error) as err:
                conn.execute(sql).fetchall()
            assert err.value.sqlstate == sqlstate, f"{sql!r}: {err.value}"
            assert err.value.diag.message_primary, f"{sql!r}: error without a message"
            assert conn.execute(f"SELECT count(*) FROM {p}nums").fetchone() == (2,)


def test_error_sqlstates_with_asyncpg(slipstream, unique_prefix):
    p = unique_prefix

    async def scenario():
        conn = await asyncpg_connect(slipstream)
        try:
            await conn.execute(f"CREATE TABLE {p}nums (x int)")
            await conn.execute(f"INSERT INTO {p}nums VALUES (1), (2)")
            for sql, sqlstate in error_cases(p):
                # fetch() goes through Parse/Bind/Execute; execute() through simple query.
                for run in (conn.fetch, conn.execute):
                    with pytest.raises(asyncpg.PostgresError) as err:
                        await run(sql)
                    assert err.value.sqlstate == sqlstate, f"{sql!r}: {err.value}"
                    assert await conn.fetchval(f"SELECT count(*) FROM {p}nums") == 2
        finally:
            await conn.close()

    asyncio.run(scenario())


def test_error_inside_transaction_block_then_rollback(slipstream, unique_prefix):
    with psycopg_connect(slipstream) as conn:
        conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute(f"SELECT * FROM {unique_prefix}missing")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.execute("ROLLBACK")
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_unknown_database_connects_with_a_notice(slipstream):
    """psql defaults the database to the user name: the connection is accepted with a notice and
    objects resolve in the "slipstream" database."""
    import subprocess

    from tests.support.clients import psql_argv

    argv = psql_argv(slipstream, "-c", "SELECT 41 + 1", user="someone", database="someone")
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "42"
    assert 'session database "someone" does not exist' in result.stderr


def test_reads_older_than_the_retained_history_are_refused(slipstream, unique_prefix):
    """AS OF a time whose history is compacted is an error, never an answer from another time."""
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}h (a int)")
        for sql in (f"SELECT * FROM {p}h AS OF 1", f"SUBSCRIBE {p}h AS OF 1"):
            with pytest.raises(psycopg.errors.DataException) as e:
                conn.execute(sql).fetchall()
            assert "not valid for all inputs" in str(e.value)
            assert conn.execute("SELECT 1").fetchone() == (1,)
