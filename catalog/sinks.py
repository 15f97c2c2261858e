"""Sinks (CREATE SINK ... INTO KAFKA), stored durably in the catalog database next to secrets and
connections. A sink is not a relation (nothing reads it), so it is not a CatalogItem: it has an
id and OID from the catalog's counters (mz_sinks.id never collides with relations' ids), the
relation it reads, the connection it writes through and its options, and `progress_ts`: the
timestamp up to which its updates were acknowledged by the broker.

    store.create_sink("slipstream", "public", "snk", "u12", "kafka",
                      {"connection": "u7", "topic": "out", "key": ["id"], "format": {...},
                       "envelope": "upsert"}, create_sql, owner="slipstream")

Each change is one SQLite transaction (synchronous=FULL), as for secrets.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Callable

from dataflow.errors import SqlError, SqlState


@dataclass(frozen=True)
class Sink:
    id: str
    oid: int
    database: str
    schema: str
    name: str
    relation: str  # the id of the relation it reads
    type: str  # 'kafka'
    options: dict  # connection (id), topic, key (column names) or None, format, envelope
    create_sql: str
    owner: str
    progress_ts: int = 0

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


class SinkStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock, next_id: Callable[[str], int]) -> None:
        self._conn = conn
        self._lock = lock
        self._next = next_id
        conn.execute("CREATE TABLE IF NOT EXISTS sinks (id TEXT PRIMARY KEY, oid INTEGER NOT NULL, "
                     "database TEXT NOT NULL, schema TEXT NOT NULL, name TEXT NOT NULL, relation TEXT NOT NULL, "
                     "type TEXT NOT NULL, options TEXT NOT NULL, create_sql TEXT NOT NULL, owner TEXT NOT NULL, "
                     "progress_ts INTEGER NOT NULL DEFAULT 0)")

    def sinks(self) -> list[Sink]:
        rows = self._conn.execute("SELECT id, oid, database, schema, name, relation, type, options, create_sql, owner, "
                                  "progress_ts FROM sinks ORDER BY oid")
        return [Sink(i, o, d, s, n, r, t, json.loads(opts), sql, own, p)
                for i, o, d, s, n, r, t, opts, sql, own, p in rows]

    def find(self, database: str, schema: str, name: str) -> Sink | None:
        return next((s for s in self.sinks() if (s.database, s.schema, s.name) == (database, schema, name)), None)

    def create_sink(self, database: str, schema: str, name: str, relation: str, type: str, options: dict,
                    create_sql: str, owner: str) -> Sink:
        with self._lock:
            if self.find(database, schema, name) is not None:
                raise SqlError(SqlState.DUPLICATE_OBJECT, f'sink "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                sink = Sink(f"u{self._next('id')}", self._next("oid"), database, schema, name, relation, type,
                            dict(options), create_sql, owner)
                self._conn.execute("INSERT INTO sinks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                                   (sink.id, sink.oid, database, schema, name, relation, type, json.dumps(options),
                                    create_sql, owner))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return sink

    def _write(self, sql: str, args: tuple) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(sql, args)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def set_progress(self, id: str, ts: int) -> None:
        self._write("UPDATE sinks SET progress_ts = ? WHERE id = ?", (ts, id))

    def drop_sink(self, id: str) -> None:
        self._write("DELETE FROM sinks WHERE id = ?", (id,))
