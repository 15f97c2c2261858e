"""to_char of numbers (int2/int4/int8/float4/float8/numeric) and intervals, compared with a real
PostgreSQL 15 over a grid of values x templates: outputs, NULLs, result types and errors.

Each (type, template) pair is one query over a table of values; when either side answers an
error, the pair is rerun value by value so one failing value does not hide the others."""

from __future__ import annotations

import psycopg
import pytest

from tests.planner.engine_oracle import EngineDb, pg_answer, pg_type_oids

VALUES = {
    "int2": ["0", "1", "-1", "7", "-12", "123", "32767", "-32768", "NULL"],
    "int4": ["0", "1", "-1", "5", "11", "12", "13", "21", "-22", "123", "1234", "-1234", "3999", "4000",
             "99999", "2147483647", "-2147483648", "NULL"],
    "int8": ["0", "1", "-7", "112", "123456789", "-3000000000", "9223372036854775807",
             "-9223372036854775808", "NULL"],
    "float4": ["0", "'-0'", "0.1", "0.5", "1.5", "2.5", "-12.345", "1234567", "123456.7", "3.4e38",
               "1e-7", "'NaN'", "'Infinity'", "'-Infinity'", "NULL"],
    "float8": ["0", "'-0'", "0.005", "0.1", "0.5", "1.5", "2.5", "9.995", "-1234.5678", "1e15", "1e16",
               "123456789012345.6", "1e300", "-1e-300", "3999.5", "'NaN'", "'Infinity'", "'-Infinity'", "NULL"],
    "numeric": ["0", "0.001", "-0.001", "0.5", "-0.5", "1.5", "2.5", "-2.5", "9.995", "999.995", "1234.5",
                "-1234.567", "12345678901234567890.12", "-0.000000000123", "1e20", "3999.4999", "NULL"],
}

TEMPLATES = [
    "9", "99", "999", "9999", "99999999999", "0", "00", "0000", "09", "90", "0099", "9990", "9,999",
    "9G999", "99,999.99", "9,999.99", "9999.99", "0.99", ".99", "9.", "9.9", "FM9999", "FM9.99",
    "FM0.00", "FM9990.0099", "FM999.999", "FM999.", "999D99", "S9999", "9999S", "S9.99", "9.99S",
    "FMS999", "SG999", "999SG", "MI999", "999MI", "PL999", "999PL", "FM999MI", "FMPL999", "999PR",
    "FM999PR", "9.99PR", "L999", "L9,999.99", "9V99", "99V9", "FM9V99", "9V9999999999", "9.99EEEE",
    "9EEEE", "99.999EEEE", ".9EEEE", "9.9999999999999EEEE", "RN", "rn", "FMRN", "FMrn", "999th", "999TH",
    "FM999th", "9 9 9", '"n="999', 'FM"Total: "9,999.99" EUR"', '99"\\""99', "x9x9", "B999", "C999",
    "SP999", "9999999999999999999999", "9.9999999999999999999", "000000000000000000.000", "FM000.000",
    "00.00S", "S00.00", "FMS00.00", "MI0.0", "0.0MI", "SG0", "9SG9", "S9,999", "9,9,9", ",999", "FM,999",
    "V999", "999V", "RN999", "9RN", '\\"9', "th", "FM9th", "fm9.99", "9.99mi", "s999", "pr", "",
    "9.9.9", "S9S", "9PRS", "EEEE9", "9EEEEEEEE", "FM9EEEE", "9V9.9", "PR9", "MI9S",
]

INTERVALS = ["'0'", "'1 day 3 hours'", "'27 hours 3 minutes'", "'-3 hours'", "'-12 hours'",
             "'1 year 14 mon 40 days 27 hours 3 min 4.567891 sec'",
             "'-1 year -2 mon -3 days -4 hours -5 min -6.5 sec'", "'12 mon'", "'-12 mon'", "'-1 mon'",
             "'3 mon 1 day'", "'100 years'", "'-1000 years'", "'1 day -1 second'", "'0.000001 sec'",
             "'2000 hours'", "NULL"]
