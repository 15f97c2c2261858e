"""The string functions (planner/functions/strings.py, dataflow/functions/strings.py) checked
against PostgreSQL: values and result types over edge inputs (NULLs, empty strings, multibyte
characters, character(n) padding, zero/negative/huge counts), and errors (SQLSTATE and message).

initcap is compared on ASCII strings only: the oracle runs under the C locale, where PostgreSQL
capitalises ASCII letters only; Slipstream follows a UTF-8 ctype, as upper() and lower() do.
"""

from __future__ import annotations

import psycopg
import pytest

from dataflow.errors import SqlError
from tests.planner.engine_oracle import oracle_fixtures, pg_answer, pg_type_oids

DDL = ["CREATE TABLE st (id int, s text, t text, n int, b bigint, c char(5), v varchar(10), f float8, "
       "d numeric(6,2), ok boolean)"]
DATA = ["INSERT INTO st VALUES "
        "(1, 'abc', 'b', 2, 2, 'ab', 'xy', 1.5, 1.25, true), "
        "(2, '', '', 0, 0, '', '', 0, 0, false), "
        "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
        "(4, 'héllo wörld', 'l', -1, -1, 'é', 'wö', -0.5, -3.5, true), "
        "(5, 'Hello World 3rd o''neil x_y a1b', 'o', 3, 3000000000, 'a b', 'A B', 1e20, 9999.99, false), "
        "(6, ' padded  ', ' ', 10, -9223372036854775808, '  x  ', ' x ', 'NaN', -0.01, true), "
        "(7, 'a,b,,c', ',', -2, 9223372036854775807, 'a,b', ',', 'Infinity', 100, NULL), "
        "(8, 'x\"y''z\\w', '\"', 1, 255, 'q\"', 'SELECT', 1e-5, 0.5, false), "
        "(9, 'aaaa', 'aa', 5, -2147483648, 'aa', 'user', -1e300, 1, true), "
        "(10, 'SELECT', 'select', -10, 16, 'int', 'left', 3.14159, 2.5, false)"]

ASCII = "WHERE s ~ '^[ -~]*$'"

