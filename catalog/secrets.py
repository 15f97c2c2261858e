"""Secrets and connections, stored durably in the catalog database (CREATE SECRET / CONNECTION).

A *secret* is a named value (a password) that connections refer to by name; its value is kept
only here and read only by the code that connects upstream: no catalog relation, SHOW command
or error message shows it (mz_secrets lists names only). A *connection* is a named set of
upstream connection options (today `TO POSTGRES`: HOST, PORT, USER, PASSWORD SECRET, DATABASE)
that sources use. Both live in a schema, like Materialize's, and get ids from the catalog's id
counter (so mz_secrets.id / mz_connections.id never collide with relations' ids).

    store.create_secret("slipstream", "public", "pgpass", "s3cret", owner="slipstream")
    store.create_connection("slipstream", "public", "pg", "postgres",
                            {"host": "db", "port": 5432, "user": "repl", "password_secret": "u7",
                             "database": "shop"}, create_sql, owner="slipstream")

Each change is one SQLite transaction in the catalog's database (synchronous=FULL), so an
acknowledged CREATE / ALTER / DROP survives a crash.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Callable

from dataflow.errors import SqlError, SqlState


@dataclass(frozen=True)
class Secret:
    id: str
    oid: int
    database: str
    schema: str
    name: str
    owner: str

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


@dataclass(frozen=True)
class Connection:
    id: str
    oid: int
    database: str
    schema: str
    name: str
    type: str  # 'postgres'
    options: dict  # host, port, user, password_secret (a secret's id) or None, database
    create_sql: str
    owner: str

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


class SecretStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock,
                 next_id: Callable[[str], int]) -> None:
        self._conn = conn
        self._lock = lock
        self._next = next_id
        conn.execute("CREATE TABLE IF NOT EXISTS secrets (id TEXT PRIMARY KEY, oid INTEGER NOT NULL, "
                     "database TEXT NOT NULL, schema TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
                     "owner TEXT NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS connections (id TEXT PRIMARY KEY, oid INTEGER NOT NULL, "
                     "database TEXT NOT NULL, schema TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL, "
                     "options TEXT NOT NULL, create_sql TEXT NOT NULL, owner TEXT NOT NULL)")

    # -- reads ----------------------------------------------------------------------------------

    def secrets(self) -> list[Secret]:
        rows = self._conn.execute("SELECT id, oid, database, schema, name, owner FROM secrets ORDER BY oid")
        return [Secret(*r) for r in rows]

    def connections(self) -> list[Connection]:
        rows = self._conn.execute("SELECT id, oid, database, schema, name, type, options, create_sql, owner "
                                  "FROM connections ORDER BY oid")
        return [Connection(i, o, d, s, n, t, json.loads(opts), sql, own) for i, o, d, s, n, t, opts, sql, own in rows]

    def find_secret(self, database: str, schema: str, name: str) -> Secret | None:
        return next((s for s in self.secrets() if (s.database, s.schema, s.name) == (database, schema, name)), None)

    def find_connection(self, database: str, schema: str, name: str) -> Connection | None:
        return next((c for c in self.connections() if (c.database, c.schema, c.name) == (database, schema, name)),
                    None)

    def connection(self, id: str) -> Connection | None:
        return next((c for c in self.connections() if c.id == id), None)

    def secret_value(self, id: str) -> str:
        """The value of a secret, for the code that connects upstream (never shown to users)."""
        row = self._conn.execute("SELECT value FROM secrets WHERE id = ?", (id,)).fetchone()
        if row is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, "the secret of this connection no longer exists")
        return row[0]

    # -- writes ---------------------------------------------------------------------------------

    def _write(self, sql: str, args: tuple) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(sql, args)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def create_secret(self, database: str, schema: str, name: str, value: str, owner: str) -> Secret:
        with self._lock:
            if self.find_secret(database, schema, name) is not None:
                raise SqlError(SqlState.DUPLICATE_OBJECT, f'secret "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                secret = Secret(f"u{self._next('id')}", self._next("oid"), database, schema, name, owner)
                self._conn.execute("INSERT INTO secrets VALUES (?, ?, ?, ?, ?, ?, ?)",
                                   (secret.id, secret.oid, database, schema, name, value, owner))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return secret

    def alter_secret(self, id: str, value: str) -> None:
        with self._lock:
            self._write("UPDATE secrets SET value = ? WHERE id = ?", (value, id))

    def drop_secret(self, id: str) -> None:
        with self._lock:
            self._write("DELETE FROM secrets WHERE id = ?", (id,))

    def create_connection(self, database: str, schema: str, name: str, type: str, options: dict,
                          create_sql: str, owner: str) -> Connection:
        with self._lock:
            if self.find_connection(database, schema, name) is not None:
                raise SqlError(SqlState.DUPLICATE_OBJECT, f'connection "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                conn = Connection(f"u{self._next('id')}", self._next("oid"), database, schema, name, type,
                                  dict(options), create_sql, owner)
                self._conn.execute("INSERT INTO connections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                   (conn.id, conn.oid, database, schema, name, type, json.dumps(options),
                                    create_sql, owner))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return conn

    def drop_connection(self, id: str) -> None:
        with self._lock:
            self._write("DELETE FROM connections WHERE id = ?", (id,))
