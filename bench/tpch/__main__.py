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


def _hydrate(ss, pid: int, n: int, sql: str) -> dict:
    """CREATE MATERIALIZED VIEW q<n> and read it once: its hydration time and memory."""
    before = _tree_rss(pid)
    t0 = time.perf_counter()
    try:
        ss.execute(f"CREATE MATERIALIZED VIEW q{n} AS {sql}")
        rows = len(ss.execute(f"SELECT * FROM q{n}").fetchall())
    except psycopg.Error as e:
        print(f"Q{n}: {e.sqlstate} {e}", flush=True)
        return {"error": f"{e.sqlstate} {e}"}
    took = time.perf_counter() - t0
    after = _tree_rss(pid)
    print(f"Q{n}: hydrated in {took:.2f} s, {rows} rows, RSS {before >> 20} -> {after >> 20} MiB",
          flush=True)
    return {"hydration_s": round(took, 3), "rows": rows, "rss_before": before, "rss_after": after}


def _refresh(ss, pg, pid: int, pair, index: int, live: list[int], label: str = "") -> list[dict]:
    """Apply one refresh pair (each function in one transaction; to PostgreSQL too when given)
    and read every live view after each: the time from the write's start to each read."""
    out = []
    for name, statements in (("RF1", data.rf1_statements(pair)), ("RF2", data.rf2_statements(pair))):
        t0 = time.perf_counter()
        with ss.transaction():
            for s in statements:
                ss.execute(s)
        write = time.perf_counter() - t0
        lat = {}
        for n in live:
            ss.execute(f"SELECT * FROM q{n}").fetchall()
            lat[n] = round(time.perf_counter() - t0, 3)
        if pg is not None:
            for s in statements:
                pg.execute(s)
        out.append({"pair": index, "function": name, "write_s": round(write, 3),
                    "orders": len(pair.new_orders) if name == "RF1" else len(pair.delete_keys),
                    "lineitems": len(pair.new_lineitems) if name == "RF1" else None,
                    "view_latency_s": lat, "rss": _tree_rss(pid)})
        print(f"{label}pair {index} {name}: write {write:.2f} s, "
              f"all views caught up after {max(lat.values(), default=0):.2f} s", flush=True)
    return out


def _start_oracle(data_dir: Path):
    from tests.support.pg_oracle import PgOracle
    oracle = PgOracle.start()
    pg = psycopg.connect(oracle.dsn, autocommit=True)
    data.create_tables(pg)
    data.load(pg, data_dir)
    data.create_oracle_indexes(pg)
    return oracle, pg


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
    ap.add_argument("--queries", default=None, help="comma-separated query numbers (default: all 22)")
    ap.add_argument("--isolated", action="store_true",
                    help="one view at a time: create it, read it, apply --pairs refresh pairs, "
                         "compare it with PostgreSQL, drop it (for scale factors whose 22 views "
                         "do not fit in memory together)")
    ap.add_argument("--key-indexes", action="store_true",
                    help="after loading, create an index on every table's key (bench/tpch/data.py "
                         "KEY_INDEXES): joins on them probe the indexes in place, chains become "
                         "delta joins where that arranges less")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.support.slipstream_server import SlipstreamServer

    sf = args.sf
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / f"slipstream-tpch-sf{sf}"
    t0 = time.perf_counter()
    data.generate(sf, data_dir)
    result: dict = {"sf": sf, "workers": args.workers, "machine": platform.platform(),
                    "cpus": os.cpu_count(), "generate_s": round(time.perf_counter() - t0, 2),
                    "isolated": args.isolated, "views": {}, "refresh": []}
    qs = queries(sf)
    if args.queries:
        wanted = {int(q) for q in args.queries.split(",")}
        qs = {n: sql for n, sql in qs.items() if n in wanted}
    work = Path(tempfile.mkdtemp(prefix="slipstream-tpch-bench-"))
    server = SlipstreamServer.start(data_dir=work / "data", log_file=work / "server.log",
                                    workers=args.workers)
    oracle = pg = None
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
        result["key_indexes"] = args.key_indexes
        if args.key_indexes:
            t0 = time.perf_counter()
            data.create_key_indexes(ss)
            for spec in data.KEY_INDEXES:  # (a point read answers from the index once built)
                table, key = spec.split(" ", 1)
                ss.execute(f"SELECT * FROM {table} WHERE {key.strip('()')} = 1").fetchall()
            result["index_s"] = round(time.perf_counter() - t0, 2)
            result["rss_indexed"] = _tree_rss(pid)
            print(f"key indexes in {result['index_s']} s, RSS {result['rss_indexed'] >> 20} MiB", flush=True)
        refresh = data.RefreshGenerator(data_dir, sf, seed=10)
        if args.isolated:
            if args.check:
                oracle, pg = _start_oracle(data_dir)
            bad = {}
            pair_index = 0
            for n, sql in qs.items():
                result["views"][n] = _hydrate(ss, pid, n, sql)
                if "error" in result["views"][n]:
                    ss.execute(f"DROP MATERIALIZED VIEW IF EXISTS q{n}")  # (what it holds goes too)
                    continue
                for _ in range(args.pairs):
                    pair_index += 1
                    result["refresh"] += _refresh(ss, pg, pid, refresh.next_pair(), pair_index, [n],
                                                  label=f"Q{n} ")
                if pg is not None:
                    problem = diff_rows(ss.execute(f"SELECT * FROM q{n}").fetchall(), pg.execute(sql).fetchall())
                    if problem:
                        bad[n] = problem
                        print(f"Q{n}: WRONG {problem}", flush=True)
                ss.execute(f"DROP MATERIALIZED VIEW q{n}")
            result["rss_end"] = _tree_rss(pid)
            if pg is not None:
                compared = [n for n in qs if "error" not in result["views"][n]]
                result["check"] = {"compared": len(compared), "wrong": bad}
                print(f"checked {len(compared)} views against PostgreSQL: {len(bad)} wrong", flush=True)
        else:
            for n, sql in qs.items():
                result["views"][n] = _hydrate(ss, pid, n, sql)
            live = [n for n in qs if "error" not in result["views"][n]]
            pairs = []
            for i in range(args.pairs):
                pairs.append(refresh.next_pair())
                result["refresh"] += _refresh(ss, None, pid, pairs[-1], i + 1, live)
            result["rss_end"] = _tree_rss(pid)
            if args.check:
                oracle, pg = _start_oracle(data_dir)
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
    out = args.out / (f"results_sf{sf:g}" + ("_isolated" if args.isolated else "")
                      + (f"_q{args.queries.replace(',', '-')}" if args.queries else "") + ".json")
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"wrote {out}")
    return 0 if not result.get("check", {}).get("wrong") else 1


if __name__ == "__main__":
    sys.exit(main())
