"""`python -m bench.engine`: run the engine benchmark, write JSON + PNG plots, print a summary.

    .venv/bin/python -m bench.engine --sizes 100k,1M,10M --out bench/results/engine
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

from bench.common.workload import generate_base, generate_changes, parse_size, size_label
from bench.engine.measure import consolidation_rate, hydrate, memory, run_batches
from bench.engine.views import WorkloadViews

BATCH_SIZES = (1, 100, 10_000, 100_000)
WARMUP_SINGLE = 20


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def batch_counts(n_orders: int, singles: int) -> dict[int, int]:
    """How many batches of each size to run: enough to be stable, few enough that every change
    touches a distinct base row (40 % of changes touch one)."""
    counts = {1: singles, 100: 60, 10_000: 6, 100_000: 2 if n_orders >= 1_000_000 else 1}
    return counts


def run_size(n_orders: int, singles: int) -> dict:
    label = size_label(n_orders)
    _log(f"{label}: generating workload")
    w = generate_base(n_orders)
    counts = batch_counts(n_orders, singles)
    total = WARMUP_SINGLE + sum(b * c for b, c in counts.items())
    stream = generate_changes(w, total)
    views = WorkloadViews.plan()
    _log(f"{label}: hydrating V1 + V2 over {n_orders:,} orders, {w.n_customers:,} customers")
    hyd = hydrate(views, w)
    _log(f"{label}: hydrated in {hyd['seconds']:.2f} s (CPU {hyd['cpu_seconds']:.2f} s), state {hyd['state_bytes'] / 2**20:.0f} MiB, "
         f"RSS +{hyd['rss_delta_bytes'] / 2**20:.0f} MiB")
    pos = 0
    _, pos = run_batches(views, stream, pos, 1, WARMUP_SINGLE)
    throughput = []
    for size in BATCH_SIZES:
        count = counts[size]
        every = max(1, count // 4)
        prog = lambda i, s=size, c=count, e=every: (i % e == 0 or i == c) and _log(  # noqa: E731
            f"{label}: batch size {s:,}: {i}/{c}")
        res, pos = run_batches(views, stream, pos, size, count, prog)
        _log(f"{label}: b={size:,}: {res['changes_per_s']:,.0f} changes/s "
             f"({res['changes_per_cpu_s']:,.0f} per CPU-second), median {res['latency']['median_ms']:.2f} ms "
             f"(CPU {res['cpu_latency']['median_ms']:.2f} ms) per batch")
        throughput.append(res)
    mem_after = memory(views)
    _log(f"{label}: checking both views against the ground truth after {pos:,} changes")
    check = views.check(w, stream.final_order_columns(pos))
    _log(f"{label}: views match the ground truth ({check['v1_rows']} + {check['v2_rows']:,} rows)")
    return {"size": label, "orders": n_orders, "customers": w.n_customers, "hydration": hyd,
            "latency": throughput[0]["latency"], "throughput": throughput, "memory_after_changes": mem_after,
            "changes_applied": pos, "check": check}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100k,1M", help="comma-separated order counts, e.g. 100k,1M,10M")
    ap.add_argument("--out", default="bench/results/engine", help="directory for JSON and PNG results")
    ap.add_argument("--consolidation", default="1M,10M", help="update counts for the consolidation test")
    ap.add_argument("--singles", type=int, default=300, help="single changes timed for latency")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    env = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
           "command": "python -m bench.engine " + " ".join(argv if argv is not None else sys.argv[1:])}

    consol = []
    for n in [parse_size(s) for s in args.consolidation.split(",") if s]:
        _log(f"consolidation of {n:,} random updates")
        r = consolidation_rate(n)
        _log(f"consolidation: {r['updates_per_s'] / 1e6:.1f} M updates/s "
             f"({r['updates_per_cpu_s'] / 1e6:.1f} M per CPU-second)")
        consol.append(r)

    runs = []
    for n in [parse_size(s) for s in args.sizes.split(",") if s]:
        r = run_size(n, args.singles)
        runs.append(r)
        (out / f"run-{r['size']}.json").write_text(json.dumps({"env": env, **r}, indent=2))
        gc.collect()

    summary = {"env": env, "seconds": time.time() - started, "consolidation": consol, "runs": runs}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if runs:
        from bench.engine.plots import plot_all
        for p in plot_all(runs, out):
            _log(f"wrote {p}")
    _log(f"done in {summary['seconds']:.0f} s; results in {out}/")
    for r in runs:
        tp = ", ".join(f"b={t['batch_size']:,}: {t['changes_per_s']:,.0f}/s ({t['changes_per_cpu_s']:,.0f}/cpu-s)"
                       for t in r["throughput"])
        cl = r["throughput"][0]["cpu_latency"]
        print(f"{r['size']:>5}: hydrate {r['hydration']['seconds']:.2f} s (cpu {r['hydration']['cpu_seconds']:.2f} s), "
              f"latency median {r['latency']['median_ms']:.2f} ms p90 {r['latency']['p90_ms']:.2f} ms "
              f"(cpu median {cl['median_ms']:.2f} ms), "
              f"state {r['hydration']['state_bytes'] / 2**20:.0f} MiB; {tp}")
    return 0
