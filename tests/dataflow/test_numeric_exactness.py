"""Numbers never silently change, unit by unit: exact numeric text, the 16-digit refusal of
unconstrained numeric, real rounded once from the exact value, exact float sums under
retractions, and plan-time casts of huge values (the end-to-end checks against PostgreSQL are
in tests/e2e/test_numeric_edges.py)."""

from __future__ import annotations

import math
import random
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest

from dataflow.batch import batch_from_rows, consolidate, rows_of
from dataflow.decimal_util import (check_exact_rescale, check_unconstrained, decimal_text, field_overflow,
                                   unscaled_text)
from dataflow.errors import SqlError
from dataflow.expr import Call, Cast, ColumnRef, Literal
from dataflow.float4 import float4_array, float4_of_exact
from dataflow.float_sum import ExactFloatSums
from dataflow.scalar import compile_expr
from dataflow.types import FLOAT4, FLOAT8, INT4, INT8, NUMERIC, TEXT, numeric
from planner.casts import cast_value
from server.adapter.finishing import _normalize


def ev(expr, rows, types):
    return compile_expr(expr)(batch_from_rows(rows, types, time=1)).to_pylist()


def err(fn):
    with pytest.raises(SqlError) as e:
        fn()
    return e.value


# ---- numeric text ------------------------------------------------------------------------

def test_decimal_text_is_plain_with_the_columns_scale():
    arr = pa.array([Decimal("1E-16"), Decimal("-12.5"), Decimal("0"), None,
                    Decimal("1234567890123456789012.1234567890123456"), Decimal("-0.0000000000000001")],
                   pa.decimal128(38, 16))
    assert decimal_text(arr).to_pylist() == [
        "0.0000000000000001", "-12.5000000000000000", "0.0000000000000000", None,
        "1234567890123456789012.1234567890123456", "-0.0000000000000001"]
    assert decimal_text(pa.array([Decimal("1E-8"), Decimal("-3")], pa.decimal128(20, 10))).to_pylist() == [
        "0.0000000100", "-3.0000000000"]
    assert decimal_text(pa.array([Decimal(5), Decimal(-7)], pa.decimal128(10, 0))).to_pylist() == ["5", "-7"]
    assert decimal_text(pa.array([Decimal("99999999999999999999999999999999999999")],
                                 pa.decimal128(38, 0))).to_pylist() == ["99999999999999999999999999999999999999"]
    sliced = pa.array([Decimal("1.5"), Decimal("0.0001")], pa.decimal128(38, 4)).slice(1)
    assert decimal_text(sliced).to_pylist() == ["0.0001"]


def test_numeric_to_text_never_uses_an_exponent():
    n = ColumnRef(0, NUMERIC)
    rows = [(Decimal("0.0000000000000001"),), (Decimal(0),), (Decimal("1E+21"),), (Decimal("-2.50"),)]
    assert ev(Cast(n, TEXT), rows, [NUMERIC]) == ["0.0000000000000001", "0", "1000000000000000000000", "-2.5"]
    d = ColumnRef(0, numeric(20, 10))
    assert ev(Cast(d, TEXT), [(Decimal("1E-8"),), (Decimal(0),)], [numeric(20, 10)]) == ["0.0000000100",
                                                                                     "0.0000000000"]


def test_query_output_keeps_all_38_digits():
    # Decimal's default context has 28 digits: normalize() with it rounded the value.
    d = Decimal("1234567890123456789012.1234567890123456")
    assert _normalize(d) == d
    assert str(_normalize(Decimal("1000000000000000000000.0000000000000000"))) == "1000000000000000000000"
    assert str(_normalize(Decimal("1.5000000000000000"))) == "1.5"


# ---- the 16-digit limit ----------------------------------------------------------------------

def test_unconstrained_numeric_refuses_what_it_cannot_hold():
    assert check_unconstrained(Decimal("0.0000000000000001")) == Decimal("1E-16")
    assert check_unconstrained(Decimal("9999999999999999999999.9999999999999999"))
    assert check_unconstrained(Decimal("1.50000000000000000000")) == Decimal("1.5")  # zeros are not digits lost
    e = err(lambda: check_unconstrained(Decimal("1.2E-20"), "1.2e-20"))
    assert e.sqlstate == "22003"
    assert e.message == ("numeric value 1.2e-20 cannot be stored exactly: unconstrained numeric keeps at most "
                         "16 digits after the decimal point")
    e = err(lambda: check_unconstrained(Decimal("1E+22")))
    assert (e.sqlstate, e.message) == ("22003", "value overflows numeric format")
    assert "10000000000000000000000" in e.detail and "22 digits before the decimal point" in e.detail


