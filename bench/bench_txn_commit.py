"""Commit latency over a real server: a single-row INSERT (the single-table fast path) and a
two-table transaction (BEGIN; INSERT a; INSERT b; COMMIT: the transaction-WAL path), sequential,
one client. Prints p50/p90/p99 in milliseconds as JSON.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_txn_commit.py --n 300

The server is started from the repository that `tests.support` is imported from (PYTHONPATH), so
the same script measures another checkout: PYTHONPATH=/other/checkout python bench/bench_txn_commit.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from tests.support.slipstream_server import REPO_ROOT, SlipstreamServer


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 2)


def summary(xs: list[float]) -> dict:
    return {"n": len(xs), "p50_ms": pct(xs, 0.5), "p90_ms": pct(xs, 0.9), "p99_ms": pct(xs, 0.99),
            "mean_ms": round(statistics.mean(xs) * 1000, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_txn_"))
    server = SlipstreamServer.start(data_dir=tmp / "data", log_file=tmp / "server.log")
    try:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE a (id int, v int)")
            conn.execute("CREATE TABLE b (id int, v int)")
            single, multi = [], []
            for i in range(args.warmup + args.n):
                t0 = time.perf_counter()
                conn.execute("INSERT INTO a VALUES (%s, 1)", (i,))
                if i >= args.warmup:
                    single.append(time.perf_counter() - t0)
            for i in range(args.warmup + args.n):
                conn.execute("BEGIN")
                conn.execute("INSERT INTO a VALUES (%s, -1)", (i,))
                conn.execute("INSERT INTO b VALUES (%s, 1)", (i,))
                t0 = time.perf_counter()
                conn.execute("COMMIT")
                if i >= args.warmup:
                    multi.append(time.perf_counter() - t0)
            n = conn.execute("SELECT count(*) FROM b").fetchone()[0]
            assert n == args.warmup + args.n, n
        print(json.dumps({"repo": str(REPO_ROOT), "single_insert": summary(single),
                          "two_table_commit": summary(multi)}, indent=1))
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
