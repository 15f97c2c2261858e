"""The functions of issue 8 (regexp_match/regexp_matches, make_time, make_timestamptz, date_bin,
isfinite, num_nulls/num_nonnulls, sha224..sha512, array_fill, array_replace, jsonb_set,
jsonb_insert, jsonb_set_lax, `^@`, named arguments) against a real PostgreSQL: values, result
types and SQLSTATEs, on NULLs, empty strings and arrays, edge values and error cases. Arrays,
jsonb and intervals are compared as their text (`::text`), which is what clients see."""

from __future__ import annotations

import random

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer, pg_type_oids

DDL = ["CREATE TABLE fg (id int, s text, n int, f float8, ts timestamp, iv interval, b bytea, "
       "a int[], ta text[], j jsonb)"]
DATA = ["INSERT INTO fg VALUES "
        "(1, 'foobarbequebaz', 3, 1.5, '2024-02-29 13:45:10', '15 minutes', '\\x616263', '{1,2,1,NULL}', "
        "'{a,b,\"c d\"}', '{\"a\": 1, \"b\": [1, 2]}'), "
        "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
        "(3, '', 0, 0, '2000-01-01 00:00:00', '1 day', '\\x', '{}', '{}', '{}'), "
        "(4, 'a1b22c333', -1, -0.5, '1999-12-31 23:59:59.999999', '1 hour 30 minutes', '\\x00ff', '{5}', "
        "'{NULL,x}', '[1, 2, 3]'), "
        "(5, 'ABab AB \"q\" {x} \\\\ NULL', 2, 59.9999999, '2024-01-31 12:00:00', '7 days', '\\x00', '{1,1,1}', "
        "'{\"\",NULL}', '{\"a\": {\"b\": null}}')"]

