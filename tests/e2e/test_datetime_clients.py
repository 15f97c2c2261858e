"""Intervals and the date/time functions through real drivers, against PostgreSQL: psycopg binds
intervals in text and binary format, asyncpg in binary, and both read intervals back in either
format; session functions answer what the session is (version(), current_user, ...)."""

from __future__ import annotations

import asyncio
import datetime as dt

import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psql, psycopg_connect

pytestmark = pytest.mark.e2e

QUERIES = [
    "SELECT $1::interval + interval '1 hour'",
    "SELECT '2024-01-31 10:00'::timestamp + $1::interval",
    "SELECT ($1::interval * 2)::text",
    "SELECT extract(epoch FROM $1::interval)",
    "SELECT $1::interval > interval '1 day'",
]
VALUES = [dt.timedelta(days=1, seconds=5), dt.timedelta(hours=-2, microseconds=7), dt.timedelta(0),
          dt.timedelta(days=400, seconds=59)]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_binds_and_reads_intervals(slipstream, pg_oracle, binary):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for sql in QUERIES:
            for v in VALUES:
                got = ss.execute(sql.replace("$1", "%s"), (v,), binary=binary).fetchall()
                want = pg.execute(sql.replace("$1", "%s"), (v,), binary=binary).fetchall()
                assert got == want, (sql, v)


def test_interval_with_months_reads_back_in_both_formats(slipstream, pg_oracle):
    sql = "SELECT interval '1 year 2 mons -3 days 04:05:06.5', interval '-1 mon', '1 mon'::interval = '30 days'"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for binary in (False, True):
            # psycopg reads a month as 30 days in both formats; the text form is checked below.
            assert ss.execute(sql, binary=binary).fetchall() == pg.execute(sql, binary=binary).fetchall()
    assert psql(slipstream, sql) == "1 year 2 mons -3 days +04:05:06.5|-1 mons|t"


def test_asyncpg_binds_intervals_in_binary(slipstream, pg_oracle):
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            out = []
            for v in VALUES:
                out.append(await conn.fetchrow("SELECT $1::interval, $1::interval * 3, "
                                               "'2024-02-29'::date + $1::interval", v))
            out.append(await conn.fetchrow("SELECT date_trunc('month', $1::timestamp), "
                                           "extract(dow FROM $1::timestamp)", dt.datetime(2024, 3, 17, 5, 6)))
            return [tuple(r) for r in out]
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_time_of_day_binds_and_reads(slipstream, pg_oracle, binary):
    sql = "SELECT %s::time, %s::time + interval '90 minutes', extract(hour FROM %s::time)"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for v in (dt.time(10, 20, 30, 500000), dt.time(0, 0), dt.time(23, 59, 59, 999999)):
            assert ss.execute(sql, (v, v, v), binary=binary).fetchall() == \
                pg.execute(sql, (v, v, v), binary=binary).fetchall()


def test_session_functions_answer_for_the_session(slipstream):
    out = psql(slipstream, "SELECT current_user, session_user, current_database(), current_schema(), "
                           "version() LIKE 'PostgreSQL 15%', pg_backend_pid() > 0", user="alice")
    assert out == "alice|alice|slipstream|public|t|t"
    with psycopg_connect(slipstream) as conn:
        conn.execute("SET search_path = public")
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert pid == conn.info.backend_pid
        conn.execute("SET application_name = 'probe'")
        assert conn.execute("SELECT current_setting('application_name')").fetchone()[0] == "probe"


_TIMETZ_VALUES = [dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
                  dt.time(0, 0, 0, 500000, tzinfo=dt.timezone(dt.timedelta(hours=-8, minutes=-30))),
                  dt.time(23, 59, 59, 999999, tzinfo=dt.timezone(dt.timedelta(hours=15, minutes=59, seconds=59))),
                  dt.time(11, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
                  dt.time(5, 4, 3, tzinfo=dt.timezone.utc)]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_timetz_binds_and_reads(slipstream, pg_oracle, binary):
    """psycopg binds a zoned time as timetz (OID 1266) and reads it back, in both formats;
    '12:00+02' and '11:00+01' are the same instant but not equal, as in PostgreSQL."""
    sqls = ["SELECT %s::timetz, %s::timetz + interval '90 minutes', extract(timezone FROM %s::timetz)",
            "SELECT %s::timetz = '11:00+01'::timetz, %s::timetz < '11:00+01'::timetz, (%s::timetz)::text",
            "SELECT %s::timetz::time, date '2024-02-29' + %s::timetz, %s::timetz AT TIME ZONE 'UTC'"]
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        pg.execute("SET TIME ZONE 'UTC'")
        for sql in sqls:
            for v in _TIMETZ_VALUES:
                assert ss.execute(sql, (v, v, v), binary=binary).fetchall() == \
                    pg.execute(sql, (v, v, v), binary=binary).fetchall(), (sql, v)
        arr = "SELECT %s::timetz[], array_length(%s::timetz[], 1)"
        assert ss.execute(arr, (_TIMETZ_VALUES, _TIMETZ_VALUES), binary=binary).fetchall() == \
            pg.execute(arr, (_TIMETZ_VALUES, _TIMETZ_VALUES), binary=binary).fetchall()


def test_timetz_column_round_trips_through_psycopg(slipstream, pg_oracle, unique_prefix):
    """A timetz column written with bound parameters (text and binary) reads back in both
    formats, and ORDER BY follows PostgreSQL's order (UTC time, then zone)."""
    table = f"{unique_prefix}_ttz"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        pg.execute("SET TIME ZONE 'UTC'")
        pg.execute(f"DROP TABLE IF EXISTS {table}")
        for conn in (ss, pg):
            conn.execute(f"CREATE TABLE {table} (i int, a time with time zone)")
            for i, v in enumerate(_TIMETZ_VALUES):
                conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", (i, v), binary=bool(i % 2))
            conn.execute(f"INSERT INTO {table} VALUES (99, NULL)")
        for binary in (False, True):
            sql = f"SELECT i, a FROM {table} ORDER BY a, i"
            assert ss.execute(sql, binary=binary).fetchall() == pg.execute(sql, binary=binary).fetchall()
        pg.execute(f"DROP TABLE {table}")


def test_asyncpg_binds_timetz_in_binary(slipstream, pg_oracle):
    async def run(server):
        conn = await asyncpg_connect(server)
        try:
            await conn.execute("SET TIME ZONE 'UTC'")
            out = []
            for v in _TIMETZ_VALUES:
                out.append(tuple(await conn.fetchrow(
                    "SELECT $1::timetz, $1::timetz - interval '1 hour', $1::timetz = '12:00+02'::timetz, "
                    "extract(timezone_hour FROM $1::timetz), ARRAY[$1::timetz, NULL]", v)))
            out.append(tuple(await conn.fetchrow("SELECT '24:00:00-15:59:59'::timetz::text, pg_typeof(current_time)::text")))
            return out
        finally:
            await conn.close()

    assert asyncio.run(run(slipstream)) == asyncio.run(run(pg_oracle))
