"""Value codecs: byte-exact against a real PostgreSQL 15 (text and binary), plus the parts that
need no server (COPY escaping, errors, session settings)."""

from __future__ import annotations

import math
from datetime import date, datetime, timezone
from decimal import Decimal

import psycopg
import pytest

from dataflow.errors import SqlError
from dataflow.types import (BOOL, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, NUMERIC, TEXT, TIMESTAMP,
                            TIMESTAMPTZ, VARCHAR, Column)
from server.pgwire.codec import (CodecContext, binary_encoder, binary_encoder_for_oid, decode_param,
                                 text_encoder)
from server.pgwire.copy_format import CopyFormatter

UTC = timezone.utc

# (PostgreSQL literal, our type, the Python value pgwire receives from the adapter)
CASES = [
    ("true", BOOL, True), ("false", BOOL, False),
    ("'-32768'::int2", INT2, -32768), ("2147483647::int4", INT4, 2147483647),
    ("'-9223372036854775808'::int8", INT8, -(2**63)),
    ("1.5::float4", FLOAT4, 1.5), ("0.1::float4", FLOAT4, 0.1), ("1e6::float4", FLOAT4, 1e6),
    ("123456.7::float4", FLOAT4, 123456.7), ("3.4028235e38::float4", FLOAT4, 3.4028235e38),
    ("1e-10::float4", FLOAT4, 1e-10), ("'-0'::float4", FLOAT4, -0.0),
    ("'NaN'::float4", FLOAT4, math.nan), ("'-Infinity'::float4", FLOAT4, -math.inf),
    ("0.1::float8", FLOAT8, 0.1), ("1e15::float8", FLOAT8, 1e15), ("1e16::float8", FLOAT8, 1e16),
    ("123456789012345.6::float8", FLOAT8, 123456789012345.6), ("1e-5::float8", FLOAT8, 1e-5),
    ("0.0001::float8", FLOAT8, 0.0001), ("1.7976931348623157e308::float8", FLOAT8, 1.7976931348623157e308),
    ("5e-324::float8", FLOAT8, 5e-324), ("-1.5::float8", FLOAT8, -1.5), ("100::float8", FLOAT8, 100.0),
    ("0::float8", FLOAT8, 0.0), ("'NaN'::float8", FLOAT8, math.nan),
    ("'Infinity'::float8", FLOAT8, math.inf), ("2.5e-7::float8", FLOAT8, 2.5e-7),
    ("0::numeric", NUMERIC, Decimal("0")), ("0.00::numeric", NUMERIC, Decimal("0.00")),
    ("1::numeric", NUMERIC, Decimal("1")), ("-1.50::numeric", NUMERIC, Decimal("-1.50")),
    ("12345.678::numeric", NUMERIC, Decimal("12345.678")),
    ("0.0001::numeric", NUMERIC, Decimal("0.0001")), ("0.00001::numeric", NUMERIC, Decimal("0.00001")),
    ("100000000::numeric", NUMERIC, Decimal("100000000")),
    ("123456789.000012345::numeric", NUMERIC, Decimal("123456789.000012345")),
    ("9999.9999::numeric", NUMERIC, Decimal("9999.9999")), ("-0.001::numeric", NUMERIC, Decimal("-0.001")),
    ("1e20::numeric", NUMERIC, Decimal("100000000000000000000")),
    ("'NaN'::numeric", NUMERIC, Decimal("NaN")),
    ("'h\u00e9llo'::text", TEXT, "h\u00e9llo"), ("''::text", TEXT, ""), ("'v'::varchar", VARCHAR, "v"),
    ("'2024-02-29 12:34:56.789'::timestamp", TIMESTAMP, datetime(2024, 2, 29, 12, 34, 56, 789000)),
    ("'2000-01-01'::timestamp", TIMESTAMP, datetime(2000, 1, 1)),
    ("'1970-01-01 00:00:00.000001'::timestamp", TIMESTAMP, datetime(1970, 1, 1, 0, 0, 0, 1)),
    ("'1999-12-31 23:59:59.5+00'::timestamptz", TIMESTAMPTZ,
     datetime(1999, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)),
    ("'2030-06-01 01:02:03+00'::timestamptz", TIMESTAMPTZ, datetime(2030, 6, 1, 1, 2, 3, tzinfo=UTC)),
    ("'2024-01-02'::date", DATE, date(2024, 1, 2)), ("'1900-03-01'::date", DATE, date(1900, 3, 1)),
    ("'2000-01-01'::date", DATE, date(2000, 1, 1)),
]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, Decimal) and a.is_nan():
        return isinstance(b, Decimal) and b.is_nan()
    return a == b and type(a) is type(b) or (isinstance(a, float) and a == b)


