"""LIKE / ILIKE ANY / ALL over an array that is not a constant is refused with 0A000 naming the
feature (the constant forms are checked against PostgreSQL in tests/fuzz/slt/like_any_all.slt)."""

from __future__ import annotations

import pytest

from dataflow.errors import SqlError
from planner import parse, plan_statement
from tests.planner.planner_catalog import MemoryCatalog


def test_patterns_from_a_column_are_refused_by_name():
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE t (s text, pats text[])")
    for sql, words in (("SELECT s LIKE ANY (pats) FROM t", "LIKE ANY"),
                       ("SELECT s NOT ILIKE ALL (pats) FROM t", "ILIKE ALL")):
        with pytest.raises(SqlError) as e:
            plan_statement(cat, parse(sql)[0])
        assert e.value.sqlstate == "0A000" and words in str(e.value), e.value