INTERVAL_TEMPLATES = [
    "HH24:MI", "HH24:MI:SS", "HH12:MI AM", "HH:MI:SS.MS", "HH24:MI:SS.US", "FMHH24 FMMI", "DD HH24",
    "DD \"days\" HH24 \"hours\"", "YYYY-MM-DD", "Y,YYY YYY YY Y", "IYYY IYY IY I", "MM", "FMMM", "DDD", "WW",
    "IW", "IDDD", "J", "W", "Q", "CC", "RM", "rm", "FMRM", "SSSS", "SSSSS", "FF1 FF2 FF3 FF4 FF5 FF6",
    "am pm a.m. P.M.", "HH24th DDth MMTH", "FMDDth", "hh24:mi:ss", "dd ddd mm yyyy", "FX HH24", "SPDD",
    "TMHH24", "\\\"HH\\\"", "\"HH24\" HH24", "HH24MISS", "", "Mon", "Month", "Day", "D", "ID", "TZ", "AD",
    "OF",
]


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        yield conn


DDL = [f"CREATE TABLE v_{t} (k int, v {t})" for t in VALUES] + ["CREATE TABLE v_iv (k int, v interval)"]
DATA = [f"INSERT INTO v_{t} VALUES " + ", ".join(f"({k}, {v})" for k, v in enumerate(vals))
        for t, vals in VALUES.items()] + \
    ["INSERT INTO v_iv VALUES " + ", ".join(f"({k}, {v})" for k, v in enumerate(INTERVALS))]


@pytest.fixture(scope="module")
def db(pg):
    for t in list(VALUES) + ["iv"]:
        pg.execute(f"DROP TABLE IF EXISTS v_{t}")
    for s in DDL + DATA:
        pg.execute(s)
    return EngineDb(DDL, DATA)


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _compare(db, pg, table: str, values: list[str], template: str) -> list[str]:
    sql = f"SELECT k, to_char(v, {_quote(template)}) FROM {table}"
    ours, theirs = db.answer(sql), pg_answer(pg, sql)
    if ours == theirs and not isinstance(ours, str):
        return []
    diffs = []
    for k, v in enumerate(values):
        one = f"{sql} WHERE k = {k}"
        a, b = db.answer(one), pg_answer(pg, one)
        if a != b:
            diffs.append(f"to_char({v}, {_quote(template)}): ours {a!r}, PostgreSQL {b!r}")
    return diffs


@pytest.mark.parametrize("typ", list(VALUES))
def test_number_templates_match_postgres(typ, db, pg):
    diffs = []
    for template in TEMPLATES:
        diffs += _compare(db, pg, f"v_{typ}", VALUES[typ], template)
    assert not diffs, "\n".join(diffs)


def test_interval_templates_match_postgres(db, pg):
    diffs = []
    for template in INTERVAL_TEMPLATES:
        diffs += _compare(db, pg, "v_iv", INTERVALS, template)
    assert not diffs, "\n".join(diffs)


CONSTANTS = [
    "SELECT to_char(1234.5::numeric, '9,999.99'), to_char(interval '1 day 3 hours', 'HH24:MI')",
    "SELECT to_char(12, 'L99'), to_char(-0.0::float8, '9.99'), to_char(5, ''), to_char(5.5, '')",
    "SELECT to_char(interval '1 day', '') IS NULL, to_char(NULL::numeric, '999'), to_char(5, NULL)",
    "SELECT to_char(1::int2, '9.99'), to_char(2::smallint, '9EEEE'), to_char(3::real, '9.9')",
    "SELECT to_char(2147483647, '9999999999V99'), to_char(5, '9V9999999999')",
    "SELECT to_char(5::int8, '9V99999999999999999999')",
    "SELECT to_char(3000000000::int8, 'RN')",
    "SELECT to_char(1e20::numeric, 'RN')",
    "SELECT to_char('NaN'::float8, '999th')",
    "SELECT to_char(interval '1 mon', 'Month')",
    "SELECT to_char(1234.5, '9,999.99') = ' 1,234.50', to_char(-1234.5, 'FM9,999.99')",
    "SELECT to_char(0.5::real, 'FM0.00'), to_char(99.5::real, '99'), to_char(12.5::float4, '999V9')",
]


