"""Materialized views formatting numbers and intervals with to_char stay equal to PostgreSQL's
answer under random inserts, deletes and updates: money-style amounts, signs, '#' overflow,
scientific notation, Roman numerals, grouping by a formatted bucket, and durations."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "amounts": "SELECT id, to_char(amt, 'FM999,999,990.00') AS a, to_char(amt, 'S9,999.9') AS s, "
               "to_char(qty, '999PR') AS q, to_char(ratio, '9.99EEEE') AS e, to_char(qty, 'FMRN') AS r FROM tc",
    "buckets": "SELECT to_char(amt, 'FM9G999') AS bucket, count(*) AS n, "
               "to_char(sum(amt), 'FM999,999,999.99') AS total FROM tc GROUP BY 1",
    "durations": "SELECT id, to_char(took, 'HH24:MI:SS') AS hms, to_char(ratio * 100, 'FM990.0\"%\"') AS pct "
                 "FROM tc WHERE qty > 0",
}
AMOUNTS = ["0", "0.005", "-0.5", "12.345", "999.995", "-1234.5", "98765.4321", "1234567.89", "NULL"]
QTYS = ["0", "1", "-7", "12", "3999", "4000", "NULL"]
RATIOS = ["0", "0.5", "-1.25e-7", "3.5e20", "'NaN'", "'Infinity'", "NULL"]
TOOK = ["'0'", "'1 day 3 hours'", "'27:03:04.5'", "'-90 minutes'", "'45 seconds'", "NULL"]


def _sorted(rows):
    return sorted(rows, key=repr)


def _row(rng, next_id):
    return (f"({next_id}, {rng.choice(AMOUNTS)}, {rng.choice(QTYS)}, {rng.choice(RATIOS)}, "
            f"{rng.choice(TOOK)})")


def test_to_char_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS tc CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}tc (id int, amt numeric(14, 4), qty int, ratio float8, took interval)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace(" tc", f" {p}tc"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u"])
            if kind == "+":
                next_id += 1
                stmt = f"INSERT INTO {{}}tc VALUES {_row(rng, next_id)}"
            elif kind == "-":
                stmt = f"DELETE FROM {{}}tc WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                col, vals = rng.choice([("amt", AMOUNTS), ("qty", QTYS), ("ratio", RATIOS), ("took", TOOK)])
                stmt = f"UPDATE {{}}tc SET {col} = {rng.choice(vals)} WHERE id = {rng.randint(1, max(1, next_id))}"
            ss.execute(stmt.format(p))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
