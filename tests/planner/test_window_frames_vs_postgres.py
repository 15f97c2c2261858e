"""RANGE frames with offsets, GROUPS frames and EXCLUDE against PostgreSQL: every aggregate and
last/nth_value over them (where the frame's order is total: peers' order is PostgreSQL's to choose), ascending and descending, NULL keys first and last, integer,
numeric, float (NaN, infinities), date and timestamp keys (interval offsets with months),
partitions, duplicates, and PostgreSQL's errors for bad offsets."""

from __future__ import annotations

import itertools

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE wf (id int, g int, k int, x float8, n numeric(8,2), f float8, d date, ts timestamp)",
       "CREATE TABLE wide (i int, k int, v float8)"]
DATA = ["INSERT INTO wf VALUES "
        "(1, 1, 1, 1, 1.50, 1.5, '2024-01-01', '2024-01-01 00:00'), "
        "(2, 1, 2, 2, 2.25, 'NaN', '2024-01-03', '2024-01-31 12:00'), "
        "(3, 1, 4, 4, 4.00, 'Infinity', '2024-01-10', '2024-02-29 00:00'), "
        "(4, 1, 7, 8, 7.75, -2.5, '2024-02-01', '2024-03-01 00:00'), "
        "(5, 1, NULL, 16, NULL, NULL, NULL, NULL), "
        "(6, 1, 4, 32, 4.00, 'NaN', '2024-01-10', '2024-02-29 00:00'), "
        "(7, 2, 1, 64, 1.00, '-Infinity', '2023-12-31', '2023-12-31 23:59'), "
        "(8, 2, 1, 128, 1.00, 0, '2024-01-01', '2024-01-01 00:01'), "
        "(9, 2, NULL, 256, NULL, NULL, NULL, NULL), "
        "(10, 2, 10, 512, 10.00, 100, '2025-01-01', '2025-01-01 00:00')",
        # Frames wider than the row-by-row float sums' limit (window._NARROW); dyadic values,
        # so every order of addition gives one answer.
        "INSERT INTO wide VALUES " + ", ".join(f"({i}, {i // 3}, {(i * 37) % 101 * 0.25})" for i in range(90))]

FRAMES = [
    "RANGE BETWEEN {o} PRECEDING AND CURRENT ROW",
    "RANGE BETWEEN {o} PRECEDING AND {o} FOLLOWING",
    "RANGE BETWEEN CURRENT ROW AND {o} FOLLOWING",
    "RANGE BETWEEN {o} FOLLOWING AND UNBOUNDED FOLLOWING",
    "RANGE BETWEEN UNBOUNDED PRECEDING AND {o} PRECEDING",
    "RANGE {o} PRECEDING",
]
KEYS = [("k", "2"), ("k", "0"), ("n", "1.5"), ("f", "1"), ("f", "'Infinity'"), ("d", "interval '7 days'"),
        ("d", "interval '1 month'"), ("ts", "interval '1 month 1 hour'"), ("ts", "interval '0'")]
ORDERS = ["", " DESC", " NULLS FIRST", " DESC NULLS LAST"]


def _range_queries():
    out = []
    for (col, off), frame, order in itertools.product(KEYS, FRAMES, ORDERS):
        over = f"(PARTITION BY g ORDER BY {col}{order} {frame.format(o=off)})"
        out.append(f"SELECT id, sum(x) OVER {over}, count(*) OVER {over}, min(x) OVER {over}, "
                   f"max(id) OVER {over} FROM wf")
    return out


