"""Slipstream end to end: `slipstream serve` on its embedded default (Spark local mode, default
workers), the client writing through COPY / DELETE over pgwire and reading the views.

Memory is the RSS of the server's whole process tree (Python driver, Spark JVM, Python workers).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

import asyncpg
import pandas as pd

from bench.common.workload import CUSTOMERS_DDL, ORDERS_DDL, V1_SQL, V2_SQL, ChangeBatch, Workload
from bench.peers import pgclient
from tests.support.ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180


class SlipstreamE2E:
    """`indexed`: also `CREATE INDEX ON orders (id)` after loading (PostgreSQL's peers have a
    primary key), so the DELETEs' peeks read the index instead of scanning orders. `workers`:
    the replica's workers, if not the server's default (one per core but one: on two cores
    one worker, which leaves a core to environmentd and needs no exchanges)."""

    def __init__(self, indexed: bool = False, workers: int | None = None) -> None:
        self.indexed = indexed
        self.workers = workers
        self.name = ("slipstream-e2e-idx" if indexed else "slipstream-e2e") + (f"-{workers}w" if workers else "")
        self.base_dir = Path(tempfile.mkdtemp(prefix="bench-slipstream-"))
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.conn: asyncpg.Connection | None = None

    @property
    def dsn(self) -> str:
        return f"postgresql://slipstream@127.0.0.1:{self.port}/slipstream"

    async def start(self) -> None:
        log = open(self.base_dir / "server.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--http-port", str(free_port()), "--data-dir", str(self.base_dir / "data")]
            + (["--workers", str(self.workers)] if self.workers else []),
            cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"slipstream exited during start-up; see {self.base_dir}/server.log")
            try:
                self.conn = await asyncpg.connect(self.dsn, timeout=5)
                await self.conn.fetch("SELECT 1")
                return
            except (OSError, asyncpg.PostgresError, asyncio.TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"slipstream did not answer within {START_TIMEOUT_S}s")
                await asyncio.sleep(0.5)

    async def load_base(self, w: Workload) -> None:
        await self.conn.execute(CUSTOMERS_DDL)
        await self.conn.execute(ORDERS_DDL)
        await pgclient.copy_csv(self.conn, "customers", w.customers())
        await pgclient.copy_csv(self.conn, "orders", w.orders())
        if self.indexed:
            await self.conn.execute("CREATE INDEX orders_id_idx ON orders (id)")
            await self.conn.fetch("SELECT * FROM orders WHERE id = 1")  # index built and readable

    async def hydrate(self) -> None:
        await self.conn.execute(f"CREATE MATERIALIZED VIEW v1 AS {V1_SQL}")
        await self.conn.execute(f"CREATE MATERIALIZED VIEW v2 AS {V2_SQL}")
        await self.conn.fetch("SELECT * FROM v1")
        await self.conn.fetch("SELECT count(*) FROM v2")

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)
        await pgclient.read_current(self.conn, probe_customer)

    async def write(self, batch: ChangeBatch) -> None:
        await pgclient.apply_batch(self.conn, batch)

    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        conn = await asyncpg.connect(self.dsn)
        totals = [0, 0]
        pending = [b""]

        async def output(chunk: bytes) -> None:
            at = time.perf_counter()
            data = pending[0] + bytes(chunk)
            lines = data.split(b"\n")
            pending[0] = lines.pop()
            for line in lines:
                ts, progressed, diff, *cols = line.split(b"\t")
                if progressed == b"t":
                    on_state(at, totals[0], totals[1])
                    continue
                d = int(diff)
                totals[0] += d * int(cols[1])
                totals[1] += d * int(cols[2])

        task = asyncio.create_task(conn.copy_from_query("SUBSCRIBE v1 WITH (PROGRESS)", output=output))

        async def stop() -> None:
            task.cancel()
            try:
                await task
            except BaseException:
                pass
            conn.terminate()
        return stop

    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return await pgclient.read_views(self.conn)

    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc is not None and self.proc.poll() is None else []

    async def stop(self) -> None:
        if self.conn is not None:
            self.conn.terminate()
        if self.proc is not None and self.proc.poll() is None:
            import os
            import signal
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.copy(self.base_dir / "server.log", "/tmp/bench-slipstream-last-server.log")
        shutil.rmtree(self.base_dir, ignore_errors=True)
