"""COPY ... FROM STDIN in the three formats clients use: text (psql, psycopg), CSV, and binary
(asyncpg's copy_records_to_table)."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

ROWS = [
    (1, "plain", 1.5, Decimal("2.25"), True, dt.datetime(2024, 1, 2, 3, 4, 5)),
    (2, "tab\there, newline\nthere, back\\slash", None, None, False, None),
    (3, None, -0.25, Decimal("-7"), None, dt.datetime(1999, 12, 31, 23, 59, 59, 123456)),
]
DDL = "(id int, s text, f double precision, n numeric(10,2), b boolean, ts timestamp)"


def _select(conn, table):
    return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


def test_copy_text_and_csv_with_psycopg(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t {DDL}")
        with conn.cursor().copy(f"COPY {p}t FROM STDIN") as copy:
            for row in ROWS:
                copy.write_row(row)
        assert _select(conn, f"{p}t") == ROWS
        # Many rows without escapes take the vectorised path.
        conn.execute(f"CREATE TABLE {p}big (id int, s text)")
        with conn.cursor().copy(f"COPY {p}big FROM STDIN") as copy:
            copy.write("".join(f"{i}\tv{i}\n" if i % 10 else f"{i}\t\\N\n" for i in range(20000)))
        assert conn.execute(f"SELECT count(*), count(s), sum(id) FROM {p}big").fetchone() == \
            (20000, 18000, sum(range(20000)))
        conn.execute(f"CREATE TABLE {p}c (id int, s text)")
        with conn.cursor().copy(f"COPY {p}c FROM STDIN WITH (FORMAT csv)") as copy:
            copy.write('1,"a,b"\n2,\n3,"say ""hi"""\n')
        assert _select(conn, f"{p}c") == [(1, "a,b"), (2, None), (3, 'say "hi"')]


def test_copy_binary_with_asyncpg(slipstream, unique_prefix):
    p = unique_prefix

    async def run():
        conn = await asyncpg_connect(slipstream)
        try:
            await conn.execute(f"CREATE TABLE {p}t {DDL}")
            result = await conn.copy_records_to_table(f"{p}t", records=ROWS)
            assert result == "COPY 3"
            return [tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}t ORDER BY id")]
        finally:
            await conn.close()

    assert asyncio.run(run()) == ROWS


def _copy_in_both(ss, pg, name: str, ddl: str, option: str, payload: str):
    """`payload` copied into a new table `name` in Slipstream and in PostgreSQL: per system, its
    rows (sorted) or "error" (always a 22xxx SQLSTATE, the class of bad COPY data)."""
    import psycopg

    results = []
    for conn in (ss, pg):
        conn.execute(f"CREATE TABLE {name} {ddl}")
        try:
            with conn.cursor().copy(f"COPY {name} FROM STDIN {option}") as copy:
                if payload:
                    copy.write(payload)
            results.append(sorted(conn.execute(f"SELECT * FROM {name}").fetchall(), key=repr))
        except psycopg.Error as e:
            assert e.sqlstate is not None and e.sqlstate[:2] == "22", (conn, payload, e)
            results.append("error")
    return results


def _assert_copies_as_postgresql(slipstream, pg_oracle, prefix: str, ddls: tuple[str, ...], option: str,
                                 payloads: list[str], skip: tuple[str, ...] = ()) -> None:
    """Every payload copied into a fresh table of each shape in both systems: the same rows, or
    an error in both. `skip`: payloads known to differ (each named where it is passed)."""
    import psycopg

    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for t, ddl in enumerate(ddls):
            for i, payload in enumerate(payloads):
                ours, theirs = _copy_in_both(ss, pg, f"{prefix}t{t}_{i}", ddl, option, payload)
                if payload not in skip:
                    assert ours == theirs, (ddl, payload, ours, theirs)


CSV_PAYLOADS = ["", "\n", "\n\n", "1,x\n2,y\n", "1,x\n\n2,y", "1,\"a\n\nb\"\n", "1\n\n2\n", "a,b", "1,2,3\n"]


