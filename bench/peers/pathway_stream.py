"""Pathway (the PyPI package: Rust differential dataflow, Python API, 1 worker) in streaming mode.

Runs in the venv made by bench/setup.sh (Pathway pins an older pyarrow than the project).
Orders arrive through a `pw.io.python.ConnectorSubject` fed from a queue: a batch is the old
versions `delete`d and the new versions `next`ed, then one `commit` (one Pathway time). V1 and V2
are `pw.io.subscribe`d; the callbacks keep both views' contents in dicts.

Pathway does not say which input commit an output time belongs to, so "current" is decided by
content: a batch is done when, at a closed output time, V1 equals its expected contents (kept
per region from the batch's captured rows) and V2's totals (orders, amount) equal the expected
ones. Hydration is the base rows pushed through the connector until both views show them
(ingest and compute are one step here). Memory is this process's RSS.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from typing import Callable

from bench.common.workload import ChangeBatch, Workload
from bench.peers.expected import ExpectedViews, StreamedViews

WAIT_S = 600.0


class PathwayStream(StreamedViews):
    name = "pathway-stream"

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.v1: dict[str, tuple[int, int]] = {}
        self.v2: dict[int, tuple[int, int]] = {}
        self.v2_totals = [0, 0]
        self.on_v1_state: Callable[[float, int, int], None] | None = None
        self.closed_times = 0

    async def start(self) -> None:
        import pathway as pw
        self.pw = pw

        class Orders(pw.Schema):
            order_id: int = pw.column_definition(primary_key=True)
            customer_id: int
            amount: int
            status: str

        class Customers(pw.Schema):
            cust_id: int = pw.column_definition(primary_key=True)
            region: str

        owner = self

        class Feed(pw.io.python.ConnectorSubject):
            def run(self) -> None:
                while True:
                    cmd = owner.inbox.get()
                    if cmd is None:
                        return
                    dels, ins = cmd
                    for r in dels:
                        self.delete(**r)
                    for r in ins:
                        self.next(**r)
                    self.commit()

        class CustomerFeed(pw.io.python.ConnectorSubject):
            def run(self) -> None:
                for r in owner.customer_rows:
                    self.next(**r)
                self.commit()

        self.inbox: queue.Queue = queue.Queue()
        self.customer_rows: list[dict] = []
        self.Feed, self.CustomerFeed, self.Orders, self.Customers = Feed, CustomerFeed, Orders, Customers

    def _build_and_run(self) -> None:
        pw = self.pw
        orders = pw.io.python.read(self.Feed(), schema=self.Orders, autocommit_duration_ms=None)
        customers = pw.io.python.read(self.CustomerFeed(), schema=self.Customers, autocommit_duration_ms=None)
        cap = orders.filter(orders.status == "captured")
        j = cap.join(customers, cap.customer_id == customers.cust_id).select(
            region=customers.region, amount=cap.amount)
        v1 = j.groupby(j.region).reduce(j.region, count=pw.reducers.count(), sum=pw.reducers.sum(j.amount))
        v2 = orders.groupby(orders.customer_id).reduce(
            orders.customer_id, count=pw.reducers.count(), sum=pw.reducers.sum(orders.amount))
        pw.io.subscribe(v1, on_change=self._v1_change, on_time_end=self._v1_end)
        pw.io.subscribe(v2, on_change=self._v2_change, on_time_end=self._v2_end)
        self.thread = threading.Thread(
            target=lambda: pw.run(monitoring_level=pw.MonitoringLevel.NONE), daemon=True)
        self.thread.start()

    # -- output callbacks (Pathway's threads) -----------------------------------------------
    def _v1_change(self, key, row, time, is_addition) -> None:
        with self.cond:
            if is_addition:
                self.v1[row["region"]] = (row["count"], row["sum"])
            elif self.v1.get(row["region"]) == (row["count"], row["sum"]):
                del self.v1[row["region"]]

    def _v1_end(self, t) -> None:
        with self.cond:
            self.closed_times += 1
            self.cond.notify_all()
            cb = self.on_v1_state
            c = sum(v[0] for v in self.v1.values())
            s = sum(v[1] for v in self.v1.values())
        if cb is not None:
            cb(time.perf_counter(), c, s)

    def _v2_change(self, key, row, time, is_addition) -> None:
        with self.cond:
            sign = 1 if is_addition else -1
            self.v2_totals[0] += sign * row["count"]
            self.v2_totals[1] += sign * row["sum"]
            if is_addition:
                self.v2[row["customer_id"]] = (row["count"], row["sum"])
            elif self.v2.get(row["customer_id"]) == (row["count"], row["sum"]):
                del self.v2[row["customer_id"]]

    def _v2_end(self, t) -> None:
        with self.cond:
            self.closed_times += 1
            self.cond.notify_all()

    # -- the PeerSystem interface -----------------------------------------------------------
    async def load_base(self, w: Workload) -> None:
        self.w = w
        self.customer_rows = [{"cust_id": r["id"], "region": r["region"]} for r in w.customers().to_pylist()]
        self.base_rows = _rows(w.orders())
        self.expected = ExpectedViews(w)

    async def hydrate(self) -> None:
        self._build_and_run()
        self.inbox.put(([], self.base_rows))
        del self.base_rows
        self._wait_current()

    def _wait_current(self) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.cond:
            while not self._current():
                if not self.thread.is_alive():
                    raise RuntimeError("the Pathway computation stopped")
                if time.monotonic() > deadline:
                    raise TimeoutError("Pathway's views did not become current")
                self.cond.wait(1.0)

    async def write(self, batch: ChangeBatch) -> None:
        self.expected.add(batch)
        self.inbox.put((_rows(batch.deletes), _rows(batch.inserts)))

    def pids(self) -> list[int]:
        return [os.getpid()]

    async def stop(self) -> None:
        if hasattr(self, "thread"):
            self.inbox.put(None)
            self.thread.join(30)


def _rows(table) -> list[dict]:
    t = table.rename_columns(["order_id", "customer_id", "amount", "status"])
    return t.to_pylist()
