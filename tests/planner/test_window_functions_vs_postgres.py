"""Window functions checked against PostgreSQL: values and result types, with NULLs, ties,
duplicate rows, NaN and infinities, empty inputs, frames, named windows, grouped queries, and
PostgreSQL's errors. Where row_number() (or a ROWS frame) would depend on the order among peers,
which PostgreSQL leaves undetermined, the queries order by enough columns to make it total."""

from __future__ import annotations

import psycopg
import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer, pg_type_oids

DDL = ["CREATE TABLE w (id int, g int, k int, x int, f float8, n numeric(10,2), s text, b bigint)",
       "CREATE TABLE e (id int, g int, x int)"]
DATA = ["INSERT INTO w VALUES "
        "(1, 1, 10, 5, 1.5, 1.25, 'a', 100), (2, 1, 10, 7, 2.5, 2.50, 'b', 200), "
        "(3, 1, 20, NULL, NULL, NULL, NULL, NULL), (4, 1, 30, -3, -0.5, -3.75, 'd', 9223372036854775807), "
        "(5, 2, 10, 1, 'NaN', 0.01, 'e', 1), (6, 2, NULL, 2, 'Infinity', 10.00, 'f', 2), "
        "(7, 2, NULL, 2, '-Infinity', 10.00, 'f', 2), (8, NULL, 5, 4, 0.1, 5.55, 'h', 3), "
        "(9, NULL, 5, 8, 0.2, 6.66, 'i', 4), (10, 3, 1, 0, 0.3, 0.00, '', 0), "
        "(11, 1, 20, 9, 3.5, 9.99, 'k', 5), (12, 1, 20, 9, 3.5, 9.99, 'k', 5)"]

