"""time with time zone (timetz) against PostgreSQL 15, in process: input forms and their errors,
output text, comparisons (the UTC-adjusted time first, then the zone: '12:00+02' and '11:00+01'
are different values), keys (GROUP BY, DISTINCT, joins, ORDER BY, min/max), casts, arithmetic,
extract/date_part, AT TIME ZONE and result types, on edge values (24:00:00, offsets of
+-15:59:59, fractions of seconds, NULLs)."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest
from psycopg.types.string import TextLoader

from dataflow import timetz
from tests.planner.engine_oracle import EngineDb, pg_answer, pg_type_oids

DDL = ["CREATE TABLE tz (i int, a timetz, b time with time zone, t time, ts timestamptz, d date)"]
DATA = ["INSERT INTO tz VALUES "
        "(1, '12:00+02', '11:00+01', '10:00', '2024-01-01 10:00:00+05', '2024-01-31'), "
        "(2, '24:00:00-15:59:59', '00:00:00+15:59:59', '23:59:59.999999', '2024-06-30 23:59:59.5+00', '2024-02-29'), "
        "(3, NULL, '00:00:00.5+15:59', NULL, NULL, NULL), "
        "(4, '11:00+01', '12:00+02', '00:00', '1999-12-31 23:00:00-01', '2000-01-01'), "
        "(5, '10:00+00', '10:00:00.000001+00', '12:34:56.789', '2024-03-10 02:30:00+00', '1970-01-01'), "
        "(6, '00:00:00-05:30', '23:59:59.999999+05:30', '01:02:03', '2024-01-01 00:00:00+00', '2024-12-31'), "
        "(7, '12:00+02', '12:00-02', '12:00', NULL, '2024-01-01'), "
        "(8, '05:04:03.25-08:00:30', NULL, '23:00', '2024-07-04 12:00:00+00', NULL)"]

UNORDERED = [
    # output text, result types
    "SELECT i, a, b FROM tz",
    "SELECT i, a::text, b::text, a::varchar, b::char(30) FROM tz",
    "SELECT '12:00+02'::timetz, '12:00:00.5-08:30'::timetz, '04:05:06 PST'::timetz, '24:00:00+02'::timetz",
    "SELECT '12:00+15:59'::timetz, '12:00+15:59:59'::timetz, '12:00-15:59:59'::timetz, '12:00'::timetz",
    "SELECT '12:00 +0530'::timetz, '12:00+05:30:15'::timetz, '2024-01-01 12:00+03'::timetz, '12:00 UTC'::timetz",
    "SELECT '12:00Z'::timetz, 'allballs'::timetz, '12:00 +5'::timetz, '1200+02'::timetz, '120030-02'::timetz",
    "SELECT '12:00:00.1234567+02'::timetz, '23:59:59.9999999+02'::timetz, '23:59:60+00'::timetz",
    "SELECT '12:00 CET'::timetz, '12:00 CEST'::timetz, '12:00 JST'::timetz, '12:00 pdt'::timetz, '12:00 EST'::timetz",
    "SELECT '12:00am+02'::timetz, '12:00 pm +02'::timetz, '1:2:3.25+02'::timetz, ' 12:00 + 02 '::timetz",
    "SELECT '12:00+1:2'::timetz, '12:00+123'::timetz, '12:00-00'::timetz, '12:00:00.+02'::timetz",
    "SELECT TIME WITH TIME ZONE '12:00+02', CAST('01:00-01' AS time with time zone)",
    # input errors
    "SELECT '12:60+00'::timetz", "SELECT '25:00+00'::timetz", "SELECT '24:00:01+02'::timetz",
    "SELECT '12:00+16'::timetz", "SELECT '12:00+05:60'::timetz", "SELECT '12:00+12345'::timetz",
    "SELECT '12+02'::timetz", "SELECT ''::timetz", "SELECT '12:00+02 x'::timetz", "SELECT '-12:00+02'::timetz",
    "SELECT '12:00 America/New_York'::timetz", "SELECT '12:00 XYZ'::timetz", "SELECT '13:00 pm'::timetz",
    # comparisons: the UTC-adjusted time first, then the zone
    "SELECT i, a = b, a <> b, a < b, a <= b, a > b, a >= b, a IS DISTINCT FROM b FROM tz",
    "SELECT '12:00+02'::timetz = '11:00+01'::timetz, '12:00+02'::timetz < '11:00+01'::timetz",
    "SELECT '24:00:00+00'::timetz > '23:59:59.999999+00'::timetz, '00:00+01'::timetz < '23:00-00'::timetz",
    "SELECT i FROM tz WHERE a > '11:00+00'", "SELECT i FROM tz WHERE a = '12:00+02'",
    "SELECT i FROM tz WHERE a IN ('12:00+02', '10:00Z')", "SELECT i FROM tz WHERE a BETWEEN '09:00+00' AND '10:30+00'",
    "SELECT i, t = a, t < a, a > t FROM tz",
    # keys
    "SELECT a, count(*) FROM tz GROUP BY a", "SELECT DISTINCT b FROM tz", "SELECT count(DISTINCT a) FROM tz",
    "SELECT x.i, y.i FROM tz x JOIN tz y ON x.a = y.b", "SELECT x.i, y.i FROM tz x JOIN tz y ON x.a = y.a",
    "SELECT x.i, y.i FROM tz x LEFT JOIN tz y ON x.a = y.b",
    "SELECT min(a), max(a), min(b), max(b) FROM tz", "SELECT i % 2, min(a), max(b) FROM tz GROUP BY 1",
    "SELECT min(a) FROM tz WHERE i > 100",
    "SELECT i, max(a) OVER (ORDER BY i), min(b) OVER (PARTITION BY i % 2 ORDER BY i) FROM tz",
    "SELECT i, rank() OVER (ORDER BY a) FROM tz",
    "SELECT i FROM tz x WHERE EXISTS (SELECT 1 FROM tz y WHERE y.b = x.a)",
    "SELECT i FROM tz x WHERE a NOT IN (SELECT b FROM tz y WHERE b IS NOT NULL)",
    "SELECT a FROM tz UNION SELECT b FROM tz", "SELECT a FROM tz INTERSECT SELECT b FROM tz",
    "SELECT x FROM (SELECT a AS x FROM tz ORDER BY a DESC LIMIT 3) s",
    # casts
    "SELECT i, t::timetz, ts::timetz, a::time, b::time FROM tz WHERE i <> 2",
    "SELECT i, CAST(t AS time with time zone) = a FROM tz",
    "SELECT '10:00'::time::timetz", "SELECT '12:00+02'::timetz::interval",
    "SELECT '2024-01-01 10:00'::timestamp::timetz", "SELECT '2024-06-01 10:00:00.5+05'::timestamptz::timetz",
    "SELECT coalesce(a, b), CASE WHEN i > 3 THEN a ELSE b END FROM tz",
    "SELECT coalesce(t, a) FROM tz",
    # arithmetic
    "SELECT i, a + interval '13 hours', interval '1 day 1 minute' + a, a - interval '12:00:00.5' FROM tz",
    "SELECT i, b + interval '-25 hours', b - interval '1 mon 2 days 3 hours' FROM tz",
    "SELECT i, d + a, a + d, d + b FROM tz",
    "SELECT '12:00+02'::timetz - '11:00+01'::timetz",
    # fields
    "SELECT i, extract(hour FROM a), extract(minute FROM a), extract(second FROM a), extract(milliseconds FROM a), "
    "extract(microseconds FROM a), extract(epoch FROM a) FROM tz",
    "SELECT i, extract(timezone FROM b), extract(timezone_hour FROM b), extract(timezone_minute FROM b) FROM tz",
    "SELECT i, date_part('hour', a), date_part('epoch', b), date_part('timezone_minute', a), "
    "date_part('timezone_hour', a) FROM tz",
    "SELECT extract(day FROM a) FROM tz", "SELECT extract(foo FROM a) FROM tz", "SELECT date_part('year', b) FROM tz",
    "SELECT extract(timezone_minute FROM '12:00-05:30'::timetz), extract(timezone FROM '12:00-05:30:15'::timetz)",
    # AT TIME ZONE
    "SELECT i, a AT TIME ZONE '+05', a AT TIME ZONE 'PST', a AT TIME ZONE 'UTC', b AT TIME ZONE '-03:30' FROM tz",
    "SELECT i, a AT TIME ZONE interval '05:30', b AT TIME ZONE interval '-01:00' FROM tz",
    "SELECT i, a AT TIME ZONE 'Asia/Kolkata', a AT TIME ZONE 'Etc/GMT+3' FROM tz",
    "SELECT '12:00+02'::timetz AT TIME ZONE 'Nowhere/Land'",
    "SELECT '12:00+02'::timetz AT TIME ZONE interval '1 day'",
    # arrays
    "SELECT ARRAY[a, b] FROM tz", "SELECT '{12:00+02,NULL,\"24:00:00-01\"}'::timetz[]",
    "SELECT (ARRAY[a, b])[2] FROM tz", "SELECT i FROM tz WHERE a = ANY (ARRAY['12:00+02'::timetz, '10:00Z'])",
    "SELECT pg_typeof(a)::text, pg_typeof(current_time)::text, pg_typeof(ARRAY[a])::text FROM tz WHERE i = 1",
]
ORDERED = [
    "SELECT i, a FROM tz ORDER BY a, i",
    "SELECT i, b FROM tz ORDER BY b DESC, i",
    "SELECT i, a FROM tz ORDER BY a DESC NULLS LAST, i",
    "SELECT a, b FROM tz ORDER BY b NULLS FIRST, a LIMIT 4",
]


def _ours(rows):
    """Our timetz values are their keys (timedeltas): their text, as PostgreSQL's loader below."""
    return [tuple(timetz.fmt(v) if isinstance(v, dt.timedelta) else v for v in r) for r in rows]


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        # psycopg cannot load 24:00:00; compare timetz (and timetz[]) as PostgreSQL's text.
        conn.adapters.register_loader(1266, TextLoader)
        conn.adapters.register_loader(1270, TextLoader)
        conn.execute("DROP TABLE IF EXISTS tz CASCADE")
        for s in DDL + DATA:
            conn.execute(s)
        yield conn


