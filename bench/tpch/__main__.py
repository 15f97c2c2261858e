"""TPC-H live-view benchmark: one command.

    .venv/bin/python -m bench.tpch --sf 1 --out bench/results/tpch

Generates the data with tpchgen-cli, starts a fresh Slipstream server (2 workers), loads the
eight tables with COPY FROM STDIN, then for each of the 22 queries creates the materialized view
and reads it once (the read waits until the view has hydrated): that is the view's hydration
time, with the resident memory (RSS) of the server's whole process tree (environmentd, the Spark
JVM and its Python workers) before and after. Then `--pairs` refresh pairs (RF1: new orders
and lineitems; RF2: old ones out; ~0.1 % of the orders each) are applied, each function in
one transaction; after each, every view is read in turn, and the time from the start of the
write to that view's read returning is its update latency (reads wait until the view has
caught up with the write). With `--check` (default) the same data and refreshes go into a
throw-away PostgreSQL and every view is compared with its answer at the end: a wrong answer
voids the run. Results: <out>/results_sf<SF>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from bench.tpch import data
from bench.tpch.compare import diff_rows
from bench.tpch.queries import queries


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tpch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=Path("bench/results/tpch"))
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="where the .tbl files go (default: a directory under /tmp, reused)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-check", dest="check", action="store_false")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.slipstream_server import SlipstreamServer

    sf = args.sf
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / f"slipstream-tpch-sf{sf}"
    t0 = time.perf_counter()
    data.generate(sf, data_dir)
    result: dict = {"sf": sf, "workers": args.workers, "machine": platform.platform(),
                    "cpus": os.cpu_count(), "generate_s": round(time.perf_counter() - t0, 2),
                    "views": {}, "refresh": []}
    qs = queries(sf)
    work = Path(tempfile.mkdtemp(prefix="slipstream-tpch-bench-"))
    server = SlipstreamServer.start(data_dir=work / "data", log_file=work / "server.log",
                                    workers=args.workers)
    oracle = None
    try:
        pid = server.process.pid
        ss = psycopg.connect(server.dsn, autocommit=True)
        result["rss_idle"] = _tree_rss(pid)
        data.create_tables(ss)
        t0 = time.perf_counter()
        result["rows"] = data.load(ss, data_dir)
        result["load_s"] = round(time.perf_counter() - t0, 2)
        result["rss_loaded"] = _tree_rss(pid)
        print(f"loaded SF {sf} in {result['load_s']} s, RSS {result['rss_loaded'] >> 20} MiB",
              flush=True)
        for n, sql in qs.items():
            before = _tree_rss(pid)
            t0 = time.perf_counter()
            try:
                ss.execute(f"CREATE MATERIALIZED VIEW q{n} AS {sql}")
                rows = len(ss.execute(f"SELECT * FROM q{n}").fetchall())
            except psycopg.Error as e:
                result["views"][n] = {"error": f"{e.sqlstate} {e}"}
                print(f"Q{n}: {e.sqlstate} {e}", flush=True)
                continue
            took = time.perf_counter() - t0
            after = _tree_rss(pid)
            result["views"][n] = {"hydration_s": round(took, 3), "rows": rows,
                                  "rss_before": before, "rss_after": after}
            print(f"Q{n}: hydrated in {took:.2f} s, {rows} rows, RSS {before >> 20} -> "
                  f"{after >> 20} MiB", flush=True)
        live = [n for n in qs if "error" not in result["views"][n]]
        refresh = data.RefreshGenerator(data_dir, sf, seed=10)
        pairs = []
        for i in range(args.pairs):
            pair = refresh.next_pair()
            pairs.append(pair)
            for name, statements in (("RF1", data.rf1_statements(pair)),
                                     ("RF2", data.rf2_statements(pair))):
                t0 = time.perf_counter()
                with ss.transaction():
                    for s in statements:
                        ss.execute(s)
                write = time.perf_counter() - t0
                lat = {}
                for n in live:
                    ss.execute(f"SELECT * FROM q{n}").fetchall()
                    lat[n] = round(time.perf_counter() - t0, 3)
                result["refresh"].append({"pair": i + 1, "function": name, "write_s": round(write, 3),
                                          "orders": len(pair.new_orders) if name == "RF1" else len(pair.delete_keys),
                                          "lineitems": len(pair.new_lineitems) if name == "RF1" else None,
                                          "view_latency_s": lat, "rss": _tree_rss(pid)})
                print(f"pair {i + 1} {name}: write {write:.2f} s, all views caught up after "
                      f"{max(lat.values()):.2f} s", flush=True)
        result["rss_end"] = _tree_rss(pid)
        if args.check:
            from tests.support.pg_oracle import PgOracle
            oracle = PgOracle.start()
            pg = psycopg.connect(oracle.dsn, autocommit=True)
            data.create_tables(pg)
            data.load(pg, data_dir)
            data.create_oracle_indexes(pg)
            for pair in pairs:
                for s in data.rf1_statements(pair) + data.rf2_statements(pair):
                    pg.execute(s)
            bad = {}
            for n in live:
                problem = diff_rows(ss.execute(f"SELECT * FROM q{n}").fetchall(),
                                    pg.execute(qs[n]).fetchall())
                if problem:
                    bad[n] = problem
            result["check"] = {"compared": len(live), "wrong": bad}
            print(f"checked {len(live)} views against PostgreSQL: {len(bad)} wrong", flush=True)
    finally:
        server.stop()
        if oracle is not None:
            oracle.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"results_sf{sf:g}.json"
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"wrote {out}")
    return 0 if not result.get("check", {}).get("wrong") else 1


if __name__ == "__main__":
    sys.exit(main())