def test_exact_rescale_names_the_first_value_lost():
    vals = np.array([10 ** 20, 15241578750190521, 7], dtype=object)
    e = err(lambda: check_exact_rescale(vals, 18, 16))
    assert "numeric value 0.015241578750190521 cannot" in e.message
    check_exact_rescale(np.array([100, -300], np.int64), 18, 16)  # only zeros dropped
    assert unscaled_text(-1200, 2) == "-12" and unscaled_text(5, 3) == "0.005"


def test_products_sums_and_casts_into_unconstrained_numeric_are_exact_or_refused():
    a, b = ColumnRef(0, NUMERIC), ColumnRef(1, NUMERIC)
    rows = [(Decimal("0.12345678"), Decimal("0.12345678"))]
    assert ev(Call("mul", (a, b), NUMERIC), rows, [NUMERIC, NUMERIC]) == [Decimal("0.0152415765279684")]
    e = err(lambda: ev(Call("mul", (a, b), NUMERIC), [(Decimal("0.123456789"), Decimal("0.123456789"))],
                       [NUMERIC, NUMERIC]))
    assert "0.015241578750190521 (the result of 0.123456789 * 0.123456789)" in e.message
    # numeric(30, 20) -> numeric: a 17th fractional digit is refused, trailing zeros are fine.
    w = ColumnRef(0, numeric(30, 20))
    ok = [(Decimal("1.50000000000000000000"),)]
    assert ev(Cast(w, NUMERIC), ok, [numeric(30, 20)]) == [Decimal("1.5000000000000000")]
    assert ev(Call("add", (w, Literal(Decimal(0), NUMERIC)), NUMERIC), ok, [numeric(30, 20)]) == [
        Decimal("1.5000000000000000")]
    tiny = [(Decimal("1E-20"),)]
    for expr in (Cast(w, NUMERIC), Call("add", (w, Literal(Decimal(0), NUMERIC)), NUMERIC),
                 Call("mul", (w, Literal(Decimal(1), NUMERIC)), NUMERIC), Call("neg", (w,), NUMERIC)):
        assert err(lambda: ev(expr, tiny, [numeric(30, 20)])).sqlstate == "22003", expr
    # A literal the storage cannot hold is refused before it is used, not rounded to 0.
    e = err(lambda: ev(Call("eq", (Literal(Decimal("1E-20"), NUMERIC), Literal(Decimal(0), NUMERIC)), NUMERIC),
                       [(1,)], [INT4]))
    assert e.sqlstate == "22003"


def test_products_of_rounded_factors_round_half_away_from_zero():
    """`mul_rounded` (a factor computed from a quotient: planner.scalar.rounds_product) rounds
    the exact product to 16 digits, both through int64 and through Python ints; its integer
    digits are still checked."""
    a, b = ColumnRef(0, NUMERIC), ColumnRef(1, NUMERIC)
    rng = random.Random(7)
    rows = [(Decimal("0.2"), Decimal("2.3333333333333333")), (Decimal("-0.5"), Decimal("0.0000000000000001")),
            (Decimal("0.5"), Decimal("0.0000000000000001")), (None, Decimal(1)), (Decimal("3"), Decimal("7.5"))]
    rows += [(Decimal(rng.randint(-10 ** 9, 10 ** 9)).scaleb(-rng.randint(0, 16)),
              Decimal(rng.randint(-10 ** 15, 10 ** 15)).scaleb(-16)) for _ in range(200)]
    got = ev(Call("mul_rounded", (a, b), NUMERIC), rows, [NUMERIC, NUMERIC])
    q = Decimal(1).scaleb(-16)
    want = [None if x is None or y is None else (x * y).quantize(q, rounding="ROUND_HALF_UP") for x, y in rows]
    assert got == want
    assert got[:3] == [Decimal("0.4666666666666667"), Decimal("-0.0000000000000001"), Decimal("0.0000000000000001")]
    big = [(Decimal("1" + "0" * 15), Decimal("1" + "0" * 15))]  # 31 integer digits
    assert err(lambda: ev(Call("mul_rounded", (a, b), NUMERIC), big, [NUMERIC, NUMERIC])).sqlstate == "22003"


def test_numeric_p_s_overflow_has_postgres_detail():
    assert field_overflow(3, 3).detail == ("A field with precision 3, scale 3 must round to an absolute value "
                                           "less than 1.")
    e = err(lambda: ev(Cast(ColumnRef(0, TEXT), numeric(5, 2)), [("12345.678",)], [TEXT]))
    assert (e.message, e.detail) == ("numeric field overflow", field_overflow(5, 2).detail)
    e = err(lambda: ev(Cast(ColumnRef(0, NUMERIC), numeric(4, 2)), [(Decimal("99.995"),)], [NUMERIC]))
    assert e.detail == field_overflow(4, 2).detail


