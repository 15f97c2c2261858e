"""What V1 and V2 should hold after the batches written so far, for peers that cannot tell which
input a given output belongs to (the stream processors: Pathway, Flink, Spark). Such a peer is
"current" when V1 equals `v1` in full and V2's totals (orders, amount) equal `v2_totals`.

    e = ExpectedViews(w)          # the base data
    e.add(batch)                  # after writing a batch
    e.v1 == {"north": (count, sum), ...}; e.v2_totals == [orders, amount]

`StreamedViews` is the part of the PeerSystem interface those peers share: a closed-loop batch
waits until the views they fold from their output are current, a freshness SUBSCRIBE is their
V1 callback, and the views read back are what they folded.
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable

import numpy as np
import pandas as pd

from bench.common.workload import REGIONS, ChangeBatch, Workload, ground_truth_v1


class ExpectedViews:
    def __init__(self, w: Workload) -> None:
        self.w = w
        truth = ground_truth_v1(w, w.base)
        self.v1: dict[str, tuple[int, int]] = {r.region: (int(r.count), int(r.sum))
                                               for r in truth.itertuples()}
        self.v2_totals = [len(w.base), int(w.base.amount.sum())]

    def add(self, batch: ChangeBatch) -> None:
        for table, sign in ((batch.deletes, -1), (batch.inserts, 1)):
            if table.num_rows == 0:
                continue
            self.v2_totals[0] += sign * table.num_rows
            self.v2_totals[1] += sign * int(table["amount"].to_numpy().sum())
            status = np.asarray(table["status"].to_pylist(), dtype=object)
            cap = status == "captured"
            region = self.w.customer_region[table["customer_id"].to_numpy()[cap] - 1]
            amounts = table["amount"].to_numpy()[cap]
            counts = np.bincount(region, minlength=len(REGIONS))
            sums = np.bincount(region, weights=amounts, minlength=len(REGIONS)).astype(np.int64)
            for i in np.flatnonzero(counts):
                c, s = self.v1.get(REGIONS[i], (0, 0))
                c, s = c + sign * int(counts[i]), s + sign * int(sums[i])
                if c == 0:
                    self.v1.pop(REGIONS[i], None)
                else:
                    self.v1[REGIONS[i]] = (c, s)


class StreamedViews:
    """Mixin of the stream-processor peers. The peer keeps, under `cond`, the views it folds from
    its output (`v1`: region -> (count, sum); `v2`: customer -> (count, sum); `v2_totals`), its
    `expected` views, and `on_v1_state` (the freshness callback, or None); it implements
    `write` and `_wait_current`."""

    def _current(self) -> bool:
        return self.v2_totals == self.expected.v2_totals and self.v1 == self.expected.v1

    def _v1_state(self) -> tuple[int, int]:
        """V1's totals (orders, amount) as folded so far."""
        return sum(v[0] for v in self.v1.values()), sum(v[1] for v in self.v1.values())

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)
        self._wait_current()

    async def subscribe_v1(self, on_state: Callable[[float, int, int], None]) -> Callable[[], Awaitable[None]]:
        with self.cond:
            self.on_v1_state = on_state
            c, s = self._v1_state()
        on_state(time.perf_counter(), c, s)

        async def stop() -> None:
            self.on_v1_state = None
        return stop

    async def read_views(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        self._wait_current()
        with self.cond:
            v1 = pd.DataFrame([(k, *v) for k, v in self.v1.items()], columns=["region", "count", "sum"])
            v2 = pd.DataFrame([(k, *v) for k, v in self.v2.items()], columns=["customer_id", "count", "sum"])
        return v1, v2
