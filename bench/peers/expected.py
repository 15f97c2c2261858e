"""What V1 and V2 should hold after the batches written so far, for peers that cannot tell which
input a given output belongs to (the stream processors: Pathway, Flink, Spark). Such a peer is
"current" when V1 equals `v1` in full and V2's totals (orders, amount) equal `v2_totals`.

    e = ExpectedViews(w)          # the base data
    e.add(batch)                  # after writing a batch
    e.v1 == {"north": (count, sum), ...}; e.v2_totals == [orders, amount]
"""

from __future__ import annotations

import numpy as np

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
