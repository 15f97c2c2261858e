"""Every negated predicate form sqlglot produces, with NULLs on every side, in SELECT lists, WHERE,
JOIN ... ON and HAVING, planned and run by the engine and compared with PostgreSQL.

sqlglot represents some negations as a flag on the predicate (`NOT LIKE`, `!~~`, `NOT ILIKE`,
`!~~*`) and others as a NOT around it (`NOT BETWEEN`, `NOT IN`, `!~`, `NOT SIMILAR TO`, `IS NOT
TRUE`); both must reach the engine as a negation."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE np (id int, s text, p text, n int, lo int, hi int, b boolean)",
       "CREATE TABLE nq (k int, s2 text)"]
DATA = ["INSERT INTO np VALUES "
        "(1, 'abc', '%z%', 5, 1, 9, true), (2, 'xyz', '%z%', 0, 9, 1, false), "
        "(3, NULL, 'a%', NULL, 1, 9, NULL), (4, 'ABC', NULL, 7, NULL, 9, true), "
        "(5, 'a_c', 'a\\_c', 9, 9, NULL, false), (6, '', '%', 3, 3, 3, NULL), "
        "(7, 'line1\nline2', 'line1%', 2, 5, 1, true)",
        "INSERT INTO nq VALUES (1, 'abc'), (2, NULL), (3, 'xyz'), (NULL, 'q')"]

# Predicates over np's columns (each also appears with NULL operands through the data).
PREDICATES = [
    "s NOT LIKE '%z%'", "s NOT LIKE p", "s LIKE p", "NOT (s LIKE '%z%')", "s !~~ '%z%'", "s ~~ 'a%'",
    "s NOT ILIKE '%Z%'", "s NOT ILIKE p", "s !~~* '%B%'", "s ~~* 'A%'", "s NOT LIKE NULL",
    "s NOT LIKE 'a\\_c'", "s LIKE 'line1%'",
    "n NOT BETWEEN 1 AND 5", "n NOT BETWEEN lo AND hi", "n BETWEEN lo AND hi",
    "n BETWEEN SYMMETRIC hi AND lo", "n NOT BETWEEN SYMMETRIC hi AND lo", "n NOT BETWEEN SYMMETRIC 5 AND 1",
    "n NOT BETWEEN NULL AND 5",
    "n NOT IN (1, 5, 9)", "n NOT IN (1, NULL)", "NOT n IN (0, 7)", "n IN (0, NULL)",
    "n IS NOT DISTINCT FROM lo", "n IS DISTINCT FROM lo", "NOT (n IS DISTINCT FROM NULL)",
    "s NOT SIMILAR TO '%(b|y)%'", "s SIMILAR TO 'a_c'", "s NOT SIMILAR TO 'a%'", "s SIMILAR TO '(abc|xyz)'",
    "s SIMILAR TO 'line1%'",
    "s !~ 'b'", "s ~ '^a'", "s !~* 'B'", "s ~* '^a.c$'", "s ~ 'line1.line2'", "s !~ '^[a-z]+$'",
    "b IS NOT TRUE", "b IS NOT FALSE", "b IS NOT UNKNOWN", "b IS UNKNOWN", "b IS TRUE", "b IS FALSE",
    "NOT b", "NOT (b IS TRUE)", "(n > 3) IS NOT TRUE", "NOT (n > 3) IS NOT FALSE",
    "NOT (s NOT LIKE '%z%')", "NOT NOT (n NOT IN (1))",
]


def _queries() -> list[str]:
    out = []
    for p in PREDICATES:
        out.append(f"SELECT id, {p} FROM np")
        out.append(f"SELECT id FROM np WHERE {p}")
        out.append(f"SELECT id, k FROM np JOIN nq ON k = id AND ({p})")
        out.append(f"SELECT id, k FROM np LEFT JOIN nq ON k = id AND ({p})")
        out.append(f"SELECT ({p}) AS g, count(*) FROM np GROUP BY 1 HAVING NOT (({p}) IS NULL) OR count(*) > 0")
    out += [
        "SELECT n, count(*) FROM np GROUP BY n HAVING n NOT IN (0, 5)",
        "SELECT s, count(*) FROM np GROUP BY s HAVING s NOT LIKE '%z%'",
        "SELECT s, count(*) FROM np GROUP BY s HAVING max(s) NOT ILIKE 'A%'",
        "SELECT n, count(*) FROM np GROUP BY n HAVING sum(n) NOT BETWEEN SYMMETRIC 8 AND 2",
        "SELECT id, s2 FROM np JOIN nq ON s2 NOT LIKE s",
    ]
    return out


QUERIES = _queries()


pg, db = oracle_fixtures(DDL, DATA)


def test_reported_cases(db):
    assert db.rows("SELECT 'abc' NOT LIKE '%z%'") == [(True,)]
    assert db.rows("SELECT 'abc' NOT ILIKE '%Z%'") == [(True,)]
    assert db.rows("SELECT 'abc' !~~ '%z%'") == [(True,)]
    assert db.rows("SELECT NOT ('abc' LIKE '%z%')") == [(True,)]
    assert db.rows("SELECT s FROM np WHERE s NOT LIKE '%z%' AND id <= 2") == [("abc",)]


@pytest.mark.parametrize("sql", QUERIES)
def test_negated_predicate_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql, sqlstate", [
    ("SELECT 'a' ~ '(a)\\1'", "0A000"),          # back-references: RE2 has none
    ("SELECT 'a' ~ 'a(?=b)'", "0A000"),          # lookahead
    ("SELECT 'a' ~ '\\ma'", "0A000"),            # PostgreSQL-only word-boundary escape
    ("SELECT 'a' ~ s FROM np", "0A000"),         # a pattern that is not a constant
    ("SELECT 'a' ~ '(a'", "2201B"),              # invalid pattern, as PostgreSQL says
    ("SELECT 'a' LIKE (SELECT 'a') ESCAPE '#'", "0A000"),
])
def test_refused_patterns(sql, sqlstate, db):
    assert db.answer(sql) == sqlstate