# Queries whose answer PostgreSQL determines (compared as multisets).
QUERIES = [
    # GROUPS frames and RANGE with offsets (more in test_window_frames_vs_postgres.py)
    "SELECT id, sum(x) OVER (ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT id, sum(x) OVER (ORDER BY id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    # ranking: ties in k give equal rank / dense_rank; id makes row_number total
    "SELECT id, row_number() OVER (PARTITION BY g ORDER BY k, id) FROM w",
    "SELECT id, rank() OVER (PARTITION BY g ORDER BY k), dense_rank() OVER (PARTITION BY g ORDER BY k) FROM w",
    "SELECT id, rank() OVER (ORDER BY k DESC), dense_rank() OVER (ORDER BY k DESC NULLS LAST) FROM w",
    "SELECT id, percent_rank() OVER (PARTITION BY g ORDER BY k), cume_dist() OVER (PARTITION BY g ORDER BY k) FROM w",
    "SELECT id, percent_rank() OVER (), cume_dist() OVER (), rank() OVER (), dense_rank() OVER () FROM w",
    "SELECT id, rank() OVER (PARTITION BY g ORDER BY f) FROM w",
    "SELECT id, rank() OVER (ORDER BY s NULLS FIRST), rank() OVER (ORDER BY n DESC) FROM w",
    "SELECT id, ntile(3) OVER (ORDER BY id), ntile(5) OVER (PARTITION BY g ORDER BY id) FROM w",
    "SELECT id, ntile(20) OVER (ORDER BY id), ntile(1) OVER (ORDER BY id) FROM w",
    "SELECT id, ntile(NULL) OVER (ORDER BY id) FROM w",
    "SELECT id, row_number() OVER (ORDER BY id DESC) FROM w",
    "SELECT g, k, row_number() OVER (PARTITION BY g, k ORDER BY id) FROM w",
    # lag / lead
    "SELECT id, lag(x) OVER (ORDER BY id), lead(x) OVER (ORDER BY id) FROM w",
    "SELECT id, lag(x, 2) OVER (PARTITION BY g ORDER BY id), lead(s, 2, 'none') OVER (PARTITION BY g ORDER BY id) FROM w",
    "SELECT id, lag(x, 1, -1) OVER (PARTITION BY g ORDER BY id), lag(n, 1, 0.5) OVER (ORDER BY id) FROM w",
    "SELECT id, lag(x, -1) OVER (ORDER BY id), lead(x, 0) OVER (ORDER BY id), lag(x, 100, 7) OVER (ORDER BY id) FROM w",
    "SELECT id, lag(x, NULL) OVER (ORDER BY id), lag(x, 1, NULL) OVER (ORDER BY id) FROM w",
    "SELECT id, lag(x, 1, 1.5) OVER (ORDER BY id) FROM w",
    # first / last / nth value
    "SELECT id, first_value(x) OVER (PARTITION BY g ORDER BY id), last_value(x) OVER (PARTITION BY g ORDER BY id) FROM w",
    "SELECT id, first_value(s) OVER (PARTITION BY g ORDER BY k, id), last_value(s) OVER (PARTITION BY g ORDER BY k) FROM w",
    "SELECT id, last_value(id) OVER (PARTITION BY g ORDER BY k, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT id, nth_value(x, 2) OVER (PARTITION BY g ORDER BY id), nth_value(id, 3) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT id, first_value(id) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING), last_value(id) OVER (ORDER BY id ROWS 2 PRECEDING) FROM w",
    "SELECT id, nth_value(id, NULL) OVER (ORDER BY id) FROM w",
    # aggregates over the default frame (peers included) and the whole partition
    "SELECT id, count(*) OVER (), count(x) OVER (), sum(x) OVER (), avg(x) OVER (), min(x) OVER (), max(x) OVER () FROM w",
    "SELECT id, count(*) OVER (PARTITION BY g), sum(x) OVER (PARTITION BY g), max(s) OVER (PARTITION BY g) FROM w",
    "SELECT id, count(*) OVER (PARTITION BY g ORDER BY k), sum(x) OVER (PARTITION BY g ORDER BY k) FROM w",
    "SELECT id, avg(x) OVER (PARTITION BY g ORDER BY k), min(x) OVER (PARTITION BY g ORDER BY k), max(n) OVER (ORDER BY k) FROM w",
    "SELECT id, sum(n) OVER (ORDER BY k), avg(n) OVER (PARTITION BY g), sum(b) OVER (PARTITION BY g ORDER BY id) FROM w",
    "SELECT id, sum(f) OVER (PARTITION BY g ORDER BY id), avg(f) OVER (PARTITION BY g ORDER BY id) FROM w",
    "SELECT id, min(f) OVER (PARTITION BY g ORDER BY id), max(f) OVER (PARTITION BY g) FROM w",
    "SELECT id, sum(f) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w WHERE f IS NOT NULL",
    "SELECT id, sum(x::int2) OVER (ORDER BY id), sum(x::real) OVER (ORDER BY id), avg(x::real) OVER (ORDER BY id) FROM w",
    "SELECT id, count(*) FILTER (WHERE x > 2) OVER (PARTITION BY g), sum(x) FILTER (WHERE id % 2 = 0) OVER (ORDER BY id) FROM w",
    # ROWS frames
    "SELECT id, sum(x) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT id, sum(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT id, count(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT id, max(x) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING), min(s) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 4 FOLLOWING) FROM w",
    "SELECT id, min(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), max(n) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT id, avg(x) OVER (ORDER BY id ROWS 3 PRECEDING), sum(n) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM w",
    "SELECT id, sum(x) OVER (ORDER BY id ROWS BETWEEN 0 PRECEDING AND 0 FOLLOWING), count(*) OVER (ORDER BY id ROWS BETWEEN 5 FOLLOWING AND 2 FOLLOWING) FROM w",
    "SELECT id, sum(x) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM w",
    # RANGE frames without offsets
    "SELECT id, sum(x) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM w",
    "SELECT id, count(*) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND CURRENT ROW), max(id) OVER (PARTITION BY g ORDER BY k RANGE UNBOUNDED PRECEDING) FROM w",
    "SELECT id, first_value(k) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), "
    "count(*) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM w WHERE k IS NOT NULL",
    # named windows
    "SELECT id, sum(x) OVER w1, rank() OVER w1 FROM w WINDOW w1 AS (PARTITION BY g ORDER BY k)",
    "SELECT id, sum(x) OVER (w1 ORDER BY id) FROM w WINDOW w1 AS (PARTITION BY g)",
    "SELECT id, sum(x) OVER (w2 ROWS 1 PRECEDING) FROM w WINDOW w1 AS (PARTITION BY g), w2 AS (w1 ORDER BY id)",
    # expressions around and inside window calls
    "SELECT id, row_number() OVER (ORDER BY id) * 10 + 1, x - lag(x) OVER (ORDER BY id) FROM w",
    "SELECT id, sum(x + 1) OVER (PARTITION BY g % 2 ORDER BY id * -1) FROM w",
    "SELECT id, rank() OVER (PARTITION BY g ORDER BY x * 2 DESC NULLS LAST, id) FROM w",
    "SELECT DISTINCT g, count(*) OVER (PARTITION BY g) FROM w",
    "SELECT * FROM (SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS rn FROM w) s WHERE rn <= 2",
    "SELECT g, max(rn) FROM (SELECT g, row_number() OVER (PARTITION BY g ORDER BY id) rn FROM w) s GROUP BY g",
    # grouped queries: window functions over the groups, aggregates as their arguments
    "SELECT g, sum(x), sum(sum(x)) OVER (), rank() OVER (ORDER BY sum(x) DESC NULLS LAST) FROM w GROUP BY g",
    "SELECT g, count(*), row_number() OVER (ORDER BY g NULLS FIRST), lag(count(*)) OVER (ORDER BY g) FROM w GROUP BY g",
    "SELECT g, k, avg(x), sum(avg(x)) OVER (PARTITION BY g ORDER BY k) FROM w GROUP BY g, k",
    "SELECT g, max(x), min(max(x)) OVER () FROM w GROUP BY g HAVING count(*) > 1",
    "SELECT count(*), sum(count(*)) OVER () FROM w",
    # empty inputs and empty partitions
    "SELECT id, row_number() OVER (ORDER BY id), sum(x) OVER () FROM e",
    "SELECT id, row_number() OVER (PARTITION BY g ORDER BY id), count(*) OVER () FROM w WHERE id > 100",
    "SELECT count(*), sum(count(*)) OVER () FROM e",
    "SELECT id, avg(x) OVER (PARTITION BY g) FROM w WHERE x IS NULL",
]

