"""Planner unit tests: parsing, plan shapes and types, errors' SQLSTATEs, Describe."""

from __future__ import annotations

from decimal import Decimal
import datetime as dt

import pytest

from catalog.items import ItemKind
from dataflow.errors import SqlError
from dataflow.plan import (Constant, Distinct, Filter, Get, Join, Map, Negate, Project, Reduce,
                           Threshold, TopK, Union_, output_types)
from dataflow.types import BOOL, INT4, INT8, NUMERIC, TEXT, TIMESTAMP, FLOAT8, numeric
from planner import describe_statement, parse, plan_statement
from planner.statements import (ClosePlan, CopyFromPlan, CopyToPlan, CreateIndexPlan,
                                CreateTablePlan, CreateViewPlan, DeallocatePlan, DeclarePlan,
                                DeletePlan, DiscardPlan, DropPlan, EmptyPlan, ExplainPlan,
                                FetchPlan, InsertPlan, SelectPlan, SetVariablePlan, ShowPlan,
                                SubscribePlan, TransactionPlan, UpdatePlan)
from tests.planner.planner_catalog import MemoryCatalog


@pytest.fixture
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE orders (id bigint NOT NULL, customer_id bigint, amount numeric(10,2), "
              "status text DEFAULT 'new', ts timestamp)")
    c.execute("CREATE TABLE customers (id bigint PRIMARY KEY, region text, score int)")
    c.execute("CREATE VIEW big AS SELECT id, amount FROM orders WHERE amount > 100 ORDER BY id")
    c.execute("CREATE MATERIALIZED VIEW per_region IN CLUSTER quickstart AS "
              "SELECT region, count(*) AS n FROM customers GROUP BY region")
    return c


def plan(cat, sql, **kw):
    return plan_statement(cat, parse(sql)[0], **kw)


def err(cat, sql) -> str:
    with pytest.raises(SqlError) as e:
        plan(cat, sql)
    return e.value.sqlstate


def test_parse_splits_and_keeps_text():
    stmts = parse("SELECT 1; SHOW TABLES ;  ")
    assert [s.sql for s in stmts] == ["SELECT 1", "SHOW TABLES"]
    assert parse("")[0].is_empty and parse(" ; ")[0].is_empty


@pytest.mark.parametrize("sql,near", [("SELEC 1", "SELEC"), ("SELECT 1 2", "2"), ("FETCH", None)])
def test_syntax_errors(sql, near):
    with pytest.raises(SqlError) as e:
        parse(sql)
    assert e.value.sqlstate == "42601"
    assert (f'at or near "{near}"' if near else "end of input") in e.value.message


def test_create_table_columns_and_defaults(cat):
    p = plan(cat, "CREATE TABLE IF NOT EXISTS s.t (a int NOT NULL DEFAULT 1, b smallint, c real, "
                  "d varchar(10), e date, f timestamptz, g numeric(5,2), h double precision, i boolean)")
    assert isinstance(p, CreateTablePlan) and p.if_not_exists and p.schema == "s" and p.name == "t"
    assert [c.type.name for c in p.columns] == [
        "integer", "smallint", "real", "character varying(10)", "date", "timestamp with time zone",
        "numeric(5,2)", "double precision", "boolean"]
    assert not p.columns[0].nullable and p.defaults[0].value == 1
    assert err(cat, "CREATE TABLE x (a int UNIQUE)") == "0A000"
    assert err(cat, "CREATE TABLE x (a int[][])") == "0A000"
    assert err(cat, "CREATE TABLE x (a int, a int)") == "42701"


def test_join_with_equi_keys_and_pushdown(cat):
    p = plan(cat, "SELECT o.id, c.region FROM orders o, customers c "
                  "WHERE o.customer_id = c.id AND c.region = 'eu' AND o.amount > c.score")
    assert isinstance(p, SelectPlan)
    assert [c.name for c in p.columns] == ["id", "region"]
    assert output_types(p.plan) == (INT8, TEXT)
    join = p.plan.input.input if isinstance(p.plan.input, Filter) else p.plan.input
    assert isinstance(p.plan.input, Filter)  # amount > score stays above the join
    assert isinstance(join, Join) and join.left_key == (1,) and join.right_key == (0,)
    assert isinstance(join.right, Filter)  # region = 'eu' pushed to customers


def test_explicit_join_on(cat):
    p = plan(cat, "SELECT * FROM orders JOIN customers ON orders.customer_id = customers.id")
    assert isinstance(p.plan, Join) and p.plan.left_key == (1,)
    assert len(p.columns) == 8


