"""Materialized views over a timetz column stay equal to PostgreSQL's answer under random
changes (min/max, grouping, a join on timetz keys where '12:00+02' and '11:00+01' do not match,
top-k, arithmetic and fields), and the table and views come back equal after a restart (the
column's Parquet parts in persist)."""

from __future__ import annotations

import random
import signal

import psycopg
import pytest
from psycopg.types.string import TextLoader

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "mm": "SELECT g, min(a) AS lo, max(a) AS hi, count(a) AS n FROM tv GROUP BY g",
    "grp": "SELECT a, count(*) AS n FROM tv GROUP BY a",
    "jn": "SELECT x.id, y.id AS yid FROM tv x JOIN tv y ON x.a = y.b",
    "top": "SELECT a FROM (SELECT a FROM tv ORDER BY a DESC NULLS LAST LIMIT 3) s",
    "calc": "SELECT id, a + interval '90 minutes' AS later, extract(timezone_hour FROM a) AS zh, "
            "a < b AS earlier, a AT TIME ZONE '-03' AS there FROM tv",
    "dst": "SELECT DISTINCT b FROM tv",
}
VALUES = ["'12:00+02'", "'11:00+01'", "'10:00Z'", "'00:00:00.5-15:59:59'", "'23:59:59.999999+15:59'",
          "'24:00:00+00'", "'05:30-05:30'", "NULL", "'12:00:00.000001+02'"]


def _text_loaders(conn) -> None:
    # psycopg cannot load 24:00:00: compare timetz values as PostgreSQL's text.
    conn.adapters.register_loader(1266, TextLoader)


def _sorted(rows):
    return sorted((tuple(float(x) if hasattr(x, "as_tuple") else x for x in r) for r in rows), key=repr)


def _check(ss, pg, p, where):
    for name, sql in VIEWS.items():
        got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
        want = _sorted(pg.execute(sql).fetchall())
        assert got == want, f"{where}, view {name}"
    got = _sorted(ss.execute(f"SELECT id, g, a, b FROM {p}tv").fetchall())
    assert got == _sorted(pg.execute("SELECT id, g, a, b FROM tv").fetchall()), where


def _changes(ss, pg, p, rng, next_id, steps):
    for step in range(steps):
        kind = rng.choice(["+", "+", "+", "-", "u"])
        if kind == "+":
            next_id += 1
            stmt = (f"INSERT INTO {{}}tv VALUES ({next_id}, {rng.randint(1, 3)}, {rng.choice(VALUES)}, "
                    f"{rng.choice(VALUES)})")
        elif kind == "-":
            stmt = f"DELETE FROM {{}}tv WHERE id = {rng.randint(1, max(1, next_id))}"
        else:
            stmt = f"UPDATE {{}}tv SET a = {rng.choice(VALUES)} WHERE id = {rng.randint(1, max(1, next_id))}"
        ss.execute(stmt.format(p))
        pg.execute(stmt.format(""))
        _check(ss, pg, p, f"after step {step} ({stmt.format('')})")
    return next_id


def test_timetz_views_track_postgres_and_survive_restart(fresh_slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(8)
    server = fresh_slipstream
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        _text_loaders(pg)
        pg.execute("SET TIME ZONE 'UTC'")
        pg.execute("DROP TABLE IF EXISTS tv CASCADE")
        pg.execute("CREATE TABLE tv (id int, g int, a timetz, b time with time zone)")
        with psycopg_connect(server) as ss:
            ss.autocommit = True
            _text_loaders(ss)
            ss.execute(f"CREATE TABLE {p}tv (id int, g int, a timetz, b time with time zone)")
            for name, sql in VIEWS.items():
                ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("tv", f"{p}tv"))
            next_id = _changes(ss, pg, p, rng, 0, 25)
        server.restart(signal.SIGTERM)
        with psycopg_connect(server) as ss:
            ss.autocommit = True
            _text_loaders(ss)
            _check(ss, pg, p, "after the restart")
            _changes(ss, pg, p, rng, next_id, 8)
        pg.execute("DROP TABLE tv CASCADE")
