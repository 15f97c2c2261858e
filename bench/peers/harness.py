"""The measurement loop every peer runs through, so all systems see the same changes in the same
order and are measured the same way.

A peer implements `PeerSystem` (async; a synchronous engine just does its work inside the
coroutine). `measure()` then drives, for one base size:

    load      base customers/orders loaded (not counted in hydration)
    hydrate   both views built over the base data and readable
    b=1       closed loop: apply one change, wait until V1 and V2 are current and readable
    b=100     the same with 100-change batches
    b=10000   the same with 10 000-change batches
    freshness open loop at `rate` changes/s (writes only); a SUBSCRIBE of V1 reports arrivals
    check     final V1 and V2 against the ground truth of exactly the changes applied

A batch is applied as "remove the old versions, add the new versions" in one transaction (an
update is a delete plus an insert of the same id), so it lands at one timestamp.

    cfg = MeasureConfig(single=100, b100=20, b10k=3)
    result = asyncio.run(measure(system, workload, stream, cfg, progress))
"""

from __future__ import annotations

import asyncio
import os
import statistics
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Awaitable, Callable, Protocol

import numpy as np
import pandas as pd

from bench.peers.profile import FlameGraph
from bench.common.workload import (ChangeBatch, ChangeStream, Workload, frame_matches,
                                   ground_truth_v1, ground_truth_v2)

CAPTURED = "captured"


class NotSupported(Exception):
    """A metric this system cannot produce; the message says why (it goes into the results)."""


@dataclass
class MeasureConfig:
    single: int = 100            # single-change batches (latency samples)
    b100: int = 20               # 100-change batches
    b10k: int = 3                # 10 000-change batches
    rate: int = 10_000           # open-loop freshness rate, changes/s
    tick_ms: int = 10            # one write every tick (rate * tick changes each)
    freshness_s: float = 3.0
    phase_budget_s: float = 90.0  # a phase stops early (and says so) past this

    def changes_needed(self) -> int:
        return (self.single + 100 * self.b100 + 10_000 * self.b10k
                + int(self.rate * self.freshness_s) + 10_000)


class PeerSystem(Protocol):
    name: str

    async def start(self) -> None: ...
    async def load_base(self, w: Workload) -> None: ...
    async def hydrate(self) -> None: ...
    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        """Write the batch, then read V1 and V2 (probe_customer's row) at or after it."""
    async def write(self, batch: ChangeBatch) -> None:
        """Write only (open loop); returns at the write's acknowledgement."""
    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        """Start a SUBSCRIBE of V1; call on_state(arrival_perf_counter, total_count, total_sum)
        each time a timestamp closes. Returns an async stop function. May raise NotSupported."""
    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]: ...
    def pids(self) -> list[int]:
        """Every process of the system (for RSS)."""
    async def stop(self) -> None: ...


# ---------------------------------------------------------------------------------------------
# Memory: RSS of a process tree, sampled in the background.


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def tree_status_bytes(roots: list[int], field: str, counted: Callable[[int, dict[str, str]], bool] | None = None) -> int:
    """Sum of a /proc status memory field (VmRSS, VmHWM) over the roots and all their
    descendants, of those `counted` (pid, status fields) accepts (all by default)."""
    seen: set[int] = set()
    stack = list(roots)
    total = 0
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if field in fields and (counted is None or counted(pid, fields)):
            total += int(fields[field].split()[0]) * 1024
        stack.extend(_children(pid))
    return total


def tree_rss_bytes(roots: list[int]) -> int:
    """Sum of VmRSS over the roots and all their descendants."""
    return tree_status_bytes(roots, "VmRSS")


class RssSampler:
    """Peak RSS of a process tree, sampled every `interval` seconds on a thread."""

    def __init__(self, pids: Callable[[], list[int]], interval: float = 0.1) -> None:
        self._pids, self._interval = pids, interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self._interval)

    def sample(self) -> int:
        rss = tree_rss_bytes(self._pids())
        self.peak = max(self.peak, rss)
        return rss

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class PhaseResult:
    batch_size: int
    batches_planned: int
    batches_done: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    note: str = ""

    def summary(self) -> dict[str, Any]:
        lat = self.latencies_ms
        out: dict[str, Any] = {"batch_size": self.batch_size, "batches_planned": self.batches_planned,
                               "batches_done": self.batches_done, "note": self.note}
        if lat:
            out["median_ms"] = statistics.median(lat)
            out["p90_ms"] = float(np.percentile(lat, 90))
            out["changes_per_s"] = self.batch_size * len(lat) / (sum(lat) / 1000.0)
        return out


def probe_customer(batch: ChangeBatch) -> int:
    t = batch.inserts if batch.inserts.num_rows else batch.deletes
    return int(t["customer_id"][0].as_py())


