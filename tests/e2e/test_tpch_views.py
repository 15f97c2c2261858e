"""The 22 TPC-H queries as materialized views (issue 10, "What it must show"): data from
`tpchgen-cli` at scale factor 0.01 loaded with COPY into Slipstream and into PostgreSQL, the
views created over pgwire, and each view compared with PostgreSQL's answer to the same query
after the load and after every TPC-H refresh function (RF1: new orders and their lineitems in;
RF2: old orders and their lineitems out), three refresh pairs of about 0.1 % of the orders each.
Then again with an index on every table's key, for the views whose joins then become delta
joins probing those indexes in place.

Queries, schema, data and refresh sets: bench/tpch/ (shared with the benchmark). Comparison:
order-insensitive multisets, numerics exact as docs/sql-semantics.md documents them
(bench/tpch/compare.py). Every query is checked at every step and all differences are reported
together.
"""

from __future__ import annotations

import psycopg
import pytest

from bench.tpch import data
from bench.tpch.compare import diff_rows
from bench.tpch.queries import queries
from tests.support.clients import psycopg_connect

# Spark start-up, the loads, 22 hydrations and 7 rounds of 22 comparisons: a few minutes on the
# shared 2-core machine.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SF = 0.01
REFRESH_PAIRS = 3


@pytest.fixture(scope="module")
def tpch_data(tmp_path_factory):
    try:
        data.tpchgen_bin()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    return data.generate(SF, tmp_path_factory.mktemp("tpch") / f"sf{SF}")


def _check_all(ss, pg, qs: dict[int, str], step: str, failures: list[str]) -> None:
    for n, sql in qs.items():
        try:
            got = ss.execute(f"SELECT * FROM q{n}").fetchall()
        except psycopg.Error as e:
            failures.append(f"{step}: Q{n} view read failed: {e.sqlstate} {e}")
            continue
        want = pg.execute(sql).fetchall()
        problem = diff_rows(got, want)
        if problem:
            failures.append(f"{step}: Q{n}: {problem}")


def test_tpch_views_track_postgres(slipstream, pg_oracle, unique_prefix, tpch_data):
    failures = _track(slipstream, pg_oracle, f"{unique_prefix}tpch", queries(SF), tpch_data, key_indexes=False)
    assert not failures, "\n".join(failures)


def test_tpch_delta_join_views_over_key_indexes_track_postgres(slipstream, pg_oracle, unique_prefix, tpch_data):
    """With an index on every table's key, the views whose joins become delta joins (probing
    those indexes in place: planner/delta_joins.py), checked the same way."""
    failures = _track(slipstream, pg_oracle, f"{unique_prefix}tpch_idx", queries(SF), tpch_data, key_indexes=True)
    assert not failures, "\n".join(failures)


def _track(slipstream, pg_oracle, schema: str, qs: dict[int, str], tpch_data, key_indexes: bool) -> list[str]:
    failures: list[str] = []
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for conn in (ss, pg):
            conn.execute(f"CREATE SCHEMA {schema}")
            conn.execute(f"SET search_path = {schema}")
            data.create_tables(conn)
            counts = data.load(conn, tpch_data)
        assert ss.execute("SELECT count(*) FROM lineitem").fetchone()[0] == counts["lineitem"]
        data.create_oracle_indexes(pg)
        if key_indexes:
            data.create_key_indexes(ss)
            delta = {n: sql for n, sql in qs.items() if "DeltaJoin" in "\n".join(
                r[0] for r in ss.execute(f"EXPLAIN CREATE MATERIALIZED VIEW q{n} AS {sql}").fetchall())}
            assert len(delta) >= 4, sorted(delta)   # (5 when written: Q3, 5, 7, 10, 21)
            qs = delta

        for n, sql in qs.items():
            try:
                ss.execute(f"CREATE MATERIALIZED VIEW q{n} AS {sql}")
            except psycopg.Error as e:
                failures.append(f"create: Q{n} refused: {e.sqlstate} {e}")
        created = {n: sql for n, sql in qs.items()
                   if not any(f.startswith(f"create: Q{n} ") for f in failures)}
        _check_all(ss, pg, created, "after load", failures)

        refresh = data.RefreshGenerator(tpch_data, SF, seed=10)
        for i in range(1, REFRESH_PAIRS + 1):
            pair = refresh.next_pair()
            for name, statements in (("RF1", data.rf1_statements(pair)),
                                     ("RF2", data.rf2_statements(pair))):
                for conn in (ss, pg):
                    with conn.transaction():
                        for s in statements:
                            conn.execute(s)
                _check_all(ss, pg, created, f"after {name} of refresh pair {i}", failures)

        # The refresh sets changed something the views see.
        assert ss.execute("SELECT count(*) FROM orders").fetchone()[0] == counts["orders"]
        assert ss.execute("SELECT max(o_orderkey) FROM orders").fetchone()[0] > \
            max(refresh.order_keys)
        # The server is shared by the whole run: maintained views left behind would make
        # every later test's writes step them all.
        ss.execute(f"DROP SCHEMA {schema} CASCADE")
    return failures
