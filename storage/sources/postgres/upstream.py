"""Connecting to the upstream PostgreSQL of a connection: the parameters (with the secret's
value), ordinary asyncpg connections (catalog queries, the snapshot), and the errors users see.

Every upstream session gets replication.SESSION_SETTINGS, so values print in the one text form
the source's decoding reads (ISO dates, UTC, full float precision, hex bytea).
"""

from __future__ import annotations

import asyncio

import asyncpg

from dataflow.errors import SqlError
from storage.sources.postgres.replication import SESSION_SETTINGS, ConnectParams, UpstreamError

CONNECTION_FAILURE = "08001"  # sqlclient_unable_to_establish_sqlconnection
CONNECT_TIMEOUT_S = 10.0


def connect_params(catalog, connection) -> ConnectParams:
    """The parameters of a catalog connection (catalog/secrets.py), its secret resolved."""
    o = connection.options
    secret = o.get("password_secret")
    password = catalog.secrets.secret_value(secret) if secret else None
    return ConnectParams(o["host"], int(o.get("port", 5432)), o["user"], password,
                         o.get("database", "postgres"), CONNECT_TIMEOUT_S)


async def connect(params: ConnectParams) -> asyncpg.Connection:
    """An ordinary session (not replication) with the canonical settings."""
    settings = {k: v for k, v in SESSION_SETTINGS.items() if k != "client_encoding"}
    return await asyncpg.connect(host=params.host, port=params.port, user=params.user,
                                 password=params.password, database=params.database,
                                 timeout=params.connect_timeout, ssl=False,
                                 server_settings={**settings, "application_name": "slipstream"})


def user_error(params: ConnectParams, e: BaseException, connecting: bool = True) -> SqlError:
    """What a failure to reach or use the upstream looks like to the user: 08001 with the
    upstream's own message (never the secret)."""
    if isinstance(e, SqlError):
        return e
    if isinstance(e, asyncio.TimeoutError):
        text = "timed out"
    elif isinstance(e, (asyncpg.PostgresError, UpstreamError)):
        text = str(e)
    elif isinstance(e, OSError):
        text = e.strerror or str(e)
    else:
        text = str(e) or type(e).__name__
    where = f'PostgreSQL at {params.host}:{params.port} as "{params.user}"'
    if not connecting:
        return SqlError(CONNECTION_FAILURE, f"replication from {where} failed: {text}")
    return SqlError(CONNECTION_FAILURE, f"cannot connect to {where}: {text}")


async def validate(params: ConnectParams) -> None:
    """CREATE CONNECTION's check (as Materialize validates by default): log in and run a query."""
    try:
        conn = await connect(params)
    except BaseException as e:  # noqa: BLE001 - reported to the user
        if isinstance(e, asyncio.CancelledError):
            raise
        raise user_error(params, e) from None
    try:
        await conn.fetchval("SELECT 1")
    finally:
        await conn.close()