@pytest.mark.parametrize("header", [False, True])
def test_csv_edge_payloads_as_postgresql(slipstream, pg_oracle, unique_prefix, header):
    """CSV COPY of nothing (COPY 0, not an internal error), of empty lines (a NULL row in a
    one-column table, missing data in a wider one: never a row of NULLs PostgreSQL refuses),
    of a header alone, and of rows with too few or too many fields: the same rows as PostgreSQL,
    or an error where it errs (22P02 / 22P04: the SQLSTATE class of bad COPY data)."""
    option = "WITH (FORMAT csv, HEADER true)" if header else "WITH (FORMAT csv)"
    _assert_copies_as_postgresql(slipstream, pg_oracle, unique_prefix + ("h" if header else "n"),
                                 ("(a int, b text)", "(a int)"), option, CSV_PAYLOADS)


def test_csv_with_quoted_newlines_larger_than_a_block_as_postgresql(slipstream, pg_oracle, unique_prefix):
    """Quoted fields holding newlines, in a payload larger than Arrow's 1 MiB read block (it
    failed to split such data: 22P04 for valid rows), with a header whose quoted field holds a
    newline too (the header is the first record, not the first line)."""
    rows = "".join(f'{i},"line {i}\nsecond, ""q"""\n' if i % 7 == 0 else f"{i},v{i}\n" for i in range(90_000))
    for header, payload in ((False, rows), (True, '"id\nx",b\n' + rows)):
        option = "WITH (FORMAT csv, HEADER true)" if header else "WITH (FORMAT csv)"
        assert len(payload) > 1 << 20
        _assert_copies_as_postgresql(slipstream, pg_oracle, unique_prefix + ("h" if header else "n"),
                                     ("(a int, b text)",), option, [payload])


TEXT_PAYLOADS = ["", "\n", "a\n\nb\n", "q\r\n\r\nz\r\n", "x\n\\.\ny\n", "a\\\\x\n\nb\n", "a\tb\n\nc\td\n", "a\tb\n"]


@pytest.mark.parametrize("header", [False, True])
def test_text_empty_lines_as_postgresql(slipstream, pg_oracle, unique_prefix, header):
    """Text COPY: an empty line is a row with one empty field (an empty string in a one-column
    text table: it was skipped, losing the row; missing data in a wider table), on the
    vectorised path and on the escape-handling one; the end-of-data marker ends the data."""
    option = "WITH (HEADER true)" if header else ""
    _assert_copies_as_postgresql(slipstream, pg_oracle, unique_prefix + ("h" if header else "n"),
                                 ("(a text)", "(a text, b text)"), option, TEXT_PAYLOADS)


INT_TEXTS = ["1", "+1", "-1", "007", " +7 ", "\t5\n", "\x0b3\x0b", "", "+", "++1", "+-1", "1e3", "0x10",
             "1_000", "１", "32767", "32768", "-32768", "-32769", "2147483648", "-2147483649",
             "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809"]


@pytest.mark.parametrize("rows", [1, 20])
def test_integer_texts_as_postgresql(slipstream, pg_oracle, unique_prefix, rows):
    """Integer input rules, as COPY fields (one row: checked value by value; twenty: the
    vectorised checks) into smallint, integer and bigint columns: the same value as
    PostgreSQL, or the same SQLSTATE (22P02 bad syntax, 22003 out of range). A leading '+'
    (which Arrow's parser refuses) and a vertical tab around the digits are valid."""
    import psycopg

    def quoted(text: str) -> str:
        return '"' + text.replace('"', '""') + '"'

    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for kind in ("smallint", "integer", "bigint"):
            for i, text in enumerate(INT_TEXTS):
                name = f"{unique_prefix}{kind}_{rows}_{i}"
                results = []
                for conn in (ss, pg):
                    conn.execute(f"CREATE TABLE {name} (a {kind})")
                    try:
                        with conn.cursor().copy(f"COPY {name} FROM STDIN WITH (FORMAT csv)") as copy:
                            copy.write("".join(quoted(text) + "\n" for _ in range(rows)))
                        results.append(conn.execute(f"SELECT a FROM {name}").fetchall())
                    except psycopg.Error as e:
                        results.append(e.sqlstate)
                assert results[0] == results[1], (kind, text, results)
