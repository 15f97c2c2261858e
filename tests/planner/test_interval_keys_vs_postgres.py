"""Intervals in keys compare by span, as in PostgreSQL ('1 mon' = '30 days' = '720:00:00',
'1 day' = '24:00:00'): GROUP BY, DISTINCT, DISTINCT ON, set operations, joins of every kind, IN,
EXISTS, = ANY, NOT IN, count(DISTINCT), window partitions and ORDER BY, against PostgreSQL.

Where rows of one span merge, PostgreSQL shows whichever member it met first and Slipstream
the least by fields, so the queries compared show a span (`justify_interval(i)`) or a count
where a merged value would be shown; `test_a_merged_value_is_a_member` checks the member."""

from __future__ import annotations

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb, pg_answer

DDL = ["CREATE TABLE ik_t (k int, i interval)", "CREATE TABLE ik_u (i interval, x int)"]
DATA = ["INSERT INTO ik_t VALUES (1, '1 mon'), (2, '30 days'), (3, '720:00:00'), (4, '1 day'), (5, NULL), "
        "(6, '24 hours'), (7, '25 days'), (8, '-1 mon 30 days'), (9, '0'), (10, '1 year'), (11, '360 days'), "
        "(12, '1 mon')",
        "INSERT INTO ik_u VALUES ('30 days', 10), ('1 day', 20), (NULL, 30), ('1 mon', 40), ('00:00:00', 50), "
        "('8640:00:00', 60)"]

E = "justify_interval({})::text"  # the same for every member of a span

UNORDERED = [
    f"SELECT {E.format('i')}, count(*) FROM ik_t GROUP BY i",
    f"SELECT {E.format('i')}, count(*), sum(k) FROM ik_t GROUP BY i HAVING count(*) > 1",
    f"SELECT {E.format('i')}, k % 2, count(*) FROM ik_t GROUP BY i, k % 2",
    f"SELECT {E.format('i')}, count(*) FROM ik_t GROUP BY ROLLUP (i)",
    f"SELECT {E.format('i')} FROM (SELECT DISTINCT i FROM ik_t) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t UNION SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t UNION ALL SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t EXCEPT SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t EXCEPT ALL SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t INTERSECT SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')} FROM (SELECT i FROM ik_t INTERSECT ALL SELECT i FROM ik_u) s",
    f"SELECT {E.format('i')}, k FROM (SELECT i, k % 2 AS k FROM ik_t INTERSECT SELECT i, x % 2 FROM ik_u) s",
    "SELECT count(DISTINCT i), count(i), count(*) FROM ik_t",
    "SELECT k % 3, count(DISTINCT i) FROM ik_t GROUP BY k % 3",
    "SELECT k, x FROM ik_t JOIN ik_u ON ik_t.i = ik_u.i",
    "SELECT k, x FROM ik_t, ik_u WHERE ik_t.i = ik_u.i",
    "SELECT k, x FROM ik_t JOIN ik_u USING (i)",
    "SELECT k, x FROM ik_t LEFT JOIN ik_u ON ik_t.i = ik_u.i",
    "SELECT k, x FROM ik_t RIGHT JOIN ik_u ON ik_t.i = ik_u.i",
    "SELECT k, x FROM ik_t FULL JOIN ik_u ON ik_t.i = ik_u.i",
    "SELECT k, x FROM ik_t LEFT JOIN ik_u ON ik_t.i + interval '1 day' = ik_u.i + interval '24:00:00'",
    "SELECT a.k, b.k FROM ik_t a JOIN ik_t b ON a.i = b.i AND a.k < b.k",
    "SELECT k FROM ik_t WHERE i IN (SELECT i FROM ik_u)",
    "SELECT k FROM ik_t WHERE i NOT IN (SELECT i FROM ik_u WHERE i IS NOT NULL)",
    "SELECT k FROM ik_t WHERE i NOT IN (SELECT i FROM ik_u)",
    "SELECT k, i IN (SELECT i FROM ik_u) FROM ik_t",
    "SELECT k, i = ANY (SELECT i FROM ik_u) FROM ik_t",
    "SELECT k, i <> ALL (SELECT i FROM ik_u WHERE x > 10) FROM ik_t",
    "SELECT k FROM ik_t WHERE EXISTS (SELECT 1 FROM ik_u WHERE ik_u.i = ik_t.i)",
    "SELECT k FROM ik_t WHERE NOT EXISTS (SELECT 1 FROM ik_u WHERE ik_u.i = ik_t.i)",
    "SELECT k, (SELECT max(x) FROM ik_u WHERE ik_u.i = ik_t.i) FROM ik_t",
    "SELECT k, (SELECT count(*) FROM ik_u WHERE ik_u.i = ik_t.i) FROM ik_t",
    "SELECT k, s.c FROM ik_t, LATERAL (SELECT count(*) AS c FROM ik_u WHERE ik_u.i = ik_t.i) s",
    "SELECT k, (SELECT count(DISTINCT u2.i) FROM ik_u u2 WHERE u2.x > ik_t.k) FROM ik_t",
    "SELECT k, count(*) OVER (PARTITION BY i) FROM ik_t",
    "SELECT k, rank() OVER (ORDER BY i) FROM ik_t",
    "SELECT k, i = '30 days', i > '29 days', i IN ('1 mon', '1 day') FROM ik_t",
    f"SELECT {E.format('i')}, k FROM (SELECT DISTINCT ON (i) i, k FROM ik_t ORDER BY i, k) s",
    f"SELECT {E.format('i')}, k FROM (SELECT DISTINCT ON (i) i, k FROM ik_t ORDER BY i, k DESC) s",
    "SELECT k FROM (SELECT k FROM ik_t ORDER BY i, k LIMIT 4) s",
    "SELECT k FROM (SELECT k FROM ik_t ORDER BY i DESC, k LIMIT 4) s",
    f"WITH RECURSIVE r(i) AS (SELECT i FROM ik_t UNION SELECT i FROM r) SELECT {E.format('i')} FROM r",
]
ORDERED = [
    "SELECT k, i::text FROM ik_t ORDER BY i, k",
    "SELECT k, i::text FROM ik_t ORDER BY i DESC, k",
    "SELECT k, i::text FROM ik_t ORDER BY i NULLS FIRST, k DESC",
]


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        for t in ("ik_t", "ik_u"):
            conn.execute(f"DROP TABLE IF EXISTS {t} CASCADE")
        for s in DDL + DATA:
            conn.execute(s)
        yield conn


