"""Webhook source ingestion on a real server: requests/s and rows/s at a few concurrency levels,
and the latency from POST to the row being visible to SELECT.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_webhook.py [seconds_per_level]

Starts a server with its own data directory and a source `BODY FORMAT JSON` (one row per
request), then for each concurrency level C runs C aiohttp clients on keep-alive connections,
each posting a small JSON event and waiting for its 200 before the next, for `seconds`: requests
(= rows) per second and the POST latency (p50/p99); the source's row count is checked against
the requests answered 200. A second source
`BODY FORMAT JSON ARRAY` takes 100-element arrays for rows/s of batched events. Finally one
client posts events one at a time and polls `SELECT ... WHERE body->>'id' = $1` after each 200:
POST-to-visible latency (a 200 means durable and applied, so the first SELECT sees it; the
bench asserts so), next to the time of the same SELECT alone.
Results go to bench/results/webhook/bench_webhook.json.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402
import psycopg  # noqa: E402

from tests.support.slipstream_server import SlipstreamServer  # noqa: E402

LEVELS = (1, 4, 16, 64)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 2)


async def load(url: str, clients: int, seconds: float, array: int) -> dict:
    latencies: list[float] = []
    stop = time.monotonic() + seconds
    errors = 0

    async def client(k: int, s: aiohttp.ClientSession) -> None:
        nonlocal errors
        i = 0
        while time.monotonic() < stop:
            event = {"id": f"{k}-{i}", "kind": ("a", "b", "c")[i % 3], "amount": i % 17}
            body = json.dumps([event] * array if array > 1 else event).encode()
            t0 = time.perf_counter()
            async with s.post(url, data=body, headers={"content-type": "application/json"}) as r:
                await r.read()
                if r.status != 200:
                    errors += 1
            latencies.append(time.perf_counter() - t0)
            i += 1

    connector = aiohttp.TCPConnector(limit=clients)
    t0 = time.monotonic()
    async with aiohttp.ClientSession(connector=connector) as s:
        await asyncio.gather(*(client(k, s) for k in range(clients)))
    elapsed = time.monotonic() - t0
    n = len(latencies)
    return {"clients": clients, "rows_per_request": array, "seconds": round(elapsed, 2), "requests": n,
            "requests_per_s": round(n / elapsed), "rows_per_s": round(n * array / elapsed),
            "latency_ms_p50": pct(latencies, 0.5), "latency_ms_p99": pct(latencies, 0.99), "errors": errors}


async def visibility(url: str, dsn: str, n: int) -> dict:
    post_ms, visible_ms = [], []
    with psycopg.connect(dsn, autocommit=True) as conn:
        async with aiohttp.ClientSession() as s:
            for i in range(n):
                t0 = time.perf_counter()
                async with s.post(url, data=json.dumps({"id": f"vis-{i}"}).encode()) as r:
                    assert r.status == 200, await r.text()
                t1 = time.perf_counter()
                polls = 0
                while conn.execute("SELECT count(*) FROM bench_hook WHERE body->>'id' = %s",
                                   (f"vis-{i}",)).fetchone()[0] != 1:
                    polls += 1
                t2 = time.perf_counter()
                post_ms.append(t1 - t0)
                visible_ms.append(t2 - t0)
                assert polls == 0, "a 200 promises the row is visible to the next read"
        select_ms = []
        for i in range(50):  # the SELECT alone, for comparison: what the visibility time is made of
            t0 = time.perf_counter()
            conn.execute("SELECT count(*) FROM bench_hook WHERE body->>'id' = %s", (f"none-{i}",)).fetchone()
            select_ms.append(time.perf_counter() - t0)
    return {"events": n, "post_ms_p50": pct(post_ms, 0.5), "post_ms_p99": pct(post_ms, 0.99),
            "post_to_visible_ms_p50": pct(visible_ms, 0.5), "post_to_visible_ms_p99": pct(visible_ms, 0.99),
            "select_alone_ms_p50": pct(select_ms, 0.5), "select_alone_ms_p99": pct(select_ms, 0.99)}


def main(seconds: float) -> None:
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as d:
        server = SlipstreamServer.start(data_dir=Path(d) / "data", log_file=Path(d) / "server.log")
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                conn.execute("CREATE SOURCE bench_hook FROM WEBHOOK BODY FORMAT JSON")
                conn.execute("CREATE SOURCE bench_batch FROM WEBHOOK BODY FORMAT JSON ARRAY")
                base = f"{server.http_url}/api/webhook/slipstream/public"
                levels = []
                for c in LEVELS:
                    before = conn.execute("SELECT count(*) FROM bench_hook").fetchone()[0]
                    r = asyncio.run(load(f"{base}/bench_hook", c, seconds, 1))
                    after = conn.execute("SELECT count(*) FROM bench_hook").fetchone()[0]
                    r["rows_in_source"] = after - before  # equals requests: nothing lost or doubled
                    levels.append(r)
                    print(json.dumps(r), flush=True)
                results["json_one_row_per_request"] = levels
                batched = []
                for c in (1, 16):
                    r = asyncio.run(load(f"{base}/bench_batch", c, seconds, 100))
                    batched.append(r)
                    print(json.dumps(r), flush=True)
                results["json_array_100_rows_per_request"] = batched
                vis = asyncio.run(visibility(f"{base}/bench_hook", server.dsn, 200))
                print(json.dumps(vis), flush=True)
                results["post_to_visible"] = vis
                stats = conn.execute(
                    "SELECT s.messages_received, s.updates_committed, s.bytes_received "
                    "FROM mz_internal.mz_source_statistics s JOIN mz_sources m ON m.id = s.id "
                    "WHERE m.name = 'bench_hook'").fetchone()
                results["bench_hook_statistics"] = {"messages_received": stats[0], "updates_committed": stats[1],
                                                    "bytes_received": stats[2]}
        finally:
            server.stop()
    out = Path(__file__).parent / "results" / "webhook"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_webhook.json").write_text(json.dumps({
        "machine": f"{platform.machine()} {platform.processor()} ({platform.system()})",
        "seconds_per_level": seconds, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
