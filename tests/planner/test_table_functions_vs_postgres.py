"""Set-returning functions in FROM compared with PostgreSQL 15: jsonb_each, jsonb_each_text,
json_each, json_each_text (two columns), WITH ORDINALITY on every set-returning function, and
unnest of several arrays (zipped, padded with NULLs). Rows, result types, column names and, for
errors, SQLSTATE and message."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.string import TextLoader

from dataflow.errors import SqlError
from planner import parse, plan_statement
from tests.planner.engine_oracle import EngineDb, pg_answer, pg_type_oids

DDL = ["CREATE TABLE docs (id int, j jsonb, s json)",
       "CREATE TABLE arrs (id int, a int[], b text[], c numeric[])"]
DATA = [
    """INSERT INTO docs VALUES
       (1, '{"b": 1, "a": [1, 2.50], "aa": {"x": null}}', '{"b": 1, "a" : [1,  2.50], "aa": {"x" :null}}'),
       (2, '{}', '{}'),
       (3, NULL, NULL),
       (4, '{"k": "t\\"q", "n": null, "e": "", "u": "\\u00e9", "f": false, "z": -0.0}',
           '{"k": "t\\"q", "n": null, "e": "", "u": "\\u00e9", "f": false, "z": -0.0}'),
       (5, '{"dup": 1, "dup": 2, "x": {"dup": [3]}}', '{"dup": 1, "dup": 2, "x": {"dup": [3]}}'),
       (6, '{"ccc": 1, "bb": 2, "a": 3, "ab": 4, "B": 5, "é": 6}', '{"ccc": 1, "bb": 2, "a": 3, "ab": 4, "B": 5, "é": 6}'),
       (7, '{"a": 1}', '{"a": 1}')""",
    """INSERT INTO arrs VALUES (1, '{1,2,3}', '{x,y}', '{1.5}'), (2, '{}', '{z}', NULL),
       (3, NULL, NULL, NULL), (4, '{7,NULL}', '{}', '{}'), (5, '{4}', '{"a b",NULL,c}', '{0,-2.25}')""",
]

EACH = ["jsonb_each", "jsonb_each_text"]
JSON_EACH = ["json_each", "json_each_text"]

QUERIES = [
    # each function on constants and on every row (LATERAL after a table)
    *[f"SELECT * FROM {f}('{{\"b\": 1, \"a\": [2, {{\"c\": null}}], \"a\": \"x\"}}')" for f in EACH + JSON_EACH],
    *[f"SELECT * FROM {f}('{{}}')" for f in EACH + JSON_EACH],
    *[f"SELECT * FROM {f}(NULL)" for f in EACH + JSON_EACH],
    *[f"SELECT id, e.* FROM docs, {f}(docs.j) e ORDER BY id, key" for f in EACH],
    *[f"SELECT id, e.* FROM docs, {f}(s) AS e ORDER BY id, key" for f in JSON_EACH],
    *[f"SELECT id, key, value FROM docs, LATERAL {f}(j) ORDER BY id, key" for f in EACH],
    *[f"SELECT id, k, v, n FROM docs, {f}(s) WITH ORDINALITY AS e(k, v, n) ORDER BY id, n" for f in JSON_EACH],
    *[f"SELECT id, k, v, n FROM docs, {f}(j) WITH ORDINALITY AS e(k, v, n) ORDER BY id, n" for f in EACH],
    *[f"SELECT * FROM docs CROSS JOIN LATERAL {f}(docs.j) WITH ORDINALITY e ORDER BY id, ordinality" for f in EACH],
    *[f"SELECT id, e.* FROM docs JOIN {f}(docs.j) e ON e.key = 'a' ORDER BY id" for f in EACH],
    # nested documents, values of every kind, filters and grouping over the result
    "SELECT id, key, jsonb_typeof(value) FROM docs, jsonb_each(j) ORDER BY id, key",
    "SELECT id, key, value IS NULL FROM docs, jsonb_each_text(j) ORDER BY id, key",
    "SELECT id, key, value::text FROM docs, json_each(s) ORDER BY id, key",
    "SELECT key, count(*) FROM docs, jsonb_each(j) GROUP BY key ORDER BY key",
    "SELECT id, sub.key, sub.value FROM docs, jsonb_each(j) e, jsonb_each(e.value) sub "
    "WHERE jsonb_typeof(e.value) = 'object' ORDER BY id",
    "SELECT id, x FROM docs, jsonb_each(j) e, jsonb_array_elements(e.value) x "
    "WHERE jsonb_typeof(e.value) = 'array' ORDER BY id",
    "SELECT id, e.value FROM docs, jsonb_each(j -> 'x') e ORDER BY id",
    "SELECT id, e.value FROM docs, jsonb_each_text(j) e WHERE e.value = '1' ORDER BY id",
    "SELECT DISTINCT key FROM docs, jsonb_each_text(j) ORDER BY key",
    "SELECT count(*) FROM docs, jsonb_each(j)",
    "SELECT (SELECT count(*) FROM jsonb_each(d.j)) AS c FROM docs d ORDER BY id",
    # column names and aliases
    "SELECT * FROM jsonb_each('{\"a\": 1}') AS t(k)",
    "SELECT t.k, t.value FROM jsonb_each('{\"a\": 1}') AS t(k)",
    "SELECT jsonb_each.key FROM jsonb_each('{\"a\": 1}')",
    "SELECT x FROM jsonb_array_elements('[1, {\"a\": 2}]') x",
    "SELECT g, g.x FROM generate_series(1, 2) AS g(x)",
    "SELECT * FROM jsonb_each('{\"a\": 1}') WITH ORDINALITY",
    "SELECT * FROM jsonb_each('{\"a\": 1}') WITH ORDINALITY AS t(a, b)",
    "SELECT * FROM json_each_text('{\"a\": 1}') WITH ORDINALITY AS t(a, b, c)",
    # WITH ORDINALITY on every set-returning function
    "SELECT * FROM generate_series(1, 3) WITH ORDINALITY",
    "SELECT * FROM generate_series(10, 1, -4) WITH ORDINALITY AS g",
    "SELECT * FROM generate_series(1, 3) WITH ORDINALITY AS g(v, n)",
    "SELECT g.v, g.n FROM generate_series(5, 6) WITH ORDINALITY AS g(v, n)",
    "SELECT * FROM generate_series('2024-01-31'::timestamp, '2024-04-30', '1 month') WITH ORDINALITY",
    "SELECT * FROM unnest(ARRAY[10, 20, 30]) WITH ORDINALITY",
    "SELECT * FROM unnest(ARRAY['x', NULL, 'z']) WITH ORDINALITY AS u(v, pos)",
    "SELECT * FROM unnest('{}'::int[]) WITH ORDINALITY",
    "SELECT * FROM jsonb_array_elements('[1, \"a\", null, [2]]') WITH ORDINALITY",
    "SELECT * FROM jsonb_array_elements_text('[1, \"a\", null, [2]]') WITH ORDINALITY AS e(v, n)",
    "SELECT * FROM jsonb_object_keys('{\"bb\": 1, \"a\": 2}') WITH ORDINALITY",
    "SELECT * FROM regexp_split_to_table('a,b,,c', ',') WITH ORDINALITY",
    "SELECT * FROM upper('a') WITH ORDINALITY",
    "SELECT id, v, n FROM arrs, unnest(a) WITH ORDINALITY AS u(v, n) ORDER BY id, n",
    "SELECT id, v, n FROM arrs, LATERAL unnest(b) WITH ORDINALITY AS u(v, n) ORDER BY id, n",
    "SELECT id, g, n FROM arrs, generate_series(1, id) WITH ORDINALITY AS s(g, n) ORDER BY id, n",
    "SELECT id, v, n FROM arrs JOIN unnest(b) WITH ORDINALITY AS u(v, n) ON n > 1 ORDER BY id, n",
    "SELECT id, max(n) FROM arrs, unnest(a) WITH ORDINALITY AS u(v, n) GROUP BY id ORDER BY id",
    "SELECT id, v FROM arrs, unnest(a) WITH ORDINALITY AS u(v, n) WHERE n = 2 ORDER BY id",
    "SELECT * FROM generate_series(1, 2) AS a(x), unnest(ARRAY['p', 'q']) WITH ORDINALITY AS b(y, n) ORDER BY x, n",
    # unnest of several arrays
    "SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a'])",
    "SELECT * FROM unnest(ARRAY[1], ARRAY['a', 'b', 'c'], ARRAY[true, false]) WITH ORDINALITY",
    "SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a']) AS u(x)",
    "SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a']) WITH ORDINALITY AS u(x, y, z)",
    "SELECT * FROM unnest('{}'::int[], '{}'::text[])",
    "SELECT * FROM unnest(NULL::int[], ARRAY[1])",
    "SELECT id, x, y, c, n FROM arrs, unnest(a, b, c) WITH ORDINALITY AS u(x, y, c, n) ORDER BY id, n",
    "SELECT id, x, y FROM arrs, LATERAL unnest(arrs.a, arrs.b) AS u(x, y) ORDER BY id, x, y",
    # errors
    *[f"SELECT * FROM {f}('[1, 2]')" for f in EACH + JSON_EACH],
    *[f"SELECT * FROM {f}('\"s\"')" for f in EACH + JSON_EACH],
    *[f"SELECT * FROM {f}('3')" for f in EACH + JSON_EACH],
    "SELECT * FROM jsonb_each('{\"a\": 1}'::json)",
    "SELECT * FROM json_each('{\"a\": 1}'::jsonb)",
    "SELECT * FROM jsonb_each('{\"a\": 1}'::text)",
    "SELECT * FROM jsonb_each('{\"a\": 1}') AS t(a, b, c)",
    "SELECT * FROM generate_series(1, 2) AS g(a, b)",
    "SELECT * FROM generate_series(1, 2) WITH ORDINALITY AS g(a, b, c)",
    "SELECT * FROM unnest(ARRAY[1], 5)",
    "SELECT unnest(ARRAY[1], ARRAY[2])",
    "SELECT * FROM jsonb_each_text('{\"a\": \"\\u0000\"}')",
    "SELECT id, e.* FROM docs, jsonb_each(j -> 'a') e",
]


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        for t in ("json", "jsonb"):  # the engine keeps both as text
            conn.adapters.register_loader(t, TextLoader)
        conn.execute("DROP TABLE IF EXISTS docs, arrs CASCADE")
        for s in DDL + DATA:
            conn.execute(s)
        yield conn


@pytest.fixture(scope="module")
def db():
    return EngineDb(DDL, DATA)


def _pg_error(conn, sql: str) -> tuple[str, str] | None:
    try:
        conn.execute(sql).fetchall()
        return None
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary


@pytest.mark.parametrize("sql", QUERIES)
def test_like_postgres(sql, db, pg):
    ordered = "ORDER BY" in sql
    want = pg_answer(pg, sql, ordered)
    if isinstance(want, str):
        sqlstate, message = _pg_error(pg, sql)
        with pytest.raises(SqlError) as e:
            db.rows(sql)
        assert (e.value.sqlstate, e.value.message) == (sqlstate, message)
        return
    assert db.answer(sql, ordered) == want
    assert db.type_oids(sql) == pg_type_oids(pg, sql)
    names = [c.name for c in plan_statement(db.catalog, parse(sql)[0]).columns]
    assert names == [d.name for d in pg.execute(sql).description]


@pytest.mark.parametrize("f", EACH + JSON_EACH)
def test_select_list_form_is_refused(f, db):
    """PostgreSQL answers a record (`(a,1)`) there, a type Slipstream does not have."""
    with pytest.raises(SqlError) as e:
        db.rows(f"SELECT {f}({'j' if f.startswith('jsonb') else 's'}) FROM docs")
    assert e.value.sqlstate == "0A000" and f in e.value.message


@pytest.mark.parametrize("sql", ["SELECT e FROM docs, jsonb_each(j) e",
                                 "SELECT g FROM generate_series(1, 2) WITH ORDINALITY AS g(x)",
                                 "SELECT * FROM ROWS FROM (generate_series(1, 2), unnest(ARRAY['a']))",
                                 "SELECT * FROM docs LEFT JOIN LATERAL jsonb_each(j) e ON true"])
def test_refused(sql, db):
    """A whole-row reference to a function item of several columns is a record in PostgreSQL;
    ROWS FROM and LEFT JOIN of a set-returning function are not planned yet."""
    with pytest.raises(SqlError) as e:
        db.rows(sql)
    assert e.value.sqlstate == "0A000"
