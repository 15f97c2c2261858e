"""The system catalogs against PostgreSQL's for the same objects: pg_type's rows for the built-in
types, pg_attribute and information_schema.columns for a table of many types, regclass/regtype
casts and their errors, and the catalog functions clients call. Run in-process (planner and
engine, no server) against a real PostgreSQL 15."""

from __future__ import annotations

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb, pg_answer

TABLE = ("CREATE TABLE cat_t (i int NOT NULL, s smallint, b bigint, n numeric(10,2), u numeric, r real, "
         "d double precision, t text DEFAULT 'x', v varchar(12), c char(3), bo boolean, da date, "
         "ts timestamp, tz timestamptz, tm time, iv interval, by bytea, id uuid, j jsonb, a int[], ta text[])")
DDL = [TABLE, "CREATE VIEW cat_v AS SELECT i, t FROM cat_t", "CREATE INDEX cat_i ON cat_t (b, i)"]

TYPES = ("'bool','bytea','char','name','int8','int2','int4','regproc','text','oid','json','float4','float8',"
         "'bpchar','varchar','date','time','timestamp','timestamptz','interval','numeric','regclass',"
         "'regtype','uuid','jsonb','_int4','_text','_bool','_numeric','_timestamptz','_uuid','_jsonb','_oid'")

SAME = [
    f"SELECT oid, typname, typlen, typbyval, typtype, typcategory, typispreferred, typelem, typarray, "
    f"typdelim, typrelid, typbasetype, typnotnull, typcollation FROM pg_type WHERE typname IN ({TYPES})",
    f"SELECT oid::regtype::text, format_type(oid, NULL) FROM pg_type WHERE typname IN ({TYPES})",
    f"SELECT typname, typinput::text, typoutput::text, typreceive::text, typsend::text FROM pg_type "
    f"WHERE typname IN ('int4', 'text', 'numeric', 'bool')",
    "SELECT attname, attnum, format_type(atttypid, atttypmod), atttypid, atttypmod, attlen, attnotnull, "
    "atthasdef, attndims, attisdropped FROM pg_attribute WHERE attrelid = 'cat_t'::regclass AND attnum > 0",
    "SELECT column_name, ordinal_position, data_type, is_nullable, character_maximum_length, numeric_precision, "
    "numeric_precision_radix, numeric_scale, datetime_precision, udt_name, column_default "
    "FROM information_schema.columns WHERE table_name = 'cat_t'",
    "SELECT table_name, table_type FROM information_schema.tables WHERE table_name LIKE 'cat_%'",
    "SELECT relname, relkind, relnatts, relpersistence, relhasindex, relnamespace FROM pg_class "
    "WHERE relname LIKE 'cat_%'",
    "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relname IN ('pg_class', 'pg_type', 'pg_attribute', 'pg_namespace', 'pg_index', 'cat_t')",
    "SELECT 'pg_class'::regclass::oid, 'pg_catalog.pg_type'::regclass::oid, 'int4'::regtype::oid, "
    "'integer'::regtype::oid, 'character varying'::regtype::oid, 'text[]'::regtype::oid",
    "SELECT 'cat_t'::regclass::text, 'public.cat_t'::regclass::text, 1259::regclass::text, 23::regtype::text, "
    "1043::regtype::text, 1007::regtype::text, 4294967295::oid::regclass::text",
    "SELECT to_regclass('cat_t')::text, to_regclass('nope'), to_regtype('int8')::text, to_regtype('nope')",
    "SELECT (-1)::oid, '12'::oid, 26::oid = 26, 'pg_class'::regclass = 1259, 1259::oid::regclass::text",
    "SELECT pg_table_is_visible('cat_t'::regclass), pg_table_is_visible('pg_class'::regclass), "
    "pg_type_is_visible(23), pg_get_userbyid(NULL), pg_encoding_to_char(6)",
    "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
    "AND a.attnum = ANY(i.indkey) WHERE i.indexrelid = 'cat_i'::regclass",
    "SELECT i.indnatts, i.indisunique, i.indisprimary, c.relname FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indrelid WHERE i.indexrelid = 'cat_i'::regclass",
    "SELECT pg_get_indexdef('cat_i'::regclass, 1, true), pg_get_indexdef('cat_i'::regclass, 2, true)",
    "SELECT count(*) FROM pg_attrdef d WHERE d.adrelid = 'cat_t'::regclass",
    "SELECT pg_get_expr(d.adbin, d.adrelid), d.adnum FROM pg_attrdef d WHERE d.adrelid = 'cat_t'::regclass",
    "SELECT name, setting FROM pg_settings WHERE name IN ('max_index_keys', 'max_identifier_length')",
    "SELECT c.relname, d.description FROM pg_class c LEFT JOIN pg_description d ON d.objoid = c.oid "
    "AND d.classoid = 'pg_class'::regclass WHERE c.relname LIKE 'cat_%'",
    "SELECT amname FROM pg_am WHERE amname IN ('btree', 'hash')",
    "SELECT collname FROM pg_collation WHERE oid IN (100, 950, 951)",
    "SELECT x FROM unnest('{1,2}'::oid[]) x WHERE x = ANY('{2,3}'::oid[])",
    "SELECT 'r'::\"char\", 'relkind'::name, 'abc'::\"char\"",
]