@pytest.mark.parametrize("sql", CONSTANTS)
def test_to_char_constants_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


def test_to_char_result_types_match_postgres(db, pg):
    sql = ("SELECT to_char(1, '9'), to_char(1::int8, '9'), to_char(1.5, '9'), to_char(1.5::real, '9'), "
           "to_char(1.5::float8, '9'), to_char(1::int2, '9'), to_char(interval '1 hour', 'HH')")
    assert db.type_oids(sql) == pg_type_oids(pg, sql)


_PIECES = ["9", "9", "9", "0", "0", ".", ",", "D", "G", "S", "PR", "MI", "PL", "SG", "L", "FM", "V", "th",
           "TH", "RN", "EEEE", " ", "x", '"a"', "B", "fm", "mi", "rn", "-", "/"]
_INTERVAL_PIECES = ["HH24", "HH12", "HH", "MI", "SS", "MS", "US", "FF3", "DD", "DDD", "MM", "YYYY", "YY", "Y",
                    "IYYY", "IW", "IDDD", "J", "W", "WW", "Q", "CC", "RM", "rm", "AM", "pm", "SSSS", "FM",
                    "th", "TH", ":", " ", "-", '"x"', "Y,YYY", "I", "FX", "SP"]


def test_random_templates_match_postgres(db, pg):
    """Seeded random templates glued from pattern pieces, for every type."""
    import random
    rng = random.Random(2024)
    diffs = []
    for _ in range(150):
        typ = rng.choice(list(VALUES) + ["iv"])
        pieces = _INTERVAL_PIECES if typ == "iv" else _PIECES
        template = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        diffs += _compare(db, pg, f"v_{typ}", INTERVALS if typ == "iv" else VALUES[typ], template)
    assert not diffs, "\n".join(diffs)


def test_layout_cache_gives_the_processors_answer():
    """The kernel reuses one layout per output shape; every row must still read as the
    processor, run on that row alone, prints it."""
    import random
    from decimal import Decimal

    import pyarrow as pa

    from dataflow.functions.number_format import to_char_float, to_char_int, to_char_kernel, to_char_numeric
    from dataflow.errors import SqlError
    rng = random.Random(3)
    ints = [rng.choice([0, 1, -1, 10, 100]) * rng.randint(-10 ** 6, 10 ** 6) for _ in range(300)]
    floats = [rng.choice([0.0, 0.5, -2.5, 1e-3, 123.456, 1e15]) * rng.random() * rng.choice([1, 10, 1000])
              for _ in range(300)]
    nums = [Decimal(rng.randint(-10 ** 9, 10 ** 9)).scaleb(-rng.randint(0, 6)) for _ in range(300)]
    for template in [t for t in TEMPLATES if t] + ["FM9990.0099", "FM9,999.999", "9,999.99S"]:
        for values, arr, one in ((ints, pa.array(ints, pa.int32()), lambda v: to_char_int(v, template, 32)),
                                 (floats, pa.array(floats), lambda v: to_char_float(v, template, False)),
                                 (nums, pa.array(nums, pa.decimal128(38, 6)), lambda v: to_char_numeric(v, template))):
            try:
                expected = [one(v) for v in arr.to_pylist()]
            except SqlError:
                continue
            got = to_char_kernel(arr, pa.array([template] * len(values))).to_pylist()
            assert got == expected, template
