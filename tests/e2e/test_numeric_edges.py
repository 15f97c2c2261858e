"""Numbers never silently change, checked against PostgreSQL 15 over the wire.

Every expression runs as a one-off SELECT on Slipstream and on PostgreSQL (psycopg, simple query
protocol, text results) and must give the same text and result types, or the same SQLSTATE: real
is single precision everywhere (literals, casts, arithmetic, comparisons with double precision,
aggregates, output), out-of-range values are 22003, numeric(p,s) rounds half away from zero,
numeric -> integer rounds half away from zero and float -> integer half to even.

The same values are then stored in tables and read through materialized views, also while the
tables change. Where PostgreSQL answers and Slipstream refuses with 22003, that is the documented
limit of unconstrained numeric (16 digits after the point, 22 before it: docs/sql-semantics.md),
asserted explicitly; so is the documented rounding of division and avg to 16 digits, and the
other known differences (display scale of unconstrained numeric, sum(real) rounded once).
"""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np
import psycopg
import pytest
from psycopg.pq import DiagnosticField, ExecStatus

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

NUMERIC_OID = 1700
LIMIT_WORDS = "unconstrained numeric keeps at most"  # in the message or detail of the limit's 22003


class Answer:
    """One statement's outcome: rows as text (with column type OIDs and typmods), or an error."""

    def __init__(self, conn: psycopg.Connection, sql: str):
        res = conn.pgconn.exec_(sql.encode())
        self.sql = sql
        if res.status in (ExecStatus.FATAL_ERROR, ExecStatus.NONFATAL_ERROR):
            field = lambda f: (res.error_field(f) or b"").decode()  # noqa: E731
            self.sqlstate = field(DiagnosticField.SQLSTATE)
            self.message = field(DiagnosticField.MESSAGE_PRIMARY)
            self.detail = field(DiagnosticField.MESSAGE_DETAIL)
            self.rows, self.types = None, None
        else:
            self.sqlstate = None
            self.rows = [tuple(None if res.get_value(r, c) is None else res.get_value(r, c).decode()
                               for c in range(res.nfields)) for r in range(res.ntuples)]
            self.types = [(res.ftype(c), res.fmod(c)) for c in range(res.nfields)]

    @property
    def ok(self) -> bool:
        return self.sqlstate is None

    def outcome(self, trim_scale: bool = False):
        """What must agree: the SQLSTATE, or the rows and column types. With `trim_scale`, the
        trailing fractional zeros of unconstrained numeric columns are dropped (the display
        scale PostgreSQL keeps and Slipstream does not: a documented difference)."""
        if not self.ok:
            return ("error", self.sqlstate)
        rows = self.rows
        if trim_scale:
            cols = [i for i, (oid, mod) in enumerate(self.types) if oid == NUMERIC_OID and mod == -1]
            rows = [tuple(_trim(v) if i in cols else v for i, v in enumerate(r)) for r in rows]
        return ("rows", sorted(rows, key=repr), [oid for oid, _ in self.types])

    def __repr__(self) -> str:
        if self.ok:
            return f"{self.rows!r} {self.types!r}"
        return f"{self.sqlstate} {self.message} | {self.detail}"


def _trim(v: str | None) -> str | None:
    if v is None or "." not in v:
        return v
    v = v.rstrip("0").rstrip(".")
    return "0" if v in ("-0", "") else v


@pytest.fixture(scope="module")
def conns(slipstream, pg_oracle):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        yield ss, pg


def both(conns, sql: str) -> tuple[Answer, Answer]:
    ss, pg = conns
    return Answer(ss, sql), Answer(pg, sql)


# ---- one-off SELECTs: the same text, types or SQLSTATE as PostgreSQL ------------------------

