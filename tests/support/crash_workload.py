"""A concurrent multi-table transfer workload to crash a server under, and its checks.

Used by tests/e2e/test_crash_atomic_commits.py (a few kills) and scripts/crash_soak (many).

Schema: accounts split over two tables (`acct_a` ids 0..A-1, `acct_b` ids A..2A-1, balances
starting at 0), a log `transfers (id, src, dst, amount)`, and materialized views `balances` (both account tables),
`total` (the sum and count of all balances) and `transfer_stats` (count and sum of the log). A transfer is one
explicit transaction over three tables:

    BEGIN; UPDATE acct_x SET balance = balance - amt WHERE id = src;
           UPDATE acct_y SET balance = balance + amt WHERE id = dst;
           INSERT INTO transfers VALUES (id, src, dst, amt); COMMIT

Writers run in threads and record each transfer as *acknowledged* (COMMIT returned), *in doubt*
(COMMIT sent, no answer: the server died) or *not committed* (died before COMMIT was sent). A
subscriber thread follows `SUBSCRIBE balances WITH (PROGRESS)` and checks SUM(balance) = 0 (and
one row per account) at every timestamp it reports. After each restart `check_consistency` verifies: every acknowledged
transfer present with its amount, no not-committed one present, every account's balance equal
to its recomputation from the log (a transfer half-present would break this), and the views equal
to recomputation from the tables.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import psycopg

ACCOUNTS_PER_TABLE = 5


@dataclass
class Ledger:
    acknowledged: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # id -> (src, dst, amt)
    in_doubt: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    not_committed: set[int] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)  # unexpected errors while the server was up
    subscribe_checks: int = 0  # timestamps at which the subscriber checked the invariant
    subscribe_violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def table_of(account: int) -> str:
    return "acct_a" if account < ACCOUNTS_PER_TABLE else "acct_b"


def create_schema(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for t, base in (("acct_a", 0), ("acct_b", ACCOUNTS_PER_TABLE)):
            c.execute(f"CREATE TABLE {t} (id int NOT NULL, balance bigint NOT NULL)")
            c.execute(f"CREATE INDEX {t}_id ON {t} (id)")
            values = ", ".join(f"({base + i}, 0)" for i in range(ACCOUNTS_PER_TABLE))
            c.execute(f"INSERT INTO {t} VALUES {values}")
        c.execute("CREATE TABLE transfers (id bigint NOT NULL, src int, dst int, amount bigint)")
        c.execute("CREATE MATERIALIZED VIEW balances AS "
                  "SELECT id, balance FROM acct_a UNION ALL SELECT id, balance FROM acct_b")
        c.execute("CREATE MATERIALIZED VIEW total AS SELECT sum(balance) AS s, count(*) AS n FROM balances")
        c.execute("CREATE MATERIALIZED VIEW transfer_stats AS "
                  "SELECT count(*) AS n, coalesce(sum(amount), 0) AS total FROM transfers")


class Workload:
    """Writer threads plus a subscriber thread against one running server; `stop()` joins them
    (call it after killing the server, or to end a phase cleanly)."""

    def __init__(self, dsn: str, ledger: Ledger, writers: int, seed: int, id_base: int) -> None:
        self.dsn = dsn
        self.ledger = ledger
        self.stopping = threading.Event()
        self.rng = random.Random(seed)
        self._next_id = id_base
        self._id_lock = threading.Lock()
        self.threads = [threading.Thread(target=self._writer, args=(seed * 1000 + i,), daemon=True)
                        for i in range(writers)]
        self.threads.append(threading.Thread(target=self._subscriber, daemon=True))
        self.subscribed = threading.Event()

    def start(self) -> "Workload":
        for t in self.threads:
            t.start()
        return self

    def stop(self, timeout: float = 60) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(timeout)
            assert not t.is_alive(), "a workload thread did not stop"

    def _new_id(self) -> int:
        with self._id_lock:
            self._next_id += 1
            return self._next_id

    def _writer(self, seed: int) -> None:
        rng = random.Random(seed)
        conn = None
        while not self.stopping.is_set():
            try:
                if conn is None:
                    conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=5)
                self._transfer(conn, rng)
            except psycopg.OperationalError:
                conn = None  # the server went away; the phase ends when the test stops us
                time.sleep(0.2)
            except psycopg.Error as e:
                if not self.stopping.is_set():
                    with self.ledger.lock:
                        self.ledger.errors.append(f"{type(e).__name__}: {e}")
                try:
                    conn.execute("ROLLBACK")
                except Exception:
                    conn = None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def _transfer(self, conn: psycopg.Connection, rng: random.Random) -> None:
        tid = self._new_id()
        # From one table to the other (or within one), so most transfers span three tables.
        src, dst = rng.sample(range(2 * ACCOUNTS_PER_TABLE), 2)
        amount = rng.randint(1, 100)
        commit_sent = False
        try:
            conn.execute("BEGIN")
            conn.execute(f"UPDATE {table_of(src)} SET balance = balance - %s WHERE id = %s", (amount, src))
            conn.execute(f"UPDATE {table_of(dst)} SET balance = balance + %s WHERE id = %s", (amount, dst))
            conn.execute("INSERT INTO transfers VALUES (%s, %s, %s, %s)", (tid, src, dst, amount))
            commit_sent = True
            conn.execute("COMMIT")
        except BaseException:
            with self.ledger.lock:
                if commit_sent:
                    self.ledger.in_doubt[tid] = (src, dst, amount)
                else:
                    self.ledger.not_committed.add(tid)
            raise
        with self.ledger.lock:
            self.ledger.acknowledged[tid] = (src, dst, amount)

    def _subscriber(self) -> None:
        """SUBSCRIBE balances WITH (PROGRESS): at every complete timestamp, SUM(balance) = 0
        over all accounts (each transfer moves two rows at one timestamp)."""
        while not self.stopping.is_set():
            try:
                with psycopg.connect(self.dsn, connect_timeout=5) as conn:
                    conn.execute("BEGIN")
                    conn.execute("DECLARE c CURSOR FOR SUBSCRIBE balances WITH (PROGRESS)")
                    self.subscribed.set()
                    counts: Counter = Counter()
                    pending_ts = None  # the timestamp whose rows are being received
                    while not self.stopping.is_set():
                        for row in conn.execute("FETCH ALL c WITH (timeout = '0.5s')").fetchall():
                            ts = int(row[0])
                            if pending_ts is not None and ts > pending_ts:
                                self._check_total(counts, pending_ts)
                                pending_ts = None
                            if row[1]:  # progress: everything before ts is complete
                                continue
                            counts[tuple(row[3:])] += int(row[2])
                            pending_ts = ts
            except psycopg.Error:
                time.sleep(0.2)  # the server died; subscribe again once it is back

    def _check_total(self, counts: Counter, ts: int) -> None:
        rows = {r: n for r, n in counts.items() if n}
        total = sum(r[1] * n for r, n in rows.items())
        ids = sorted(r[0] for r, n in rows.items() for _ in range(n))
        with self.ledger.lock:
            self.ledger.subscribe_checks += 1
            if total != 0 or ids != list(range(2 * ACCOUNTS_PER_TABLE)):
                self.ledger.subscribe_violations.append(f"at {ts}: sum {total}, rows {rows}")


def check_consistency(dsn: str, ledger: Ledger) -> dict:
    """The checks after a restart (see the module docstring). Returns a few figures."""
    with psycopg.connect(dsn, autocommit=True) as c:
        transfers = {r[0]: (r[1], r[2], r[3])
                     for r in c.execute("SELECT id, src, dst, amount FROM transfers").fetchall()}
        balances = dict(c.execute("SELECT id, balance FROM acct_a UNION ALL SELECT id, balance FROM acct_b"
                                  ).fetchall())
        total = c.execute("SELECT s, n FROM total").fetchall()
        view_balances = dict(c.execute("SELECT id, balance FROM balances").fetchall())
        stats = c.execute("SELECT n, total FROM transfer_stats").fetchall()
        recomputed_stats = c.execute("SELECT count(*), coalesce(sum(amount), 0) FROM transfers").fetchall()
    n_rows = len(transfers)
    with ledger.lock:
        acked = dict(ledger.acknowledged)
        in_doubt = dict(ledger.in_doubt)
        not_committed = set(ledger.not_committed)
    missing = [t for t, v in acked.items() if transfers.get(t) != v]
    assert not missing, f"acknowledged transfers lost or changed: {missing[:10]}"
    ghosts = [t for t in transfers if t not in acked and t not in in_doubt]
    assert not ghosts, f"transfers present that were never committed: {ghosts[:10]}"
    assert not (not_committed & set(transfers)), "a transaction that never sent COMMIT is present"
    expected = Counter({a: 0 for a in range(2 * ACCOUNTS_PER_TABLE)})
    for src, dst, amount in transfers.values():
        expected[src] -= amount
        expected[dst] += amount
    assert balances == dict(expected), f"balances differ from the transfer log: {balances} vs {dict(expected)}"
    assert view_balances == balances, f"view balances = {view_balances}, tables {balances}"
    assert total == [(0, 2 * ACCOUNTS_PER_TABLE)], f"view total = {total}"
    assert stats == recomputed_stats, f"view transfer_stats = {stats}, recomputed {recomputed_stats}"
    return {"transfers": n_rows, "acknowledged": len(acked),
            "in_doubt_present": sum(1 for t in in_doubt if t in transfers),
            "in_doubt_absent": sum(1 for t in in_doubt if t not in transfers)}


# -- killing and restarting ---------------------------------------------------------------------

DELAY_ENV = "SLIPSTREAM_TXN_APPLY_DELAY_MS"
# During random kills each shard application of a multi-table commit is delayed this long
# (fault injection, storage/persist/txn.py), so that many kills land between a transaction's
# commit point and its last application.
RANDOM_PHASE_DELAY_MS = "40"


def process_group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def kill_tree(server) -> None:
    """SIGKILL the server's whole process group (environmentd, Spark's JVM, its Python
    workers) and wait until none of it is left."""
    pgid = server.process.pid
    server.kill(signal.SIGKILL)
    deadline = time.monotonic() + 30
    while not process_group_gone(pgid):
        assert time.monotonic() < deadline, "processes of the killed server are still alive"
        time.sleep(0.1)


def recoveries(server) -> int:
    """How many start-ups finished a transaction that a kill left partly applied."""
    return server.log_file.read_text(errors="replace").count("from the transaction WAL")


def random_kills(server, ledger: Ledger, kills: int, rng: random.Random, id_base: int,
                 report=print, min_s: float = 1.0, max_s: float = 3.0) -> dict:
    """Run the workload, SIGKILL the tree after a random time, restart, check; `kills` times."""
    figures: dict = {}
    for k in range(kills):
        started = time.monotonic()
        work = Workload(server.dsn, ledger, writers=3, seed=rng.randrange(1 << 30),
                        id_base=id_base + (k + 1) * 10_000_000).start()
        assert work.subscribed.wait(120), "the subscriber did not start"
        time.sleep(rng.uniform(min_s, max_s))
        kill_tree(server)
        work.stop()
        server.restart()
        figures = check_consistency(server.dsn, ledger)
        assert not ledger.subscribe_violations, ledger.subscribe_violations[:5]
        report(f"kill {k + 1}/{kills} ({time.monotonic() - started:.0f} s): {figures}, "
               f"recoveries {recoveries(server)}, subscribe checks {ledger.subscribe_checks}")
    return figures
