"""Negated predicates inside materialized views stay equal to PostgreSQL's answer for the same
query after every random change (NULLs on every side): as select-list values, in WHERE, in a
join's ON and in HAVING."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

PREDICATES = [
    "s NOT LIKE '%z%'", "s !~~ p", "s NOT ILIKE '%B%'", "s !~~* p",
    "n NOT BETWEEN lo AND hi", "n NOT BETWEEN SYMMETRIC hi AND lo", "n NOT IN (1, 5, NULL)", "n NOT IN (2, 3)",
    "n IS NOT DISTINCT FROM lo", "s NOT SIMILAR TO '%(b|y)%'", "s !~ '^a'", "s !~* 'C$'",
    "b IS NOT TRUE", "b IS NOT FALSE", "b IS NOT UNKNOWN",
]
VIEWS = {
    "vals": "SELECT id, " + ", ".join(f"({p}) AS p{i}" for i, p in enumerate(PREDICATES)) + " FROM np",
    "w1": "SELECT id, s FROM np WHERE s NOT LIKE '%z%' AND n NOT BETWEEN SYMMETRIC hi AND lo",
    "w2": "SELECT id FROM np WHERE n NOT IN (1, 5) OR b IS NOT TRUE",
    "w3": "SELECT id FROM np WHERE s !~* 'c$' AND s NOT SIMILAR TO 'x%'",
    "on": "SELECT np.id, nq.k FROM np JOIN nq ON nq.k = np.n AND nq.t NOT ILIKE np.s",
    "lon": "SELECT np.id, nq.k FROM np LEFT JOIN nq ON nq.k = np.n AND nq.t NOT LIKE '%q%'",
    "hav": "SELECT s, count(*) AS c FROM np GROUP BY s HAVING s NOT LIKE 'a%' AND sum(n) NOT BETWEEN 3 AND 6",
}
WORDS = [None, "abc", "xyz", "ABC", "a_c", "", "zzz", "b"]
PATTERNS = [None, "%z%", "a%", "%", "_b_", "A%"]


def _row(rng: random.Random, rid: int) -> str:
    def num():
        return rng.choice(["NULL", "1", "2", "3", "5", "7"])
    s, p = rng.choice(WORDS), rng.choice(PATTERNS)
    b = rng.choice(["NULL", "true", "false"])
    lit = lambda v: "NULL" if v is None else f"'{v}'"  # noqa: E731
    return f"({rid}, {lit(s)}, {lit(p)}, {num()}, {num()}, {num()}, {b})"


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def test_negated_predicate_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    pre = unique_prefix
    rng = random.Random(11)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        pg.execute("DROP TABLE IF EXISTS np, nq CASCADE")
        for conn, prefix in ((ss, pre), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}np (id int, s text, p text, n int, lo int, hi int, b boolean)")
            conn.execute(f"CREATE TABLE {prefix}nq (k int, t text)")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {pre}{name} AS "
                       + sql.replace("np", f"{pre}np").replace("nq", f"{pre}nq"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["np+", "np+", "nq+", "np-", "npu", "nq-"])
            if kind == "np+":
                next_id += 1
                stmt = f"INSERT INTO {{}}np VALUES {_row(rng, next_id)}"
            elif kind == "nq+":
                t = rng.choice(WORDS)
                stmt = f"INSERT INTO {{}}nq VALUES ({rng.choice(['NULL', '1', '3', '5'])}, " \
                       f"{'NULL' if t is None else repr(t)})"
            elif kind == "np-":
                stmt = f"DELETE FROM {{}}np WHERE id = {rng.randint(1, max(1, next_id))}"
            elif kind == "npu":
                s = rng.choice(WORDS)
                stmt = f"UPDATE {{}}np SET s = {'NULL' if s is None else repr(s)}, n = {rng.choice(['NULL', '2', '5'])} " \
                       f"WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                stmt = f"DELETE FROM {{}}nq WHERE k = {rng.choice(['1', '3', '5'])}"
            ss.execute(stmt.format(pre))
            pg.execute(stmt.format(""))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {pre}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt.format('')}), view {name}"
