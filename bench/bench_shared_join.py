"""Joins against an indexed relation: the index's arrangement shared in place
(planner/shared_arrangements.py) versus an unindexed copy the join must arrange itself, in
one-off reads and in materialized views.

    .venv/bin/python -m bench.bench_shared_join --dsn postgresql://slipstream@127.0.0.1:6875/slipstream \\
        --dim-rows 1000000 --fact-rows 1000 --repeat 5 --views 3 --pid <server pid> \\
        --out bench/results/shared_join.json

`dim` (id bigint, name text) holds --dim-rows rows twice, as `bj_dim` with an index on id and as
`bj_dim_copy` without one; `bj_fact` holds --fact-rows rows pointing at random ids. Each query
joins the small fact table with the large dimension; its latency is measured --repeat times
against each copy (the answers are checked equal). A read over the copy builds an arrangement of
the whole dimension (and exchanges it); over the index it probes the index's arrangement.

With --views N, N materialized views join the fact table with each copy in turn: each view's
hydration (CREATE to first read), the memory of the server's process tree (--pid) before and
after the N views, and the time from a write to the fact table to the views being current
(the views' answers are checked equal between the copies).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import psycopg

QUERIES = {
    "join_count": "SELECT count(*), sum(f.amount) FROM bj_fact f JOIN {dim} d ON f.did = d.id",
    "join_rows": "SELECT f.id, d.name FROM bj_fact f JOIN {dim} d ON f.did = d.id ORDER BY f.id LIMIT 20",
}


def _load(conn, dim_rows: int, fact_rows: int) -> None:
    for t in ("bj_fact", "bj_dim", "bj_dim_copy"):
        conn.execute(f"DROP TABLE IF EXISTS {t} CASCADE")
    conn.execute("CREATE TABLE bj_dim (id bigint, name text)")
    conn.execute("CREATE TABLE bj_dim_copy (id bigint, name text)")
    conn.execute("CREATE TABLE bj_fact (id bigint, did bigint, amount int)")
    conn.execute("CREATE INDEX bj_dim_id ON bj_dim (id)")
    for t in ("bj_dim", "bj_dim_copy"):
        with conn.cursor().copy(f"COPY {t} (id, name) FROM STDIN") as copy:
            for i in range(dim_rows):
                copy.write_row((i, f"name{i % 1000}"))
    with conn.cursor().copy("COPY bj_fact (id, did, amount) FROM STDIN") as copy:
        step = max(dim_rows // fact_rows, 1)
        for i in range(fact_rows):
            copy.write_row((i, (i * step * 7919) % dim_rows, i % 97))


VIEWS = [
    "SELECT d.name, count(*) AS n FROM bj_fact f JOIN {dim} d ON f.did = d.id GROUP BY d.name",
    "SELECT f.id, d.name FROM bj_fact f JOIN {dim} d ON f.did = d.id",
    "SELECT sum(f.amount) AS s, max(d.id) AS m FROM bj_fact f JOIN {dim} d ON f.did = d.id",
]


def _views(conn, n: int, pid: int | None, repeat: int) -> dict:
    from bench.peers.harness import tree_rss_bytes

    def rss() -> int | None:
        return round(tree_rss_bytes([pid]) / (1 << 20)) if pid else None

    out, answers = {}, {}
    for dim in ("bj_dim", "bj_dim_copy"):
        before, hydrations = rss(), []
        for i in range(n):
            t0 = time.perf_counter()
            conn.execute(f"CREATE MATERIALIZED VIEW bj_v{i}_{dim} AS {VIEWS[i % len(VIEWS)].format(dim=dim)}")
            conn.execute(f"SELECT count(*) FROM bj_v{i}_{dim}").fetchall()
            hydrations.append(round((time.perf_counter() - t0) * 1000))
        after = rss()
        updates = []
        for k in range(repeat):
            t0 = time.perf_counter()
            conn.execute("INSERT INTO bj_fact VALUES (%s, %s, 1)", (10_000_000 + k, k))
            for i in range(n):
                conn.execute(f"SELECT count(*) FROM bj_v{i}_{dim}").fetchall()
            updates.append((time.perf_counter() - t0) * 1000)
        conn.execute("DELETE FROM bj_fact WHERE id >= 10000000")
        answers[dim] = [sorted(conn.execute(f"SELECT * FROM bj_v{i}_{dim}").fetchall()) for i in range(n)]
        out["shared_index" if dim == "bj_dim" else "unindexed_copy"] = {
            "hydration_ms": hydrations, "rss_mib_before": before, "rss_mib_after": after,
            "write_to_current_ms_median": round(statistics.median(updates), 1)}
        print(f"views over {dim}", json.dumps(out["shared_index" if dim == "bj_dim" else "unindexed_copy"]))
        for i in range(n):
            conn.execute(f"DROP MATERIALIZED VIEW bj_v{i}_{dim}")
    assert answers["bj_dim"] == answers["bj_dim_copy"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--dim-rows", type=int, default=1_000_000)
    ap.add_argument("--fact-rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--views", type=int, default=0, help="materialized views per copy (0: none)")
    ap.add_argument("--pid", type=int, help="the server's pid, for the memory of its process tree")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        t0 = time.perf_counter()
        _load(conn, args.dim_rows, args.fact_rows)
        load_s = time.perf_counter() - t0
        conn.execute("SELECT count(*) FROM bj_dim WHERE id = 0").fetchall()  # the index is current
        results = {}
        for name, sql in QUERIES.items():
            per = {}
            answers = {}
            for dim in ("bj_dim", "bj_dim_copy"):
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    answers[dim] = conn.execute(sql.format(dim=dim)).fetchall()
                    times.append((time.perf_counter() - t0) * 1000)
                per["shared_index" if dim == "bj_dim" else "unindexed_copy"] = {
                    "median_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1),
                    "max_ms": round(max(times), 1)}
            assert answers["bj_dim"] == answers["bj_dim_copy"], name
            results[name] = per
            print(name, json.dumps(per))
        out = {"dim_rows": args.dim_rows, "fact_rows": args.fact_rows, "repeat": args.repeat,
               "load_s": round(load_s, 1), "machine": platform.machine(), "results": results}
        if args.views:
            out["views"] = _views(conn, args.views, args.pid, args.repeat)
        for t in ("bj_fact", "bj_dim", "bj_dim_copy"):
            conn.execute(f"DROP TABLE {t} CASCADE")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
