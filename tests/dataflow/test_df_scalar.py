"""Scalar semantics: three-valued logic, overflow, division by zero, casts, numeric scale."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dataflow.batch import batch_from_rows
from dataflow.errors import SqlError
from dataflow.expr import Call, Cast, ColumnRef, If, Literal
from dataflow.scalar import compile_expr, compile_predicate
from dataflow.types import (BOOL, DATE, FLOAT8, INT2, INT4, INT8, NUMERIC, TEXT, TIMESTAMP, numeric)


def ev(expr, rows, types):
    return compile_expr(expr)(batch_from_rows(rows, types, time=7)).to_pylist()


def c(i, t):
    return ColumnRef(i, t)


B2 = [BOOL, BOOL]
TRI = [(True, True), (True, False), (True, None), (False, None), (None, None), (False, False)]


def test_three_valued_and_or_not():
    assert ev(Call("and", (c(0, BOOL), c(1, BOOL)), BOOL), TRI, B2) == [True, False, None, False, None, False]
    assert ev(Call("or", (c(0, BOOL), c(1, BOOL)), BOOL), TRI, B2) == [True, True, True, None, None, False]
    assert ev(Call("not", (c(1, BOOL),), BOOL), TRI, B2) == [False, True, None, None, None, True]


def test_comparison_with_null_is_null_and_filter_keeps_only_true():
    rows = [(1, 2), (2, 2), (None, 1)]
    assert ev(Call("lt", (c(0, INT8), c(1, INT8)), BOOL), rows, [INT8, INT8]) == [True, False, None]
    pred = compile_predicate(Call("lte", (c(0, INT8), c(1, INT8)), BOOL))
    assert pred(batch_from_rows(rows, [INT8, INT8], 0)).tolist() == [True, True, False]


def test_null_tests_and_distinct_from():
    rows = [(1, 1), (1, None), (None, None)]
    t = [INT8, INT8]
    assert ev(Call("is_distinct_from", (c(0, INT8), c(1, INT8)), BOOL), rows, t) == [False, True, False]
    assert ev(Call("is_null", (c(1, INT8),), BOOL), rows, t) == [False, True, True]
    assert ev(Call("is_true", (c(0, BOOL),), BOOL), [(True,), (None,), (False,)], [BOOL]) == [True, False, False]


@pytest.mark.parametrize("t,big,msg", [(INT4, 2**31 - 1, "integer out of range"),
                                       (INT8, 2**63 - 1, "bigint out of range"),
                                       (INT2, 2**15 - 1, "smallint out of range")])
def test_integer_overflow(t, big, msg):
    with pytest.raises(SqlError) as e:
        ev(Call("add", (c(0, t), Literal(1, t)), t), [(big,)], [t])
    assert e.value.sqlstate == "22003" and e.value.message == msg
    with pytest.raises(SqlError):
        ev(Call("mul", (c(0, t), Literal(2, t)), t), [(big,)], [t])


def test_division_by_zero_only_where_it_happens():
    t = [INT8, INT8]
    assert ev(Call("div", (c(0, INT8), c(1, INT8)), INT8), [(7, 2), (-7, 2), (None, 0)], t) == [3, -3, None]
    with pytest.raises(SqlError) as e:
        ev(Call("div", (c(0, INT8), c(1, INT8)), INT8), [(7, 2), (1, 0)], t)
    assert e.value.sqlstate == "22012" and e.value.message == "division by zero"
    assert ev(Call("mod", (c(0, INT8), c(1, INT8)), INT8), [(-7, 3), (7, -3)], t) == [-1, 1]
    with pytest.raises(SqlError):
        ev(Call("div", (c(0, FLOAT8), Literal(0.0, FLOAT8)), FLOAT8), [(1.0,)], [FLOAT8])


def test_case_does_not_evaluate_the_branch_not_taken():
    expr = If(Call("eq", (c(0, INT8), Literal(0, INT8)), BOOL), Literal(-1, INT8),
              Call("div", (Literal(10, INT8), c(0, INT8)), INT8), INT8)
    assert ev(expr, [(0,), (5,), (None,), (-2,)], [INT8]) == [-1, 2, None, -5]


def test_text_to_int_cast():
    assert ev(Cast(c(0, TEXT), INT4), [(" 42 ",), (None,), ("-7",)], [TEXT]) == [42, None, -7]
    with pytest.raises(SqlError) as e:
        ev(Cast(c(0, TEXT), INT4), [("12",), ("abc",)], [TEXT])
    assert e.value.sqlstate == "22P02"
    assert e.value.message == 'invalid input syntax for type integer: "abc"'
    with pytest.raises(SqlError) as e:
        ev(Cast(c(0, TEXT), INT4), [("99999999999",)], [TEXT])
    assert e.value.sqlstate == "22003"


def test_other_casts():
    assert ev(Cast(c(0, TEXT), BOOL), [("t",), ("off",), ("YES",)], [TEXT]) == [True, False, True]
    assert ev(Cast(c(0, BOOL), TEXT), [(True,)], [BOOL]) == ["true"]
    assert ev(Cast(c(0, FLOAT8), INT4), [(2.5,), (3.5,), (-1.5,)], [FLOAT8]) == [2, 4, -2]
    assert ev(Cast(c(0, numeric(10, 2)), INT4), [(Decimal("2.50"),), (Decimal("-2.50"),)],
              [numeric(10, 2)]) == [3, -3]
    assert ev(Cast(c(0, TEXT), numeric(10, 2)), [("1.005",)], [TEXT]) == [Decimal("1.01")]
    assert ev(Cast(c(0, TEXT), DATE), [("2024-02-29",)], [TEXT])[0].isoformat() == "2024-02-29"
    with pytest.raises(SqlError) as e:
        ev(Cast(c(0, TEXT), TIMESTAMP), [("not a time",)], [TEXT])
    assert e.value.sqlstate == "22007"
    with pytest.raises(SqlError) as e:
        ev(Cast(c(0, numeric(10, 2)), numeric(3, 1)), [(Decimal("123.45"),)], [numeric(10, 2)])
    assert e.value.sqlstate == "22003"


def test_numeric_keeps_scale_and_rounds_half_away_from_zero():
    n2 = numeric(10, 2)
    rows = [(Decimal("1.25"), Decimal("0.10")), (Decimal("-1.25"), Decimal("3.00"))]
    assert ev(Call("add", (c(0, n2), c(1, n2)), n2), rows, [n2, n2]) == [Decimal("1.35"), Decimal("1.75")]
    assert ev(Call("mul", (c(0, n2), c(1, n2)), n2), rows, [n2, n2]) == [Decimal("0.13"), Decimal("-3.75")]
    assert ev(Call("div", (c(0, n2), c(1, n2)), NUMERIC), rows, [n2, n2]) == [
        Decimal("12.5000000000000000"), Decimal("-0.4166666666666667")]
    with pytest.raises(SqlError) as e:
        ev(Call("div", (c(0, n2), Literal(Decimal("0"), n2)), NUMERIC), rows, [n2, n2])
    assert e.value.sqlstate == "22012"
    # Unconstrained numeric: 38 digits, 16 fractional, exact products.
    big = Decimal("12345678901234567.1234")
    assert ev(Call("mul", (c(0, NUMERIC), Literal(Decimal("2"), NUMERIC)), NUMERIC), [(big,)], [NUMERIC]) == [
        Decimal("24691357802469134.2468000000000000")]


def test_text_functions():
    rows = [("  Hello World ",), (None,)]
    t = [TEXT]
    assert ev(Call("upper", (c(0, TEXT),), TEXT), rows, t) == ["  HELLO WORLD ", None]
    assert ev(Call("btrim", (c(0, TEXT),), TEXT), rows, t) == ["Hello World", None]
    assert ev(Call("length", (c(0, TEXT),), INT4), rows, t) == [14, None]
    assert ev(Call("like", (c(0, TEXT), Literal("%World%", TEXT)), BOOL), rows, t) == [True, None]
    assert ev(Call("ilike", (c(0, TEXT), Literal("%world%", TEXT)), BOOL), rows, t) == [True, None]
    assert ev(Call("substr", (Literal("hello", TEXT), Literal(0, INT4), Literal(3, INT4)), TEXT),
              [(1,)], [INT4]) == ["he"]
    assert ev(Call("concat", (Literal("a", TEXT), c(0, INT8)), TEXT), [(1,), (None,)], [INT8]) == ["a1", None]
    assert ev(Call("replace", (Literal("aXbX", TEXT), Literal("X", TEXT), Literal("-", TEXT)), TEXT),
              [(1,)], [INT4]) == ["a-b-"]


def test_misc_functions():
    t = [INT8, INT8]
    rows = [(1, None), (None, None), (3, 2)]
    assert ev(Call("coalesce", (c(0, INT8), c(1, INT8), Literal(9, INT8)), INT8), rows, t) == [1, 9, 3]
    assert ev(Call("nullif", (c(0, INT8), Literal(3, INT8)), INT8), rows, t) == [1, None, None]
    assert ev(Call("greatest", (c(0, INT8), c(1, INT8)), INT8), rows, t) == [1, None, 3]
    assert ev(Call("in_list", (c(0, INT8), Literal(3, INT8), c(1, INT8)), BOOL), rows, t) == [None, None, True]
    assert ev(Call("round", (Literal(Decimal("2.5"), numeric(10, 1)),), numeric(10, 0)), [(1,)], [INT8]) == [
        Decimal("3")]
    assert ev(Call("abs", (c(0, INT8),), INT8), [(-4,)], [INT8]) == [4]
    assert ev(Call("mz_now", (), INT8), [(1,)], [INT8]) == [7]


def test_unknown_function():
    with pytest.raises(SqlError) as e:
        compile_expr(Call("frobnicate", (), INT8))
    assert e.value.sqlstate == "42883"


def test_numeric_precision_and_int64_fallback():
    n31 = numeric(3, 1)
    with pytest.raises(SqlError) as e:
        ev(Call("add", (c(0, n31), Literal(Decimal("0.1"), n31)), n31), [(Decimal("99.9"),)], [n31])
    assert e.value.sqlstate == "22003"
    # Unscaled values beyond int64 take the exact path and stay exact.
    big = Decimal("9" * 30 + ".25")
    n = numeric(38, 2)
    assert ev(Call("sub", (c(0, n), Literal(Decimal("0.50"), n)), n), [(big,)], [n]) == [Decimal("9" * 29 + "8.75")]
