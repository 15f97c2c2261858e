"""Client helpers: the real psql binary, psycopg 3 and asyncpg connections.

Every helper takes anything with `host`, `port` (and optionally `dsn`): a SlipstreamServer or
a PgOracle.

    psql(server, "SELECT 1, 'a'")                  # '1|a'
    with psycopg_connect(server) as conn: ...
    conn = await asyncpg_connect(server)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import asyncpg
import psycopg

PSQL_TIMEOUT_S = 120


class PsqlError(RuntimeError):
    def __init__(self, returncode: int, stderr: str):
        super().__init__(f"psql exited {returncode}: {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


def psql_argv(server: Any, *extra: str, user: str = "slipstream",
              database: str = "slipstream") -> list[str]:
    binary = shutil.which("psql") or "psql"
    return [binary, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", server.host,
            "-p", str(server.port), "-U", user, "-d", database, *extra]


def psql(server: Any, sql: str, *args: str, user: str = "slipstream",
         database: str = "slipstream", timeout: float = PSQL_TIMEOUT_S) -> str:
    """Run `sql` with the real psql (unaligned, tuples only); returns stdout without the final
    newline. Extra `args` go to psql before -c. Raises PsqlError on a non-zero exit."""
    argv = psql_argv(server, *args, "-c", sql, user=user, database=database)
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL,
                            env={**os.environ, "PGCONNECT_TIMEOUT": "10"})
    if result.returncode != 0:
        raise PsqlError(result.returncode, result.stderr)
    return result.stdout.rstrip("\n")


def psycopg_connect(server: Any, autocommit: bool = True, **kwargs: Any) -> psycopg.Connection:
    return psycopg.connect(server.dsn, autocommit=autocommit, connect_timeout=10, **kwargs)


async def asyncpg_connect(server: Any, **kwargs: Any) -> asyncpg.Connection:
    # statement_cache_size=0 keeps every test's statements independent of earlier DDL.
    kwargs.setdefault("statement_cache_size", 0)
    return await asyncpg.connect(server.dsn, timeout=30, **kwargs)