SAME_AS_POSTGRES = [
    # The reported single-precision case.
    "SELECT '2147483583'::float4::int",
    # real is single precision: literals, text, integers, doubles and numerics cast to it.
    "SELECT 0.1::real, '0.1'::real, 0.1::real::text, 0.1::real::float8, '0.1'::float4::float8::text",
    "SELECT 2147483583::real, (-2147483583)::real, 2147483583::bigint::real, 9223372036854775807::real",
    "SELECT 16777217::real, '16777217'::real, 16777217::bigint::real, 16777217::float8::real",
    "SELECT 9007199791611905::bigint::real, 9007199791611905::real, '9007199791611905'::real",
    "SELECT '1.000000059604644775390626'::real, '1.000000059604644775390624'::real",
    "SELECT '3.4028235e38'::real, '-3.4028235e38'::real, 3.4028235e38::real, 3.4028235e38::float8::real",
    "SELECT '1.17549435e-38'::real, '1.1754942e-38'::real, '1.4e-45'::real, 1.401298464324817e-45::float8::real",
    "SELECT 0.1::numeric::real, 1.123456789::numeric::real, 1234567890123456789012.1234567890123456::real",
    "SELECT '1e39'::real", "SELECT '-1e39'::real", "SELECT '1e-50'::real", "SELECT '3.4028236e38'::real",
    "SELECT 1e39::float8::real", "SELECT 1e-50::float8::real", "SELECT 3.4028236e38::real",
    "SELECT 1e39::real", "SELECT 'Infinity'::real, '-Infinity'::real, 'NaN'::real",
    "SELECT '1e309'::float8", "SELECT '1e-400'::float8", "SELECT 1e309::float8", "SELECT 1e-400::float8",
    # real -> integer: rounded half to even from the single-precision value.
    "SELECT 16777217::real::int, 2147483520::real::int, 0.5::real::int, 1.5::real::int, 2.5::real::int",
    "SELECT 2147483583::real::int", "SELECT 32767.5::real::smallint", "SELECT 'NaN'::real::int",
    "SELECT 'Infinity'::real::bigint",
    # real -> numeric through 6 significant digits, double -> numeric through 15.
    "SELECT 0.1::real::numeric, 1.1::real::numeric, 123456.7::real::numeric, 1234567.8::real::numeric",
    "SELECT 1e-7::real::numeric, 0.1::real::numeric(10,8), 16777217::real::numeric",
    "SELECT 0.1::float8::numeric, 1.1234567890123456::float8::numeric, 1e-5::float8::numeric",
    "SELECT 123456789012345.6::float8::numeric, (0.1::float8 + 0.2::float8)::numeric, 1e15::float8::numeric",
    # real arithmetic stays real; with a double it is double (real promoted, not rounded).
    "SELECT 0.1::real + 0.2::real, 0.1::real * 3::real, 1::real / 3::real, 0.1::real - 0.1::real",
    "SELECT 0.1::real + 0.2::float8, 0.1::real * 3, 1::real / 3, 0.1::real - 0.1::float8",
    "SELECT 3.4028235e38::real * 2, 3.4028235e38::real * 2::real",
    "SELECT 3.4028235e38::real + 3.4028235e38::real", "SELECT 1e-45::real * 0.5::real",
    "SELECT 1e300::float8 * 1e300", "SELECT 1e-300::float8 * 1e-300",
    # Float aggregates: sum(real) is real, avg(real) double; a sum, min or max of only -0 is -0.
    "SELECT sum(x), avg(x), min(x), max(x) FROM (VALUES (0.5::real), (0.25::real), ('-0'::real)) t(x)",
    "SELECT min(x), max(x), sum(x) FROM (VALUES ('-0'::real), ('-0'::real)) t(x)",
    "SELECT avg(x) FROM (VALUES (1e300::float8)) t(x)", "SELECT sum(x) FROM (VALUES (1e300::float8)) t(x)",
    "SELECT avg(x) FROM (VALUES (1e154::float8), (1e154::float8)) t(x)",
    "SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) t(x)",
    "SELECT sum(x), avg(x) FROM (VALUES ('-0'::float8), ('-0'::float8)) t(x)",
    "SELECT sum(x), avg(x) FROM (VALUES (3.4028235e38::real), (3.4028235e38::real)) t(x)",
    # Comparisons: real is promoted to double against a double, as in PostgreSQL.
    "SELECT 0.1::real = 0.1::float8, 0.1::real = 0.1::real, 0.1::real < 0.1::float8, 0.1::real > 0.1::float8",
    "SELECT 0.5::real = 0.5::float8, 0.1::real IN (0.1::float8), 0.1::real::float8 = 0.1::float8",
    "SELECT 0.1::real = 0.1, 0.1::real < 0.1, 16777217::real = 16777216, 0.1::numeric = 0.1::float8",
    # double -> integer: half to even; numeric -> integer: half away from zero; range checks.
    "SELECT 0.5::float8::int, 1.5::float8::int, 2.5::float8::int, (-2.5)::float8::int, (-0.5)::float8::int",
    "SELECT 0.5::int, (-0.5)::int, 1.5::int, 2.5::int, (-2.5)::int, 2147483647.4::int, 32767.4999::smallint",
    "SELECT 9223372036854775807.4::bigint, (-9223372036854775808.4)::bigint",
    "SELECT 2147483647.5::float8::int", "SELECT (-2147483648.5)::float8::int", "SELECT 'NaN'::float8::int",
    "SELECT 1e30::float8::bigint", "SELECT 9223372036854775807::float8::bigint", "SELECT 32767.5::float8::smallint",
    "SELECT 2147483647.5::int", "SELECT (-2147483648.5)::int", "SELECT 9223372036854775807.5::bigint",
    "SELECT 1e30::int", "SELECT 123456789012345678901234567890::numeric(38,0)::bigint",
    # numeric(p, s): half away from zero, PostgreSQL's overflow error and detail.
    "SELECT 0.5::numeric(1,0), (-0.5)::numeric(1,0), 2.675::numeric(3,2), (-2.675)::numeric(3,2)",
    "SELECT 1.005::numeric(3,2), 0.045::numeric(2,2), (-0.4)::numeric(1,0), 2.5::float8::numeric(1,0)",
    "SELECT '0.5'::numeric(2,0), '-0.5'::numeric(2,0), '2.675'::numeric(4,2), '-2.675'::numeric(4,2)",
    "SELECT '1.2e-20'::numeric(10,5), 1.2e-20::numeric(25,22), 0.1::real::numeric(10,3)",
    "SELECT 9.5::numeric(1,0)", "SELECT 99.995::numeric(4,2)", "SELECT 12345.678::numeric(5,2)",
    "SELECT 1::numeric(3,3)", "SELECT 0.9995::numeric(3,3)", "SELECT '12345.678'::numeric(5,2)",
    # The widest numerics: 38 digits in numeric(38, s); 22 + 16 unconstrained.
    "SELECT 99999999999999999999999999999999999999::numeric(38,0), 1e37::numeric(38,0)",
    "SELECT 0.99999999999999999999999999999999999999::numeric(38,38)",
    "SELECT 123456789012345678901234567890.5::numeric(38,6)",
    "SELECT 999999999999999999999999999999999999999::numeric(38,0)", "SELECT 1e38::numeric(38,0)",
    "SELECT 9999999999999999999999.9999999999999999::numeric, (-9999999999999999999999.9999999999999999)::numeric",
    "SELECT 1234567890123456789012.1234567890123456, 0.0000000000000001::numeric, -0.0000000000000001",
    "SELECT 9999999999999999999999 + 0.0000000000000001, 0.12345678 * 0.12345678, 0.1 + 0.2",
    # Negative zero.
    "SELECT '-0'::numeric, -0::numeric, (-0.4)::numeric(1,0), -(0::numeric), '-0'::float8, '-0'::real",
    "SELECT '-0'::float8::text, '-0'::real::text, -('0'::float8), ('-0'::float8)::numeric",
    "SELECT (-0.0)::float8, '-0.0'::numeric::float8, (-0.0001)::numeric(5,3), '-0.0001'::numeric(5,3)",
    "SELECT (-0.0)::numeric::text, (-0.0)::real",
    # Numeric text: plain digits, never an exponent.
    "SELECT 0.0000000000000001::numeric::text, 1e21::numeric::text, 1e2::text, 0::numeric::text",
    "SELECT 0.00000001::numeric(20,10)::text, 0::numeric(10,5)::text, 'x' || 0.00001::numeric",
    "SELECT 0.1::numeric::float8, 1234567890123456789012.1234567890123456::float8, 0.0000000000000001::float8",
    # Text input PostgreSQL 15 refuses.
    "SELECT '1_000'::int", "SELECT '1_000'::numeric", "SELECT '1_000'::float8", "SELECT 'abc'::real",
]


