"""Which INSERTs the literal-row scan takes (planner/literal_insert.py) and which it leaves to
the general parser and planner; what both store is compared with PostgreSQL in
tests/e2e/test_literal_insert.py."""

from __future__ import annotations

import pytest

from dataflow.errors import SqlError
from planner import parse, plan_statement
from planner import mz_ast
from planner.literal_insert import scan
from planner.statements import InsertPlan
from tests.planner.planner_catalog import MemoryCatalog

PAD = ", ".join(["(1, 2.5, 'x', true)"] * 40)   # (long enough to be scanned)


@pytest.fixture(scope="module")
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE t (i int, n numeric, s text, b boolean)")
    return c


@pytest.mark.parametrize("sql", [
    f"INSERT INTO t VALUES {PAD}",
    f"insert into T values {PAD};  ",
    "INSERT INTO public.t (s, b, i, n) VALUES ('a''b', false, -3, -.5), " + ", ".join(["('x', true, 1, 2.5)"] * 40),
    f"INSERT INTO t VALUES (NULL, NULL, NULL, NULL), ('7', '1.5', '', 'yes'), {PAD}",
])
def test_literal_rows_become_column_arrays(cat, sql):
    (stmt,) = parse(sql)
    assert isinstance(stmt.ast, mz_ast.LiteralInsert)
    plan = plan_statement(cat, stmt)
    assert isinstance(plan, InsertPlan) and plan.columns is not None and len(plan.columns) == 4
    assert len(plan.columns[0]) == sql.count("(") - sql.count("(s, b")
    if "(s, b, i, n)" in sql:   # (put in the table's column order)
        assert plan.columns[0].to_pylist()[:2] == [-3, 1] and plan.columns[2].to_pylist()[:2] == ["a'b", "x"]


@pytest.mark.parametrize("sql, scanned", [
    (f"INSERT INTO t VALUES {PAD}, (1.5, 1, 'x', true)", True),        # a decimal into an integer
    (f"INSERT INTO t VALUES {PAD}, (1, 1, 2, true)", True),            # a number into text
    (f"INSERT INTO t VALUES {PAD}, (1, 1, 'x', 1)", True),             # a number into boolean
    (f"INSERT INTO t (i, s) VALUES {', '.join(['(1, 2)'] * 90)}", True),  # columns left to defaults
    (f"INSERT INTO t VALUES {PAD}, (1, 1e3, 'x', true)", False),       # an exponent
    (f"INSERT INTO t VALUES {PAD}, (1, 1, E'x', true)", False),        # an escape string
    (f"INSERT INTO t VALUES {PAD}, (DEFAULT, 1, 'x', true)", False),
    (f"INSERT INTO t VALUES {PAD}, (1 + 1, 1, 'x', true)", False),
    (f"INSERT INTO t VALUES {PAD} RETURNING i", False),
    (f"INSERT INTO \"t\" VALUES {PAD}", False),
    (f"INSERT INTO t VALUES {PAD}; SELECT 1", False),
])
def test_other_forms_take_the_general_path(cat, sql, scanned):
    (first, *_) = parse(sql)
    assert isinstance(first.ast, mz_ast.LiteralInsert) == scanned
    if scanned:
        try:
            plan = plan_statement(cat, first)
        except SqlError as e:   # (the general path's error, as PostgreSQL's)
            assert e.sqlstate == "42804" and "boolean" in e.message
        else:
            assert isinstance(plan, InsertPlan) and plan.columns is None


def test_a_keyword_as_a_column_is_the_general_parsers_syntax_error():
    with pytest.raises(SqlError) as e:
        parse(f"INSERT INTO t (i, n, s, select) VALUES {PAD}")
    assert e.value.sqlstate == "42601"


def test_short_statements_and_ragged_rows():
    assert isinstance(parse("INSERT INTO t VALUES (1, 2.5, 'x', true)")[0].ast, mz_ast.LiteralInsert) is False
    assert scan(f"INSERT INTO t VALUES {PAD}, (1)") is None   # (the general path reports it: 42601)
