"""Consensus: a linearizable map from key to a versioned value, changed only by compare-and-set.

Each shard's state lives under one key; every change writes version `seqno + 1` only if the
current head is still `seqno`, so concurrent writers serialize and exactly one wins.
`SqliteConsensus` is the embedded default (WAL, synchronous=FULL); a PostgreSQL implementation
of the same protocol serves the shared deployment.

A compare-and-set may carry *parts* (small blobs) that it writes in the same transaction: a
table write's part then becomes durable with the state that names it, in one fsync instead of
a file's fsync, its directory's and the state's (~1.5 ms of a 100-row COMMIT under load).
They are read, listed and deleted here like blob storage's (`part`, `part_keys`, `delete_parts`).

>>> import tempfile, pathlib
>>> c = SqliteConsensus(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
>>> c.compare_and_set("k", None, VersionedData(1, b"a")), c.compare_and_set("k", None, VersionedData(1, b"b"))
(True, False)
>>> c.head("k")
VersionedData(seqno=1, data=b'a')
>>> c.compare_and_set("k", 1, VersionedData(2, b"b"), {"db/s1/p": b"rows"}), c.part("db/s1/p")
(True, b'rows')
>>> c.compare_and_set("k", 1, VersionedData(2, b"c"), {"db/s1/q": b"lost"}), c.part("db/s1/q")
(False, None)
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class VersionedData:
    seqno: int
    data: bytes


@runtime_checkable
class Consensus(Protocol):
    def head(self, key: str) -> VersionedData | None:
        """The latest version of `key`, or None if it was never written."""

    def compare_and_set(self, key: str, expected: int | None, new: VersionedData,
                        parts: Mapping[str, bytes] | None = None) -> bool:
        """Write `new` iff the head's seqno is `expected` (None: the key must not exist) and
        `new.seqno > expected`, and with it `parts` (key -> bytes). Returns whether the write
        happened."""

    def part(self, key: str) -> bytes | None:
        """A part written by a compare-and-set, or None (never written, or deleted)."""

    def part_keys(self, prefix: str) -> list[str]:
        """The keys of the parts starting with `prefix`."""

    def delete_parts(self, keys: Iterable[str]) -> None:
        """Delete parts (those absent are skipped), in one transaction."""

    def scan(self, key_prefix: str) -> list[str]:
        """All keys starting with `key_prefix`."""

    def truncate(self, key: str, seqno: int) -> int:
        """Drop versions older than `seqno` (never the head). Returns how many were dropped."""


class SqliteConsensus:
    """Consensus in one SQLite file. One connection guarded by a lock makes it thread-safe;
    several processes (or clients) on the same file serialize through SQLite's own locking."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # isolation_level=None: we issue BEGIN ourselves so the CAS read+write is one transaction.
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS consensus ("
            " key TEXT NOT NULL, seqno INTEGER NOT NULL, data BLOB NOT NULL,"
            " PRIMARY KEY (key, seqno))"
        )
        self._conn.execute("CREATE TABLE IF NOT EXISTS parts (key TEXT PRIMARY KEY, data BLOB NOT NULL)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def head(self, key: str) -> VersionedData | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT seqno, data FROM consensus WHERE key = ? ORDER BY seqno DESC LIMIT 1", (key,)
            ).fetchone()
        return None if row is None else VersionedData(row[0], bytes(row[1]))

    def compare_and_set(self, key: str, expected: int | None, new: VersionedData,
                        parts: Mapping[str, bytes] | None = None) -> bool:
        if expected is not None and new.seqno <= expected:
            raise ValueError(f"new seqno {new.seqno} must be greater than expected {expected}")
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")  # take the write lock before reading the head
            try:
                row = conn.execute("SELECT max(seqno) FROM consensus WHERE key = ?", (key,)).fetchone()
                if row[0] != expected:
                    conn.execute("ROLLBACK")
                    return False
                conn.execute("INSERT INTO consensus (key, seqno, data) VALUES (?, ?, ?)",
                             (key, new.seqno, new.data))
                if parts:
                    conn.executemany("INSERT OR REPLACE INTO parts (key, data) VALUES (?, ?)", parts.items())
                conn.execute("COMMIT")
                return True
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def part(self, key: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute("SELECT data FROM parts WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def part_keys(self, prefix: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT key FROM parts WHERE substr(key, 1, ?) = ? ORDER BY key",
                                      (len(prefix), prefix)).fetchall()
        return [r[0] for r in rows]

    def delete_parts(self, keys: Iterable[str]) -> None:
        keys = [(k,) for k in keys]
        if not keys:
            return
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("DELETE FROM parts WHERE key = ?", keys)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def scan(self, key_prefix: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT key FROM consensus WHERE substr(key, 1, ?) = ? ORDER BY key",
                (len(key_prefix), key_prefix),
            ).fetchall()
        return [r[0] for r in rows]

    def truncate(self, key: str, seqno: int) -> int:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                head = conn.execute("SELECT max(seqno) FROM consensus WHERE key = ?", (key,)).fetchone()[0]
                if head is None or seqno > head:
                    raise ValueError(f"cannot truncate {key!r} to {seqno}: head is {head}")
                cur = conn.execute("DELETE FROM consensus WHERE key = ? AND seqno < ?", (key, seqno))
                conn.execute("COMMIT")
                return cur.rowcount
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