VALUES = [
    # regexp_match / regexp_matches
    "SELECT id, regexp_match(s, 'b[a-z]')::text FROM fg",
    "SELECT id, regexp_match(s, '([a-z])([0-9]+)')::text FROM fg",
    "SELECT id, regexp_match(s, '(\\S+) (\\S+)')::text FROM fg",
    "SELECT id, regexp_match(s, 'ab', 'i')::text, regexp_match(s, '')::text FROM fg",
    "SELECT id, regexp_match(s, '^(.)(.*)(.)$')::text FROM fg",
    "SELECT id, regexp_match(s, '[{}\"\\\\ ]+')::text FROM fg",
    "SELECT id, m::text FROM fg, regexp_matches(fg.s, '[0-9]+', 'g') AS m",
    "SELECT id, m::text, o FROM fg, regexp_matches(fg.s, '([a-z])([0-9]*)', 'g') WITH ORDINALITY AS r(m, o)",
    "SELECT id, regexp_matches(s, 'a*', 'g')::text FROM fg",
    "SELECT id, regexp_matches(s, 'B', 'gi')::text FROM fg",
    "SELECT id, regexp_matches(s, '^.', 'g')::text FROM fg",
    "SELECT regexp_match(NULL, 'a')::text, regexp_match('a', NULL)::text, regexp_match('', '')::text",
    "SELECT regexp_matches('abc', 'x*', 'g')::text",
    "SELECT regexp_matches(NULL, 'a', 'g')::text",
    # dates and times
    "SELECT make_time(1, 2, 3.5), make_time(1, 2, 60), make_time(1, 2, 59.9999999), make_time(23, 59, 59.999999)",
    "SELECT id, make_time(abs(n), abs(n) * 10, abs(f)) FROM fg",
    "SELECT make_timestamptz(2024, 1, 1, 12, 0, 0), make_timestamptz(2024, 1, 1, 12, 0, 0, 'America/New_York')",
    "SELECT make_timestamptz(2024, 3, 10, 2, 30, 0, 'America/New_York'), make_timestamptz(2024, 11, 3, 1, 30, 0, "
    "'America/New_York')",
    "SELECT make_timestamptz(2024, 1, 1, 12, 0, 0, '+05'), make_timestamptz(2024, 1, 1, 12, 0, 0, '-08:30'), "
    "make_timestamptz(2024, 7, 1, 12, 0, 0, 'CET'), make_timestamptz(2024, 1, 1, 12, 0, 0, 'UTC+3')",
    "SELECT id, date_bin(iv, ts, timestamp '2001-01-01') FROM fg",
    "SELECT id, date_bin('7 minutes', ts, timestamp '2024-01-01 00:03:00') FROM fg",
    "SELECT date_bin('1 hour', '2020-02-11 15:44:17', '2001-01-01'), "
    "date_bin('1 day', timestamp '2020-02-11 15:44:17', timestamptz '2001-01-01')",
    "SELECT id, isfinite(ts), isfinite(iv), isfinite(ts::date), isfinite(ts::timestamptz) FROM fg",
    # num_nulls, sha2
    "SELECT id, num_nulls(s, n, f, ts, j), num_nonnulls(s, n, f, ts, j) FROM fg",
    "SELECT id, num_nulls(VARIADIC a), num_nonnulls(VARIADIC ta) FROM fg",
    "SELECT num_nulls(NULL), num_nonnulls(1, NULL, 'a'), num_nulls(VARIADIC NULL::int[])",
    "SELECT id, sha224(b), sha256(b), sha384(b), sha512(b) FROM fg",
    # arrays
    "SELECT id, array_replace(a, 1, 0)::text, array_replace(ta, NULL, 'n')::text, array_replace(a, NULL, -1)::text "
    "FROM fg",
    "SELECT id, array_fill(n, ARRAY[greatest(n, 0)])::text, array_fill(s, ARRAY[2])::text FROM fg",
    "SELECT array_fill(1.5, ARRAY[2])::text, array_fill(true, ARRAY[1], ARRAY[1])::text, "
    "array_replace(ARRAY['NaN'::float8, 1], 'NaN', 0)::text, array_replace(ARRAY[1, 2], 1, 2.5)::text",
    # jsonb
    "SELECT id, jsonb_set(j, '{a}', '\"x\"')::text, jsonb_set(j, '{b,0}', '9', false)::text FROM fg "
    "WHERE jsonb_typeof(j) = 'object'",
    "SELECT id, jsonb_set(j, ARRAY[n::text], to_jsonb(id))::text, jsonb_insert(j, '{-1}', '0', true)::text "
    "FROM fg WHERE jsonb_typeof(j) = 'array'",
    "SELECT id, jsonb_insert(j, '{new}', '1')::text, jsonb_set_lax(j, '{a}', NULL, true, 'delete_key')::text, "
    "jsonb_set_lax(j, '{a}', NULL)::text FROM fg WHERE jsonb_typeof(j) = 'object'",
    "SELECT jsonb_set('[1, 2, 3]', '{-5}', '9')::text, jsonb_set('[1, 2, 3]', '{5}', '9')::text, "
    "jsonb_insert('{\"a\": [0, 1, 2]}', '{a,-10}', '9')::text, jsonb_set('{}', '{NULL}', '1', false)::text",
    # ^@ and named arguments
    "SELECT id, s ^@ 'a', s ^@ '', starts_with(s, 'foo') FROM fg",
    "SELECT make_interval(days => 3)::text, make_interval(1, days => 3, secs := 1.5)::text, "
    "make_date(day => 3, month => 2, year => 2024)",
    "SELECT id, make_interval(days => n, mins => id)::text FROM fg",
]

ERRORS = [
    "SELECT regexp_match('abc', 'b', 'g')",
    "SELECT regexp_match('abc', 'b', 'z')",
    "SELECT regexp_match('abc', '(')",
    "SELECT make_time(24, 0, 0.5)",
    "SELECT make_time(1, 2, 'NaN')",
    "SELECT make_time(1, 60, 0)",
    "SELECT make_timestamptz(2024, 1, 1, 12, 0, 0, 'nowhere')",
    "SELECT make_timestamptz(2024, 1, 1, 12, 0, 0, '5')",
    "SELECT make_timestamptz(2024, 1, 1, 12, 0, 0, '+16')",
    "SELECT date_bin('1 month', timestamp '2020-02-11', timestamp '2001-01-01')",
    "SELECT date_bin('0 s', timestamp '2020-02-11', timestamp '2001-01-01')",
    "SELECT isfinite('2020-01-01')",
    "SELECT isfinite(1)",
    "SELECT num_nulls()",
    "SELECT num_nulls(VARIADIC 1)",
    "SELECT sha256('abc'::text)",
    "SELECT array_fill(7, ARRAY[-1])",
    "SELECT array_fill(7, NULL)",
    "SELECT array_fill(7, ARRAY[NULL]::int[])",
    "SELECT array_fill(7, ARRAY[3], ARRAY[1, 1])",
    "SELECT array_fill(NULL, ARRAY[2])",
    "SELECT array_replace(ARRAY[1], 'a'::text, 'b')",
    "SELECT jsonb_set('1', '{a}', '2')",
    "SELECT jsonb_set('{\"a\": [1]}', '{a,x}', '2')",
    "SELECT jsonb_set('{\"a\": 1}', '{NULL}', '2')",
    "SELECT jsonb_insert('{\"a\": {\"b\": 1}}', '{a,b}', '2')",
    "SELECT jsonb_set_lax('{\"a\": 1}', '{a}', NULL, true, 'raise_exception')",
    "SELECT jsonb_set_lax('{\"a\": 1}', '{a}', NULL, true, NULL)",
    "SELECT make_interval(1, years => 2)",
    "SELECT make_interval(days => 2, days => 3)",
    "SELECT make_interval(days => 2, 3)",
    "SELECT make_interval(foo => 2)",
]

