"""Materialized views using the string functions stay equal to PostgreSQL's answer under random
inserts, deletes and updates: padding, slicing, splitting, concat/format over several types,
quoting, hashing, regular expressions, and a join and a grouping on function results."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "shape": "SELECT id, lpad(s, 8, '.') AS lp, rpad(s, 6) AS rp, left(s, n) AS l, right(s, 3) AS r, "
             "repeat(t, 2) AS rep, reverse(s) AS rev, overlay(s placing '#' from 2 for 1) AS ov FROM sv",
    "split": "SELECT id, split_part(s, ' ', 1) AS w1, split_part(s, ' ', -1) AS wl, strpos(s, t) AS p, "
             "position(' ' in s) AS sp, starts_with(s, t) AS sw FROM sv",
    "text": "SELECT id, concat(s, n, c, ok) AS cc, concat_ws('/', s, t, n) AS cw, "
            "format('%s|%L|%-4s|', s, n, t) AS f, quote_ident(t) AS qi, quote_nullable(s) AS qn FROM sv",
    "codes": "SELECT id, md5(s) AS h, ascii(s) AS a, to_hex(n) AS x, octet_length(c) AS o, bit_length(s) AS bl, "
             "translate(s, 'ao', 'AO') AS tr, initcap(t) AS ic FROM sv",
    "regex": "SELECT id, regexp_replace(s, '[aeiou]+', '_', 'g') AS rr, regexp_count(s, 'o') AS rc, "
             "regexp_like(s, '^h', 'i') AS rl, regexp_substr(s, '[a-z]+o') AS rs FROM sv",
    "grp": "SELECT left(s, 1) AS k, count(*) AS n, max(length(s)) AS m FROM sv GROUP BY left(s, 1)",
    "jn": "SELECT a.id, b.id AS bid FROM sv a JOIN sv b ON split_part(a.s, ' ', 1) = b.t WHERE a.id <> b.id",
}
WORDS = ["hello", "world", "héllo", "oops", "a", "", "Hollow oak", "o'neil", "Select", "zoo zoo"]
TS = ["'hello'", "'oak'", "'o'", "''", "NULL", "'Select'", "'zoo'"]


def _sorted(rows):
    return sorted(rows, key=repr)


def _row(rng: random.Random, i: int) -> str:
    s = rng.choice(WORDS + [f"{rng.choice(WORDS)} {rng.choice(WORDS)}"])
    s = "NULL" if rng.random() < 0.1 else "'" + s.replace("'", "''") + "'"
    n = rng.choice(["NULL", "0", "-2", "3", "255", "-1"])
    c = rng.choice(["NULL", "'ab'", "'é'", "''"])
    ok = rng.choice(["true", "false", "NULL"])
    return f"({i}, {s}, {rng.choice(TS)}, {n}, {c}, {ok})"


def test_string_function_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS sv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}sv (id int, s text, t text, n int, c char(3), ok boolean)")
            conn.execute(f"INSERT INTO {prefix}sv VALUES " + ", ".join(_row(random.Random(i), i) for i in range(1, 9)))
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("sv", f"{p}sv"))
        next_id = 8
        for step in range(20):
            kind = rng.choice(["+", "+", "-", "u"])
            if kind == "+":
                next_id += 1
                stmt = f"INSERT INTO {{}}sv VALUES {_row(rng, next_id)}"
            elif kind == "-":
                stmt = f"DELETE FROM {{}}sv WHERE id = {rng.randint(1, next_id)}"
            else:
                s = rng.choice(WORDS).replace("'", "''")
                stmt = f"UPDATE {{}}sv SET s = '{s}', t = {rng.choice(TS)} WHERE id = {rng.randint(1, next_id)}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
