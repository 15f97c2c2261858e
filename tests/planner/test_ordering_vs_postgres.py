"""ORDER BY, `<`, greatest/least and min/max of arrays, jsonb and intervals against PostgreSQL
(`dataflow/sort_keys.py`): random values of every kind, sorted by both systems.

Equal-ordered values with different texts (jsonb `1` and `1.0`, `'{-0}'` and `'{0}'`, `'1 mon'`
and `'30 days'`) may come in either order, so an order is checked through PostgreSQL's own
ranks: the ids Slipstream returns must have non-decreasing `dense_rank() OVER (ORDER BY v)`.
"""

from __future__ import annotations

import json
import random

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb

_INTS = ["0", "1", "-1", "2", "3", "-3", "2147483647", "-2147483648", "NULL"]
_TEXTS = ['""', "a", "ab", "b", "A", "é", '"a b"', '"NULL"', '"x\\"y"', '"z\\\\"', "NULL", "aa", "a0", "~"]
_NUMERICS = ["-1.5", "0", "0.00", "1", "1.0", "10", "123456.789", "-0.001", "99999999999999999999", "NULL"]
_FLOATS = ["NaN", "Infinity", "-Infinity", "-0", "0", "1.5", "-2", "1e+300", "1e-300", "NULL"]
_INTERVALS = ["1 mon", "30 days", "720:00:00", "-1 day", "1 day -24:00:00", "00:00:00.000001", "1 year",
              "-1 mon 31 days", "1 mon -1 day", "100 years", "-178000000 years", "178000000 years",
              "2 days 01:00:00", "49:00:00"]


def _array(rng: random.Random, elems: list[str]) -> str:
    n = rng.choice([0, 1, 1, 2, 2, 3, 4])
    return "{" + ",".join(rng.choice(elems) for _ in range(n)) + "}"