# ---- real -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("1.000000059604644775390626", 1.0000001192092896),   # just above a midpoint: double rounding said 1
    ("1.000000059604644775390624", 1.0),
    ("1.000000059604644775390625", 1.0),                  # the midpoint itself: ties to even
    ("3.4028235e38", 3.4028234663852886e+38),
    ("340282356779733661637539395458142568447", 3.4028234663852886e+38),  # just below overflow's midpoint
    ("340282356779733661637539395458142568448", math.inf),
    ("7.0064923216240862e-46", 1.401298464324817e-45),    # above half the smallest subnormal
    ("7.006492321624085e-46", 0.0),
])
def test_real_is_rounded_once_from_the_exact_value(text, want):
    assert float4_of_exact(text) == want
    assert float4_of_exact(Decimal(text)) == want


def test_real_from_int_and_text_arrays():
    assert float4_of_exact(2 ** 53 + 2 ** 29 + 1) == 2.0 ** 53 + 2 ** 30
    assert float4_of_exact(2147483583) == 2147483520.0
    texts = ["1.000000059604644775390626", "0.1", "16777217"]
    got = float4_array(np.array([float(t) for t in texts]), lambda i: Decimal(texts[i]))
    assert got.tolist() == [np.float32(1.0000001192092896), np.float32(0.1), np.float32(16777216)]
    assert ev(Cast(ColumnRef(0, TEXT), FLOAT4), [(t,) for t in texts], [TEXT]) == [
        1.0000001192092896, float(np.float32(0.1)), 16777216.0]
    e = err(lambda: ev(Cast(ColumnRef(0, TEXT), FLOAT4), [("1e39",)], [TEXT]))
    assert (e.sqlstate, e.message) == ("22003", '"1e39" is out of range for type real')


# ---- plan-time casts ------------------------------------------------------------------------

@pytest.mark.parametrize("value, src, dst, code", [
    (1e30, FLOAT8, INT8, "22003"), (Decimal("1E+30"), NUMERIC, INT4, "22003"),
    (Decimal("123456789012345678901234567890"), numeric(38, 0), INT8, "22003"),
    ("1_000", TEXT, INT4, "22P02"), ("1_000", TEXT, NUMERIC, "22P02"), ("1_000", TEXT, FLOAT8, "22P02"),
    ("1e39", TEXT, FLOAT4, "22003"), (Decimal("1E+39"), NUMERIC, FLOAT4, "22003"),
    (Decimal("1E+309"), NUMERIC, FLOAT8, "22003"), (Decimal("1E-400"), NUMERIC, FLOAT8, "22003"),
    ("1.2e-20", TEXT, NUMERIC, "22003"), (1e-20, FLOAT8, NUMERIC, "22003"),
])
def test_plan_time_casts_refuse_with_postgres_sqlstates(value, src, dst, code):
    assert err(lambda: cast_value(value, src, dst)).sqlstate == code


def test_consolidation_keeps_zero_and_negative_zero_apart():
    # Equal in SQL, but a stored 0 must not read back as -0 (nor the other way round).
    b = batch_from_rows([(0.0, 1), (-0.0, 1), (0.0, 1), (float("nan"), 1), (float("nan"), 1)], [FLOAT8, INT4], time=1)
    rows = sorted((repr(r[0]), r[1], d) for r, d in zip(rows_of(consolidate(b)), consolidate(b)["diff"].to_pylist()))
    assert rows == [("-0.0", 1, 1), ("0.0", 1, 2), ("nan", 1, 2)]


def test_rows_built_from_python_refuse_what_numeric_cannot_hold():
    assert batch_from_rows([(Decimal("0.5"),)], [NUMERIC], time=1)["c0"].to_pylist() == [Decimal("0.5")]
    assert err(lambda: batch_from_rows([(Decimal("1.2E-20"),)], [NUMERIC], time=1)).sqlstate == "22003"


def test_min_and_max_of_a_lone_negative_zero_keep_its_sign():
    from dataflow.scalar import _float_from_order_key, _float_order_key
    key = _float_order_key([pa.array([-0.0, 0.0, float("nan"), -1.0])], None)
    assert key.to_pylist()[3] < key.to_pylist()[0] < key.to_pylist()[1] < key.to_pylist()[2]
    back = _float_from_order_key([key], Call("float_from_order_key", (ColumnRef(0, INT8),), FLOAT8))
    assert [repr(v) for v in back.to_pylist()] == ["-0.0", "0.0", "nan", "-1.0"]