def test_global_aggregate_returns_default_row_shape(cat):
    p = plan(cat, "SELECT count(*), sum(score), avg(score), min(region) FROM customers")
    u = p.plan
    assert isinstance(u, Union_) and isinstance(u.inputs[0], Reduce)
    assert isinstance(u.inputs[1], Constant) and u.inputs[1].rows == ((0, None, None, None),)
    assert isinstance(u.inputs[2], Negate)
    assert output_types(p.plan) == (INT8, INT8, NUMERIC, TEXT)


def test_group_by_variants(cat):
    for sql in ("SELECT region, count(*) FROM customers GROUP BY region",
                "SELECT region, count(*) FROM customers GROUP BY 1",
                "SELECT region AS r, count(*) FROM customers GROUP BY r"):
        p = plan(cat, sql)
        # Column pruning narrows customers to region before the Reduce, so the key is #0 of it.
        assert isinstance(p.plan, Reduce) and p.plan.group_key == (0,), sql
        assert isinstance(p.plan.input, Project) and p.plan.input.columns == (1,), sql
    p = plan(cat, "SELECT score % 2, count(DISTINCT region) FROM customers GROUP BY score % 2 "
                  "HAVING count(*) > 1 ORDER BY 1")
    assert p.finishing.order_by == ((0, False, True),)
    assert err(cat, "SELECT region, count(*) FROM customers") == "42803"
    assert err(cat, "SELECT score FROM customers GROUP BY region") == "42803"
    assert err(cat, "SELECT id FROM customers WHERE count(*) > 1") == "42803"


def test_finishing_and_topk(cat):
    p = plan(cat, "SELECT id FROM orders ORDER BY amount DESC LIMIT 5 OFFSET 2")
    assert p.finishing.limit == 5 and p.finishing.offset == 2
    assert p.finishing.order_by == ((1, True, False),) and p.finishing.project == (0,)
    p = plan(cat, "SELECT * FROM (SELECT id FROM orders ORDER BY id DESC NULLS LAST LIMIT 3) s")
    assert isinstance(p.plan, TopK) and p.plan.order_by == ((0, True, True),) and p.plan.limit == 3


def test_views_inline_unless_indexed(cat):
    p = plan(cat, "SELECT * FROM big")
    assert isinstance(p.plan, (Filter, Project)) and "Get" not in repr(p.plan).split("(")[0]
    assert [c.name for c in p.columns] == ["id", "amount"]
    mv = cat.resolve(("per_region",))
    assert plan(cat, "SELECT * FROM per_region").plan == Get(mv.id, (TEXT, INT8))
    cat.execute("CREATE DEFAULT INDEX ON big")
    idx = cat.indexes_on(cat.resolve(("big",)).id)[0]
    assert idx.name == "big_primary_idx"
    assert plan(cat, "SELECT * FROM big").plan == Get(idx.id, (INT8, numeric(10, 2)))


def test_set_operations(cat):
    p = plan(cat, "SELECT id FROM orders UNION SELECT score FROM customers")
    assert isinstance(p.plan, Distinct) and output_types(p.plan) == (INT8,)
    p = plan(cat, "SELECT id FROM orders EXCEPT ALL SELECT id FROM customers")
    assert isinstance(p.plan, Threshold)
    assert err(cat, "SELECT id, 1 FROM orders UNION SELECT id FROM customers") == "42601"
    assert err(cat, "SELECT 1 UNION SELECT true") == "42804"


def test_scalar_typing(cat):
    p = plan(cat, "SELECT 1 + 2::bigint, 1 / 2, 1 + 1.5, score * 1.0e0::float8, 'a' || 1, "
                  "CASE WHEN score > 1 THEN 'x' END, coalesce(score, 0), score::text, "
                  "'2024-01-01'::timestamp, id IN (1, 2), region LIKE 'e%', 3000000000 FROM customers")
    assert [c.type for c in p.columns] == [INT8, INT4, NUMERIC, FLOAT8, TEXT, TEXT, INT4, TEXT,
                                           TIMESTAMP, BOOL, BOOL, INT8]
    assert [c.name for c in p.columns][:8] == ["?column?"] * 5 + ["case", "coalesce", "score"]
    p = plan(cat, "SELECT 1, 'a'")
    assert isinstance(p.plan, (Project, Constant, Map))  # pruning drops an identity Project


