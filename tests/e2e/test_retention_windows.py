"""RETENTION WINDOW over real sockets: a webhook source and a COUNTER load generator whose rows
leave a window after they arrived (one to two windows: storage/sources/retention.py), seen by a
materialized view over them like deletes; the statements that refuse it say why."""

from __future__ import annotations

import json
import time

import psycopg
import pytest

from tests.e2e.test_webhook_sources import post
from tests.support.clients import psycopg_connect
from tests.support.sources import wait_for

pytestmark = pytest.mark.e2e

WINDOW_S = 2


def test_webhook_rows_leave_after_the_window(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        # Each batch is one request (a JSON array: one write, one timestamp), so a pass's cut
        # never falls inside a batch: a pass retracts a whole batch or none of it.
        conn.execute(f"CREATE SOURCE {p}w FROM WEBHOOK BODY FORMAT JSON ARRAY WITH (RETENTION WINDOW = '{WINDOW_S}s')")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}wv AS SELECT count(*) AS n, sum((body->>'v')::int) AS s FROM {p}w")
        try:
            path = f"/api/webhook/slipstream/public/{p}w"
            assert post(slipstream, path, json.dumps([{"v": i} for i in range(5)]).encode())[0] == 200
            start = time.monotonic()
            assert conn.execute(f"SELECT n, s FROM {p}wv").fetchone() == (5, 10)
            # A second batch a little later: it leaves after the first one.
            time.sleep(WINDOW_S / 2)
            assert post(slipstream, path, json.dumps([{"v": 100}] * 3).encode())[0] == 200
            wait_for(conn, f"SELECT n FROM {p}wv", lambda n: n == 3, deadline_s=4 * WINDOW_S + 10)
            first_gone = time.monotonic() - start
            assert conn.execute(f"SELECT n, s FROM {p}wv").fetchone() == (3, 300)
            assert first_gone >= WINDOW_S * 0.9  # not before the window
            wait_for(conn, f"SELECT count(*) FROM {p}w", lambda n: n == 0, deadline_s=4 * WINDOW_S + 10)
            assert conn.execute(f"SELECT n, s FROM {p}wv").fetchone() == (0, None)
            # Rows arriving later are kept for their own window.
            assert post(slipstream, path, json.dumps([{"v": 7}]).encode())[0] == 200
            assert conn.execute(f"SELECT n, s FROM {p}wv").fetchone() == (1, 7)
        finally:
            conn.execute(f"DROP SOURCE {p}w CASCADE")


def test_counter_keeps_only_its_recent_values(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SOURCE {p}c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '200ms') "
                     f"WITH (RETENTION WINDOW '1s')")
        try:
            # Past two windows, the counter keeps climbing while the oldest values leave: never
            # more than about two windows' worth (10 ticks each), always the latest ones.
            wait_for(conn, f"SELECT max(counter) FROM {p}c", lambda m: m is not None and m >= 25, deadline_s=30)
            for _ in range(5):
                lo, hi, n = conn.execute(f"SELECT min(counter), max(counter), count(*) FROM {p}c").fetchone()
                assert lo > 1 and n == hi - lo + 1 and n <= 25, (lo, hi, n)
                time.sleep(0.3)
        finally:
            conn.execute(f"DROP SOURCE {p}c CASCADE")


def test_retention_window_errors(slipstream, unique_prefix):
    p = unique_prefix
    cases = [
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR COUNTER WITH (RETAIN HISTORY FOR '1h')", "0A000"),
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR COUNTER (MAX CARDINALITY 5) WITH (RETENTION WINDOW '1h')", "0A000"),
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR MARKETING FOR ALL TABLES WITH (RETENTION WINDOW '1h')", "0A000"),
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR COUNTER WITH (RETENTION WINDOW '0s')", "22023"),
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR COUNTER WITH (RETENTION WINDOW 'soon')", "22007"),
        (f"CREATE SOURCE {p}a FROM LOAD GENERATOR COUNTER WITH (COLOR 'blue')", "0A000"),
        (f"CREATE SOURCE {p}a FROM WEBHOOK BODY FORMAT TEXT WITH (RETENTION WINDOW '1h'", "42601"),
    ]
    with psycopg_connect(slipstream) as conn:
        for sql, code in cases:
            with pytest.raises(psycopg.Error) as info:
                conn.execute(sql)
            assert info.value.sqlstate == code, (sql, info.value.sqlstate, str(info.value))
        assert conn.execute(f"SELECT count(*) FROM mz_sources WHERE name LIKE '{p}%'").fetchone()[0] == 0