QUERIES = [
    # positions
    "SELECT id, strpos(s, t), strpos(s, 'l'), strpos(s, ''), strpos(c, 'b') FROM st",
    "SELECT id, position(t IN s), position('o' IN s), position('' IN s) FROM st",
    "SELECT id, starts_with(s, t), starts_with(s, 'a'), starts_with(s, '') FROM st",
    # slices
    "SELECT id, left(s, n), right(s, n), left(s, 2), right(s, 2), left(s, -2), right(s, -2) FROM st",
    "SELECT id, left(s, 0), right(s, 0), left(s, 100), right(s, -100), left(c, 3), right(c, 3) FROM st",
    "SELECT id, left(s, 2::smallint), left(s, '3') FROM st",
    # repeat / reverse
    "SELECT id, repeat(s, n), repeat(s, 0), repeat(s, -5), repeat(t, 3), repeat(c, 2) FROM st",
    "SELECT id, reverse(s), reverse(c), reverse(v) FROM st",
    # case
    f"SELECT id, initcap(s), initcap(upper(s)), initcap(t), initcap(v) FROM st {ASCII}",
    "SELECT initcap('hello wORLD foo-bar o''neil 3rd x_y a1b 1a 2B'), initcap(''), initcap('ABC DEF')",
    # padding
    "SELECT id, lpad(s, 5), rpad(s, 5), lpad(s, n), rpad(s, n), lpad(s, 0), rpad(s, -3) FROM st",
    "SELECT id, lpad(s, 12, 'xy'), rpad(s, 12, 'xyz'), lpad(s, 7, ''), rpad(s, 2, 'ab'), lpad(s, n, t) FROM st",
    "SELECT id, rpad(s, n, t), lpad(s, 8, 'é'), rpad(c, 7, '.'), lpad(v, 6, '*') FROM st",
    "SELECT id, lpad(s, n + 6, 'ab'), rpad(s, n + 6, 'ab') FROM st",
    # split_part
    "SELECT id, split_part(s, ',', 1), split_part(s, ',', 2), split_part(s, ',', -1), split_part(s, ',', -2) FROM st",
    "SELECT id, split_part(s, t, 1), split_part(s, t, -1), split_part(s, t, 2), split_part(s, '', 1) FROM st",
    "SELECT id, split_part(s, 'l', 5), split_part(s, 'l', -5), split_part(s, '', -1), split_part(s, '', 2) FROM st",
    "SELECT id, split_part('a,b,c', ',', n), split_part(s, 'aa', 2), split_part(s, 'aa', -1) FROM st WHERE n <> 0",
    # concat family
    "SELECT id, concat(s, t), concat(s, n, c, ok, f), concat(NULL), concat(s), concat(b, v, d) FROM st",
    "SELECT id, concat_ws(',', s, t), concat_ws('', s, n, c), concat_ws(t, s, v, ok), concat_ws(',', NULL) FROM st",
    "SELECT id, concat_ws(NULL, s), concat_ws(',', NULL, NULL), concat_ws(', ', n, b, d, c) FROM st",
    "SELECT concat(1, 2.5::float4, 1e-5::float8, '2024-01-01'::date, '2024-01-01 10:00'::timestamp, "
    "1.50::numeric(5,3), 1::int2, 12345678901::int8, true, 'x'::char(3), 'y')",
    "SELECT concat('2024-01-01 10:00+02'::timestamptz, 'a'), concat_ws('|', true, false, NULL::bool)",
    # format
    "SELECT id, format('%s|%s', s, n), format('[%5s][%-5s]', s, t), format('%L %L', s, n), format('%2$s %1$s', s, t) FROM st",
    "SELECT id, format('%s %% %s', c, v), format('%2$s %s', s, t, n), format('x'), format(s) FROM st",
    "SELECT id, format('%I', s), format('%I.%I', t, v) FROM st WHERE s IS NOT NULL AND t IS NOT NULL AND v IS NOT NULL",
    "SELECT id, format('%*s|', n, s), format('%-*s|', n, t), format('%1$*2$s|', s, n) FROM st",
    "SELECT id, format(s || ' %s', n), format('%s', ok), format('%L', ok), format('%s %s', f, d) FROM st WHERE s NOT LIKE '%\\%%'",
    "SELECT format(NULL), format(NULL, 1), format('%s', NULL), format('%L', NULL), format('%10L|', NULL), format('%-10s|', NULL)",
    "SELECT format('%1$s %1$s %s', 'a', 'b'), format('%s %2$s %s', 'a', 'b', 'c'), format('%*s', NULL, 'x')",
    # hashing, characters
    "SELECT id, md5(s), md5(c), md5(t) FROM st",
    "SELECT id, ascii(s), ascii(t), ascii(c), chr(ascii(s) + 1) FROM st WHERE s <> ''",
    "SELECT chr(65), chr(233), chr(1114111), chr(127), chr(10), chr(55295), chr(57344)",
    "SELECT id, translate(s, 'lo', 'LO'), translate(s, 'abc', 'x'), translate(s, '', 'x'), translate(s, t, 'Z') FROM st",
    "SELECT id, translate(s, 'aa', 'xy'), translate(c, ' ', '_'), translate(s, 'héö', 'HEO') FROM st",
    # lengths
    "SELECT id, octet_length(s), octet_length(c), octet_length(v), bit_length(s), bit_length(c) FROM st",
    "SELECT octet_length(NULL), bit_length(NULL), octet_length('é'::char(3)), bit_length('é')",
    # to_hex
    "SELECT id, to_hex(n), to_hex(b), to_hex(n::smallint::int) FROM st WHERE n BETWEEN -32768 AND 32767",
    "SELECT to_hex(-1), to_hex(-1::bigint), to_hex(2147483647), to_hex(-2147483648), to_hex(0), "
    "to_hex(9223372036854775807), to_hex(-9223372036854775807 - 1)",
    # quoting
    "SELECT id, quote_ident(s), quote_ident(t), quote_ident(v), quote_ident(c) FROM st",
    "SELECT id, quote_literal(s), quote_literal(n), quote_literal(c), quote_literal(ok), quote_literal(d) FROM st",
    "SELECT id, quote_nullable(s), quote_nullable(n), quote_nullable(f), quote_nullable(NULL::text) FROM st",
    "SELECT quote_ident('Abc'), quote_ident('a b'), quote_ident('_x1$'), quote_ident('1x'), quote_ident('int'), "
    "quote_ident('name'), quote_ident('varchar'), quote_literal(E'a\\\\b''c'), quote_nullable(NULL)",
    # overlay
    "SELECT id, overlay(s placing t from 2), overlay(s placing 'XYZ' from 1 for 1), overlay(s placing '' from 3 for 2) FROM st",
    "SELECT id, overlay(s placing t from 1 for n), overlay(s placing 'Q' from 20), overlay(s placing 'Q' from 2 for -3) FROM st",
    "SELECT overlay('Txxxxas' placing 'hom' from 2 for 4), overlay('abc' placing 'X' from 1 for 0)",
    # regular expressions
    "SELECT id, regexp_replace(s, 'l+', 'L'), regexp_replace(s, 'l+', 'L', 'g'), regexp_replace(s, 'O', '0', 'gi') FROM st",
    "SELECT id, regexp_replace(s, '(.)(.)', '\\2\\1', 'g'), regexp_replace(s, '[aeiou]', '<\\&>', 'g') FROM st",
    "SELECT id, regexp_replace(s, '(b)', '[\\1\\&\\\\\\0\\2]'), regexp_replace(s, 'b', 'x\\'), regexp_replace(s, '^', '>') FROM st",
    "SELECT id, regexp_replace(s, 'a', t), regexp_replace(s, 'a', t, 'g'), regexp_replace(s, '\\s+', ' ', 'g') FROM st",
    "SELECT id, regexp_replace(s, 'l', 'L', 3), regexp_replace(s, 'l', 'L', 3, 0), regexp_replace(s, 'l', 'L', 1, 1, 'g') FROM st",
    "SELECT id, regexp_replace(s, 'L', '_', 1, 0, 'i'), regexp_replace(s, 'x*', '-'), regexp_replace(s, 'l', 'L', n + 11) FROM st",
    "SELECT id, regexp_count(s, 'l'), regexp_count(s, '[a-z]+'), regexp_count(s, 'L', 1, 'i'), regexp_count(s, 'l', 4) FROM st",
    "SELECT id, regexp_like(s, 'l{2}'), regexp_like(s, 'WOR', 'i'), regexp_like(s, '^a'), regexp_like(s, 'b$', 'c') FROM st",
    "SELECT id, regexp_substr(s, 'l.'), regexp_substr(s, '[A-Z]\\w*'), regexp_substr(s, 'o', 6), regexp_substr(s, 'W', 1, 1, 'i') FROM st",
    "SELECT id, regexp_instr(s, 'l.'), regexp_instr(s, 'l.', 1, 1, 1), regexp_instr(s, 'o', 6), regexp_instr(s, 'zz') FROM st",
    "SELECT regexp_replace('abc', 'b', NULL), regexp_replace('abc', NULL, 'x'), regexp_count(NULL, 'a'), regexp_like('a', 'a', NULL)",
    # NULL constants and unknown literals
    "SELECT strpos(NULL, 'a'), left(NULL, 1), repeat('ab', NULL), lpad('a', NULL), split_part(NULL, ',', 1), "
    "md5(NULL), chr(NULL), to_hex(NULL::int), initcap(NULL), reverse('abc'), ascii('')",
    # use in WHERE / GROUP BY
    "SELECT left(s, 1), count(*) FROM st GROUP BY left(s, 1)",
    "SELECT id FROM st WHERE strpos(s, 'o') > 0 AND lpad(t, 3, '.') <> '...'",
]