@pytest.mark.parametrize("sql,code", [
    ("SELECT 'a'::text + 1", "42883"),
    ("SELECT 'a' + 1", "22P02"),
    ("SELECT nope FROM orders", "42703"),
    ("SELECT x.id FROM orders", "42P01"),
    ("SELECT id FROM orders, customers", "42702"),
    ("SELECT * FROM missing", "42P01"),
    ("SELECT foo(1)", "42883"),
    ("SELECT * FROM orders o LEFT JOIN customers c USING (nope)", "42703"),
    ("SELECT sum((SELECT 1)) FROM orders", "0A000"),
    ("CREATE MATERIALIZED VIEW mv_now AS SELECT now()", "0A000"),
    ("SELECT 1::int2 + 99999::int2", "22003"),
    ("SELECT 'x'::date", "22007"),
    # (values PostgreSQL reads but Slipstream cannot hold: refused as unsupported, not malformed)
    ("SELECT 'infinity'::date", "0A000"),
    ("SELECT ' -Infinity '::timestamp", "0A000"),
    ("SELECT 'infinity'::timestamptz", "0A000"),
])
def test_errors(cat, sql, code):
    assert err(cat, sql) == code


def test_insert_coercion_and_defaults(cat):
    p = plan(cat, "INSERT INTO orders (id, amount, ts) VALUES (1, '12.345', '2024-01-01'), (2, 3, NULL)")
    assert isinstance(p, InsertPlan)
    assert p.rows == ((1, None, Decimal("12.35"), "new", dt.datetime(2024, 1, 1)),
                      (2, None, Decimal("3.00"), "new", None))
    assert err(cat, "INSERT INTO orders (customer_id) VALUES (1)") == "23502"
    assert err(cat, "INSERT INTO orders (id) VALUES ('abc')") == "22P02"
    assert err(cat, "INSERT INTO orders (id, amount) VALUES (1, 123456789)") == "22003"
    assert err(cat, "INSERT INTO orders (id) VALUES (1, 2)") == "42601"
    assert err(cat, "INSERT INTO customers (score) VALUES (true)") == "42804"
    assert err(cat, "INSERT INTO big VALUES (1, 2)") == "42809"
    p = plan(cat, "INSERT INTO customers SELECT id, status, 1 FROM orders")
    assert p.rows is None and output_types(p.source) == (INT8, TEXT, INT4)
    p = plan(cat, "INSERT INTO customers VALUES ($1, $2, $3)", params=[5, "eu", "7"],
             param_types=[INT8, TEXT, None])
    assert p.rows == ((5, "eu", 7),)


def test_update_delete(cat):
    p = plan(cat, "UPDATE customers SET score = score + 1 WHERE region = 'eu'")
    assert isinstance(p, UpdatePlan) and isinstance(p.selection, Filter)
    assert len(p.assignments) == 3 and p.assignments[2].type == INT4
    p = plan(cat, "DELETE FROM customers")
    assert isinstance(p, DeletePlan) and isinstance(p.selection, Get)


def test_ddl_views_indexes_drop(cat):
    p = plan(cat, "CREATE OR REPLACE VIEW v (a, b) AS SELECT id, region FROM customers")
    assert isinstance(p, CreateViewPlan) and p.or_replace and not p.materialized
    assert [c.name for c in p.columns] == ["a", "b"] and p.definition == "SELECT id, region FROM customers"
    assert p.depends_on == (cat.resolve(("customers",)).id,)
    p = plan(cat, "CREATE MATERIALIZED VIEW IF NOT EXISTS mv AS SELECT * FROM big")
    assert p.materialized and p.if_not_exists and p.depends_on == (cat.resolve(("big",)).id,)
    p = plan(cat, "CREATE INDEX ON customers (region, id)")
    assert isinstance(p, CreateIndexPlan) and p.name == "customers_region_id_idx" and p.key == (1, 0)
    p = plan(cat, "DROP TABLE IF EXISTS orders, nope CASCADE")
    assert isinstance(p, DropPlan) and p.cascade and p.missing == ("nope",) and p.kind is ItemKind.TABLE
    assert err(cat, "DROP TABLE big") == "42809"
    assert err(cat, "DROP VIEW nope") == "42P01"
    assert err(cat, "DROP INDEX nope") == "42704"


def test_subscribe_and_as_of(cat):
    p = plan(cat, "SUBSCRIBE TO per_region WITH (PROGRESS, SNAPSHOT = false) AS OF 10 UP TO 20 "
                  "ENVELOPE UPSERT (KEY (region))")
    assert isinstance(p, SubscribePlan)
    assert (p.progress, p.snapshot, p.as_of, p.up_to, p.envelope_upsert_key) == (True, False, 10, 20, (0,))
    p = plan(cat, "SUBSCRIBE (SELECT id FROM orders)")
    assert p.progress is False and p.snapshot and [c.name for c in p.columns] == ["id"]
    assert plan(cat, "SELECT * FROM orders AS OF 1234").as_of == 1234


