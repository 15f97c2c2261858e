"""Numeric quotients and averages against PostgreSQL, value for value.

PostgreSQL rounds `a / b` and `avg` to at least 16 significant digits (numeric.c's
select_div_scale); unconstrained numeric here keeps at most 16 digits after the point. So every
quotient must equal PostgreSQL's exactly when PostgreSQL keeps 16 digits or fewer
(`100000 / 3` is 33333.333333333333 in both), and PostgreSQL's rounded half away from zero to 16
digits when it keeps more (`1 / 3`). No tolerance: a digit too many is a wrong answer. The rows
of one query mix magnitudes and scales, so one batch holds quotients of different scales;
operands are unconstrained numeric, numeric(20,4) and bigint. (Unconstrained values are written
without trailing zeros: PostgreSQL remembers `0.00060` as having five digits after the point and
keeps five in a quotient that would otherwise get four; here it is 0.0006.)
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.planner.engine_oracle import EngineDb

_WIDE = Context(prec=200)
DDL = ["CREATE TABLE q (i int, g int, a numeric, b numeric, c numeric(20,4), k bigint)"]
QUOTIENTS = "SELECT i, a / b, c / b, k / b, a / c, a / k, b / 7, 100000 / b FROM q WHERE c <> 0 AND k <> 0"
AVERAGES = "SELECT g, avg(a), avg(b), avg(c), avg(k), sum(a) / count(*) FROM q GROUP BY g"


def _r16(v):
    """PostgreSQL's value as unconstrained numeric holds it: past 16 digits, rounded half away from zero."""
    if isinstance(v, Decimal) and v.as_tuple().exponent < -16:
        return v.quantize(Decimal(1).scaleb(-16), rounding=ROUND_HALF_UP, context=_WIDE)
    return v


def _number(digits: int, scale: int, sign: int, mantissa: int) -> Decimal:
    """Written without trailing zeros after the point: an unconstrained value here shows the
    digits it has, not those it was written with (docs/sql-semantics.md, known differences)."""
    d = Decimal(sign * (mantissa % 10 ** digits)).scaleb(-scale)
    return Decimal(format(d.normalize(), "f")) if d else Decimal(0)


numbers = st.builds(_number, st.integers(1, 14), st.integers(0, 6), st.sampled_from([1, -1]),
                    st.integers(1, 10 ** 14))
rows = st.lists(st.tuples(st.integers(1, 3), numbers, numbers.filter(lambda d: d != 0),
                          numbers.filter(lambda d: d.as_tuple().exponent >= -4 and abs(d) < 10 ** 15 and d != 0),
                          st.integers(-10 ** 12, 10 ** 12).filter(lambda k: k != 0)),
                min_size=1, max_size=25)


@pytest.fixture(scope="module")
def pg(pg_oracle):
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS q")
        conn.execute(DDL[0])
        yield conn


def _insert(values) -> str:
    return "INSERT INTO q VALUES " + ", ".join(
        f"({i}, {g}, {a}, {b}, {c}, {k})" for i, (g, a, b, c, k) in enumerate(values))


def _compare(pg, db: EngineDb, sql: str) -> None:
    want = sorted((tuple(_r16(v) for v in r) for r in pg.execute(sql).fetchall()), key=repr)
    got = sorted((tuple(r) for r in db.rows(sql)), key=repr)
    assert len(got) == len(want), sql
    for w, o in zip(want, got):
        assert w == o, f"{sql}\n PostgreSQL {w}\n here       {o}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows)
def test_quotients_and_averages_match_postgres(pg, values):
    insert = _insert(values)
    pg.execute("TRUNCATE q")
    pg.execute(insert)
    db = EngineDb(DDL, [insert])
    _compare(pg, db, QUOTIENTS)
    _compare(pg, db, AVERAGES)


@pytest.mark.parametrize("sql, value", [
    ("SELECT 100000::numeric / 3", Decimal("33333.333333333333")),
    ("SELECT 123456789012345678::numeric / 7", Decimal("17636684144620811")),
    ("SELECT 1234567890.123::numeric / 0.7", Decimal("1763668414.46142857")),
    ("SELECT 20000::numeric / 3", Decimal("6666.6666666666666667")),
    ("SELECT 1::numeric / 3", Decimal("0.3333333333333333")),  # PostgreSQL: 20 digits
    ("SELECT avg(x) FROM (VALUES (100000::numeric), (2), (2)) t(x)", Decimal("33334.666666666667")),
    ("SELECT 100000::numeric(10,2) / 3::numeric(10,2)", Decimal("33333.333333333333")),
    # 125932.63351725427849997...: at 16 digits ...2785000, a tie at 12, where the exact
    # quotient rounds down (PostgreSQL's value); rounding the 16 digits would give ...279.
    ("SELECT 6732988251::numeric / 53465", Decimal("125932.633517254278")),
    ("SELECT avg(x) FROM (VALUES (6732988251::numeric), (0), (0)) t(x)", Decimal("2244329417")),
    ("SELECT 3785220197::numeric / 26669", Decimal("141933.338220405714")),
])
def test_worked_examples(sql, value):
    assert EngineDb([], []).rows(sql) == [(value,)]
