"""character(n) and varchar(n) as PostgreSQL has them, over the wire and against PostgreSQL:
explicit casts cut (and character(n) pads), storing a longer value is 22001 unless only blanks are
cut, trailing blanks of character(n) do not count in comparisons, concatenation and length but do
in LIKE, and a materialized view over them stays equal to PostgreSQL's answer under changes."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

QUERIES = [
    "SELECT 'abcd'::varchar(2), cast('abcd' as char(2)), 'x'::character, 'a'::char(3), 'abc  '::varchar(3)",
    "SELECT 12345::varchar(3), 12.5::char(6), true::char(3), 1.5::float(10), 1.5::float(30)",
    "SELECT c, v, c = 'ab', c = 'ab ', v = 'ab', c || '|', v || '|', length(c), c LIKE 'ab%', c LIKE 'ab' FROM {p}cc",
    "SELECT c, count(*) FROM {p}cc GROUP BY c",
    "SELECT a.c, b.v FROM {p}cc a JOIN {p}cc b ON a.c = b.v",
    "SELECT c::varchar(1), v::char(1), c::text, v::char(5) FROM {p}cc",
    "SELECT max(c), min(v) FROM {p}cc",
]
STORE = [
    ("INSERT INTO {p}cc VALUES ('abcd', 'a')", "22001"),
    ("INSERT INTO {p}cc VALUES ('a', 'abcd')", "22001"),
    ("INSERT INTO {p}cc VALUES ('abc    ', 'abc   ')", None),
    ("INSERT INTO {p}cc SELECT v || 'zz', 'q' FROM {p}cc WHERE v IS NOT NULL", "22001"),
    ("INSERT INTO {p}cc SELECT 'q', c || '  ' FROM {p}cc WHERE c = 'x'", None),
    ("UPDATE {p}cc SET v = 'toolong' WHERE c = 'x'", "22001"),
    ("UPDATE {p}cc SET v = 'ok  ' WHERE c = 'x'", None),
]


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def _run(conn, sql):
    try:
        return _sorted(conn.execute(sql).fetchall())
    except psycopg.Error as e:
        return e.sqlstate


def test_character_types_match_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS cc CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}cc (c char(3), v varchar(3))")
            conn.execute(f"INSERT INTO {prefix}cc VALUES ('ab', 'ab'), ('ab   ', 'ab   '), ('x', 'xyz'), "
                         f"(NULL, NULL), ('a b', ' a ')")
        ss.execute(f"CREATE MATERIALIZED VIEW {p}mv AS SELECT c, v, c = 'ab' AS e, c || v AS cat, "
                   f"length(c) AS n FROM {p}cc WHERE c <> 'zz'")
        view = "SELECT c, v, c = 'ab' AS e, c || v AS cat, length(c) AS n FROM cc WHERE c <> 'zz'"
        for q in QUERIES:
            assert _run(ss, q.format(p=p)) == _run(pg, q.format(p="")), q
        for stmt, sqlstate in STORE:
            got, want = _run_stmt(ss, stmt.format(p=p)), _run_stmt(pg, stmt.format(p=""))
            assert got == want == sqlstate, stmt
            assert _run(ss, f"SELECT * FROM {p}cc") == _run(pg, "SELECT * FROM cc"), stmt
            assert _run(ss, f"SELECT * FROM {p}mv") == _run(pg, view), stmt
        desc = ss.execute(f"SELECT c, v FROM {p}cc LIMIT 0").description
        assert [d.type_code for d in desc] == [1042, 1043]


def _run_stmt(conn, sql):
    try:
        conn.execute(sql)
        return None
    except psycopg.Error as e:
        return e.sqlstate