def test_session_and_cursor_statements(cat):
    assert plan(cat, "SHOW TABLES") == ShowPlan("tables")
    assert plan(cat, "SHOW search_path") == ShowPlan("variable", "search_path")
    assert plan(cat, "SHOW TRANSACTION ISOLATION LEVEL") == ShowPlan("variable", "transaction_isolation")
    assert plan(cat, "SHOW CREATE VIEW big").what == "create view"
    assert err(cat, "SHOW CREATE TABLE big") == "42809"
    assert plan(cat, "SHOW COLUMNS FROM orders").name == cat.resolve(("orders",)).id
    assert plan(cat, "SET application_name = 'x'") == SetVariablePlan("application_name", "x")
    assert plan(cat, "SET LOCAL TIME ZONE 'UTC'") == SetVariablePlan("timezone", "UTC", True)
    assert plan(cat, "RESET datestyle") == SetVariablePlan("datestyle", None)
    assert plan(cat, "BEGIN READ ONLY") == TransactionPlan("begin", True)
    assert plan(cat, "START TRANSACTION ISOLATION LEVEL SERIALIZABLE") == TransactionPlan("begin")
    for s, a in (("COMMIT", "commit"), ("END", "commit"), ("ROLLBACK", "rollback"), ("ABORT", "rollback")):
        assert plan(cat, s) == TransactionPlan(a)
    assert plan(cat, "DISCARD ALL") == DiscardPlan("all")
    assert plan(cat, "DEALLOCATE PREPARE s1") == DeallocatePlan("s1")
    d = plan(cat, "DECLARE c NO SCROLL CURSOR WITHOUT HOLD FOR SUBSCRIBE orders")
    assert isinstance(d, DeclarePlan) and isinstance(d.inner, SubscribePlan)
    assert plan(cat, "FETCH 100 c WITH (timeout = '1s')") == FetchPlan("c", 100, 1000)
    assert plan(cat, "FETCH ALL FROM c") == FetchPlan("c", None)
    assert plan(cat, "CLOSE ALL") == ClosePlan(None)
    c = plan(cat, "COPY (SUBSCRIBE orders) TO STDOUT WITH (FORMAT csv, HEADER)")
    assert isinstance(c, CopyToPlan) and c.format == "csv" and c.header
    c = plan(cat, "COPY customers (region, id) FROM STDIN WITH (FORMAT csv, DELIMITER '|')")
    assert c == CopyFromPlan(cat.resolve(("customers",)).id, (1, 0), "csv", "|", False)
    assert isinstance(plan(cat, "COPY orders TO STDOUT").inner, SelectPlan)
    assert isinstance(plan(cat, ""), EmptyPlan)


def test_explain(cat):
    p = plan(cat, "EXPLAIN SELECT region, count(*) FROM customers JOIN orders ON customers.id = orders.customer_id "
                  "GROUP BY region")
    assert isinstance(p, ExplainPlan)
    lines = p.text.split("\n")
    assert lines[0].startswith("Reduce") and lines[1].strip().startswith("Join")
    assert "Get" in plan(cat, "EXPLAIN MATERIALIZED VIEW per_region").text


def test_describe_infers_parameter_types(cat):
    def d(sql, oids):
        return describe_statement(cat, parse(sql)[0], oids)
    types, cols = d("SELECT $1 + 1", [0])
    assert types == [INT4] and [(c.name, c.type) for c in cols] == [("?column?", INT4)]
    types, cols = d("SELECT id, region FROM customers WHERE id = $1", [0])
    assert types == [INT8] and [c.name for c in cols] == ["id", "region"]
    assert d("SELECT $2 || 'a', $1", [0, 0])[0] == [TEXT, TEXT]
    assert d("SELECT $1", [23])[0] == [INT4]
    assert d("INSERT INTO customers VALUES ($1, $2, $3)", [])[0] == [INT8, TEXT, INT4]
    assert d("INSERT INTO customers VALUES ($1, $2, $3)", [])[1] is None
    _, cols = d("SUBSCRIBE orders WITH (PROGRESS)", [])
    assert [c.name for c in cols][:3] == ["mz_timestamp", "mz_progressed", "mz_diff"]
