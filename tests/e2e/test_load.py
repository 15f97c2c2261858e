"""Load test: 200 concurrent connections with a mixed workload for a bounded time (the longer
run and its figures: bench/bench_load.py, docs/benchmarks.md). No operation fails, every
connection is gone from the server afterwards, and neither its file descriptors nor its memory
keep growing between the run's two halves."""

from __future__ import annotations

import asyncio

import pytest

from bench.bench_load import run_load

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
