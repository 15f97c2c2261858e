"""Ingestion throughput and lag of the load-generator sources on a real server.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_sources.py [seconds] [tpch_scale_factor]

Starts a server with its own data directory, then for each generator creates a source with
TICK INTERVAL '1ms' (faster than one write per tick can go, so the ingestion task writes every
tick due by then in one write) and reads mz_internal.mz_source_statistics over `seconds`: updates
committed per second (rows/s, all subsources), ticks per second, and the lag (commit time minus
the due time of the newest committed tick) sampled every 0.5 s. Then the raw rate: a backlog of
200,000 ticks (AS OF) ingested in one write. TPCH is the time to ingest its snapshot at the
scale factor. Results go to bench/results/sources/.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg  # noqa: E402

from tests.support.slipstream_server import SlipstreamServer  # noqa: E402

STATS = ("SELECT s.updates_committed, s.offset_committed, s.lag_ms, s.bytes_received, t.status, t.error "
         "FROM mz_internal.mz_source_statistics s JOIN mz_internal.mz_source_statuses t ON s.id = t.id "
         "WHERE t.name = %s")


def stats(conn, name: str):
    return conn.execute(STATS, (name,)).fetchone()


def run_generator(conn, kind: str, seconds: float) -> dict:
    name = f"bench_{kind}"
    schema = f"bench_{kind}_s"
    conn.execute(f"CREATE SCHEMA {schema}")
    tables = "" if kind == "counter" else " FOR ALL TABLES"
    conn.execute(f"CREATE SOURCE {schema}.{name} FROM LOAD GENERATOR {kind.upper()} (TICK INTERVAL '1ms'){tables}")
    try:
        while stats(conn, name) is None or stats(conn, name)[1] == 0:
            time.sleep(0.05)
        rows0, ticks0 = stats(conn, name)[:2]
        t0 = time.monotonic()
        lags = []
        while time.monotonic() - t0 < seconds:
            time.sleep(0.5)
            lags.append(stats(conn, name)[2])
        rows1, ticks1, _, nbytes, status, error = stats(conn, name)
        elapsed = time.monotonic() - t0
        return {"generator": kind, "seconds": round(elapsed, 2), "rows_per_s": round((rows1 - rows0) / elapsed),
                "ticks_per_s": round((ticks1 - ticks0) / elapsed), "lag_ms_median": statistics.median(lags),
                "lag_ms_max": max(lags), "status": status, "error": error}
    finally:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def run_backlog(conn, kind: str, ticks: int) -> dict:
    """Raw ingestion rate: AS OF `ticks` makes the first write hold that many ticks at once
    (generation, the persist append and the replica's import of one large batch)."""
    name, schema = f"backlog_{kind}", f"backlog_{kind}_s"
    conn.execute(f"CREATE SCHEMA {schema}")
    tables = "" if kind == "counter" else " FOR ALL TABLES"
    t0 = time.monotonic()
    conn.execute(f"CREATE SOURCE {schema}.{name} FROM LOAD GENERATOR {kind.upper()} "
                 f"(TICK INTERVAL '1h', AS OF {ticks - 1}){tables}")
    try:
        while True:
            s = stats(conn, name)
            if s is not None and s[1] >= ticks:
                break
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
        return {"generator": kind, "backlog_ticks": ticks, "seconds": round(elapsed, 2), "rows": s[0],
                "rows_per_s": round(s[0] / elapsed), "bytes": s[3]}
    finally:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def run_tpch(conn, sf: float) -> dict:
    conn.execute("CREATE SCHEMA bench_tpch_s")
    t0 = time.monotonic()
    conn.execute(f"CREATE SOURCE bench_tpch_s.tpch FROM LOAD GENERATOR TPCH (SCALE FACTOR {sf}) FOR ALL TABLES")
    try:
        while True:
            s = stats(conn, "tpch")
            if s is not None and s[1] >= 1:
                break
            time.sleep(0.1)
        elapsed = time.monotonic() - t0
        lineitems = conn.execute("SELECT count(*) FROM bench_tpch_s.lineitem").fetchone()[0]
        return {"generator": "tpch", "scale_factor": sf, "snapshot_seconds": round(elapsed, 2),
                "rows": s[0], "rows_per_s": round(s[0] / elapsed), "lineitem": lineitems}
    finally:
        conn.execute("DROP SCHEMA bench_tpch_s CASCADE")


def main(seconds: float, sf: float) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-sources-") as d:
        server = SlipstreamServer.start(data_dir=Path(d) / "data", log_file=Path(d) / "server.log")
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                results = [run_generator(conn, k, seconds) for k in ("counter", "auction", "marketing")]
                results += [run_backlog(conn, k, 200_000) for k in ("counter", "auction", "marketing")]
                results.append(run_tpch(conn, sf))
        finally:
            server.stop()
    for r in results:
        print(json.dumps(r))
    out = Path(__file__).parent / "results" / "sources"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_sources.json").write_text(json.dumps({
        "machine": f"{platform.machine()} {platform.processor()} ({platform.system()})",
        "seconds": seconds, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0, float(sys.argv[2]) if len(sys.argv) > 2 else 0.1)