@pytest.mark.parametrize("sql", SAME_AS_POSTGRES)
def test_same_as_postgres(conns, sql):
    ss, pg = both(conns, sql)
    assert ss.outcome() == pg.outcome(), f"\nslipstream: {ss!r}\npostgres:   {pg!r}"


def test_float_range_errors_have_postgres_messages(conns):
    for sql in ("SELECT '1e39'::real", "SELECT 3.4028236e38::real", "SELECT 1e39::float8::real",
                "SELECT 1e-50::float8::real", "SELECT 12345.678::numeric(5,2)", "SELECT 1::numeric(3,3)"):
        ss, pg = both(conns, sql)
        assert (ss.sqlstate, ss.message, ss.detail) == (pg.sqlstate, pg.message, pg.detail), sql


# ---- the documented limit: PostgreSQL answers, unconstrained numeric refuses ----------------

REFUSED_AT_THE_LIMIT = [
    "SELECT '1.2e-20'::numeric",                  # the reported case (PostgreSQL 0.000000000000000000012)
    "SELECT 1.2e-20", "SELECT 1.2e-20 + 0", "SELECT 0.00000000000000000001 = 0", "SELECT -(1.2e-20)",
    "SELECT 0.123456789 * 0.123456789",           # the exact product has 18 fractional digits
    "SELECT '1e30'::numeric", "SELECT 1e30::numeric", "SELECT 99999999999999999999999::numeric",
    "SELECT 9999999999999999999999.9999999999999999::numeric + 1",
    "SELECT 9999999999999999999999::numeric * 10",
    "SELECT 1e-20::float8::numeric", "SELECT 1e300::float8::numeric", "SELECT 3.4028235e38::real::numeric",
    "SELECT '1.17549435e-38'::real::numeric",
    "SELECT 1.5e-17::float8::numeric", "SELECT '0.00000000000000001'::numeric",
    "SELECT 0.00000000000000000001::numeric(30,20)::numeric",
    "SELECT 0.00000000000000000001::numeric(30,20) + 0",
]