def v1_totals_delta(batch: ChangeBatch) -> tuple[int, int]:
    """How the sums over V1 (count, amount) change with this batch: captured rows only."""
    def part(t) -> tuple[int, int]:
        if t.num_rows == 0:
            return 0, 0
        captured = np.asarray(t["status"].to_pylist(), dtype=object) == CAPTURED
        return int(captured.sum()), int(t["amount"].to_numpy()[captured].sum())
    ci, si = part(batch.inserts)
    cd, sd = part(batch.deletes)
    return ci - cd, si - sd


def _progress(system: str, size: str, what: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {system:16s} {size:>5s}  {what}", flush=True)


async def _closed_loop(system: PeerSystem, stream: ChangeStream, cursor: int, size: int, count: int,
                       budget_s: float, label: str, sys_name: str) -> tuple[PhaseResult, int]:
    phase = PhaseResult(size, count)
    started = time.perf_counter()
    report_every = max(1, count // 5)
    for i in range(count):
        batch = stream.batch(cursor, size)
        t0 = time.perf_counter()
        await system.apply(batch, probe_customer(batch))
        phase.latencies_ms.append((time.perf_counter() - t0) * 1000.0)
        cursor += size
        phase.batches_done += 1
        if (i + 1) % report_every == 0 or i + 1 == count:
            _progress(sys_name, label, f"b={size}: {i + 1}/{count} batches "
                      f"(median {statistics.median(phase.latencies_ms):.1f} ms)")
        if time.perf_counter() - started > budget_s and i + 1 < count:
            phase.note = (f"stopped after {i + 1} of {count} batches: the phase budget of "
                          f"{budget_s:.0f} s was spent")
            _progress(sys_name, label, phase.note)
            break
    return phase, cursor


async def _freshness(system: PeerSystem, w: Workload, stream: ChangeStream, cursor: int,
                     cfg: MeasureConfig, label: str) -> tuple[dict[str, Any], int]:
    """Open loop: a write of rate*tick changes every tick; each write's V1 totals are known, so
    its arrival on the SUBSCRIBE is the first closed timestamp whose totals match."""
    per_tick = max(1, cfg.rate * cfg.tick_ms // 1000)
    ticks = int(cfg.freshness_s * 1000 / cfg.tick_ms)
    truth = ground_truth_v1(w, stream.final_order_columns(cursor))
    base_count, base_sum = int(truth["count"].sum()), int(truth["sum"].sum())
    expected: list[tuple[int, int]] = []
    c, s = base_count, base_sum
    for k in range(ticks):
        dc, ds = v1_totals_delta(stream.batch(cursor + k * per_tick, per_tick))
        c, s = c + dc, s + ds
        expected.append((c, s))
    acks: list[float | None] = [None] * ticks
    arrivals: list[float | None] = [None] * ticks
    pointer = [0]
    ready = [False]

    def on_state(at: float, count: int, total: int) -> None:
        if not ready[0]:
            if (count, total) == (base_count, base_sum):
                ready[0] = True
            return
        k = pointer[0]
        for j in range(k, min(ticks, k + 200)):
            if expected[j] == (count, total):
                for i in range(k, j + 1):
                    arrivals[i] = at
                pointer[0] = j + 1
                return

    stop = await system.subscribe_v1(on_state)
    try:
        wait_until = time.perf_counter() + 30
        while not ready[0] and time.perf_counter() < wait_until:
            await _sleep(0.01)
        if not ready[0]:
            raise RuntimeError("the SUBSCRIBE never showed the current V1 snapshot")
        start = time.perf_counter()
        written = 0
        behind: list[float] = []  # how late each write started against its due time, ms
        for k in range(ticks):
            due = start + k * cfg.tick_ms / 1000.0
            delay = due - time.perf_counter()
            if delay > 0:
                await _sleep(delay)
            elif time.perf_counter() - start > max(3 * cfg.freshness_s, cfg.phase_budget_s / 3):
                break  # the writer cannot keep the rate: stop rather than run for minutes
            behind.append((time.perf_counter() - due) * 1000.0)
            await system.write(stream.batch(cursor + k * per_tick, per_tick))
            acks[k] = time.perf_counter()
            written += 1
        write_s = time.perf_counter() - start
        deadline = time.perf_counter() + 30
        while pointer[0] < written and time.perf_counter() < deadline:
            await _sleep(0.01)
    finally:
        await stop()
    cursor += written * per_tick
    planned, ticks = ticks, written
    lags = [max(0.0, (a - b)) * 1000.0 for a, b in zip(arrivals, acks) if a is not None and b is not None]
    out: dict[str, Any] = {
        "target_rate": cfg.rate, "tick_ms": cfg.tick_ms, "writes": ticks, "writes_planned": planned, "changes_per_write": per_tick,
        "achieved_rate": ticks * per_tick / write_s, "arrived": len(lags),
        # The writer kept the rate if every write started within a tick of its due time
        # (achieved_rate also counts the last write's own latency in the elapsed time).
        "max_start_behind_ms": max(behind) if behind else None,
        "writes_started_late": sum(1 for b in behind if b > cfg.tick_ms),
        "note": "lag = arrival of the write's V1 change on SUBSCRIBE minus the write's ack "
                "(0 when it arrived before the ack reached the client)"}
    if lags:
        out["p50_ms"] = float(np.percentile(lags, 50))
        out["p99_ms"] = float(np.percentile(lags, 99))
    if len(lags) < ticks:
        out["note"] += f"; {ticks - len(lags)} writes never arrived within 30 s"
    return out, cursor


async def _sleep(s: float) -> None:
    import asyncio
    await asyncio.sleep(s)


def _frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns[1:]:
        out[c] = out[c].map(int).astype(np.int64)
    return out


# Memory is sampled right after hydration and again after this idle pause: the first figure
# includes what hydration was still freeing (Slipstream at 1M: ~100 MB of it), the second is what
# the system holds for its state.
SETTLE_S = 3.0


async def measure(system: PeerSystem, w: Workload, stream: ChangeStream, cfg: MeasureConfig,
                  label: str) -> dict[str, Any]:
    """Run every phase on `system`; a failing phase is recorded with its error and skipped."""
    name = system.name
    result: dict[str, Any] = {"system": name, "size": label, "n_orders": w.n_orders,
                              "config": asdict(cfg), "errors": {}}
    cursor = 0
    flame = None
    _progress(name, label, "starting")
    await system.start()
    with RssSampler(system.pids) as rss:
        try:
            t0 = time.perf_counter()
            await system.load_base(w)
            result["load_s"] = time.perf_counter() - t0
            _progress(name, label, f"base loaded in {result['load_s']:.1f} s; hydrating")
            t0 = time.perf_counter()
            await system.hydrate()
            result["hydrate_s"] = time.perf_counter() - t0
            _progress(name, label, f"hydrated in {result['hydrate_s']:.2f} s")
            result["rss_after_hydrate_mb"] = rss.sample() / 2**20
            await asyncio.sleep(SETTLE_S)
            result["rss_settled_mb"] = rss.sample() / 2**20
            roots = system.pids()
            flame = FlameGraph.maybe_start(roots[0] if roots else 0, f"{name}-{label}",
                                           subprocesses=roots != [os.getpid()])
            phases = {}
            for size, count in ((1, cfg.single), (100, cfg.b100), (10_000, cfg.b10k)):
                if count <= 0:
                    continue
                try:
                    phase, cursor = await _closed_loop(system, stream, cursor, size, count,
                                                       cfg.phase_budget_s, label, name)
                    phases[str(size)] = phase.summary()
                except Exception as exc:  # the system broke in this phase: say how
                    result["errors"][f"b={size}"] = _err(exc)
                    _progress(name, label, f"b={size} failed: {exc!r}")
                    break
            result["batches"] = phases
            if not result["errors"]:
                try:
                    _progress(name, label, f"freshness: {cfg.rate}/s for {cfg.freshness_s:.0f} s")
                    result["freshness"], cursor = await _freshness(system, w, stream, cursor, cfg, label)
                except NotSupported as exc:
                    result["freshness"] = {"unsupported": str(exc)}
                except Exception as exc:
                    result["errors"]["freshness"] = _err(exc)
                    _progress(name, label, f"freshness failed: {exc!r}")
            if not result["errors"]:
                result["check"] = await _check(system, w, stream, cursor)
                _progress(name, label, f"final views {'MATCH' if result['check']['ok'] else 'WRONG'} "
                          f"the ground truth after {cursor} changes")
        except Exception as exc:
            result["errors"]["run"] = _err(exc)
            _progress(name, label, f"failed: {exc!r}")
        finally:
            if flame is not None:
                flame.stop()
                result["flame_graph"] = flame.out.name
            result["peak_rss_mb"] = rss.peak / 2**20
            await system.stop()
    result["changes_applied"] = cursor
    result["valid"] = bool(result.get("check", {}).get("ok")) and not result["errors"]
    return result


async def _check(system: PeerSystem, w: Workload, stream: ChangeStream, cursor: int) -> dict[str, Any]:
    final = stream.final_order_columns(cursor)
    v1, v2 = await system.read_views()
    ok1 = frame_matches(_frame(v1), ground_truth_v1(w, final))
    ok2 = frame_matches(_frame(v2), ground_truth_v2(final))
    return {"ok": ok1 and ok2, "v1_ok": ok1, "v2_ok": ok2, "changes": cursor,
            "v1_rows": len(v1), "v2_rows": len(v2)}


def _err(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:2000]