ORDERED = [
    "SELECT id, row_number() OVER (ORDER BY k NULLS FIRST, id) rn FROM w ORDER BY rn",
    "SELECT id, g FROM w ORDER BY rank() OVER (PARTITION BY g ORDER BY k), id",
    "SELECT id, sum(x) OVER (ORDER BY id) FROM w ORDER BY 2 DESC NULLS LAST, id LIMIT 4",
]

ERRORS = [
    "SELECT id FROM w WHERE row_number() OVER () > 1",
    "SELECT g FROM w GROUP BY g HAVING rank() OVER () > 1",
    "SELECT count(*) FROM w GROUP BY row_number() OVER ()",
    "SELECT sum(row_number() OVER ()) FROM w",
    "SELECT sum(x) OVER (ORDER BY rank() OVER ()) FROM w",
    "SELECT sum(rank() OVER ()) OVER () FROM w",
    "SELECT sum(x) OVER w2 FROM w WINDOW w1 AS (ORDER BY id)",
    "SELECT sum(x) OVER (w1 PARTITION BY g) FROM w WINDOW w1 AS (ORDER BY id)",
    "SELECT sum(x) OVER (w1 ORDER BY g) FROM w WINDOW w1 AS (ORDER BY id)",
    "SELECT sum(x) OVER (ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM w",
    "SELECT sum(x) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM w",
    "SELECT sum(x) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM w",
    "SELECT sum(x) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM w",
    "SELECT sum(x) OVER (ROWS 1 FOLLOWING) FROM w",
    "SELECT sum(x) OVER (ORDER BY id ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(x) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT ntile(0) OVER (ORDER BY id) FROM w",
    "SELECT nth_value(x, 0) OVER (ORDER BY id) FROM w",
    "SELECT g, x, rank() OVER (ORDER BY x) FROM w GROUP BY g",
    "SELECT sum(s) OVER () FROM w",
    "SELECT id FROM w a JOIN w b USING (id) JOIN w c ON row_number() OVER () = 1",
]

REFUSED = [  # 0A000 here; PostgreSQL answers these
    "SELECT string_agg(s, ',') OVER (ORDER BY id) FROM w",
]


pg, db = oracle_fixtures(DDL, DATA, setup=("SET TIME ZONE 'UTC'",))


@pytest.mark.parametrize("sql", QUERIES)
def test_window_functions_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
    assert db.type_oids(sql) == pg_type_oids(pg, sql)


@pytest.mark.parametrize("sql", ORDERED)
def test_ordered_by_window_functions_match_postgres(sql, db, pg):
    assert db.answer(sql, ordered=True) == pg_answer(pg, sql, ordered=True)


@pytest.mark.parametrize("sql", ERRORS)
def test_window_errors_match_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", REFUSED)
def test_unsupported_window_variants_are_refused(sql, db, pg):
    assert db.answer(sql) == "0A000"
    assert not isinstance(pg_answer(pg, sql), str)


def test_error_messages_match_postgres(db, pg):
    from dataflow.errors import SqlError
    for sql in ERRORS[:6] + ERRORS[9:14]:
        with pytest.raises(SqlError) as ours:
            db.rows(sql)
        with pytest.raises(psycopg.Error) as theirs:
            pg.execute(sql)
        assert ours.value.message == theirs.value.diag.message_primary, sql


def test_ties_among_peers_are_deterministic(db):
    sql = "SELECT s, row_number() OVER (PARTITION BY g ORDER BY k) FROM w"
    assert db.answer(sql) == db.answer(sql)
    # ties broken by the whole row, ascending: ids 3, 11, 12 share g=1, k=20
    rows = dict((r[0], r[1]) for r in db.rows("SELECT id, row_number() OVER (PARTITION BY g ORDER BY k) FROM w "
                                               "WHERE g = 1"))
    assert [rows[3], rows[11], rows[12]] == [3, 4, 5]


def test_pgjdbc_get_columns_shape(db, pg):
    """pgJDBC's DatabaseMetaData.getColumns numbers columns with row_number() in a subquery over
    the catalogs (simplified here to the window part over a user table)."""
    sql = ("SELECT * FROM (SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY id) AS attnum FROM w) c "
           "WHERE attnum > 1")
    assert db.answer(sql) == pg_answer(pg, sql)