GROUPS = [f"SELECT id, sum(x) OVER (PARTITION BY g ORDER BY k{order} GROUPS BETWEEN {a} AND {b}), "
          f"max(x) OVER (ORDER BY k{order} GROUPS BETWEEN {a} AND {b}), "
          f"last_value(id) OVER (PARTITION BY g ORDER BY k{order}, id GROUPS BETWEEN {a} AND {b}) FROM wf"
          for order in ("", " DESC NULLS LAST")
          for a, b in (("1 PRECEDING", "1 FOLLOWING"), ("CURRENT ROW", "2 FOLLOWING"), ("2 PRECEDING", "CURRENT ROW"),
                       ("UNBOUNDED PRECEDING", "1 PRECEDING"), ("1 FOLLOWING", "UNBOUNDED FOLLOWING"),
                       ("0 PRECEDING", "0 FOLLOWING"))]
OTHERS = [
    "SELECT id, avg(n) OVER (ORDER BY n RANGE BETWEEN 2 PRECEDING AND 1.25 FOLLOWING) FROM wf",
    "SELECT id, sum(k) OVER (ORDER BY k::bigint RANGE BETWEEN 3 PRECEDING AND 1 FOLLOWING) FROM wf",
    "SELECT id, nth_value(x, 2) OVER (ORDER BY ts, id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
    "count(*) OVER (ORDER BY ts RANGE BETWEEN interval '10 days' PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT id, count(*) OVER (ORDER BY x::real RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING) FROM wf",
    "SELECT id, count(*) OVER w FROM wf WINDOW w AS (ORDER BY k RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
]
EXCLUDE_FRAMES = ["ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                  "ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING", "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                  "RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING", "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW",
                  "RANGE CURRENT ROW"]
EXCLUDES = ["CURRENT ROW", "GROUP", "TIES", "NO OTHERS"]


def _exclude_queries():
    """Order-independent answers only (peers' order is PostgreSQL's to choose): ROWS frames over
    a total order (ties by id) unless they span the partition; aggregates, and first/last/
    nth_value of the ORDER BY key itself, which peers share."""
    out = []
    for frame, ex, order in itertools.product(EXCLUDE_FRAMES, EXCLUDES, ("", " DESC NULLS LAST")):
        ties = ", id" if frame.startswith("ROWS") else ""
        over = f"(PARTITION BY g ORDER BY k{order}{ties} {frame} EXCLUDE {ex})"
        out.append(f"SELECT id, sum(x) OVER {over}, count(*) OVER {over}, count(k) OVER {over}, "
                   f"min(x) OVER {over}, max(n) OVER {over}, avg(n) OVER {over}, sum(f) OVER {over}, "
                   f"first_value(k) OVER {over}, last_value(k) OVER {over}, nth_value(k, 2) OVER {over} FROM wf")
    for ex in EXCLUDES:
        for over in (f"(ORDER BY k, i ROWS BETWEEN 40 PRECEDING AND 40 FOLLOWING EXCLUDE {ex})",
                     f"(ORDER BY k GROUPS BETWEEN 13 PRECEDING AND 13 FOLLOWING EXCLUDE {ex})"):
            out.append(f"SELECT i, sum(v) OVER {over}, avg(v) OVER {over}, max(v) OVER {over}, "
                       f"count(*) OVER {over}, nth_value(k, 50) OVER {over} FROM wide")
        over = f"(PARTITION BY g ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE {ex})"
        out.append(f"SELECT id, sum(x) OVER {over}, count(k) OVER {over}, min(n) OVER {over} FROM wf")
        out.append(f"SELECT id, sum(x) OVER (PARTITION BY g ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
                   f"FOLLOWING EXCLUDE {ex}) FROM wf")
    return out


ERRORS = [
    "SELECT sum(x) OVER (ORDER BY k RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY k RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY d RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY d RANGE BETWEEN interval '-1 day' PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY k, id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY k RANGE BETWEEN NULL PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY k GROUPS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (ORDER BY f RANGE BETWEEN 'NaN' PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM wf",
    "SELECT sum(x) OVER (PARTITION BY g GROUPS UNBOUNDED PRECEDING) FROM wf",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", _range_queries() + GROUPS + OTHERS + _exclude_queries())
def test_frames_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", ERRORS)
def test_frame_errors_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