ERRORS = [
    "SELECT repeat('ab', 2147483647)",
    "SELECT repeat(s, 600000000) FROM st WHERE id = 1",
    "SELECT lpad('x', 300000000)",
    "SELECT rpad(s, 300000000, 'ab') FROM st WHERE id = 1",
    "SELECT split_part('a,b', ',', 0)",
    "SELECT split_part(s, ',', n) FROM st",
    "SELECT chr(0)",
    "SELECT chr(-1)",
    "SELECT chr(1114112)",
    "SELECT chr(55296)",
    "SELECT chr(n) FROM st WHERE id = 2",
    "SELECT overlay('abc' placing 'X' from 0)",
    "SELECT overlay('abc' placing 'X' from 2147483647 for 2)",
    "SELECT overlay(s placing 'X' from n) FROM st WHERE id = 4",
    "SELECT format('%s %s', 'a')",
    "SELECT format('%x', 1)",
    "SELECT format('%', 1)",
    "SELECT format('abc %')",
    "SELECT format('%0$s', 1)",
    "SELECT format('%1$', 1)",
    "SELECT format('%*0$s', 1)",
    "SELECT format('%*1s', 1)",
    "SELECT format('%I', NULL)",
    "SELECT format('%I', s) FROM st",
    "SELECT format('%I %x', NULL)",
    "SELECT format('%s %x', NULL)",
    "SELECT format('%*s', 'abc', 1)",
    "SELECT regexp_replace('abc', 'b', 'x', 'z')",
    "SELECT regexp_replace('abc', 'b', 'x', 0)",
    "SELECT regexp_replace('abc', 'b', 'x', 1, -1)",
    "SELECT regexp_count('abc', 'b', 1, 'g')",
    "SELECT regexp_count('abc', 'b', 0)",
    "SELECT regexp_like('abc', 'b', 'g')",
    "SELECT regexp_substr('abc', 'b', 1, 0)",
    "SELECT regexp_instr('abc', 'b', 1, 1, 2)",
    "SELECT regexp_replace('abc', '(', 'x')",
    "SELECT lpad('a', 3::bigint)",
    "SELECT repeat('a', 2.5)",
    "SELECT left(1, 2)",
    "SELECT to_hex(1.5)",
    "SELECT to_hex('10')",
    "SELECT to_hex(1::smallint)",
    "SELECT octet_length(12)",
    "SELECT concat()",
    "SELECT concat_ws(',')",
    "SELECT chr('a')",
    "SELECT strpos(s, n) FROM st",
]


