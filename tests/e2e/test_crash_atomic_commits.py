"""Atomic multi-table commits under SIGKILL of the whole server process tree.

A concurrent workload of transfers (each an explicit transaction updating two account tables and
appending to a transfer log: three tables) runs while the server is killed with SIGKILL at random
points and restarted. After every restart: every acknowledged transaction is present and whole,
no transaction that never sent COMMIT is present, every account balance equals its recomputation
from the log (so no transaction is half-present), the materialized views equal recomputation, and
a SUBSCRIBE saw SUM(balance) = 0 at every timestamp it reported, before and after each crash
(tests/support/crash_workload.py). One deterministic kill plus SLIPSTREAM_CRASH_KILLS (4) random
ones; each restart costs a Spark start-up (10-25 s), which bounds how many fit in a test.

The first kill is deterministic: with the transaction WAL's fault-injection delay (1.5 s before
each shard is applied), the server is killed 2 s after a lone COMMIT reached its commit point (the
WAL record appears in consensus): the transaction is committed and applied to one table only. After the restart it must be whole, and the log must say
that recovery finished it. The random kills run with a shorter delay (40 ms per shard) so that
many of them land between a commit and its last application.

scripts/crash_soak runs the same for many more kills.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.support.crash_workload import (DELAY_ENV, RANDOM_PHASE_DELAY_MS, Ledger, Workload,
                                          check_consistency, create_schema, kill_tree, random_kills,
                                          recoveries)
from tests.support.slipstream_server import SlipstreamServer

pytestmark = pytest.mark.e2e

RANDOM_KILLS = int(os.environ.get("SLIPSTREAM_CRASH_KILLS", "4"))


def test_kill_between_commit_and_apply_is_recovered(tmp_path):
    ledger = Ledger()
    server = SlipstreamServer.start(data_dir=tmp_path / "data", log_file=tmp_path / "server.log",
                                    env={DELAY_ENV: "1500"})
    try:
        create_schema(server.dsn)
        # A lone transfer whose COMMIT is in flight when the server dies.
        conn = psycopg.connect(server.dsn, autocommit=True)
        conn.execute("BEGIN")
        conn.execute("UPDATE acct_a SET balance = balance - 5 WHERE id = 0")
        conn.execute("UPDATE acct_b SET balance = balance + 5 WHERE id = 7")
        conn.execute("INSERT INTO transfers VALUES (1, 0, 7, 5)")
        ledger.in_doubt[1] = (0, 7, 5)
        outcome: list = []
        committer = threading.Thread(target=lambda: outcome.append(_commit(conn)), daemon=True)
        committer.start()
        wait_for_commit_point(tmp_path / "data" / "persist" / "consensus.sqlite")
        time.sleep(2.0)  # applied to the first table (after 1.5 s), not yet to the second (3 s)
        kill_tree(server)
        committer.join(30)
        assert outcome and outcome[0] is not None, "COMMIT answered although the apply was delayed"
        server.env = {DELAY_ENV: RANDOM_PHASE_DELAY_MS}
        server.restart()
        assert recoveries(server) == 1, server.log_tail()
        figures = check_consistency(server.dsn, ledger)
        assert figures["in_doubt_present"] == 1, figures  # committed before the crash: whole

        # Random kills under the concurrent workload.
        rng = random.Random(int(os.environ.get("SLIPSTREAM_CRASH_SEED", "12")))
        random_kills(server, ledger, RANDOM_KILLS, rng, id_base=0)

        # And it keeps working after the last restart, with the subscriber checking again.
        checks_before = ledger.subscribe_checks
        work = Workload(server.dsn, ledger, writers=3, seed=99, id_base=999_000_000).start()
        assert work.subscribed.wait(60)
        time.sleep(2.0)
        work.stop()
        figures = check_consistency(server.dsn, ledger)
        assert ledger.subscribe_checks > checks_before
        assert not ledger.errors, ledger.errors[:5]
        assert not ledger.subscribe_violations, ledger.subscribe_violations[:5]
        assert figures["acknowledged"] > RANDOM_KILLS, figures
        print(f"final: {figures}, subscribe checks {ledger.subscribe_checks}, "
              f"recoveries {recoveries(server)}")
    finally:
        server.stop()


def wait_for_commit_point(consensus: Path, timeout: float = 60) -> None:
    """Until the transaction WAL record exists in consensus (read-only, beside the server)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        db = sqlite3.connect(f"file:{consensus}?mode=ro", uri=True, timeout=5)
        try:
            if db.execute("SELECT count(*) FROM consensus WHERE key = 'txns/wal'").fetchone()[0]:
                return
        except sqlite3.OperationalError:
            pass
        finally:
            db.close()
        time.sleep(0.05)
    raise AssertionError("the transaction never reached its commit point")


def _commit(conn: psycopg.Connection):
    try:
        conn.execute("COMMIT")
        return None
    except psycopg.Error as e:
        return e
