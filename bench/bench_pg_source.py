"""Ingestion throughput and lag of a PostgreSQL (CDC) source, against a real upstream.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_pg_source.py [snapshot_rows] [stream_rows] [lag_samples]

Starts a PostgreSQL 15 with wal_level=logical (tests/support/pg_upstream.py) and a Slipstream
server, each with its own data directory, then measures:

* snapshot: `snapshot_rows` rows (5 columns: int, int, numeric, text, timestamptz) loaded
  upstream before CREATE SOURCE; the time from CREATE SOURCE until the progress LSN is set, and
  rows/s;
* streaming: `stream_rows` rows inserted upstream in transactions of 1,000 rows by one writer
  (then half of them updated, in transactions of 1,000 rows: an update is two row updates), the
  time from the first upstream commit until the progress LSN reaches the upstream's LSN, and
  rows/s (row updates applied per second; the upstream writer's own time is reported too);
* lag: `lag_samples` single-row transactions 50 ms apart; for each, the time from the upstream
  COMMIT returning to the row being visible to a SELECT in Slipstream (polled every 2 ms).

Results go to bench/results/pg_source/.
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

from tests.support.pg_upstream import PgUpstream  # noqa: E402
from tests.support.slipstream_server import SlipstreamServer  # noqa: E402


def upstream_lsn(up) -> int:
    return int(up.execute("SELECT pg_current_wal_lsn() - '0/0'").fetchone()[0])


def wait_lsn(ss, target: int, timeout: float = 600) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        row = ss.execute("SELECT max(lsn) FROM bench_progress").fetchone()
        if row[0] is not None and row[0] >= target:
            return time.monotonic()
        time.sleep(0.01)
    raise TimeoutError(f"progress did not reach {target}")


def main() -> None:
    snapshot_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    stream_rows = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-source-"))
    pg = PgUpstream.start()
    server = None
    try:
        up = psycopg.connect(pg.dsn, autocommit=True)
        up.execute("CREATE TABLE events (id int, k int, amount numeric(12,2), note text, at timestamptz)")
        up.execute("ALTER TABLE events REPLICA IDENTITY FULL")
        up.execute("CREATE TABLE pings (id int, at timestamptz)")
        up.execute("ALTER TABLE pings REPLICA IDENTITY FULL")
        up.execute("CREATE PUBLICATION pub FOR TABLE events, pings")
        up.execute("INSERT INTO events SELECT i, i %% 100, i / 7.0, 'note ' || i, now() "
                   "FROM generate_series(1, %s) i", (snapshot_rows,))
        server = SlipstreamServer.start(data_dir=tmp / "data", log_file=tmp / "server.log", workers=1)
        ss = psycopg.connect(server.dsn, autocommit=True)
        ss.execute(f"CREATE CONNECTION pg TO POSTGRES (HOST '{pg.host}', PORT {pg.port}, USER '{pg.user}', "
                   f"DATABASE 'postgres')")
        target = upstream_lsn(up)
        t0 = time.monotonic()
        ss.execute("CREATE SOURCE bench FROM POSTGRES CONNECTION pg (PUBLICATION 'pub') FOR ALL TABLES")
        snapshot_s = wait_lsn(ss, 1) - t0
        assert ss.execute("SELECT count(*) FROM events").fetchone()[0] == snapshot_rows
        wait_lsn(ss, target)

        # Streaming: inserts then updates, 1,000 rows per upstream transaction.
        base = snapshot_rows
        t0 = time.monotonic()
        for start in range(0, stream_rows, 1000):
            n = min(1000, stream_rows - start)
            up.execute("INSERT INTO events SELECT i, i %% 100, i / 7.0, 'note ' || i, now() "
                       "FROM generate_series(%s, %s) i", (base + start + 1, base + start + n))
        half = stream_rows // 2
        for start in range(0, half, 1000):
            up.execute("UPDATE events SET amount = amount + 1 WHERE id > %s AND id <= %s",
                       (base + start, base + min(start + 1000, half)))
        written = time.monotonic()
        done = wait_lsn(ss, upstream_lsn(up))
        stream_s = done - t0
        row_updates = stream_rows + 2 * half
        assert ss.execute("SELECT count(*) FROM events").fetchone()[0] == snapshot_rows + stream_rows

        # Lag: one row per transaction, visible when?
        lags = []
        for i in range(samples):
            up.execute("INSERT INTO pings VALUES (%s, now())", (i,))
            committed = time.monotonic()
            while not ss.execute("SELECT count(*) FROM pings WHERE id = %s", (i,)).fetchone()[0]:
                time.sleep(0.002)
            lags.append((time.monotonic() - committed) * 1000)
            time.sleep(0.05)
        stats = ss.execute("SELECT s.updates_committed, s.messages_received, s.bytes_received "
                           "FROM mz_internal.mz_source_statistics s JOIN mz_sources m ON m.id = s.id "
                           "WHERE m.name = 'bench'").fetchone()
        lags.sort()
        result = {
            "machine": platform.platform(), "python": platform.python_version(),
            "snapshot": {"rows": snapshot_rows, "seconds": round(snapshot_s, 2),
                         "rows_per_s": round(snapshot_rows / snapshot_s)},
            "streaming": {"rows_inserted": stream_rows, "rows_updated": half, "row_updates": row_updates,
                          "transactions": -(-stream_rows // 1000) + -(-half // 1000),
                          "upstream_write_seconds": round(written - t0, 2),
                          "seconds_to_caught_up": round(stream_s, 2),
                          "row_updates_per_s": round(row_updates / stream_s)},
            "lag_ms": {"samples": samples, "p50": round(statistics.median(lags), 1),
                       "p95": round(lags[int(0.95 * (len(lags) - 1))], 1), "max": round(lags[-1], 1)},
            "source_statistics": {"updates_committed": stats[0], "messages_received": stats[1],
                                  "bytes_received": stats[2]},
        }
        out = Path(__file__).resolve().parent / "results" / "pg_source"
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"pg_source_{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
        print(f"written to {path}")
    finally:
        if server is not None:
            server.stop()
        pg.stop()


if __name__ == "__main__":
    main()