@pytest.mark.parametrize("sql", REFUSED_AT_THE_LIMIT)
def test_values_unconstrained_numeric_cannot_hold_are_refused_not_rounded(conns, sql):
    """Documented limit (docs/sql-semantics.md): unconstrained numeric keeps 16 digits after the
    point and 22 before it; PostgreSQL's has no such limit. Never a rounded value."""
    ss, pg = both(conns, sql)
    assert pg.ok, pg
    assert ss.sqlstate == "22003", ss
    assert LIMIT_WORDS in ss.message + ss.detail, ss


def test_the_reported_refusal_says_what_and_why(conns):
    ss, _ = both(conns, "SELECT '1.2e-20'::numeric")
    assert ss.message == ("numeric value 1.2e-20 cannot be stored exactly: unconstrained numeric keeps "
                          "at most 16 digits after the decimal point")
    ss, _ = both(conns, "SELECT 0.123456789 * 0.123456789")
    assert "0.015241578750190521 (the result of 0.123456789 * 0.123456789)" in ss.message


# ---- documented: division and avg keep 16 fractional digits ----------------------------------

DIVISIONS = [
    "SELECT 1::numeric / 7", "SELECT 2::numeric / 3", "SELECT (-2)::numeric / 3", "SELECT 10::numeric / 4",
    "SELECT 1234567890.123::numeric / 0.7", "SELECT avg(x) FROM (VALUES (1::numeric), (0), (0)) t(x)",
    "SELECT avg(x) FROM (VALUES (2::numeric), (2), (1)) t(x)", "SELECT avg(x) FROM (VALUES (1), (2)) t(x)",
]