pg, db = oracle_fixtures(DDL, DATA, setup=("SET TIME ZONE 'UTC'",))


@pytest.mark.parametrize("sql", QUERIES)
def test_string_function_matches_postgres(sql, db, pg):
    expected = pg_answer(pg, sql)
    assert not isinstance(expected, str), f"PostgreSQL refused the test query: {expected}"
    assert db.answer(sql) == expected
    assert db.type_oids(sql) == pg_type_oids(pg, sql)


def _pg_error(conn, sql: str) -> tuple[str, str]:
    try:
        conn.execute(sql).fetchall()
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary
    raise AssertionError(f"PostgreSQL answered {sql}")


@pytest.mark.parametrize("sql", ERRORS)
def test_string_function_errors_match_postgres(sql, db, pg):
    state, message = _pg_error(pg, sql)
    with pytest.raises(SqlError) as e:
        db.rows(sql)
    if state == "2201B":  # the reason after "invalid regular expression:" is RE2's own
        message = message.split(":")[0]
        assert e.value.message.startswith(message)
    else:
        assert e.value.message == message
    assert e.value.sqlstate == state


REFUSED = [
    "SELECT regexp_replace(s, t, 'x') FROM st",
    "SELECT regexp_replace(s, 'a*', 'x', 'g') FROM st",
    "SELECT regexp_count(s, 'a*') FROM st",
    "SELECT regexp_replace(s, 'a', 'x', 1, 2) FROM st",
    "SELECT regexp_replace(s, 'a', 'x', 'x') FROM st",
    "SELECT regexp_substr(s, 'a', 1, 2) FROM st",
    "SELECT regexp_substr(s, '(a)', 1, 1, '', 1) FROM st",
    "SELECT regexp_count(s, '^a', n) FROM st",
    "SELECT regexp_like(s, '\\mabc') FROM st",
]


@pytest.mark.parametrize("sql", REFUSED)
def test_unsupported_variants_are_refused(sql, db):
    with pytest.raises(SqlError) as e:
        db.rows(sql)
    assert e.value.sqlstate == "0A000"


def test_unicode_initcap_follows_a_utf8_ctype(db):
    # PostgreSQL under a UTF-8 locale (towupper/iswalnum); the oracle's C locale leaves these.
    assert db.rows("SELECT initcap('élan ÉCOLE über straße 3ème')") == [("Élan École Über Straße 3ème",)]
