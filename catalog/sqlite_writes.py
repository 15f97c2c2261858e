"""One SQLite transaction for a list of statements: all of them or none (the catalog's small
stores, roles and privileges, each keep a SQLite file in the data directory)."""

from __future__ import annotations

import sqlite3


def write_atomically(conn: sqlite3.Connection, statements: list[tuple[str, tuple]]) -> None:
    """Run `statements` ((sql, args) pairs) in one IMMEDIATE transaction; roll back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for sql, args in statements:
            conn.execute(sql, args)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
