"""Text to smallint/integer/bigint as PostgreSQL reads it (a leading '+', whitespace isspace()
skips, \\v included), as a one-off SELECT of each text and as a materialized view casting a text
column under random inserts, updates and deletes (NULLs included), compared with PostgreSQL.
COPY of the same texts: tests/e2e/test_copy_in.py::test_integer_texts_as_postgresql."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.e2e.test_copy_in import INT_TEXTS
from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

# The texts every integer type reads (the view's rows: an invalid one would fail the view).
VALID = ["1", "+1", "-1", "007", " +7 ", "\t5\n", "\x0b3\x0b", "-0", "+0", None]


def _answer(conn, sql: str, params=()):
    try:
        return conn.execute(sql, params).fetchall()
    except psycopg.Error as e:
        return e.sqlstate


def test_integer_texts_as_a_select(slipstream, pg_oracle):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for kind in ("smallint", "integer", "bigint"):
            for text in INT_TEXTS + [None]:
                sql = f"SELECT CAST(%s::text AS {kind}), %s::text::{kind} IS NOT NULL"
                assert _answer(ss, sql, (text, text)) == _answer(pg, sql, (text, text)), (kind, text)


def test_a_view_casting_texts_tracks_postgresql(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(5)
    view = "SELECT id, s::int2 AS a, s::int8 AS b, s::int4 + 1 AS c FROM {}it WHERE s::int8 IS NOT NULL OR id > 3"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS it CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}it (id int, s text)")
        ss.execute(f"CREATE MATERIALIZED VIEW {p}iv AS " + view.format(p))
        for step in range(40):
            kind = rng.choice(["+", "+", "-", "u"])
            i = rng.randint(1, 12)
            if kind == "+":
                stmt, args = "INSERT INTO {}it VALUES (%s, %s)", (i, rng.choice(VALID))
            elif kind == "-":
                stmt, args = "DELETE FROM {}it WHERE id = %s", (i,)
            else:
                stmt, args = "UPDATE {}it SET s = %s WHERE id = %s", (rng.choice(VALID), i)
            ss.execute(stmt.format(p), args)
            pg.execute(stmt.format(""), args)
            got = sorted(ss.execute(f"SELECT * FROM {p}iv").fetchall(), key=repr)
            want = sorted(pg.execute(view.format("")).fetchall(), key=repr)
            assert got == want, (step, stmt, args)
