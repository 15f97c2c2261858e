"""PostgreSQL's float semantics, checked against PostgreSQL: NaN equals NaN and sorts above every
other value (comparisons, IS DISTINCT FROM, joins, min/max, ORDER BY, ORDER BY ... LIMIT inside a
subquery), and casts of floats and timestamps to text give PostgreSQL's strings."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE fl (i int, f float8, r real, ts timestamp, tz timestamptz)"]
DATA = ["INSERT INTO fl VALUES (1, 'NaN', 'NaN', '2024-01-02 03:04:05.5', '2024-01-02 03:04:05+00'), "
        "(2, 1.5, 1.5, '2024-01-01', '2024-01-01 00:00:00.25+00'), (3, '-Infinity', '-Infinity', NULL, NULL), "
        "(4, 1e300, 1e30, '1999-12-31 23:59:59.999999', '2000-01-01'), (5, NULL, NULL, NULL, NULL), "
        "(6, -0.0, -0.0, '2024-02-29', '2024-02-29'), (7, 1e-5, 1e-5, NULL, NULL), "
        "(8, 123456789012345.6, 12345679, NULL, NULL), (9, 'NaN', 'Infinity', NULL, NULL)"]

UNORDERED = [
    "SELECT i, f = 'NaN', f > 1, f < 1, f >= 'NaN', f <> 'NaN', f IS DISTINCT FROM 'NaN' FROM fl",
    "SELECT i, r = 'NaN', r > 'Infinity', r <= 0 FROM fl",
    "SELECT a.i, b.i FROM fl a JOIN fl b ON a.f = b.f",
    "SELECT a.i, b.i FROM fl a, fl b WHERE a.f > b.f",
    "SELECT min(f), max(f), min(r), max(r) FROM fl",
    "SELECT f = f, count(*), max(f), min(f) FROM fl GROUP BY 1",
    "SELECT max(f) FROM fl WHERE i > 100",
    "SELECT f, count(*) FROM fl GROUP BY f",
    "SELECT DISTINCT f FROM fl",
    "SELECT f FROM fl WHERE f IN ('NaN', 1.5)",
    "SELECT i, f::text, r::text, ts::text, tz::text FROM fl",
    "SELECT i, (f * 2)::text, (r / 3)::text FROM fl",
    "SELECT x FROM (SELECT f AS x FROM fl ORDER BY f DESC LIMIT 3) s",
    "SELECT x FROM (SELECT f AS x FROM fl ORDER BY f LIMIT 3) s",
    "SELECT 1e-5::float8::text, 100000000000000::float8::text, 12345678.9::real::text, 'NaN'::float8::text",
]
ORDERED = [
    "SELECT i, f FROM fl ORDER BY f, i",
    "SELECT i, f FROM fl ORDER BY f DESC, i",
    "SELECT i, r FROM fl ORDER BY r DESC NULLS LAST, i",
]


pg, db = oracle_fixtures(DDL, DATA, setup=("SET TIME ZONE 'UTC'",))


@pytest.mark.parametrize("sql", UNORDERED)
def test_float_semantics_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", ORDERED)
def test_float_order_matches_postgres(sql, db, pg):
    assert db.answer(sql, ordered=True) == pg_answer(pg, sql, ordered=True)


def test_min_max_of_boolean_does_not_exist(db, pg):
    assert db.answer("SELECT max(i > 1) FROM fl") == pg_answer(pg, "SELECT max(i > 1) FROM fl") == "42883"