@pytest.mark.parametrize("sql", DIVISIONS)
def test_division_and_avg_are_postgres_rounded_to_16_digits(conns, sql):
    """Documented difference: PostgreSQL rounds a quotient to at least 16 significant digits (up
    to 20 after the point); here it is always rounded half away from zero to 16 digits after the
    point. Rounded to the shorter of the two, both are the same number (what the SQL fuzzer
    compares, with that tolerance)."""
    ss, pg = both(conns, sql)
    assert ss.ok and pg.ok, (ss, pg)
    got, want = Decimal(ss.rows[0][0]), Decimal(pg.rows[0][0])
    assert -got.as_tuple().exponent <= 16
    step = Decimal(1).scaleb(max(got.as_tuple().exponent, want.as_tuple().exponent))
    assert got.quantize(step, rounding=ROUND_HALF_UP) == want.quantize(step, rounding=ROUND_HALF_UP)
    assert ss.types == pg.types


def test_display_scale_is_a_documented_difference(conns):
    """Documented difference: unconstrained numeric shows the value's own digits; PostgreSQL keeps
    the display scale of its inputs (1.50 there, 1.5 here). The value is the same."""
    ss, pg = both(conns, "SELECT 1.50::numeric, 0.5::numeric * 2, -0.0::numeric")
    assert pg.rows == [("1.50", "1.0", "0.0")]
    assert ss.rows == [("1.5", "1", "0")]
    assert ss.outcome(trim_scale=True) == pg.outcome(trim_scale=True)


def test_sum_of_real_is_rounded_once(conns):
    """Documented difference: sum(real) is the exact sum rounded once to real; PostgreSQL adds in
    single precision row by row (so its answer depends on the order of the rows)."""
    sql = "SELECT sum(x), avg(x) FROM (VALUES (0.1::real), (0.1), (0.1), (0.1), (0.1), (0.1), (0.1)) t(x)"
    ss, pg = both(conns, sql)
    assert pg.rows == [("0.70000005", "0.10000000149011612")]
    exact = 7 * Fraction(float(np.float32(0.1)))
    assert ss.rows == [(str(np.float32(float(exact))), "0.10000000149011612")]
    assert ss.types == pg.types  # real and double precision


def test_avg_of_doubles_far_apart_is_a_documented_difference(conns):
    """Documented difference: PostgreSQL 15's avg(double precision) also accumulates the variance
    and fails with 22003 when that overflows (values ~1e154 or more apart); here the average
    is computed from the exact sum."""
    ss, pg = both(conns, "SELECT avg(x) FROM (VALUES (0.1::float8), (1e300::float8)) t(x)")
    assert pg.sqlstate == "22003"
    assert ss.rows == [("5e+299",)]


# ---- parameters (extended protocol, text and binary) -------------------------------------------

