"""Materialized views over table functions with several columns and WITH ORDINALITY (jsonb_each,
jsonb_each_text, json_each, unnest of several arrays, jsonb_array_elements) stay equal to
PostgreSQL's answer under random inserts, deletes and updates of the documents."""

from __future__ import annotations

import random

import psycopg
import pytest
from psycopg.types.string import TextLoader

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "pairs": "SELECT id, key, value, n FROM tfv, jsonb_each(j) WITH ORDINALITY AS e(key, value, n)",
    "texts": "SELECT key, value, count(*) AS c FROM tfv, jsonb_each_text(j) GROUP BY key, value",
    "raw": "SELECT id, e.key, e.value::text AS v, e.ordinality FROM tfv, json_each(s) WITH ORDINALITY e",
    "zip": "SELECT id, x, y, n FROM tfv, unnest(a, b) WITH ORDINALITY AS u(x, y, n)",
    "nested": "SELECT id, e.key, x.value, x.ordinality FROM tfv, jsonb_each(j) e, "
              "jsonb_array_elements(e.value) WITH ORDINALITY x WHERE jsonb_typeof(e.value) = 'array'",
    "counts": "SELECT id, max(n) AS m FROM tfv, jsonb_each(j) WITH ORDINALITY AS e(k, v, n) GROUP BY id",
}
KEYS = ["a", "b", "bb", "ccc", "é", "A", "k\"q"]
VALUES = ["1", "2.50", "null", "true", '"x"', '""', "[1, 2]", "[]", '{"z": [3, null]}', "{}", "-0"]


def _doc(rng: random.Random) -> str:
    """A JSON object text (duplicate keys included: jsonb keeps the last, json all)."""
    items = [f'"{rng.choice(KEYS).replace(chr(34), chr(92) + chr(34))}": {rng.choice(VALUES)}'
             for _ in range(rng.randint(0, 4))]
    return "{" + ", ".join(items) + "}"


def _row(rng: random.Random, id_: int) -> str:
    doc = _doc(rng).replace("'", "''")
    a = rng.choice(["NULL", "'{}'", "'{1,2,3}'", "'{7,NULL}'", "'{4}'"])
    b = rng.choice(["NULL", "'{}'", "'{x,y}'", "'{\"a b\",NULL,c}'"])
    j = "NULL" if rng.random() < 0.1 else f"'{doc}'"
    return f"({id_}, {j}, {j}, {a}, {b})"


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def test_table_function_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(8)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for conn in (ss, pg):
            for t in ("json", "jsonb"):
                conn.adapters.register_loader(t, TextLoader)
        pg.execute("DROP TABLE IF EXISTS tfv CASCADE")
        for conn, prefix in ((ss, p), (pg, "")):
            conn.execute(f"CREATE TABLE {prefix}tfv (id int, j jsonb, s json, a int[], b text[])")
        for name, sql in VIEWS.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.replace("tfv", f"{p}tfv"))
        next_id = 0
        for step in range(30):
            kind = rng.choice(["+", "+", "+", "-", "u"])
            if kind == "+":
                rows = []
                for _ in range(rng.randint(1, 3)):
                    next_id += 1
                    rows.append(_row(rng, next_id))
                stmt = f"INSERT INTO @tfv VALUES {', '.join(rows)}"
            elif kind == "-":
                stmt = f"DELETE FROM @tfv WHERE id = {rng.randint(1, max(1, next_id))}"
            else:
                doc = _doc(rng).replace("'", "''")
                stmt = f"UPDATE @tfv SET j = '{doc}', s = '{doc}' WHERE id = {rng.randint(1, max(1, next_id))}"
            ss.execute(stmt.replace("@tfv", f"{p}tfv", 1))
            pg.execute(stmt.replace("@tfv", "tfv", 1))
            for name, sql in VIEWS.items():
                got = _sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = _sorted(pg.execute(sql).fetchall())
                assert got == want, f"after step {step} ({stmt}), view {name}"