@pytest.fixture(scope="module")
def db():
    return EngineDb(DDL, DATA)


def _answer(db, sql, ordered=False):
    got = db.answer(sql, ordered)
    if isinstance(got, str):
        return got
    got = _ours(got)
    return got if ordered else sorted(got, key=repr)


@pytest.mark.parametrize("sql", UNORDERED)
def test_timetz_matches_postgres(sql, db, pg):
    want = pg_answer(pg, sql)
    assert _answer(db, sql) == want
    if not isinstance(want, str):
        assert db.type_oids(sql) == pg_type_oids(pg, sql)


@pytest.mark.parametrize("sql", ORDERED)
def test_timetz_order_matches_postgres(sql, db, pg):
    assert _answer(db, sql, ordered=True) == pg_answer(pg, sql, ordered=True)


def test_current_time_is_the_statement_time_in_utc(db):
    (now,), = db.rows("SELECT current_time")
    tod, zone = timetz.decode(timetz.key_of(now))
    assert zone == 0 and 0 <= tod < timetz.US_PER_DAY


@pytest.mark.parametrize("sql", ["SELECT '12:00 MSK'::timetz", "SELECT '12:00+02'::timetz AT TIME ZONE 'Europe/Berlin'",
                                 "SELECT '12:00+02'::time(3) with time zone",
                                 # time without time zone cannot hold 24:00:00 here (PostgreSQL's can)
                                 "SELECT '24:00:00+02'::timetz::time"])
def test_refused_with_0a000(sql, db):
    assert db.answer(sql) == "0A000"


def test_persist_parts_keep_timetz():
    """A table's persist parts (Arrow IPC) give back the same keys (dataflow/timetz.py's layout)."""
    import pyarrow as pa

    from dataflow.types import TIMETZ, arrow_schema
    from storage.persist.parts import decode_part, encode_part
    keys = [timetz.parse(s) for s in ("12:00+02", "24:00:00-15:59:59", "00:00:00.000001+15:59:59")]
    schema = arrow_schema([TIMETZ])
    table = pa.table({"c0": timetz.from_keys(pa.array(keys + [None], pa.int64())),
                      "time": pa.array([1, 2, 3, 4], pa.uint64()), "diff": pa.array([1, 1, 1, 1], pa.int64())},
                     schema=schema)
    back = decode_part(encode_part(table), schema)
    assert back.equals(table)
    assert [None if v is None else timetz.fmt(v) for v in back["c0"].to_pylist()] == \
        ["12:00:00+02", "24:00:00-15:59:59", "00:00:00.000001+15:59:59", None]