def test_numeric_zero_has_no_sign():
    assert cast_value(Decimal("-0.0"), NUMERIC, FLOAT8) == 0.0 and repr(cast_value(Decimal("-0.0"), NUMERIC, FLOAT8)) == "0.0"
    assert str(cast_value(Decimal("-0.0001"), NUMERIC, numeric(5, 3))) == "0.000"
    assert cast_value(Decimal("-0.0"), NUMERIC, TEXT) == "0.0"


def test_engine_computed_numeric_text_has_the_values_own_digits():
    assert cast_value(Decimal("0.5000000000000000"), NUMERIC, TEXT) == "0.5"
    assert cast_value(Decimal("0E-16"), NUMERIC, TEXT) == "0"
    assert cast_value(Decimal("1.50"), NUMERIC, TEXT) == "1.50"  # a literal keeps its scale, as PostgreSQL


def test_plan_time_casts_round_as_postgres():
    assert cast_value(2.5, FLOAT8, INT4) == 2 and cast_value(-2.5, FLOAT8, INT4) == -2
    assert cast_value(Decimal("2.5"), NUMERIC, INT4) == 3 and cast_value(Decimal("-2.5"), NUMERIC, INT4) == -3
    assert cast_value(Decimal("2147483647.4"), NUMERIC, INT4) == 2147483647
    assert cast_value(9007199791611905, INT8, FLOAT4) == 2.0 ** 53 + 2 ** 30
    assert cast_value(Decimal("1E-20"), NUMERIC, TEXT) == "0.00000000000000000001"
    assert cast_value(Decimal("1E+2"), NUMERIC, TEXT) == "100"
    e = err(lambda: cast_value(Decimal("3.4028236E+38"), NUMERIC, FLOAT4))
    assert e.message == '"340282360000000000000000000000000000000" is out of range for type real'


# ---- exact float sums --------------------------------------------------------------------------

def _exact_float(values) -> float:
    total = sum((Fraction(v) for v in values), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def test_float_sums_survive_retractions():
    s = ExactFloatSums()
    s.grow(2)
    s.add(np.array([0, 0, 1]), np.array([1e20, 1.0, 0.1]), np.array([1, 1, 3]))
    s.add(np.array([0]), np.array([1e20]), np.array([-1]))
    assert s.result(np.array([0, 1])).tolist() == [1.0, _exact_float([0.1] * 3)]
    s.add(np.array([1]), np.array([0.1]), np.array([-3]))
    assert s.result(np.array([1])).tolist() == [0.0]


def test_float_sums_round_once_ties_to_even():
    s = ExactFloatSums()
    s.grow(2)
    s.add(np.array([0, 0, 1, 1, 1]), np.array([1.0, 2.0 ** -53, 1.0, 2.0 ** -53, 2.0 ** -100]), np.ones(5, np.int64))
    assert s.result(np.array([0, 1])).tolist() == [1.0, 1.0 + 2.0 ** -52]


def test_float_sums_large_multiplicities_and_extremes():
    s = ExactFloatSums()
    s.grow(3)
    s.add(np.array([0, 1, 2, 2]), np.array([0.1, 1.7976931348623157e308, 5e-324, -5e-324]),
          np.array([-(2 ** 62), 2, 2 ** 40, 2 ** 40 - 1]))
    assert s.result(np.array([0, 1, 2])).tolist() == [_exact_float([0.1]) * -(2 ** 62), math.inf, 5e-324]
    s.add(np.array([1]), np.array([1.7976931348623157e308]), np.array([-1]))
    assert s.result(np.array([1])).tolist() == [1.7976931348623157e308]


def test_float_sums_match_exact_rational_sums():
    rng = random.Random(11)
    pool = [1e308, -1e308, 5e-324, 1e-310, 0.1, 0.2, 0.3, 2.0 ** 53 + 1, 1e16, 3.0, -7.5, 1e-20]
    for _ in range(200):
        groups = rng.randint(1, 4)
        s = ExactFloatSums()
        s.grow(groups)
        present = {g: [] for g in range(groups)}
        for _step in range(rng.randint(1, 6)):
            rows = [(rng.randrange(groups), rng.choice(pool) * rng.choice([1, -1, 1e-3, 1e5])) for _ in range(8)]
            rows = [(g, v if math.isfinite(v) else 1.5) for g, v in rows]
            s.add(np.array([g for g, _ in rows]), np.array([v for _, v in rows]), np.ones(len(rows), np.int64))
            for g, v in rows:
                present[g].append(v)
            for g in range(groups):
                if present[g] and rng.random() < 0.5:
                    v = present[g].pop(rng.randrange(len(present[g])))
                    s.add(np.array([g]), np.array([v]), np.array([-1]))
        got = s.result(np.arange(groups)).tolist()
        assert got == [_exact_float(present[g]) for g in range(groups)]
