"""Evaluate planned queries with the real engine (dataflow.render) and compare the results with
a real PostgreSQL 15 running the same SQL over the same data (as multisets)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pyarrow as pa
import pytest

from dataflow.exchange import LocalExchange
from dataflow.render import Dataflow
from dataflow.types import arrow_schema
from planner import parse, plan_statement
from planner.statements import InsertPlan
from tests.planner.planner_catalog import MemoryCatalog

asyncpg = pytest.importorskip("asyncpg")

DDL = ["CREATE TABLE orders (id bigint NOT NULL, customer_id bigint, amount numeric(10,2), status text)",
       "CREATE TABLE customers (id bigint, region text, score int)"]
DATA = ["INSERT INTO orders VALUES (1, 1, 10.50, 'open'), (2, 1, 200, 'paid'), (3, 2, NULL, 'open'), "
        "(4, 3, 99.99, NULL), (5, NULL, 5, 'paid'), (6, 2, 200, 'paid')",
        "INSERT INTO customers VALUES (1, 'eu', 5), (2, 'us', NULL), (3, 'eu', 7), (4, 'apac', 1)"]
QUERIES = [
    "SELECT id, amount FROM orders WHERE amount > 50",
    "SELECT o.id, c.region FROM orders o JOIN customers c ON o.customer_id = c.id",
    "SELECT o.id, c.region FROM orders o, customers c WHERE o.customer_id = c.id AND c.region = 'eu'",
    "SELECT region, count(*), sum(score), min(score), max(score) FROM customers GROUP BY region",
    "SELECT count(*), count(amount), sum(amount) FROM orders",
    "SELECT count(*), sum(score) FROM customers WHERE id > 100",
    "SELECT status, count(DISTINCT customer_id) FROM orders GROUP BY status HAVING count(*) > 1",
    "SELECT DISTINCT status FROM orders",
    "SELECT customer_id FROM orders UNION SELECT id FROM customers",
    "SELECT customer_id FROM orders UNION ALL SELECT id FROM customers",
    "SELECT id FROM customers EXCEPT SELECT customer_id FROM orders",
    "SELECT id + 1, score * 2, id / 2, coalesce(score, -1), region || '!' FROM customers",
    "SELECT CASE WHEN score > 5 THEN 'hi' WHEN score IS NULL THEN 'none' ELSE 'lo' END FROM customers",
    "SELECT id FROM customers WHERE region IN ('eu', 'apac') AND score BETWEEN 1 AND 6",
    "SELECT id FROM orders WHERE status LIKE 'p%' OR status IS NULL",
    "SELECT * FROM (SELECT id FROM orders ORDER BY id DESC LIMIT 2) s",
    "SELECT 1 + 2, 'x', NULL::int",
    # Outer joins (lowered to inner joins, a semijoin and NULL padding).
    "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON o.customer_id = c.id",
    "SELECT c.id, o.id FROM customers c LEFT JOIN orders o ON o.customer_id = c.id AND o.status = 'paid'",
    "SELECT c.id, count(o.id), sum(o.amount) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id "
    "GROUP BY c.id",
    "SELECT o.id, c.region FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id",
    "SELECT o.id, c.id FROM orders o FULL JOIN customers c ON o.customer_id = c.id",
    "SELECT o.id FROM orders o LEFT JOIN customers c ON o.customer_id = c.id WHERE c.id IS NULL",
    "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND o.amount > 50",
    "SELECT o.id, c.region, c2.score FROM orders o JOIN customers c ON o.customer_id = c.id "
    "LEFT JOIN customers c2 ON c2.id = o.id WHERE o.status = 'paid'",
    "SELECT a.id, b.id FROM customers a LEFT OUTER JOIN customers b ON a.score = b.score AND b.region = 'eu'",
    "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON true",
    # Uncorrelated IN (subquery) in WHERE: a semijoin.
    "SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = 'eu')",
    "SELECT id, amount FROM orders WHERE customer_id + 0 IN (SELECT score FROM customers) AND status = 'open'",
    "SELECT c.region, count(*) FROM orders o JOIN customers c ON o.customer_id = c.id "
    "WHERE o.id IN (SELECT id FROM orders WHERE amount > 50) GROUP BY c.region",
    "SELECT id FROM customers WHERE id IN (SELECT customer_id FROM orders)",
]


def _engine_rows(cat: MemoryCatalog, tables: dict[str, list[tuple]], sql: str) -> list[tuple]:
    p = plan_statement(cat, parse(sql)[0])
    inputs = {}
    for name, rows in tables.items():
        item = cat.resolve((name,))
        schema = arrow_schema([c.type for c in item.columns])
        cols = {f"c{i}": [r[i] for r in rows] for i in range(len(item.columns))}
        cols["time"] = [0] * len(rows)
        cols["diff"] = [1] * len(rows)
        inputs[item.id] = pa.table(cols, schema=schema)
    df = Dataflow(p.plan, 0, LocalExchange())
    out = df.step({k: v for k, v in inputs.items() if k in df.inputs}, upper=1)
    result = []
    for row in out.to_pylist():
        assert row["diff"] > 0, (sql, row)
        vals = tuple(row[f"c{i}"] for i in range(len(p.columns)))
        result.extend([vals] * row["diff"])
    return result


def _norm(rows):
    def v(x):
        if isinstance(x, Decimal):
            return float(x)
        return x
    return sorted((tuple(v(x) for x in r) for r in rows), key=repr)


@pytest.fixture(scope="module")
def pg_results(pg_oracle):
    async def run():
        conn = await asyncpg.connect(pg_oracle.dsn)
        try:
            await conn.execute("DROP TABLE IF EXISTS orders, customers")
            for s in DDL + DATA:
                await conn.execute(s)
            return {q: [tuple(r) for r in await conn.fetch(q)] for q in QUERIES}
        finally:
            await conn.close()
    return asyncio.run(run())


@pytest.fixture(scope="module")
def engine_setup():
    cat = MemoryCatalog()
    for s in DDL:
        cat.execute(s)
    tables = {}
    for s in DATA:
        p = plan_statement(cat, parse(s)[0])
        assert isinstance(p, InsertPlan)
        tables[cat.get(p.table_id).name] = p.literal_rows()
    return cat, tables


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(sql, pg_results, engine_setup):
    cat, tables = engine_setup
    assert _norm(_engine_rows(cat, tables, sql)) == _norm(pg_results[sql])
