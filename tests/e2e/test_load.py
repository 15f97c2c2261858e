"""Load test: 200 concurrent connections with a mixed workload for a bounded time (the longer
run and its figures: bench/bench_load.py, docs/benchmarks.md). No operation fails, every
connection is gone from the server afterwards, and neither its file descriptors nor its memory
keep growing between the run's two halves."""

from __future__ import annotations

import asyncio

import pytest

import psycopg

from bench.bench_load import run_load
from bench.bench_serving import run

pytestmark = pytest.mark.e2e

CONNECTIONS = 200
SECONDS = 20


def test_200_connections_mixed_workload(fresh_slipstream, record_property):
    server = fresh_slipstream
    result = asyncio.run(run_load(server.dsn, server.process.pid, CONNECTIONS, SECONDS))
    s = result.samples
    print(result.to_json())
    record_property("operations_per_second", round(result.throughput, 1))
    record_property("point_select_p99_ms", result.latencies_ms["point select"].get("p99"))
    assert result.error_count == 0, result.errors
    assert all(result.operations.get(name, 0) > 0 for name in result.latencies_ms), result.operations
    # No leaked session, descriptor or memory: the clients' connections are gone, and what the
    # server holds after the second half is what it held after the first (same load, warm).
    assert s["after"].connections == s["before"].connections, s
    assert s["after"].fds - s["before"].fds <= 10, s
    assert s["second half"].rss_mb - s["first half"].rss_mb < 100, s


def test_point_reads_while_writing_see_every_acknowledged_write(fresh_slipstream):
    """The serving benchmark (bench/bench_serving.py) in short: readers and paced writers at
    once, nothing fails, and afterwards the view holds exactly every row written (writes held
    back while the workers stepped went out merged, none lost)."""
    server = fresh_slipstream
    result = asyncio.run(run(server.dsn, 16, 6, 400, 4))
    assert result["error_count"] == 0, result["errors"]
    assert result["point_select_ms"]["count"] > 0 and result["changes_written"] > 0, result
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM load_orders").fetchone()
        (counted,) = conn.execute("SELECT sum(n) FROM load_by_customer").fetchone()
    assert counted == rows == 10_000 + result["changes_written"], (counted, rows, result)
