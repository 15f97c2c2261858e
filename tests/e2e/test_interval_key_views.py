"""Materialized views keyed on intervals stay equal to PostgreSQL's answer under random changes:
'1 mon', '30 days' and '720:00:00' are one group, one DISTINCT value and join each other
(GROUP BY, DISTINCT, UNION/EXCEPT/INTERSECT, joins, IN, DISTINCT ON, count(DISTINCT), window
partitions). The views show `justify_interval(i)`, which every member of a span shares, except
`shown`, whose interval must stay a current member of its span as members come and go."""

from __future__ import annotations

import random

import psycopg

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

J = "justify_interval({})::text"
VIEWS = {
    "grp": f"SELECT {J.format('i')} AS s, count(*) AS n, sum(k) AS sk FROM ivt GROUP BY i",
    "dst": f"SELECT {J.format('i')} AS s FROM (SELECT DISTINCT i FROM ivt) d",
    "uni": f"SELECT {J.format('i')} AS s FROM (SELECT i FROM ivt UNION SELECT i FROM ivu) d",
    "exc": f"SELECT {J.format('i')} AS s FROM (SELECT i FROM ivt EXCEPT ALL SELECT i FROM ivu) d",
    "int": f"SELECT {J.format('i')} AS s FROM (SELECT i FROM ivt INTERSECT SELECT i FROM ivu) d",
    "jn": "SELECT ivt.k, ivu.x FROM ivt JOIN ivu ON ivt.i = ivu.i",
    "lj": "SELECT ivt.k, ivu.x FROM ivt LEFT JOIN ivu ON ivt.i = ivu.i",
    "inq": "SELECT k FROM ivt WHERE i IN (SELECT i FROM ivu)",
    "don": f"SELECT {J.format('i')} AS s, k FROM (SELECT DISTINCT ON (i) i, k FROM ivt ORDER BY i, k) d",
    "cnt": "SELECT k % 2 AS p, count(DISTINCT i) AS n FROM ivt GROUP BY k % 2",
    "win": "SELECT k, count(*) OVER (PARTITION BY i) AS n FROM ivt",
}
VALUES = ["'1 mon'", "'30 days'", "'720:00:00'", "'1 day'", "'24:00:00'", "'2 days'", "NULL", "'0'",
          "'-1 mon 30 days'"]


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def test_interval_key_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS ivt, ivu CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}ivt (k int, i interval)")
            conn.execute(f"CREATE TABLE {prefix}ivu (x int, i interval)")

        def named(sql: str) -> str:
            return sql.replace("ivt", f"{p}ivt").replace("ivu", f"{p}ivu")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + named(sql))
        ss.execute(f"CREATE MATERIALIZED VIEW {p}shown AS SELECT i::text AS t, count(*) AS n FROM {p}ivt GROUP BY i")
        next_id = 0
        try:
            for step in range(30):
                table = rng.choice(["ivt", "ivt", "ivu"])
                kind = rng.choice(["+", "+", "+", "-", "u"])
                if kind == "+":
                    next_id += 1
                    stmt = f"INSERT INTO {{}}{table} VALUES ({next_id}, {rng.choice(VALUES)})"
                else:
                    col = "k" if table == "ivt" else "x"
                    victim = rng.randint(1, max(1, next_id))
                    stmt = (f"DELETE FROM {{}}{table} WHERE {col} = {victim}" if kind == "-" else
                            f"UPDATE {{}}{table} SET i = {rng.choice(VALUES)} WHERE {col} = {victim}")
                ss.execute(stmt.format(p))
                pg.execute(stmt.format(""))
                for name, sql in VIEWS.items():
                    got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                    want = _sorted(pg.execute(sql).fetchall())
                    assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
                members: dict[str, set[str]] = {}
                for text, span in pg.execute(f"SELECT i::text, {J.format('i')} FROM ivt").fetchall():
                    members.setdefault(span, set()).add(text)
                shown = ss.execute(f"SELECT t, n FROM {p}shown").fetchall()
                spans = [pg.execute(f"SELECT {J.format('%s::interval')}", (t,)).fetchone()[0] if t else None
                         for t, _ in shown]
                assert sorted(map(repr, spans)) == sorted(map(repr, members)), f"after step {step}: {shown}"
                for (t, _), s in zip(shown, spans):
                    assert t is None or t in members[s], f"after step {step}: {t} is not among {members[s]}"
        finally:
            for name in list(VIEWS) + ["shown"]:
                ss.execute(f"DROP MATERIALIZED VIEW IF EXISTS {p}{name}")
