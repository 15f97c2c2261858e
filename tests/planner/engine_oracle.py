"""Run a query through the real planner and engine in this process (no server, no Spark) and
through a real PostgreSQL over the same data, for tests that compare the two answers.

    db = EngineDb(DDL, DATA)                 # plan the CREATE TABLEs and INSERTs in memory
    db.rows("SELECT ...")                    # the engine's answer, a list of tuples
    pg_rows(pg_conn, "SELECT ...")           # PostgreSQL's answer
    norm(rows)                               # a canonical multiset for comparison
"""

from __future__ import annotations

import math
from decimal import Decimal

import pyarrow as pa

from catalog.items import ItemKind

from dataflow.errors import SqlError
from dataflow.exchange import LocalExchange
from dataflow.pg_text import float4_text
from dataflow.render import Dataflow
from dataflow.types import TypeKind, arrow_schema
from planner import parse, plan_statement
from planner.statements import InsertPlan
from server.adapter.finishing import expand, finish
from tests.planner.planner_catalog import MemoryCatalog


class EngineDb:
    """Tables held in memory as lists of rows; queries planned and run by one engine step."""

    def __init__(self, ddl: list[str], data: list[str]) -> None:
        self.catalog = MemoryCatalog()
        for s in ddl:
            self.catalog.execute(s)
        self.tables: dict[str, list[tuple]] = {}
        for s in data:
            p = plan_statement(self.catalog, parse(s)[0])
            assert isinstance(p, InsertPlan), s
            self.tables.setdefault(p.table_id, []).extend(p.literal_rows())

    def rows(self, sql: str) -> list[tuple]:
        p = plan_statement(self.catalog, parse(sql)[0])
        inputs = {}
        for item in self.catalog.items():
            if item.kind is not ItemKind.TABLE:
                continue
            rows = self.tables.get(item.id, [])
            schema = arrow_schema([c.type for c in item.columns])
            cols = {f"c{i}": [r[i] for r in rows] for i in range(len(item.columns))}
            cols["time"] = [0] * len(rows)
            cols["diff"] = [1] * len(rows)
            inputs[item.id] = pa.table(cols, schema=schema)
        df = Dataflow(p.plan, 0, LocalExchange())
        out = df.step({k: v for k, v in inputs.items() if k in df.inputs}, upper=1)
        if df.errors:
            raise df.errors[0]
        finishing = getattr(p, "finishing", None)
        types = [c.type for c in p.columns]
        rows = finish(out, finishing, types) if finishing is not None else expand(out, types)
        # A real is sent to clients as its shortest single-precision digits: read it back so.
        reals = [i for i, c in enumerate(p.columns) if c.type.kind is TypeKind.FLOAT4]
        if reals:
            rows = [tuple(float(float4_text(v)) if i in reals and v is not None else v for i, v in enumerate(r))
                    for r in rows]
        return rows

    def type_oids(self, sql: str) -> list[int]:
        """The PostgreSQL type OIDs of the result columns."""
        return [c.type.oid for c in plan_statement(self.catalog, parse(sql)[0]).columns]

    def answer(self, sql: str, ordered: bool = False) -> list[tuple] | str:
        """Rows (in order when `ordered`, else as a sorted multiset), or the SQLSTATE of the error."""
        try:
            rows = self.rows(sql)
            return [tuple(_value(x) for x in r) for r in rows] if ordered else norm(rows)
        except SqlError as e:
            return e.sqlstate


def pg_answer(conn, sql: str, ordered: bool = False) -> list[tuple] | str:
    """PostgreSQL's rows (psycopg connection, autocommit), or the SQLSTATE of its error."""
    import psycopg
    try:
        rows = conn.execute(sql).fetchall()
        return [tuple(_value(x) for x in r) for r in rows] if ordered else norm(rows)
    except psycopg.Error as e:
        return e.sqlstate


def pg_type_oids(conn, sql: str) -> list[int]:
    return [d.type_code for d in conn.execute(sql).description]


def _value(x):
    if isinstance(x, Decimal):
        return float(x)
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return x


def norm(rows) -> list[tuple]:
    return sorted((tuple(_value(x) for x in r) for r in rows), key=repr)


def oracle_fixtures(ddl: list[str], data: list[str], setup: tuple[str, ...] = ()):
    """The module-scoped `pg` (a PostgreSQL connection holding the tables) and `db` (EngineDb)
    fixtures an oracle test module compares with, from its DDL and data:

        pg, db = oracle_fixtures(DDL, DATA)

    `setup` runs on the PostgreSQL connection first (`SET TIME ZONE 'UTC'`)."""
    import re

    import psycopg
    import pytest

    tables = [m.group(1) for s in ddl for m in [re.match(r"\s*CREATE\s+TABLE\s+(\w+)", s, re.I)] if m]

    @pytest.fixture(scope="module", name="pg")
    def pg_fixture(pg_oracle):
        with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
            for s in setup:
                conn.execute(s)
            if tables:
                conn.execute(f"DROP TABLE IF EXISTS {', '.join(tables)} CASCADE")
            for s in ddl + data:
                conn.execute(s)
            yield conn

    @pytest.fixture(scope="module", name="db")
    def db_fixture():
        return EngineDb(ddl, data)

    return pg_fixture, db_fixture


def joins_in(plan) -> list:
    """Every Join node of a plan (each shared node once)."""
    from dataflow.plan import Join, children
    seen, out, todo = set(), [], [plan]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, Join):
            out.append(n)
        todo.extend(children(n))
    return out
