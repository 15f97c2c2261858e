"""V1 and V2 as two in-process dataflows (one worker, LocalExchange) fed the same changes.

    views = WorkloadViews.plan()
    views.hydrate(workload)                 # both views over the base tables, at time 1
    views.apply(change_batch)               # one closed-loop step: both views current at t+1
    views.check(workload, final_orders)     # compare with the ground truth (raises on mismatch)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from bench.common.workload import (CUSTOMERS_DDL, ORDERS_DDL, V1_SQL, V2_SQL, ChangeBatch, Workload,
                                   frame_matches, ground_truth_v1, ground_truth_v2)
from bench.engine.catalog import BenchCatalog
from dataflow.batch import concat, consolidate
from dataflow.exchange import LocalExchange
from dataflow.render import Dataflow


def as_updates(table: pa.Table, time: int, diff: int) -> pa.Table:
    """Rows of a workload table as an update batch (c0.., time, diff)."""
    n = table.num_rows
    cols = list(table.columns) + [pa.array(np.full(n, time, np.uint64)), pa.array(np.full(n, diff, np.int64))]
    return pa.Table.from_arrays(cols, names=[f"c{i}" for i in range(table.num_columns)] + ["time", "diff"])


def change_updates(batch: ChangeBatch, time: int) -> pa.Table:
    return pa.concat_tables([as_updates(batch.deletes, time, -1), as_updates(batch.inserts, time, 1)])


class ViewMismatch(AssertionError):
    pass


@dataclass
class WorkloadViews:
    v1: Dataflow
    v2: Dataflow
    customers_id: str
    orders_id: str
    time: int = 1
    outputs: dict[str, list[pa.Table]] = field(default_factory=lambda: {"v1": [], "v2": []})

    @staticmethod
    def plan() -> "WorkloadViews":
        cat = BenchCatalog()
        cid, oid = cat.create_table(CUSTOMERS_DDL), cat.create_table(ORDERS_DDL)
        p1, p2 = cat.plan_select(V1_SQL), cat.plan_select(V2_SQL)
        return WorkloadViews(Dataflow(p1.plan, 1, LocalExchange()), Dataflow(p2.plan, 1, LocalExchange()), cid, oid)

    def _step(self, inputs: dict[str, pa.Table]) -> None:
        upper = self.time + 1
        for name, df in (("v1", self.v1), ("v2", self.v2)):
            out = df.step({k: v for k, v in inputs.items() if k in df.inputs}, upper)
            if out.num_rows:
                self.outputs[name].append(out)
        self.time = upper
        for df in (self.v1, self.v2):
            if df.errors:
                raise ViewMismatch(f"dataflow error: {df.errors[0]}")

    def hydrate(self, workload: Workload) -> None:
        self._step({self.customers_id: as_updates(workload.customers(), self.time, 1),
                    self.orders_id: as_updates(workload.orders(), self.time, 1)})

    def apply(self, batch: ChangeBatch) -> None:
        self._step({self.orders_id: change_updates(batch, self.time)})

    def apply_updates(self, updates: pa.Table) -> None:
        """Apply a prepared orders update batch (its times are restamped to the next time)."""
        n = updates.num_rows
        updates = updates.set_column(updates.schema.get_field_index("time"), "time",
                                     pa.array(np.full(n, self.time, np.uint64)))
        self._step({self.orders_id: updates})

    def contents(self, name: str) -> pd.DataFrame:
        """The view's current rows (every row must have multiplicity exactly 1)."""
        outs = self.outputs[name]
        schema = (self.v1 if name == "v1" else self.v2).schema
        state = consolidate(concat(outs, schema=schema).drop_columns(["time"]).append_column(
            "time", pa.array(np.zeros(sum(o.num_rows for o in outs), np.uint64))).select(
            schema.names)) if outs else schema.empty_table()
        diffs = state["diff"].to_numpy()
        if len(diffs) and not (diffs == 1).all():
            raise ViewMismatch(f"{name}: rows with multiplicity {sorted(set(diffs.tolist()) - {1})}")
        # Compact the output log so later checks don't redo the work.
        self.outputs[name] = [state.drop_columns(["time"]).append_column(
            "time", pa.array(np.full(state.num_rows, 1, np.uint64))).select(schema.names)] if outs else []
        cols = {f"c{i}": state[f"c{i}"].to_pandas() for i in range(state.num_columns - 2)}
        return pd.DataFrame(cols)

    def check(self, workload: Workload, final_orders) -> dict:
        """Compare both views with the ground truth over `final_orders`; raise on any mismatch."""
        got1, got2 = self.contents("v1"), self.contents("v2")
        exp1, exp2 = ground_truth_v1(workload, final_orders), ground_truth_v2(final_orders)
        for name, got, exp in (("v1", got1, exp1), ("v2", got2, exp2)):
            g = got.copy()
            g.iloc[:, 2] = g.iloc[:, 2].map(int)  # numeric sums arrive as Decimal
            if not frame_matches(g, exp):
                raise ViewMismatch(f"{name} differs from the ground truth: {len(got)} rows vs {len(exp)}")
        return {"v1_rows": len(got1), "v2_rows": len(got2), "ok": True}