@pytest.fixture(scope="module")
def db():
    return EngineDb(DDL, DATA)


@pytest.mark.parametrize("sql", UNORDERED)
def test_interval_keys_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", ORDERED)
def test_interval_order_matches_postgres(sql, db, pg):
    assert db.answer(sql, ordered=True) == pg_answer(pg, sql, ordered=True)


@pytest.mark.parametrize("sql", [
    "SELECT i::text, count(*) FROM ik_t GROUP BY i",
    "SELECT i::text FROM (SELECT DISTINCT i FROM ik_t) s",
    "SELECT i::text FROM (SELECT i FROM ik_u UNION SELECT i FROM ik_t) s",
    "SELECT i::text FROM (SELECT i FROM ik_t INTERSECT SELECT i FROM ik_u) s",
])
def test_a_merged_value_is_a_member(sql, db, pg):
    """Each shown interval is one of its span's members in the input, one row per span."""
    members: dict[str, set[str]] = {}
    for (text, epoch) in pg.execute("SELECT i::text, justify_interval(i)::text FROM ik_t "
                                    "UNION ALL SELECT i::text, justify_interval(i)::text FROM ik_u").fetchall():
        members.setdefault(epoch, set()).add(text)
    rows = db.rows(sql)
    shown = [r[0] for r in rows]
    epochs = [pg.execute("SELECT justify_interval(%s::interval)::text", (s,)).fetchone()[0] if s else None
              for s in shown]
    assert len(set(epochs)) == len(epochs), rows  # one row per span
    for s, e in zip(shown, epochs):
        if s is not None:
            assert s in members[e], (s, members[e])
    assert len(rows) == len(pg_answer(pg, sql.replace("i::text", "justify_interval(i)", 1)))
