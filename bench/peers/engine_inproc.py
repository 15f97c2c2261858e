"""Slipstream's engine alone, in this process: V1 and V2 planned by the real planner and rendered
as `dataflow.render.Dataflow`s on one worker (LocalExchange), fed Arrow update batches directly.
No pgwire, no persist, no Spark: the floor under the end-to-end figure.

A batch is one step at a new timestamp; the step's output *is* the views' change at that time, so
"current and readable" is the step returning. The views' contents are the consolidated sum of all
outputs (folded at the end for the ground-truth check).
"""

from __future__ import annotations

import os
from typing import Awaitable, Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from bench.common.workload import CUSTOMERS_DDL, ORDERS_DDL, V1_SQL, V2_SQL, ChangeBatch, Workload
from bench.peers.harness import NotSupported
from dataflow.batch import consolidate
from dataflow.exchange import LocalExchange
from dataflow.render import Dataflow
from dataflow.types import arrow_schema
from tests.planner.planner_catalog import MemoryCatalog


def _updates(table: pa.Table, schema: pa.Schema, time: int, diff: int) -> pa.Table:
    n = table.num_rows
    cols = [table.column(i).cast(schema.field(i).type) for i in range(table.num_columns)]
    cols.append(pa.array(np.full(n, time, dtype=np.uint64)))
    cols.append(pa.array(np.full(n, diff, dtype=np.int64)))
    return pa.Table.from_arrays(cols, schema=schema)


class EngineInProc:
    name = "engine-inproc"

    def __init__(self) -> None:
        self.catalog = MemoryCatalog()
        self.time = 1
        self.outputs: dict[str, list[pa.Table]] = {"v1": [], "v2": []}

    async def start(self) -> None:
        self.catalog.execute(CUSTOMERS_DDL)
        self.catalog.execute(ORDERS_DDL)
        self.customers_id = self.catalog.try_resolve(("customers",)).id
        self.orders_id = self.catalog.try_resolve(("orders",)).id
        self.schemas = {i.id: arrow_schema([c.type for c in i.columns]) for i in self.catalog.items()}
        self.plans = {v: self.catalog.execute(f"CREATE MATERIALIZED VIEW {v} AS {sql}").plan
                      for v, sql in (("v1", V1_SQL), ("v2", V2_SQL))}

    async def load_base(self, w: Workload) -> None:
        self.base = {self.customers_id: _updates(w.customers(), self.schemas[self.customers_id], 0, 1),
                     self.orders_id: _updates(w.orders(), self.schemas[self.orders_id], 0, 1)}

    def _step(self, inputs: dict[str, pa.Table]) -> None:
        upper = self.time + 1
        for v, df in self.dataflows.items():
            out = df.step({k: t for k, t in inputs.items() if k in df.inputs}, upper)
            if df.errors:
                raise RuntimeError(f"{v}: {df.errors[0]}")
            self.outputs[v].append(out)
        self.time = upper

    async def hydrate(self) -> None:
        self.dataflows = {v: Dataflow(p, as_of=0, exchange=LocalExchange()) for v, p in self.plans.items()}
        self.time = 0
        self._step(self.base)
        del self.base

    async def write(self, batch: ChangeBatch) -> None:
        schema = self.schemas[self.orders_id]
        delta = pa.concat_tables([_updates(batch.deletes, schema, self.time, -1),
                                  _updates(batch.inserts, schema, self.time, 1)])
        self._step({self.orders_id: delta})

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)

    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        raise NotSupported("in-process there is no SUBSCRIBE: a step's output is the change, so "
                           "freshness equals the step latency (see b=100)")

    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        frames = []
        for v in ("v1", "v2"):
            t = pa.concat_tables(self.outputs[v])
            # Fold every time into one: the views' contents now.
            t = t.set_column(t.schema.get_field_index("time"), "time",
                             pa.array(np.zeros(t.num_rows, dtype=np.uint64)))
            t = consolidate(t)
            df = t.to_pandas()
            assert (df["diff"] == 1).all(), f"{v}: a row with multiplicity != 1"
            frames.append(df.drop(columns=["time", "diff"]))
        return frames[0], frames[1]

    def pids(self) -> list[int]:
        return [os.getpid()]

    async def stop(self) -> None:
        self.dataflows = {}
