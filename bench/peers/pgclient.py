"""Shared asyncpg plumbing for the systems that speak pgwire (Slipstream, PostgreSQL).

    await copy_csv(conn, "orders", table)        # an Arrow table through COPY ... FROM STDIN (csv)
    await apply_batch(conn, batch)                # DELETE old versions + COPY new ones, one txn
    v1 = frame(await conn.fetch("SELECT * FROM v1"))
"""

from __future__ import annotations

import io

import asyncpg
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from bench.common.workload import ChangeBatch


def csv_bytes(table: pa.Table) -> io.BytesIO:
    buf = io.BytesIO()
    pacsv.write_csv(table, buf, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    buf.seek(0)
    return buf


async def copy_csv(conn: asyncpg.Connection, name: str, table: pa.Table) -> None:
    # The bytes as an async iterable: asyncpg reads a file object through a thread pool (two
    # thread hops per COPY, ~0.2 ms of a 100-change write on two cores), whatever the server.
    data = csv_bytes(table).getvalue()

    async def chunks():
        for start in range(0, len(data), 1 << 20):
            yield data[start:start + (1 << 20)]
    await conn.copy_to_table(name, source=chunks(), format="csv")


async def apply_batch(conn: asyncpg.Connection, batch: ChangeBatch) -> None:
    """One transaction: remove the old versions (their ids as one array parameter), then COPY
    the new ones in."""
    async with conn.transaction():
        if batch.deletes.num_rows:
            await conn.execute("DELETE FROM orders WHERE id = ANY($1::bigint[])",
                               batch.deletes["id"].to_numpy().tolist())
        if batch.inserts.num_rows:
            await copy_csv(conn, "orders", batch.inserts)


async def read_current(conn: asyncpg.Connection, probe_customer: int) -> None:
    """The closed-loop read: all of V1 and V2's row for a customer the batch touched."""
    await conn.fetch("SELECT * FROM v1")
    await conn.fetch("SELECT * FROM v2 WHERE customer_id = $1", probe_customer)


def frame(records: list[asyncpg.Record]) -> pd.DataFrame:
    if not records:
        return pd.DataFrame()
    return pd.DataFrame([tuple(r) for r in records], columns=list(records[0].keys()))


async def read_views(conn: asyncpg.Connection) -> tuple[pd.DataFrame, pd.DataFrame]:
    return frame(await conn.fetch("SELECT * FROM v1")), frame(await conn.fetch("SELECT * FROM v2"))
