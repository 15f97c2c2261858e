"""Fast checks of the side-by-side bench on a tiny workload, with real components (the engine, a
real PostgreSQL; DuckDB only if bench/setup.sh installed it). Run: .venv/bin/pytest bench/peers"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import numpy as np
import pytest

from bench.common.workload import generate_base, generate_changes, ground_truth_v1
from bench.peers import report
from bench.peers.harness import MeasureConfig, measure, tree_rss_bytes, v1_totals_delta

SMALL = MeasureConfig(single=5, b100=3, b10k=0, freshness_s=0.2, phase_budget_s=30)


def small_run(system, n: int = 2_000) -> dict:
    w = generate_base(n)
    stream = generate_changes(w, 1_500)
    return asyncio.run(measure(system, w, stream, SMALL, "2k"))


def test_v1_totals_delta_follows_the_ground_truth():
    w = generate_base(1_000)
    s = generate_changes(w, 300)
    before = ground_truth_v1(w, s.final_order_columns(100))
    after = ground_truth_v1(w, s.final_order_columns(300))
    dc, ds = v1_totals_delta(s.batch(100, 200))
    assert (int(before["count"].sum()) + dc, int(before["sum"].sum()) + ds) == \
        (int(after["count"].sum()), int(after["sum"].sum()))


def test_tree_rss_counts_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(50 << 20); time.sleep(5)"])
    try:
        import time
        time.sleep(1.0)
        alone = tree_rss_bytes([child.pid])
        both = tree_rss_bytes([os.getpid()])
        assert alone > 40 << 20
        assert both >= alone
    finally:
        child.kill()
        child.wait()


def test_engine_inproc_matches_ground_truth():
    from bench.peers.engine_inproc import EngineInProc
    r = small_run(EngineInProc())
    assert r["valid"], r
    assert r["batches"]["1"]["batches_done"] == 5 and r["batches"]["100"]["batches_done"] == 3
    assert r["check"]["changes"] == 5 + 300
    assert r["freshness"]["unsupported"]


def test_pg_triggers_matches_ground_truth():
    from bench.peers.pg_triggers import PgTriggers
    r = small_run(PgTriggers())
    assert r["valid"], r
    assert r["peak_rss_mb"] > 10  # the postmaster and its backends were found


def test_duckdb_recompute_matches_ground_truth():
    pytest.importorskip("duckdb", reason="DuckDB is installed by bench/setup.sh, not by the tests")
    from bench.peers.duckdb_recompute import DuckDBRecompute
    assert small_run(DuckDBRecompute())["valid"]


def test_report_marks_wrong_answers_and_skips():
    ok = {"system": "a", "size": "1k", "n_orders": 1000, "valid": True, "hydrate_s": 0.5,
          "batches": {"1": {"median_ms": 2.0, "p90_ms": 3.0, "changes_per_s": 500.0},
                      "100": {"changes_per_s": 9000.0}, "10000": {"changes_per_s": 60000.0}},
          "peak_rss_mb": 100, "freshness": {"p50_ms": 1.0, "p99_ms": 2.0, "achieved_rate": 10000},
          "check": {"ok": True, "changes": 10}}
    wrong = {"system": "b", "size": "1k", "n_orders": 1000, "valid": False,
             "check": {"ok": False, "v1_ok": True, "v2_ok": False}}
    skipped = {"system": "c", "size": "1k", "n_orders": 1000, "valid": False, "skipped": "not installed"}
    text = report.table({"runs": [ok, wrong, skipped]})
    assert "| 1k | a | 0.50 s | 2.00 ms | 3.00 ms | 500/s | 9.0k/s | 60.0k/s | 100 MB |" in text
    assert "WRONG ANSWER" in text and "not installed" in text
    assert np.isfinite(ok["batches"]["1"]["median_ms"])
