"""Commit latency over a real server: a single-row INSERT (the single-table fast path) and a
two-table transaction (BEGIN; INSERT a; INSERT b; COMMIT: the transaction-WAL path), sequential,
one client. Prints p50/p90/p99 in milliseconds as JSON.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_txn_commit.py --n 300

`--persist`: the same in-process on the storage controller alone (no server, no Spark): one
table's append vs two appends in turn vs `append_atomic` over two tables (the transaction WAL).

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


def persist_bench(n: int) -> dict:
    import pyarrow as pa

    from dataflow.types import INT8
    from storage.controller import StorageController
    from storage.persist import PersistClient

    storage = StorageController(PersistClient.open_local(Path(tempfile.mkdtemp(prefix="bench_txn_")),
                                                         inline_part_max_bytes=4096))
    for t in "abc":
        storage.open(t, (INT8, INT8))

    def batch(ts: int) -> pa.Table:
        return pa.table({"c0": pa.array([1], pa.int64()), "c1": pa.array([2], pa.int64()),
                         "time": pa.array([ts], pa.uint64()), "diff": pa.array([1], pa.int64())})

    ts, out = 1, {"single_append": [], "two_appends_in_turn": [], "two_table_atomic": []}
    for _ in range(n):
        for kind, times in out.items():
            ts += 1
            t0 = time.perf_counter()
            if kind == "single_append":
                storage.append("a", batch(ts), ts + 1)
            elif kind == "two_appends_in_turn":
                storage.append("b", batch(ts), ts + 1)
                storage.append("c", batch(ts), ts + 1)
            elif hasattr(storage, "append_atomic"):
                storage.append_atomic({"b": batch(ts), "c": batch(ts)}, ts)
            else:
                continue
            times.append(time.perf_counter() - t0)
    return {k: summary(v) for k, v in out.items() if v}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--persist", action="store_true", help="in-process storage controller only")
    args = ap.parse_args()
    if args.persist:
        print(json.dumps({"repo": str(REPO_ROOT), **persist_bench(args.n)}, indent=1))
        return
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
