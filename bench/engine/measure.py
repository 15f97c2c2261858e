"""The five engine measurements, each returning a plain dict for the JSON results."""

from __future__ import annotations

import gc
import time
from typing import Callable

import numpy as np
import pyarrow as pa

from bench.common.workload import ChangeStream, Workload
from bench.engine.memory import rss_bytes, state_bytes
from bench.engine.views import WorkloadViews, change_updates
from dataflow.batch import consolidate


def _stats(samples_s: list[float]) -> dict:
    a = np.array(samples_s) * 1000
    return {"median_ms": float(np.median(a)), "p90_ms": float(np.percentile(a, 90)),
            "p99_ms": float(np.percentile(a, 99)), "mean_ms": float(a.mean()), "n": len(a)}


def consolidation_rate(n_updates: int, seed: int = 7) -> dict:
    """`dataflow.batch.consolidate` over n random (key, time, diff) updates: about half the keys
    repeat, diffs are +-1, times from 8 values (as in a step holding several times)."""
    rng = np.random.default_rng(seed)
    t = pa.table({"c0": pa.array(rng.integers(0, n_updates // 2, n_updates, dtype=np.int64)),
                  "time": pa.array(rng.integers(0, 8, n_updates, dtype=np.uint64)),
                  "diff": pa.array(rng.choice(np.array([-1, 1], np.int64), n_updates))})
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        out = consolidate(t)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return {"updates": n_updates, "seconds": best, "updates_per_s": n_updates / best, "cpu_seconds": best_cpu,
            "updates_per_cpu_s": n_updates / best_cpu, "out_rows": out.num_rows}


def hydrate(views: WorkloadViews, workload: Workload) -> dict:
    gc.collect()
    rss0 = rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    views.hydrate(workload)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.collect()
    return {"seconds": seconds, "cpu_seconds": cpu, "rss_delta_bytes": rss_bytes() - rss0, **memory(views)}


def memory(views: WorkloadViews) -> dict:
    v1, v2 = state_bytes(views.v1.root), state_bytes(views.v2.root)
    return {"state_bytes_v1": v1, "state_bytes_v2": v2, "state_bytes": v1 + v2, "rss_bytes": rss_bytes()}


def run_batches(views: WorkloadViews, stream: ChangeStream, start: int, size: int, count: int,
                progress: Callable[[int], None] | None = None) -> tuple[dict, int]:
    """Closed loop: apply `count` batches of `size` changes from change number `start`; each
    batch is done when both dataflows have produced their output for its time. Building the
    Arrow update batch from the change stream is done before the clock starts."""
    prepared = [change_updates(stream.batch(start + i * size, size), 0) for i in range(count)]
    per_batch, per_batch_cpu = [], []
    for i, u in enumerate(prepared):
        t0, c0 = time.perf_counter(), time.process_time()
        views.apply_updates(u)
        per_batch.append(time.perf_counter() - t0)
        per_batch_cpu.append(time.process_time() - c0)
        if progress:
            progress(i + 1)
    total, cpu = sum(per_batch), sum(per_batch_cpu)
    # CPU time is reported beside wall time: on a shared 2-core machine other processes steal
    # the core, and CPU seconds show what the engine itself needed.
    return ({"batch_size": size, "batches": count, "changes": size * count, "seconds": total,
             "changes_per_s": size * count / total, "latency": _stats(per_batch), "cpu_seconds": cpu,
             "changes_per_cpu_s": size * count / max(cpu, 1e-9), "cpu_latency": _stats(per_batch_cpu)},
            start + size * count)
