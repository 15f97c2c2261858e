"""Keys by SQL equality, against PostgreSQL. Intervals compare by span ('1 mon' = '30 days' = '720:00:00',
'1 day' = '24:00:00'): GROUP BY, DISTINCT, DISTINCT ON, set operations, joins of every kind, IN,
EXISTS, = ANY, NOT IN, count(DISTINCT), window partitions and ORDER BY, against PostgreSQL.

Where rows of one span merge, PostgreSQL shows whichever member it met first and Slipstream
a deterministic one, so the queries compared show a span (`justify_interval(i)`) or a count
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
def test_equality_keys_match_postgres(sql, db, pg):
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


# bpchar without a length ignores trailing blanks in comparisons; character(n) values of one
# column are padded alike, and a set operation over two lengths compares them unpadded.
BP_DDL = ["CREATE TABLE ik_bp (k int, b bpchar, c2 char(2), c3 char(3), t text)"]
BP_DATA = ["INSERT INTO ik_bp VALUES (1, 'a', 'a', 'a', 'a'), (2, 'a ', 'b', 'a', 'a '), (3, 'a  ', 'a', 'b', 'b'), "
           "(4, NULL, NULL, 'b  ', NULL), (5, 'b', 'b ', 'c', 'a'), (6, ' a', ' a', ' a ', ' a')"]
T = "rtrim({})"  # the same for every member of a group
BP_UNORDERED = [
    f"SELECT {T.format('b')}, count(*) FROM ik_bp GROUP BY b",
    f"SELECT {T.format('b')} FROM (SELECT DISTINCT b FROM ik_bp) s",
    "SELECT count(DISTINCT b), count(DISTINCT c3) FROM ik_bp",
    f"SELECT {T.format('x')} FROM (SELECT c2 AS x FROM ik_bp UNION SELECT c3 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c2 AS x FROM ik_bp UNION ALL SELECT c3 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c2 AS x FROM ik_bp EXCEPT SELECT c3 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c3 AS x FROM ik_bp EXCEPT ALL SELECT c2 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c2 AS x FROM ik_bp INTERSECT SELECT c3 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT b AS x FROM ik_bp INTERSECT ALL SELECT c3 FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c3 AS x FROM ik_bp UNION SELECT t FROM ik_bp) s",
    f"SELECT {T.format('x')} FROM (SELECT c3 AS x FROM ik_bp UNION SELECT 'a') s",
    "SELECT x FROM (SELECT c3 AS x FROM ik_bp UNION SELECT 'abc') s",
    f"SELECT {T.format('x')} FROM (SELECT b AS x FROM ik_bp UNION SELECT c3 FROM ik_bp) s",
    "SELECT a.k, b.k FROM ik_bp a JOIN ik_bp b ON a.b = b.b",
    "SELECT a.k, b.k FROM ik_bp a JOIN ik_bp b ON a.c2 = b.c3",
    "SELECT a.k, b.k FROM ik_bp a LEFT JOIN ik_bp b ON a.b = b.c2",
    "SELECT k, count(*) OVER (PARTITION BY b) FROM ik_bp",
    "SELECT k FROM ik_bp WHERE b IN (SELECT c3 FROM ik_bp)",
    "SELECT k FROM ik_bp WHERE EXISTS (SELECT 1 FROM ik_bp x WHERE x.b = ik_bp.c3)",
    f"SELECT {T.format('b')}, k FROM (SELECT DISTINCT ON (b) b, k FROM ik_bp ORDER BY b, k) s",
    "SELECT k, rank() OVER (ORDER BY b) FROM ik_bp",
    "SELECT k, c3 IS NOT DISTINCT FROM 'b', b IS NOT DISTINCT FROM 'a', b IS DISTINCT FROM 'a '::bpchar, "
    "c3 IS DISTINCT FROM b, c2 IS NOT DISTINCT FROM c3, (k, c3) IS NOT DISTINCT FROM (4, 'b') FROM ik_bp",
    "SELECT k, nullif(c3, 'b'), nullif(b, 'a '), CASE c3 WHEN 'b' THEN 1 ELSE 0 END, "
    "CASE b WHEN 'a ' THEN 1 ELSE 0 END, (k, c3) = (3, 'b'), c3 IN ('b', 'x'), b = ANY(ARRAY['a'::bpchar]) FROM ik_bp",
    "SELECT k FROM ik_bp WHERE b IS NOT DISTINCT FROM c2",
    # the merged column of character(3) USING text keeps the left copy's padding
    "SELECT c3, c3::text || '|', octet_length(c3) FROM ik_bp a JOIN (SELECT t AS c3 FROM ik_bp) b USING (c3)",
    "SELECT c3, octet_length(c3), pg_typeof(c3)::text FROM ik_bp a JOIN (SELECT t::varchar(5) AS c3 FROM ik_bp) b "
    "USING (c3)",
]


@pytest.fixture(scope="module")
def bp_pg(pg):
    pg.execute("DROP TABLE IF EXISTS ik_bp CASCADE")
    for s in BP_DDL + BP_DATA:
        pg.execute(s)
    return pg


@pytest.fixture(scope="module")
def bp_db():
    return EngineDb(BP_DDL, BP_DATA)


@pytest.mark.parametrize("sql", BP_UNORDERED)
def test_bpchar_keys_match_postgres(sql, bp_db, bp_pg):
    assert bp_db.answer(sql) == pg_answer(bp_pg, sql)


def test_a_merged_bpchar_is_a_member(bp_db):
    rows = bp_db.rows("SELECT b, count(*) FROM ik_bp GROUP BY b")
    assert sorted(rows, key=repr) == sorted([("a", 3), (" a", 1), ("b", 1), (None, 1)], key=repr)


# jsonb and arrays are kept as text: equal values written differently are one key.
JA_DDL = ["CREATE TABLE ik_ja (k int, j jsonb, f float8[], n numeric[], t text[])"]
JA_DATA = ["INSERT INTO ik_ja VALUES (1, '1', '{0}', '{1.0}', '{a}'), (2, '1.0', '{-0}', '{1}', '{a}'), "
           "(3, '{\"a\": 1.50}', '{0,NaN}', '{1.00,2}', '{b,NULL}'), (4, '{\"a\": 1.5}', '{-0,NaN}', '{1,2.0}', '{b,NULL}'), "
           "(5, NULL, NULL, NULL, NULL), (6, '[1, 2.0]', '{}', '{}', '{}'), (7, '[1.00, 2]', '{1e0}', '{}', '{\"a \"}')"]
JA_UNORDERED = [
    "SELECT count(*) FROM ik_ja GROUP BY j",
    "SELECT count(*) FROM ik_ja GROUP BY f",
    "SELECT count(*) FROM ik_ja GROUP BY n",
    "SELECT count(*) FROM ik_ja GROUP BY t",
    "SELECT count(*) FROM (SELECT DISTINCT j, f FROM ik_ja) s",
    "SELECT count(DISTINCT j), count(DISTINCT f), count(DISTINCT n) FROM ik_ja",
    "SELECT a.k, b.k FROM ik_ja a JOIN ik_ja b ON a.j = b.j",
    "SELECT a.k, b.k FROM ik_ja a, ik_ja b WHERE a.f = b.f AND a.k < b.k",
    "SELECT a.k, b.k FROM ik_ja a LEFT JOIN ik_ja b ON a.n = b.n AND a.k <> b.k",
    "SELECT k, j = '1', j <> '{\"a\": 1.5}', f = '{0}', n = '{1}', j IN ('1', '[1,2]') FROM ik_ja",
    "SELECT k FROM ik_ja WHERE j IN (SELECT j FROM ik_ja WHERE k = 2)",
    "SELECT k FROM ik_ja WHERE EXISTS (SELECT 1 FROM ik_ja x WHERE x.f = ik_ja.f AND x.k <> ik_ja.k)",
    "SELECT count(*) FROM (SELECT j FROM ik_ja UNION SELECT j FROM ik_ja WHERE k < 3) s",
    "SELECT count(*) FROM (SELECT f FROM ik_ja INTERSECT SELECT '{0}'::float8[]) s",
    "SELECT count(*) FROM (SELECT n FROM ik_ja EXCEPT SELECT '{1}'::numeric[]) s",
    "SELECT k, count(*) OVER (PARTITION BY j) FROM ik_ja",
]


@pytest.fixture(scope="module")
def ja_pg(pg):
    pg.execute("DROP TABLE IF EXISTS ik_ja CASCADE")
    for s in JA_DDL + JA_DATA:
        pg.execute(s)
    return pg


@pytest.fixture(scope="module")
def ja_db():
    return EngineDb(JA_DDL, JA_DATA)


@pytest.mark.parametrize("sql", JA_UNORDERED)
def test_jsonb_and_array_keys_match_postgres(sql, ja_db, ja_pg):
    assert ja_db.answer(sql) == pg_answer(ja_pg, sql)
