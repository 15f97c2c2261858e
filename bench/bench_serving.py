"""Serving: point SELECTs on an indexed materialized view from many clients while a writer
changes its table at a fixed rate (the serving target of docs/benchmarks.md).

    .venv/bin/python -m bench.bench_serving --dsn postgresql://slipstream@127.0.0.1:6875/slipstream \\
        --connections 64 --seconds 30 --changes-per-second 1000 --writers 16 \\
        --out bench/results/serving/serving-64.json

Each client runs `SELECT n, total FROM load_by_customer WHERE customer = $1` (an asyncpg
prepared statement, a random customer each time) until the time is up. Meanwhile
`--writers` more connections insert `--changes-per-second` rows into the view's table between
them, in 10-row INSERTs paced evenly (each writer's INSERT acknowledged before its next; the
rate reached is reported). 16 writers by default: under 64-200 readers an INSERT takes longer
than the 40 ms four writers could give each one, and the target is the rate written. Every read is strictly
serializable: it sees every write acknowledged before it started, so it waits for the view to
have applied them. Same tables as bench/bench_load.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import time
from pathlib import Path

import asyncpg

from bench.bench_load import CUSTOMERS, _percentiles, setup

POINT = "SELECT n, total FROM load_by_customer WHERE customer = $1"
ROWS_PER_WRITE = 10


async def _reader(dsn: str, seed: int, deadline: float, out: list[float], errors: list[str]) -> None:
    rng = random.Random(seed)
    conn = await asyncpg.connect(dsn)
    try:
        point = await conn.prepare(POINT)
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                await point.fetch(rng.randrange(CUSTOMERS))
            except asyncpg.PostgresError as e:
                errors.append(f"{type(e).__name__}: {e}")
                continue
            out.append((time.perf_counter() - start) * 1000)
    finally:
        await conn.close()


async def _writer(dsn: str, seed: int, deadline: float, per_second: float, written: list[int]) -> None:
    """INSERTs of ROWS_PER_WRITE rows, paced to `per_second` rows a second (never ahead)."""
    conn = await asyncpg.connect(dsn)
    rng = random.Random(-1 - seed)
    values = ", ".join(f"(${3 * i + 1}, ${3 * i + 2}, ${3 * i + 3})" for i in range(ROWS_PER_WRITE))
    insert = await conn.prepare(f"INSERT INTO load_orders VALUES {values}")
    interval = ROWS_PER_WRITE / per_second
    try:
        next_at = time.monotonic()
        while time.monotonic() < deadline:
            args = []
            for _ in range(ROWS_PER_WRITE):
                args += [rng.randrange(1 << 30), rng.randrange(CUSTOMERS), rng.randrange(100)]
            await insert.fetch(*args)
            written[0] += ROWS_PER_WRITE
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    finally:
        await conn.close()


async def run(dsn: str, connections: int, seconds: float, per_second: int, writers: int) -> dict:
    await setup(dsn)
    latencies: list[float] = []
    errors: list[str] = []
    written = [0]
    start = time.monotonic()
    deadline = start + seconds
    tasks = [_reader(dsn, i, deadline, latencies, errors) for i in range(connections)]
    if per_second:
        tasks += [_writer(dsn, i, deadline, per_second / writers, written) for i in range(writers)]
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - start
    return {"connections": connections, "seconds": seconds,
            "point_selects_per_second": round(len(latencies) / elapsed, 1),
            "point_select_ms": _percentiles(latencies),
            "changes_per_second_asked": per_second, "writers": writers, "changes_written": written[0],
            "changes_per_second_written": round(written[0] / elapsed, 1),
            "error_count": len(errors), "errors": errors[:10], "machine": platform.platform()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--changes-per-second", type=int, default=1000)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--out", type=Path, default=Path("bench/results/serving/serving.json"))
    args = ap.parse_args()
    result = asyncio.run(run(args.dsn, args.connections, args.seconds, args.changes_per_second, args.writers))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