PARAMS = [
    ("SELECT (%s::real)::text", "1.000000059604644775390626"), ("SELECT (%s::real)::text", "1e39"),
    ("SELECT (%s::real)::text", 2147483583), ("SELECT (%s::real)::text", 0.1),
    ("SELECT (%s::numeric(4,2))::text", Decimal("2.675")), ("SELECT (%s::numeric(4,2))::text", Decimal("999.5")),
    ("SELECT (%s::int)::text", Decimal("2.5")), ("SELECT (%s::float8::int)::text", 2.5),
    ("SELECT (%s::numeric)::text", Decimal("1234567890123456789012.1234567890123456")),
    ("SELECT (%s::int)::text", "1_000"),
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("sql, value", PARAMS)
def test_parameters_same_as_postgres(conns, sql, value, binary):
    def run(conn):
        try:
            return conn.cursor(binary=binary).execute(sql, (value,)).fetchall()
        except psycopg.Error as e:
            return e.sqlstate
    ss, pg = conns
    assert run(ss) == run(pg)


def test_parameters_beyond_the_limit_are_refused(conns):
    ss, pg = conns
    for value in (Decimal("1.2e-20"), Decimal("1e30")):
        assert pg.execute("SELECT %s::numeric", (value,)).fetchone()[0] == value
        with pytest.raises(psycopg.Error) as e:
            ss.execute("SELECT %s::numeric", (value,))
        assert e.value.sqlstate == "22003"


# ---- stored values and materialized views ---------------------------------------------------------

TABLE = "CREATE TABLE {p}nums (id int, g int, n numeric, d numeric(12,4), r real, f float8, i int, b bigint)"
ROWS = [
    "(1, 1, 0.1, 2.675, '0.1', 0.1, 2147483583, 9007199791611905)",
    "(2, 1, 1234567890123456789012.1234567890123456, -2.675, '16777217', 1e150, -7, -9223372036854775808)",
    "(3, 2, -0.0000000000000001, 99999999.9999, '3.4028235e38', '-0', 16777217, 16777217)",
    "(4, 2, 9999999999999999999999.9999999999999999, 0.00005, '1.17549435e-38', 1e-300, 0, 0)",
    "(5, 3, -0.0, -0.00005, '-0', 0, NULL, NULL)",
    "(6, 3, NULL, NULL, NULL, NULL, 1, 1)",
    "(7, 4, 0.5, 0.5, '1.000000059604644775390626', 2.5, -2147483648, 9223372036854775807)",
]
VIEWS = {
    "stored": "SELECT id, n, d, r, f, i, b FROM {p}nums",
    "as_real": "SELECT id, r::float8 AS rf, r::text AS rt, i::real AS ir, b::real AS br, d::real AS dr, "
               "n::real AS nr, r::numeric AS rn, r::int AS ri FROM {p}nums "
               "WHERE abs(r) < 1e30 AND (abs(r) > 1e-30 OR r = 0)",
    "arith": "SELECT id, r * 2 AS r2, r + r AS rr, r + f AS rf, r = 0.1::float8 AS eqd, r = 0.1::real AS eqr, "
             "r < f AS lt, f::int AS fi, d::int AS di, d::numeric(6,1) AS d1, n + 1 AS n1, -n AS nn, "
             "n::text AS nt, d::text AS dt FROM {p}nums WHERE abs(f) < 1e10 AND abs(n) < 1e10",
    "agg": "SELECT g, sum(r) AS sr, avg(r) AS ar, sum(f) AS sf, avg(f) AS af, sum(n) AS sn, sum(d) AS sd, "
           "min(r) AS minr, max(r) AS maxr, sum(i) AS si, sum(b) AS sb, count(*) AS c FROM {p}nums GROUP BY g",
}
# Changes applied to both databases; each keeps every view equal to PostgreSQL's answer.
CHANGES = [
    "INSERT INTO {p}nums VALUES (8, 1, 2.5, 1.25, '0.25', 1e20, 5, 5)",
    "INSERT INTO {p}nums VALUES (9, 1, -2.5, -1.25, '0.5', 1, 6, 6)",
    "DELETE FROM {p}nums WHERE id = 8",                                  # leaves 1e300 + 1 - ...: exact
    "UPDATE {p}nums SET r = '16777216', f = -1 WHERE id = 9",
    "UPDATE {p}nums SET n = n * 2, d = d * 2 WHERE id IN (1, 7)",
    "INSERT INTO {p}nums VALUES (10, 2, -0.0000000000000002, 0.0001, '-0', '-0', -1, -1)",
    "DELETE FROM {p}nums WHERE id = 2",
    "UPDATE {p}nums SET f = 0 WHERE id = 3",
    "DELETE FROM {p}nums WHERE id IN (1, 9)",
]


def _views_match(ss, pg, p: str, step: str) -> None:
    for name, sql in VIEWS.items():
        got = Answer(ss, f"SELECT * FROM {p}{name}")
        want = Answer(pg, sql.format(p=""))
        assert got.outcome(trim_scale=True) == want.outcome(trim_scale=True), \
            f"after {step}, view {name}\nslipstream: {got!r}\npostgres:   {want!r}"


def test_stored_values_and_views_match_postgres_under_changes(conns, unique_prefix):
    ss, pg = conns
    p = unique_prefix
    pg.execute("DROP TABLE IF EXISTS nums CASCADE")
    for conn, prefix in ((ss, p), (pg, "")):
        conn.execute(TABLE.format(p=prefix))
        conn.execute(f"INSERT INTO {prefix}nums VALUES " + ", ".join(ROWS))
    for name, sql in VIEWS.items():
        ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS " + sql.format(p=p))
    _views_match(ss, pg, p, "the first rows")
    for change in CHANGES:
        ss.execute(change.format(p=p))
        pg.execute(change.format(p=""))
        _views_match(ss, pg, p, change.format(p=""))


def test_float_sums_in_views_survive_random_changes(conns, unique_prefix):
    """A running double sum is not invertible (+1e20, +1, -1e20 left 0): the view's sums must
    equal PostgreSQL's over the rows present after every change. Values whose sums are exact in
    any order, so PostgreSQL's own order cannot matter."""
    ss, pg = conns
    p = unique_prefix
    rng = random.Random(3)
    values = ["1e20", "-1e20", "1", "0.5", "0.25", "1e-20", "'-0'", "3", "2e20", "1e300", "-1e300"]
    pg.execute("DROP TABLE IF EXISTS fsum CASCADE")
    for conn, prefix in ((ss, p), (pg, "")):
        conn.execute(f"CREATE TABLE {prefix}fsum (id int, g int, f float8, r real)")
    view = "SELECT g, sum(f) AS sf, sum(r) AS sr, count(*) AS c FROM {p}fsum GROUP BY g"
    ss.execute(f"CREATE MATERIALIZED VIEW {p}fsv AS " + view.format(p=p))
    present: dict[int, tuple[int, str, str]] = {}
    for step in range(30):
        if present and rng.random() < 0.4:
            rid = rng.choice(sorted(present))
            stmt = "DELETE FROM {p}fsum WHERE id = %d" % rid
            del present[rid]
        else:
            rid, g, v = step + 1, rng.randint(1, 2), rng.choice(values)
            rv = v if abs(float(v.strip("'"))) < 1e30 else "1"
            stmt = f"INSERT INTO {{p}}fsum VALUES ({rid}, {g}, {v}, {rv})"
            present[rid] = (g, v, rv)
        ss.execute(stmt.format(p=p))
        pg.execute(stmt.format(p=""))
        # PostgreSQL adds in its own order: compare with its answer only where every partial sum
        # is exact (no 1e20 next to 1, no 1e300 next to anything smaller).
        got = {r[0]: r for r in Answer(ss, f"SELECT * FROM {p}fsv").rows}
        want = {r[0]: r for r in Answer(pg, view.format(p="")).rows}
        assert got.keys() == want.keys(), stmt
        for g in want:
            vals = [float(v.strip("'")) for gg, v, _ in present.values() if gg == int(g)]
            exact = sum((Fraction(v) for v in vals), Fraction(0))
            assert float(got[g][1]) == float(exact), (stmt, got[g], vals)
            reals = [float(np.float32(float(rv.strip("'")))) for gg, _, rv in present.values() if gg == int(g)]
            assert np.float32(got[g][2]) == np.float32(float(sum((Fraction(v) for v in reals), Fraction(0))))
            if all(Fraction(x + y) == Fraction(x) + Fraction(y) for x in vals for y in vals):
                assert got[g][1] == want[g][1], (stmt, got[g], want[g])
            assert got[g][3] == want[g][3]


def test_views_refuse_values_beyond_the_limit_until_retracted(conns, unique_prefix):
    """Documented limit under changes: a row whose value a view cannot hold exactly makes reads of
    that view fail with 22003 (PostgreSQL answers), and retracting the row heals the view."""
    ss, pg = conns
    p = unique_prefix
    pg.execute("DROP TABLE IF EXISTS lim CASCADE")
    for conn, prefix in ((ss, p), (pg, "")):
        conn.execute(f"CREATE TABLE {prefix}lim (id int, n numeric, w numeric(30,20))")
        conn.execute(f"INSERT INTO {prefix}lim VALUES (1, 0.5, 1.5)")
    view = "SELECT id, n * n AS nn, w + 0 AS w0 FROM {p}lim"
    ss.execute(f"CREATE MATERIALIZED VIEW {p}limv AS " + view.format(p=p))
    _limit_views_match(ss, pg, p, view)
    # Stored fine (12 and 20 digits fit their columns), but the products / sums do not fit.
    for conn, prefix in ((ss, p), (pg, "")):
        conn.execute(f"INSERT INTO {prefix}lim VALUES (2, 0.123456789, 0.00000000000000000001)")
    got, want = Answer(ss, f"SELECT * FROM {p}limv"), Answer(pg, view.format(p=""))
    assert want.ok and got.sqlstate == "22003" and LIMIT_WORDS in got.message + got.detail, got
    # Inserting what the column cannot hold is refused too, and changes nothing.
    with pytest.raises(psycopg.Error) as e:
        ss.execute(f"INSERT INTO {p}lim VALUES (3, 1.2e-20, 0)")
    assert e.value.sqlstate == "22003"
    for conn, prefix in ((ss, p), (pg, "")):
        conn.execute(f"DELETE FROM {prefix}lim WHERE id = 2")
    _limit_views_match(ss, pg, p, view)


def _limit_views_match(ss, pg, p: str, view: str) -> None:
    got, want = Answer(ss, f"SELECT * FROM {p}limv"), Answer(pg, view.format(p=""))
    assert got.outcome(trim_scale=True) == want.outcome(trim_scale=True), (got, want)


# ---- COPY: text, CSV and binary ---------------------------------------------------------------

COPIES = [  # (column type, values) stored through each COPY format on both databases
    ("real", ["0.1", "16777217", "1.000000059604644775390626", "-0", "3.4028235e38", "1.4e-45"]),
    ("real", ["1e39"]), ("double precision", ["1e-400"]), ("int", ["1_000"]),
    ("numeric", ["0.5", "1234567890123456789012.1234567890123456", "-0.0000000000000001"]),
    ("numeric(4,2)", ["2.675", "-2.675", "0.005"]), ("numeric(4,2)", ["999.995"]),
    ("numeric", ["1.2e-20"]), ("numeric", ["1e30"]),
]


def _copy(conn, table: str, column: str, values: list[str], fmt: str):
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(f"CREATE TABLE {table} (x {column})")
    options = {"text": "", "csv": " (FORMAT CSV)", "binary": " (FORMAT BINARY)"}[fmt]
    try:
        with conn.cursor().copy(f"COPY {table} FROM STDIN{options}") as cp:
            if fmt == "binary":
                kind = column.split("(")[0].replace("real", "float4").replace("double precision", "float8")
                cp.set_types([kind])
                py = {"float4": float, "float8": float, "int": int, "numeric": Decimal}[kind]
                for v in values:
                    cp.write_row((py(v),))
            else:
                for v in values:
                    cp.write_row((v,))
    except psycopg.Error as e:
        return ("error", e.sqlstate)
    return Answer(conn, f"SELECT x::text FROM {table}").outcome(trim_scale=True)


@pytest.mark.parametrize("fmt", ["text", "csv", "binary"])
@pytest.mark.parametrize("column, values", COPIES)
def test_copy_stores_what_postgres_stores(conns, unique_prefix, column, values, fmt):
    if fmt == "binary" and column == "int":
        pytest.skip("the binary format has no text to refuse")
    ss, pg = conns
    got, want = _copy(ss, f"{unique_prefix}cp", column, values, fmt), _copy(pg, "cp", column, values, fmt)
    if column == "numeric" and want[0] == "rows" and got == ("error", "22003"):
        # The documented limit: unconstrained numeric cannot hold 1.2e-20 or 1e30 exactly.
        assert values in (["1.2e-20"], ["1e30"])
        return
    assert got == want
