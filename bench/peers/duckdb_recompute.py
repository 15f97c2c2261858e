"""DuckDB (in-process): the base tables live in DuckDB; after every batch both views are
recomputed from scratch (CREATE OR REPLACE TABLE v AS <query>). No incremental maintenance and no
SUBSCRIBE. Memory is this process's RSS (it also holds the bench's workload arrays)."""

from __future__ import annotations

import os
from typing import Awaitable, Callable

import pandas as pd

from bench.common.workload import V1_SQL, V2_SQL, ChangeBatch, Workload
from bench.peers.harness import NotSupported


class DuckDBRecompute:
    name = "duckdb-recompute"

    def __init__(self) -> None:
        self.db = None

    async def start(self) -> None:
        import duckdb  # installed by bench/setup.sh, not by the project
        self.db = duckdb.connect(":memory:")

    async def load_base(self, w: Workload) -> None:
        customers, orders = w.customers(), w.orders()  # noqa: F841 (read by name below)
        self.db.execute("CREATE TABLE customers AS SELECT * FROM customers")
        self.db.execute("CREATE TABLE orders AS SELECT * FROM orders")

    def _recompute(self) -> None:
        self.db.execute(f"CREATE OR REPLACE TABLE v1 AS {V1_SQL}")
        self.db.execute(f"CREATE OR REPLACE TABLE v2 AS {V2_SQL}")

    async def hydrate(self) -> None:
        self._recompute()

    async def write(self, batch: ChangeBatch) -> None:
        deletes, inserts = batch.deletes, batch.inserts  # noqa: F841 (read by name below)
        self.db.execute("BEGIN")
        if deletes.num_rows:
            self.db.execute("DELETE FROM orders WHERE id IN (SELECT id FROM deletes)")
        if inserts.num_rows:
            self.db.execute("INSERT INTO orders SELECT * FROM inserts")
        self.db.execute("COMMIT")

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)
        self._recompute()
        self.db.execute("SELECT * FROM v1").fetchall()
        self.db.execute("SELECT * FROM v2 WHERE customer_id = ?", [probe_customer]).fetchall()

    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        raise NotSupported("DuckDB has no incremental views or SUBSCRIBE; a view is only as fresh "
                           "as its last full recompute")

    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return self.db.execute("SELECT * FROM v1").df(), self.db.execute("SELECT * FROM v2").df()

    def pids(self) -> list[int]:
        return [os.getpid()]

    async def stop(self) -> None:
        if self.db is not None:
            self.db.close()
