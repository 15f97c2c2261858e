"""Numbers never silently change (checked against PostgreSQL): `real` is single precision in
literals, casts, arithmetic and aggregates, out-of-range values are 22003, numeric(p,s) rounds
half away from zero, float-to-numeric goes through 6 (real) or 15 (double) significant digits,
and unconstrained numeric refuses (22003) what its 16 fractional / 22 integer digits cannot hold
exactly instead of rounding it (the documented limit; PostgreSQL has arbitrary precision)."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer, pg_type_oids

DDL = ["CREATE TABLE nums (i int, bi bigint, r real, f float8, d numeric(10,2), n numeric)"]
DATA = ["INSERT INTO nums VALUES (2147483583, 9000000000, 0.1, 0.1, 2.675, 0.1), "
        "(-7, -9223372036854775808, 1e-30, 1e300, -2.675, 123456789.123456789), "
        "(16777217, 16777217, 3.4028235e38, -0.0, 99999999.99, -0.0000000000000001), "
        "(NULL, NULL, NULL, NULL, NULL, NULL)"]

SAME_AS_POSTGRES = [
    # The reported cases.
    "SELECT '2147483583'::float4::int",
    # real is single precision: literals, casts from every type, arithmetic, aggregates, output.
    "SELECT 0.1::real, 0.1::real::float8, 0.1::float4 * 1::smallint, 0.1::real / 3, least(0.1::real, 100::float8)",
    "SELECT 2147483583::real, 16777217::real, '16777217'::real, 9000000000::real, 3.4028235e38::real",
    "SELECT i::real, bi::real, d::real, n::real, f::real FROM nums WHERE f IS NULL OR abs(f) < 1e38",
    "SELECT r, r::float8, r * 2, r + 1, r = 0.1, r = 0.1::real, r > 0.1::float8 FROM nums",
    "SELECT sum(r), avg(r), max(r), min(r), sum(r * r) FROM nums",
    "SELECT '1e39'::real", "SELECT '1e-50'::real", "SELECT 1e39::float8::real", "SELECT 1e-50::float8::real",
    "SELECT '1e309'::float8", "SELECT '1e-400'::float8", "SELECT f::real FROM nums",
    "SELECT 1.17549435e-38::real, 1.401298464324817e-45::float8::real, -3.4028235e38::real",
    # Casts to integers: numeric rounds half away from zero, floats half to even; range checks.
    "SELECT 1.5::int, -1.5::int, 2.5::int, -2.5::int, 0.5::bigint, 1.5::smallint",
    "SELECT 2.5::float8::int, 3.5::float8::int, (-2.5)::float8::int, 2.5::real::int, 16777217::real::int",
    "SELECT 2147483647.5::int", "SELECT 32767.5::smallint", "SELECT 1e10::float8::int",
    "SELECT 'NaN'::float8::int", "SELECT bi::int FROM nums",
    # numeric(p, s): rounding and overflow.
    "SELECT '0.5'::numeric(2,0), '-0.5'::numeric(2,0), 2.675::numeric(4,2), '-2.675'::numeric(4,2)",
    "SELECT 99.995::numeric(4,2)", "SELECT 999.5::numeric(3,0)", "SELECT d::numeric(3,1) FROM nums",
    "SELECT 1234567890123456789012345678.5::numeric(38,10), '12345678901234567890.1234567890123456'::numeric(38,16)",
    # float -> numeric through 6 / 15 significant digits.
    "SELECT 123456789.123456789::real::numeric, 123456789.123456789::float8::numeric, 0.1::real::numeric",
    "SELECT 1e-5::float8::numeric, 1e20::real::numeric, f::numeric FROM nums WHERE abs(f) < 1e10",
    # Exact numeric arithmetic inside the limits.
    "SELECT n * 2, n + 0.0000000000000001, d * d, d * 1000000, sum(d), sum(n) FROM nums GROUP BY n, d",
    "SELECT 0.12345678 * 0.12345678, 123456789012345678901.5, 0.0000000000000001, 1e-16",
]
UNSUPPORTED = ["SELECT 'Infinity'::float8::numeric", "SELECT 'NaN'::numeric", "SELECT 'NaN'::float8::numeric"]
REFUSED_AT_THE_LIMIT = [  # PostgreSQL answers; numeric without a scale here cannot hold them
    "SELECT '1.2e-20'::numeric", "SELECT 1.2e-20", "SELECT 0.00000000000000001", "SELECT 1e22::numeric",
    "SELECT '12345678901234567890123'::numeric", "SELECT 0.123456789 * 0.123456789",
    "SELECT r::numeric FROM nums", "SELECT n * n FROM nums",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", SAME_AS_POSTGRES)
def test_numbers_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", REFUSED_AT_THE_LIMIT)
def test_values_beyond_numeric_storage_are_refused_not_rounded(sql, db, pg):
    assert db.answer(sql) == "22003"
    assert isinstance(pg_answer(pg, sql), list)


@pytest.mark.parametrize("sql", UNSUPPORTED)
def test_numeric_nan_and_infinity_are_refused_with_0A000(sql, db, pg):
    assert db.answer(sql) == "0A000"
    assert isinstance(pg_answer(pg, sql), list)


def test_filtering_with_a_tiny_literal_is_not_refused(db, pg):
    sql = "SELECT f FROM nums WHERE f > 1.2e-20"  # the literal becomes a double
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", [
    "SELECT round(CAST(NULL AS integer)), round(-10::bigint), floor(3), ceil(3::bigint), round(7, 1), round(2.5)",
    "SELECT nullif(CAST(100 AS real), 100::float8), nullif(1, 1.5), nullif('a', 'b')",
    "SELECT CAST(NULL AS real) AS x0, CAST(NULL AS real) AS x1 EXCEPT SELECT CAST(NULL AS double precision), 1::bigint",
    "SELECT r FROM nums UNION SELECT bi FROM nums", "SELECT r FROM nums UNION SELECT d FROM nums",
    "SELECT coalesce(r, i), coalesce(r, f), greatest(r, 1), least(r, d), CASE WHEN true THEN r ELSE n END FROM nums",
    "SELECT r + 1, r * d, r + i, r * r, i + d, bi + i, 1 + 1.5, 2 * 3::smallint FROM nums",
    "SELECT r + 1, r * d, r + i, i + d, bi + i, 1 + 1.5, 2 * 3::smallint FROM nums",
    "SELECT 1e300::float8 * 1e300", "SELECT 1e-300::float8 * 1e-300", "SELECT 1e-300::float8 / 1e300",
    "SELECT 3e38::real * 10::real", "SELECT 1e-30::real * 1e-30::real", "SELECT 'Infinity'::float8 * 2",
    "SELECT 1e308::float8 + 1e308", "SELECT 5::float8 / 0", "SELECT 0::float8 * 1e-300",
    "SELECT sum(r), avg(r), sum(i), avg(i), sum(bi), sum(d), avg(d), max(r), count(*) FROM nums",
])
def test_result_types_match_postgres(sql, db, pg):
    """Result column types (OIDs), PostgreSQL's resolution for operators and CASE/UNION."""
    want = pg_answer(pg, sql)
    assert db.answer(sql) == want
    if isinstance(want, list):
        assert db.type_oids(sql) == pg_type_oids(pg, sql)

