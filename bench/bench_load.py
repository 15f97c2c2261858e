"""Many concurrent connections with a mixed workload, for a bounded time: errors, throughput,
latency, and whether the server leaks connections, file descriptors or memory.

    .venv/bin/python -m bench.bench_load --dsn postgresql://slipstream@127.0.0.1:6875/slipstream \\
        --pid <server pid> --connections 200 --seconds 60 --out bench/results/load.json

Each client runs, until the time is up: a point SELECT on an indexed materialized view (70%),
an INSERT into its table (20%), a catalog query (5%) and an aggregate over the table (5%); every
200 operations it reconnects (connection churn). The run has two halves; the server's open file
descriptors, RSS (its own and its process tree's: Spark's JVM and workers) and pg_stat_activity
are sampled after each half, and again once every client has disconnected.
tests/e2e/test_load.py runs a short version and checks the invariants.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

CUSTOMERS = 1000
RECONNECT_EVERY = 200


@dataclass
class Sample:
    """The server's resources at one moment (None where the process could not be read)."""

    connections: int
    fds: int | None
    rss_mb: float | None
    tree_rss_mb: float | None


@dataclass
class LoadResult:
    connections: int
    seconds: float
    operations: dict[str, int] = field(default_factory=dict)
    latencies_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    samples: dict[str, Sample] = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        return sum(self.operations.values()) / self.seconds

    def to_json(self) -> dict:
        return {"connections": self.connections, "seconds": self.seconds,
                "operations_per_second": round(self.throughput, 1), "operations": self.operations,
                "latencies_ms": self.latencies_ms, "error_count": self.error_count, "errors": self.errors[:10],
                "samples": {k: vars(v) for k, v in self.samples.items()},
                "machine": platform.platform()}


def _process_tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [pid], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def _sample(dsn: str, pid: int | None) -> Sample:
    conn = await asyncpg.connect(dsn)
    try:
        # Every session but this one.
        connections = await conn.fetchval("SELECT count(*) FROM pg_stat_activity") - 1
    finally:
        await conn.close()
    if pid is None:
        return Sample(connections, None, None, None)
    try:
        fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    except OSError:
        fds = None
    tree = [r for r in (_rss_mb(p) for p in _process_tree(pid)) if r is not None]
    return Sample(connections, fds, _rss_mb(pid), round(sum(tree), 1) if tree else None)


async def setup(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("DROP MATERIALIZED VIEW IF EXISTS load_by_customer CASCADE")
        await conn.execute("DROP TABLE IF EXISTS load_orders CASCADE")
        await conn.execute("CREATE TABLE load_orders (id int, customer int, amount int)")
        await conn.execute("INSERT INTO load_orders SELECT g, g % $1, g % 97 FROM generate_series(1, 10000) AS g",
                           CUSTOMERS)
        await conn.execute("CREATE MATERIALIZED VIEW load_by_customer AS "
                           "SELECT customer, count(*) AS n, sum(amount) AS total FROM load_orders GROUP BY customer")
        await conn.execute("CREATE INDEX load_by_customer_idx ON load_by_customer (customer)")
    finally:
        await conn.close()


OPERATIONS = (
    (0.70, "point select", "SELECT n, total FROM load_by_customer WHERE customer = $1"),
    (0.20, "insert", "INSERT INTO load_orders VALUES ($1, $2, $3)"),
    (0.05, "catalog", "SELECT count(*) FROM mz_catalog.mz_tables"),
    (0.05, "aggregate", "SELECT count(*), sum(amount) FROM load_orders"),
)


async def _client(dsn: str, index: int, deadline: float, result: LoadResult, times: dict[str, list[float]]) -> None:
    rng = random.Random(index)
    conn = None
    done = 0
    while time.monotonic() < deadline:
        try:
            if conn is None:
                conn = await asyncpg.connect(dsn)
            pick, cumulative = rng.random(), 0.0
            for share, name, sql in OPERATIONS:
                cumulative += share
                if pick < cumulative:
                    break
            args = {"point select": lambda: (rng.randrange(CUSTOMERS),),
                    "insert": lambda: (rng.randrange(1 << 30), rng.randrange(CUSTOMERS), rng.randrange(100))
                    }.get(name, lambda: ())()
            start = time.perf_counter()
            await conn.fetch(sql, *args)
            times[name].append((time.perf_counter() - start) * 1000)
            result.operations[name] = result.operations.get(name, 0) + 1
            done += 1
            if done % RECONNECT_EVERY == 0:
                await conn.close()
                conn = None
        except (asyncpg.PostgresError, OSError, asyncio.TimeoutError) as e:
            result.error_count += 1
            if len(result.errors) < 10:
                result.errors.append(f"{type(e).__name__}: {e}")
            if conn is not None and conn.is_closed():
                conn = None
    if conn is not None:
        await conn.close()


def _percentiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"count": len(values), "p50": round(statistics.median(values), 2),
            "p99": round(values[int(0.99 * (len(values) - 1))], 2), "max": round(values[-1], 2)} if values else {}


async def run_load(dsn: str, pid: int | None, connections: int, seconds: float) -> LoadResult:
    """Two halves of `seconds / 2` with `connections` clients each; samples after each half and
    after every client has gone (waiting up to 10 s for the server to notice)."""
    await setup(dsn)
    result = LoadResult(connections, seconds)
    times: dict[str, list[float]] = {name: [] for _, name, _ in OPERATIONS}
    result.samples["before"] = await _sample(dsn, pid)
    for half in ("first half", "second half"):
        deadline = time.monotonic() + seconds / 2
        await asyncio.gather(*(_client(dsn, i, deadline, result, times) for i in range(connections)))
        result.samples[half] = await _sample(dsn, pid)
    settle = time.monotonic() + 10
    while True:
        after = await _sample(dsn, pid)
        if after.connections <= result.samples["before"].connections or time.monotonic() > settle:
            break
        await asyncio.sleep(0.5)
    result.samples["after"] = after
    result.latencies_ms = {name: _percentiles(values) for name, values in times.items()}
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--pid", type=int, help="the server's process id (for descriptors and memory)")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--out", type=Path, default=Path("bench/results/load.json"))
    args = ap.parse_args()
    result = asyncio.run(run_load(args.dsn, args.pid, args.connections, args.seconds))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result.to_json(), indent=2) + "\n")
    print(json.dumps(result.to_json(), indent=2))


if __name__ == "__main__":
    main()