def _json(rng: random.Random, depth: int = 0):
    kind = rng.choice(["null", "bool", "num", "num", "str", "str", "arr", "obj"] if depth < 3 else
                      ["null", "bool", "num", "str"])
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "num":
        return _Num(rng.choice(["1", "1.0", "-0", "0", "1e100", "-1e100", "0.5", "-2", "10", "9.99", "1e-5",
                           "12345678901234567890.5", "-0.001", "2"]))
    if kind == "str":
        return rng.choice(["", "a", "b", "ab", "aa", "A", "é", "z", "a b", "0"])
    if kind == "arr":
        return [_json(rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    keys = rng.sample(["a", "b", "aa", "ab", "c", "bb", "é", ""], rng.choice([0, 1, 1, 2, 3]))
    return {k: _json(rng, depth + 1) for k in keys}


class _Num(str):
    """A JSON number written as its own text."""


def _dump(v) -> str:
    if isinstance(v, _Num):
        return str.__str__(v)
    if isinstance(v, list):
        return "[" + ", ".join(_dump(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + _dump(x) for k, x in v.items()) + "}"
    return json.dumps(v, ensure_ascii=False)


def _values(kind: str, rng: random.Random, n: int) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.05:
            out.append(None)
        elif kind == "int4[]":
            out.append(_array(rng, _INTS))
        elif kind == "text[]":
            out.append(_array(rng, _TEXTS))
        elif kind == "numeric[]":
            out.append(_array(rng, _NUMERICS))
        elif kind == "float8[]":
            out.append(_array(rng, _FLOATS))
        elif kind == "interval":
            out.append(rng.choice(_INTERVALS))
        else:
            out.append(_dump(_json(rng)))
    return out


def _literal(v: str | None) -> str:
    return "NULL" if v is None else "'" + v.replace("'", "''") + "'"


KINDS = ["int4[]", "text[]", "numeric[]", "float8[]", "jsonb", "interval"]


def _setup(kind: str, seed: int, pg, n: int = 40):
    rng = random.Random(f"{kind}/{seed}")
    vals = _values(kind, rng, n)
    ddl = [f"CREATE TABLE o (id int, g int, v {kind})"]
    data = ["INSERT INTO o VALUES " + ", ".join(f"({i}, {i % 3}, {_literal(v)})" for i, v in enumerate(vals))]
    pg.execute("DROP TABLE IF EXISTS o")
    for s in ddl + data:
        pg.execute(s)
    return EngineDb(ddl, data)


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        yield conn


def _ranks(pg, desc: bool = False) -> dict[int, int]:
    d = " DESC" if desc else ""
    return dict(pg.execute(f"SELECT id, dense_rank() OVER (ORDER BY v{d}) FROM o").fetchall())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", KINDS)
def test_order_by_matches_postgres(kind, seed, pg):
    db = _setup(kind, seed, pg)
    for desc in (False, True):
        ranks = _ranks(pg, desc)
        d = " DESC" if desc else ""
        ids = [r[0] for r in db.rows(f"SELECT id FROM o ORDER BY v{d}")]
        got = [ranks[i] for i in ids]
        assert got == sorted(got), (desc, [db.rows(f"SELECT v::text FROM o WHERE id = {i}")[0][0] for i in ids])
        assert sorted(ids) == sorted(ranks)
        # ORDER BY ... LIMIT (TopK), also inside a subquery.
        top = [r[0] for r in db.rows(f"SELECT id FROM o ORDER BY v{d} LIMIT 7")]
        assert [ranks[i] for i in top] == sorted(ranks.values())[:7]
        sub = [r[0] for r in db.rows(f"SELECT id FROM (SELECT id, v FROM o ORDER BY v{d} LIMIT 5) s")]
        assert sorted(ranks[i] for i in sub) == sorted(ranks.values())[:5]
    # Ranks as window functions compute them.
    assert sorted(db.rows("SELECT id, dense_rank() OVER (ORDER BY v) FROM o")) == sorted(_ranks(pg).items())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", KINDS)
def test_comparisons_match_postgres(kind, seed, pg):
    db = _setup(kind, seed, pg, n=25)
    for op in ("<", "<=", ">", ">="):
        sql = f"SELECT x.id, y.id FROM o x, o y WHERE x.v {op} y.v"
        assert sorted(db.rows(sql)) == sorted(pg.execute(sql).fetchall()), op
    sql = "SELECT x.id, y.id, greatest(x.v, y.v)::text, least(x.v, y.v, NULL)::text FROM o x, o y WHERE x.id < y.id + 3"
    assert sorted(db.rows(sql), key=repr) == sorted(pg.execute(sql).fetchall(), key=repr)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["int4[]", "text[]", "numeric[]", "float8[]", "interval"])
def test_min_max_match_postgres(kind, seed, pg):
    """min/max per group; where equal-ordered values differ in text, PostgreSQL's `=` decides."""
    db = _setup(kind, seed, pg)
    sql = "SELECT g, min(v)::text, max(v)::text FROM o GROUP BY g"
    mine = sorted(db.rows(sql), key=repr)
    theirs = sorted(pg.execute(sql).fetchall(), key=repr)
    assert [r[0] for r in mine] == [r[0] for r in theirs]
    for a, b in zip(mine, theirs):
        for x, y in zip(a[1:], b[1:]):
            assert (x is None) == (y is None)
            if x is not None:
                assert pg.execute(f"SELECT {_literal(x)}::{kind} = {_literal(y)}::{kind}").fetchone()[0], (x, y)
    # A global aggregate, and over no rows.
    sql = "SELECT min(v)::text IS NULL, max(v)::text IS NULL FROM o WHERE id < 0"
    assert db.rows(sql) == pg.execute(sql).fetchall()


def test_jsonb_rules(pg):
    """PostgreSQL's jsonb order, rule by rule (compareJsonbContainers)."""
    vals = ['[]', 'null', '""', '"a"', '"b"', '"ab"', '-1', '0', '1', '1.0', '1e100', 'false', 'true', '[null]',
            '[1]', '[[]]', '[0, 0]', '{}', '{"a": 1}', '{"b": 0}', '{"aa": 0}', '{"a": 1, "b": 2}',
            '{"b": 1, "aa": 1}', '{"a": 1, "bb": 1}', '{"a": [1]}', '{"a": {}}']
    ddl = ["CREATE TABLE o (id int, g int, v jsonb)"]
    data = ["INSERT INTO o VALUES " + ", ".join(f"({i}, 0, '{v}')" for i, v in enumerate(vals))]
    pg.execute("DROP TABLE IF EXISTS o")
    for s in ddl + data:
        pg.execute(s)
    db = EngineDb(ddl, data)
    ranks = _ranks(pg)
    assert sorted(db.rows("SELECT id, dense_rank() OVER (ORDER BY v) FROM o")) == sorted(ranks.items())
    sql = "SELECT x.id, y.id FROM o x, o y WHERE x.v < y.v"
    assert sorted(db.rows(sql)) == sorted(pg.execute(sql).fetchall())


@pytest.mark.parametrize("sql", [
    "SELECT min(v) FROM o", "SELECT 1 FROM o ORDER BY v::json", "SELECT v::json < v::json FROM o",
    "SELECT min(v::json) FROM o",
])
def test_refusals_match_postgres(sql, pg):
    ddl = ["CREATE TABLE o (id int, g int, v jsonb)"]
    data = ["INSERT INTO o VALUES (1, 0, '[]')"]
    pg.execute("DROP TABLE IF EXISTS o")
    for s in ddl + data:
        pg.execute(s)
    db = EngineDb(ddl, data)
    try:
        pg.execute(sql)
        expected = None
    except psycopg.Error as e:
        expected = e.sqlstate
    assert db.answer(sql) == expected