# Refused here (0A000) where PostgreSQL answers: patterns whose RE2 match could differ.
REFUSED = [
    "SELECT regexp_match('abcd', '(a|ab)(c|bcd)')",
    "SELECT regexp_match('XY1234Z', 'Y*?([0-9]{1,3})')",
    "SELECT regexp_match('xxy', 'x*(xy)?')",
    "SELECT regexp_matches('abab', '(?:ab)+', 'g')",
    "SELECT array_fill(7, ARRAY[2, 2])",
    "SELECT array_fill(7, ARRAY[3], ARRAY[2])",
]


pg, db = oracle_fixtures(DDL, DATA, setup=("SET TIME ZONE 'UTC'",))


@pytest.mark.parametrize("sql", VALUES)
def test_values_and_types_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
    assert db.type_oids(sql) == pg_type_oids(pg, sql)


@pytest.mark.parametrize("sql", ERRORS)
def test_errors_match_postgres(sql, db, pg):
    expected = pg_answer(pg, sql)
    assert isinstance(expected, str), expected
    assert db.answer(sql) == expected


@pytest.mark.parametrize("sql", REFUSED)
def test_refused_where_re2_or_storage_differ(sql, db, pg):
    assert not isinstance(pg_answer(pg, sql), str)
    assert db.answer(sql) == "0A000"


def test_set_returning_order_matches_postgres(db, pg):
    sql = "SELECT m::text, o FROM regexp_matches('baaa,a,,aa', 'a*', 'g') WITH ORDINALITY AS r(m, o)"
    assert db.answer(sql, ordered=True) == pg_answer(pg, sql, ordered=True)


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    """Concatenations of single-character atoms with greedy quantifiers and plain groups: the
    class regexp_match accepts."""
    atoms = ["a", "b", ".", "[ab]", "[^a]", "\\d", "x", "[[:alpha:]]"]
    quants = ["", "", "*", "+", "?", "{1,2}", "{0,1}", "{2}"]
    parts = []
    for _ in range(rng.randint(1, 4)):
        if depth < 2 and rng.random() < 0.3:
            parts.append("(" + _random_pattern(rng, depth + 1) + ")")
        else:
            parts.append(rng.choice(atoms) + rng.choice(quants))
    anchor = rng.random()
    body = "".join(parts)
    return ("^" + body) if anchor < 0.1 else (body + "$") if anchor < 0.2 else body


def test_random_patterns_match_postgres(db, pg):
    """Seeded random patterns and strings: regexp_match's groups and regexp_matches' rows agree
    with PostgreSQL's (its leftmost-longest rules) on the accepted class."""
    rng = random.Random(8)
    strings = ["".join(rng.choice("ab1x") for _ in range(rng.randint(0, 7))) for _ in range(12)]
    values = ", ".join("('" + s + "')" for s in strings)
    for _ in range(60):
        p = _random_pattern(rng)
        for sql in (f"SELECT s, regexp_match(s, '{p}')::text FROM (VALUES {values}) v(s)",
                    f"SELECT s, regexp_matches(s, '{p}', 'g')::text FROM (VALUES {values}) v(s)"):
            assert db.answer(sql) == pg_answer(pg, sql), sql