ERRORS = [
    ("SELECT 'nope'::regclass", "42P01"),
    ("SELECT 'nope'::regtype", "42704"),
    ("SELECT 'x'::oid", "22P02"),
    ("SELECT 4294967296::oid", "22003"),
    ("SELECT * FROM pg_catalog.pg_nope", "42P01"),
]


@pytest.fixture(scope="module")
def db():
    return EngineDb(DDL, [])


@pytest.fixture(scope="module")
def pg_conn(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        for s in ("DROP VIEW IF EXISTS cat_v", "DROP TABLE IF EXISTS cat_t", *DDL):
            conn.execute(s)
        yield conn


@pytest.mark.parametrize("sql", SAME)
def test_catalog_query_equals_postgres(db, pg_conn, sql):
    assert db.answer(sql) == pg_answer(pg_conn, sql)


@pytest.mark.parametrize("sql,sqlstate", ERRORS)
def test_catalog_errors_equal_postgres(db, pg_conn, sql, sqlstate):
    assert pg_answer(pg_conn, sql) == sqlstate
    assert db.answer(sql) == sqlstate


def test_pg_class_lists_every_kind_with_its_columns(db):
    rows = dict(db.rows("SELECT relname, relkind FROM pg_class WHERE relname LIKE 'cat_%'"))
    assert rows == {"cat_t": "r", "cat_v": "v", "cat_i": "i"}
    (n,) = db.rows("SELECT count(*) FROM pg_attribute WHERE attrelid = 'cat_i'::regclass")[0]
    assert n == 2  # an index's columns are its keys


def test_a_materialized_view_is_relkind_m():
    mv = EngineDb(["CREATE TABLE base (a int)", "CREATE MATERIALIZED VIEW mv1 AS SELECT a FROM base"], [])
    assert mv.rows("SELECT relkind FROM pg_class WHERE relname = 'mv1'") == [("m",)]
    assert mv.rows("SELECT matviewname, definition FROM pg_matviews") == [("mv1", " SELECT a FROM base;")]
    assert mv.rows("SELECT table_type FROM information_schema.tables WHERE table_name = 'mv1'") == \
        [("MATERIALIZED VIEW",)]


def test_catalog_refused_in_a_materialized_view():
    from dataflow.errors import SqlError
    db = EngineDb([], [])
    with pytest.raises(SqlError) as e:
        db.catalog.execute("CREATE MATERIALIZED VIEW m AS SELECT relname FROM pg_class")
    assert e.value.sqlstate == "0A000"
