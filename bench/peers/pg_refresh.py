"""PostgreSQL 15 peers on a throw-away server (tests/support/pg_oracle.py: fsync off).

- `PgRefresh`: V1 and V2 as MATERIALIZED VIEWs, REFRESHed after every batch.
- `PgTriggers` (pg_triggers.py): summary tables kept by statement-level triggers.

Neither has a SUBSCRIBE, so freshness is reported as not applicable.
"""

from __future__ import annotations

from typing import Awaitable, Callable

import asyncpg
import pandas as pd

from bench.common.workload import V1_SQL, V2_SQL, ChangeBatch, Workload
from bench.peers import pgclient
from bench.peers.harness import NotSupported
from tests.support.pg_oracle import PgOracle

TABLES = """
CREATE TABLE customers (id bigint PRIMARY KEY, region text);
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint, amount bigint, status text);
"""


class PgBase:
    name = "pg"

    def __init__(self) -> None:
        self.pg: PgOracle | None = None
        self.conn: asyncpg.Connection | None = None

    async def start(self) -> None:
        self.pg = PgOracle.start()
        self.conn = await asyncpg.connect(self.pg.dsn)

    async def load_base(self, w: Workload) -> None:
        await self.conn.execute(TABLES)
        await pgclient.copy_csv(self.conn, "customers", w.customers())
        await pgclient.copy_csv(self.conn, "orders", w.orders())
        await self.conn.execute("ANALYZE customers; ANALYZE orders")

    async def write(self, batch: ChangeBatch) -> None:
        await pgclient.apply_batch(self.conn, batch)

    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        raise NotSupported("PostgreSQL has no SUBSCRIBE; the views are current when the writing "
                           "transaction (triggers) or the REFRESH commits")

    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return await pgclient.read_views(self.conn)

    def pids(self) -> list[int]:
        if self.pg is None:
            return []
        try:
            return [int((self.pg.data_dir / "postmaster.pid").read_text().split()[0])]
        except (OSError, ValueError, IndexError):
            return []

    async def stop(self) -> None:
        if self.conn is not None:
            self.conn.terminate()
        if self.pg is not None:
            self.pg.stop()


class PgRefresh(PgBase):
    name = "pg-refresh"

    async def hydrate(self) -> None:
        await self.conn.execute(f"CREATE MATERIALIZED VIEW v1 AS {V1_SQL}")
        await self.conn.execute(f"CREATE MATERIALIZED VIEW v2 AS {V2_SQL}")
        await self.conn.execute("CREATE INDEX ON v2 (customer_id)")

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)
        await self.conn.execute("REFRESH MATERIALIZED VIEW v1; REFRESH MATERIALIZED VIEW v2")
        await pgclient.read_current(self.conn, probe_customer)
