"""Bulk `INSERT ... VALUES` of literal rows (planner/literal_insert.py: scanned without the
general parser, typed by COPY's text-input rules) stores what PostgreSQL stores: random rows of
every kind of column, literals written in each form the scan takes (quoted, integers, decimals,
negative numbers, NULL, TRUE/FALSE, column lists in any order), and statements it leaves to the
general path (numbers into text, a decimal into an integer column, exponents, E'' strings,
DEFAULT, a partial column list, expressions), compared with PostgreSQL row for row; errors
(too long, bad input, out of range, NOT NULL, unknown column) have PostgreSQL's SQLSTATE."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

COLUMNS = ("i2 smallint, i4 integer, i8 bigint, n numeric, n2 numeric(10,2), f4 real, f8 double precision, "
           "t text, v varchar(6), c char(3), b boolean, d date, ts timestamp, iv interval, j jsonb, "
           "a integer[], u uuid")
NAMES = [c.split()[0] for c in COLUMNS.split(", ")]


def _value(rng: random.Random, column: str) -> str:
    if rng.random() < 0.1:
        return rng.choice(["NULL", "null"])
    pick = {
        "i2": lambda: rng.choice([str(rng.randint(-32768, 32767)), f"'{rng.randint(-99, 99)}'", "007"]),
        "i4": lambda: rng.choice([str(rng.randint(-2**31, 2**31 - 1)), f"' {rng.randint(0, 9)} '"]),
        "i8": lambda: str(rng.randint(-2**63, 2**63 - 1)),
        "n": lambda: rng.choice([f"{rng.uniform(-1e6, 1e6):.4f}", str(rng.randint(-10**12, 10**12)), "-.5", "5.",
                                 "'12.5000'"]),
        "n2": lambda: rng.choice([f"{rng.uniform(-1e6, 1e6):.5f}", "0.005", "-0.005", "12"]),
        "f4": lambda: rng.choice([f"{rng.uniform(-1e3, 1e3):.3f}", "0.1", "'NaN'", "'-Infinity'", "3"]),
        "f8": lambda: rng.choice([f"{rng.uniform(-1e9, 1e9):.6f}", "0.1", "'1e300'", "-0.0"]),
        "t": lambda: rng.choice(["'it''s'", "''", "'a\\b'", "'  x  '", "'ünï'"]),
        "v": lambda: rng.choice(["'abc'", "'abcdef'", "'ab    '", "''"]),
        "c": lambda: rng.choice(["'a'", "'abc'", "'ab '", "''"]),
        "b": lambda: rng.choice(["true", "FALSE", "'yes'", "'f'", "'1'"]),
        "d": lambda: rng.choice(["'2024-02-29'", "'1996-03-13'", "'2000-1-5'"]),
        "ts": lambda: rng.choice(["'2024-02-29 12:34:56.789'", "'1999-12-31T23:59:59'", "'2000-01-01'"]),
        "iv": lambda: rng.choice(["'1 day 2 hours'", "'-3 mons'", "'00:00:01.5'", "'P1Y2M'"]),
        "j": lambda: rng.choice(["'{\"a\": [1, 2.50, null]}'", "'\"x\"'", "'[]'", "'1e3'"]),
        "a": lambda: rng.choice(["'{1,2,NULL}'", "'{}'", "'{-5}'"]),
        "u": lambda: rng.choice(["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'{A0EEBC999C0B4EF8BB6D6BB9BD380A11}'"]),
    }
    return pick[column]()


def _rows(ss, pg, table: str) -> None:
    # (as text, but unconstrained numeric as a value: its display scale is a documented
    # difference, 12.5 here and 12.5000 there)
    select = ", ".join(n if n == "n" else f"{n}::text" for n in NAMES)
    got = ss.execute(f"SELECT {select} FROM {table}").fetchall()
    want = pg.execute(f"SELECT {select} FROM {table}").fetchall()
    key = lambda row: repr([None if v is None else str(v.normalize()) if n == "n" else v  # noqa: E731
                            for n, v in zip(NAMES, row)])
    assert sorted(map(key, got)) == sorted(map(key, want))


def _both(ss, pg, sql: str) -> None:
    for conn in (pg, ss):
        conn.execute(sql)


def _same_error(ss, pg, sql: str) -> str:
    states = []
    for conn in (pg, ss):
        with pytest.raises(psycopg.Error) as e:
            conn.execute(sql)
        states.append(e.value.sqlstate)
    assert states[0] == states[1], (sql, states)
    return states[0]


def test_literal_rows_store_what_postgres_stores(slipstream, pg_oracle, unique_prefix):
    table = f"{unique_prefix}lit"
    rng = random.Random(5)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        _both(ss, pg, f"CREATE TABLE {table} ({COLUMNS})")
        for round_ in range(6):
            names = NAMES[:] if round_ % 2 else rng.sample(NAMES, len(NAMES))
            rows = ["(" + ", ".join(_value(rng, n) for n in names) + ")" for _ in range(rng.randint(20, 60))]
            columns = "" if names == NAMES else f" ({', '.join(names)})"
            _both(ss, pg, f"INSERT INTO {table}{columns} VALUES " + ",\n ".join(rows) + (";" if round_ == 2 else ""))
        # Forms the general path plans (a row's worth of them, in a statement long enough to scan).
        filler = ", ".join(["(1, 2, 3, 4, 5, 6, 7, 'x', 'y', 'z', true, '2000-01-01', '2000-01-01', '1 day', "
                            "'1', '{1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"] * 8)
        for row in ["(1.5, 2.5, -3.5, 1e3, 2.5e-1, 1E2, -1e-2, 123, 4.50, -6, true, '2000-01-01', "
                    "'2000-01-01', '1 day', '1', '{1}', NULL)",
                    "(1, 2, 3, 4, 5, 6, 7, E'a\\tb', 'v', 'c', NOT false, DATE '2001-02-03', now()::date, "
                    "INTERVAL '1 hour', '2', ARRAY[1, 2], NULL)",
                    "(DEFAULT, 1 + 1, -(3), 4::numeric, 5, 6, 7, 'x' || 'y', upper('v'), 'c', NULL, NULL, NULL, "
                    "NULL, NULL, NULL, NULL)"]:
            _both(ss, pg, f"INSERT INTO {table} VALUES {filler}, {row}")
        _both(ss, pg, f"INSERT INTO {table} (i4, t, b) VALUES " + ", ".join(f"({i}, 'partial {i}', false)" for i in range(40)))
        _rows(ss, pg, table)

        # Errors, in a statement the scan takes (long enough), as PostgreSQL reports them.
        many = ", ".join([f"(1, {'NULL, ' * (len(NAMES) - 2)}NULL)"] * 30)
        assert _same_error(ss, pg, f"INSERT INTO {table} (i2, {', '.join(NAMES[1:])}) VALUES {many}, "
                                   f"(99999, {'NULL, ' * (len(NAMES) - 2)}NULL)") == "22003"
        assert _same_error(ss, pg, f"INSERT INTO {table} (v, {', '.join(n for n in NAMES if n != 'v')}) VALUES "
                                   f"{many}, ('toolong', {'NULL, ' * (len(NAMES) - 2)}NULL)") == "22001"
        assert _same_error(ss, pg, f"INSERT INTO {table} (i4, {', '.join(n for n in NAMES if n != 'i4')}) VALUES "
                                   f"{many}, ('1.5', {'NULL, ' * (len(NAMES) - 2)}NULL)") == "22P02"
        assert _same_error(ss, pg, f"INSERT INTO {table} (nope, {', '.join(NAMES[1:])}) VALUES {many}") == "42703"
        assert _same_error(ss, pg, f"INSERT INTO {table} VALUES {many}, (1)") == "42601"
        _both(ss, pg, f"CREATE TABLE {table}_nn (a int NOT NULL, b text)")
        assert _same_error(ss, pg, f"INSERT INTO {table}_nn VALUES " +
                           ", ".join(f"({i}, 'row {i}')" for i in range(40)) + ", (NULL, 'x')") == "23502"
        _rows(ss, pg, table)   # (nothing of the failed statements stored)
