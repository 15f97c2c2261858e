"""What idle materialized views cost a write to an unrelated table, end to end over pgwire.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_idle_dataflows.py [--views 0,10,30] [--rounds 60]

For each count N: a fresh server (2 workers) with N tables, each with a join+aggregate
materialized view over it (idle: nothing writes to them), and one more table `hot` with its own
view. A round is `INSERT INTO hot ...; SELECT * FROM hot_view` (the write acknowledged, then the
view read current). Reports the median and p90 round time and the server's CPU use while idle
(10 s of ticks with no writes), as JSON in bench/results/idle_dataflows.json. A dataflow none of
whose inputs changed skips its step on every worker (no exchange rounds): the round time should
not grow with N."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from tests.support.slipstream_server import SlipstreamServer


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and all its descendants, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo.extend(c for c, (ppid, _) in stats.items() if ppid == p and c not in tree)
    return sum(stats[p][1] for p in tree if p in stats)


def measure(n_views: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        server = SlipstreamServer.start(data_dir=Path(tmp) / "data", log_file=Path(tmp) / "server.log")
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                for i in range(n_views + 1):
                    name = "hot" if i == n_views else f"t{i}"
                    conn.execute(f"CREATE TABLE {name} (k int, g int, v int)")
                    conn.execute(f"INSERT INTO {name} SELECT x, x % 7, x FROM generate_series(1, 200) AS x")
                    conn.execute(f"CREATE MATERIALIZED VIEW {name}_view AS SELECT a.g, count(*) AS n, sum(b.v) AS s "
                                 f"FROM {name} a JOIN {name} b ON a.k = b.k GROUP BY a.g")
                conn.execute("SELECT * FROM hot_view").fetchall()
                times = []
                for r in range(rounds):
                    t0 = time.perf_counter()
                    conn.execute(f"INSERT INTO hot VALUES ({1000 + r}, {r % 7}, {r})")
                    conn.execute("SELECT * FROM hot_view").fetchall()
                    times.append((time.perf_counter() - t0) * 1000)
                pid = server.process.pid
                cpu0, t0 = _tree_cpu(pid), time.monotonic()
                time.sleep(10)
                idle_cpu = (_tree_cpu(pid) - cpu0) / (time.monotonic() - t0)
            times.sort()
            return {"views": n_views, "rounds": rounds, "round_ms_p50": round(statistics.median(times), 2),
                    "round_ms_p90": round(times[int(len(times) * 0.9)], 2), "idle_cpu_cores": round(idle_cpu, 3)}
        finally:
            server.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--views", default="0,10,30")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "idle_dataflows.json"))
    args = ap.parse_args()
    results = []
    for n in (int(x) for x in args.views.split(",")):
        res = measure(n, args.rounds)
        print(json.dumps(res), flush=True)
        results.append(res)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