@pytest.fixture(scope="module")
def pg_values(request):
    """Every CASES literal as PostgreSQL 15 sends it: (text bytes, binary bytes)."""
    try:
        oracle = request.getfixturevalue("pg_oracle")
    except Exception as e:  # noqa: BLE001 - no PostgreSQL binaries here: skip the comparison
        pytest.skip(f"no PostgreSQL oracle: {e}")
    out = []
    with psycopg.connect(oracle.dsn, autocommit=True) as conn:
        conn.execute("set timezone = 'UTC'; set extra_float_digits = 1")
        for literal, _, _ in CASES:
            q = f"select {literal}".encode()
            results = [conn.pgconn.exec_params(q, [], result_format=f) for f in (0, 1)]
            for r in results:
                assert r.status == psycopg.pq.ExecStatus.TUPLES_OK, (literal, r.error_message)
            out.append(tuple(bytes(r.get_value(0, 0)) for r in results))
    return out


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_encoding_matches_postgres(pg_values, i):
    literal, t, value = CASES[i]
    pg_text, pg_binary = pg_values[i]
    assert text_encoder(t)(value) == pg_text
    assert binary_encoder(t)(value) == pg_binary


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_decoding_postgres_bytes(pg_values, i):
    literal, t, value = CASES[i]
    pg_text, pg_binary = pg_values[i]
    for raw, binary in ((pg_text, False), (pg_binary, True)):
        got = decode_param(raw, t.oid, binary)
        if t is FLOAT4 and binary is False and not math.isnan(value):
            value_cmp = float(f"{value:.9g}")  # float4 text decodes to the nearest double
            assert math.isclose(got, value_cmp, rel_tol=1e-6) or got == value_cmp
        elif t is FLOAT4:
            assert _same(got, float(__import__("numpy").float32(value)))
        else:
            assert _same(got, value), (got, value)


def test_float_text_without_server():
    f8 = text_encoder(FLOAT8)
    assert [f8(v) for v in (1.0, 1e15, 1e-5, 123.456, -0.0, 1e100, 1.5e-7)] == [
        b"1", b"1e+15", b"1e-05", b"123.456", b"-0", b"1e+100", b"1.5e-07"]
    assert text_encoder(FLOAT4)(1e6) == b"1e+06" and text_encoder(FLOAT4)(0.1) == b"0.1"
    legacy = text_encoder(FLOAT8, CodecContext(extra_float_digits=0))
    assert legacy(0.1) == b"0.1" and legacy(1 / 3) == b"0.333333333333333"


def test_timestamptz_in_session_timezone():
    enc = text_encoder(TIMESTAMPTZ, CodecContext(timezone="America/New_York"))
    assert enc(datetime(2024, 1, 1, 12, 0, tzinfo=UTC)) == b"2024-01-01 07:00:00-05"
    enc = text_encoder(TIMESTAMPTZ, CodecContext(timezone="Asia/Kolkata"))
    assert enc(datetime(2024, 1, 1, 12, 0, tzinfo=UTC)) == b"2024-01-01 17:30:00+05:30"


def test_param_errors_have_sqlstates():
    with pytest.raises(SqlError) as e:
        decode_param(b"12x", INT4.oid, False)
    assert e.value.sqlstate == "22P02" and 'type integer: "12x"' in e.value.message
    with pytest.raises(SqlError) as e:
        decode_param(b"40000", INT2.oid, False)
    assert e.value.sqlstate == "22003"
    with pytest.raises(SqlError) as e:
        decode_param(b"\x00\x01", INT4.oid, True)
    assert e.value.sqlstate == "08P01"
    with pytest.raises(SqlError) as e:
        binary_encoder_for_oid(600, "point")
    assert e.value.sqlstate == "42883"
    assert e.value.message == "no binary output function available for type point"
    assert decode_param(b"on", BOOL.oid, False) is True
    assert decode_param(b"2000-01-01 00:00:00+02", TIMESTAMPTZ.oid, False) == datetime(
        1999, 12, 31, 22, tzinfo=UTC)


@pytest.mark.parametrize("raw, oid, code", [
    (b"1e39", FLOAT4.oid, "22003"), (b"1e-50", FLOAT4.oid, "22003"), (b"1e309", FLOAT8.oid, "22003"),
    (b"1e-400", FLOAT8.oid, "22003"), (b"1_000", INT4.oid, "22P02"), (b"1_000", NUMERIC.oid, "22P02"),
    (b"1_000", FLOAT8.oid, "22P02"),
])
def test_numeric_params_refuse_what_postgres_refuses(raw, oid, code):
    with pytest.raises(SqlError) as e:
        decode_param(raw, oid, False)
    assert e.value.sqlstate == code


def test_real_params_are_single_precision_rounded_once():
    # float4in rounds the text once; through a double this was 1.0.
    assert decode_param(b"1.000000059604644775390626", FLOAT4.oid, False) == 1.0000001192092896
    assert decode_param(b"0.1", FLOAT4.oid, False) == 0.10000000149011612
    assert decode_param(b"-Infinity", FLOAT4.oid, False) == -math.inf
    assert math.isnan(decode_param(b"NaN", FLOAT8.oid, False))


def test_copy_text_and_csv_formatting():
    cols = [Column("a", INT4), Column("b", TEXT), Column("c", FLOAT8)]
    text = CopyFormatter(cols, "text")
    assert text.row((1, "back\\slash\ttab\nnl\rcr", 0.5)) == b"1\tback\\\\slash\\ttab\\nnl\\rcr\t0.5\n"
    assert text.row((None, "", None)) == b"\\N\t\t\\N\n"
    csv = CopyFormatter(cols, "csv")
    assert csv.header() == b"a,b,c\n"
    assert csv.row((1, 'say "hi", ok', None)) == b'1,"say ""hi"", ok",\n'
    assert csv.row((2, "", 1e20)) == b'2,"",1e+20\n'


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d.as_tuple().exponent) < 200))
def test_numeric_binary_roundtrip_keeps_value_and_scale(d):
    back = decode_param(binary_encoder(NUMERIC)(d), NUMERIC.oid, True)
    assert back == d
    assert max(-back.as_tuple().exponent, 0) == max(-d.as_tuple().exponent, 0)
    assert decode_param(text_encoder(NUMERIC)(d), NUMERIC.oid, False) == d
