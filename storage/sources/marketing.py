"""MARKETING: a marketing funnel. Materialize's documented relations and column types:

    customers              (id bigint, email text, income bigint)
    impressions            (id bigint, customer_id bigint, impression_time timestamptz)
    clicks                 (impression_id bigint, click_time timestamptz)
    leads                  (id bigint, customer_id bigint, created_at timestamptz,
                            converted_at timestamptz, conversion_amount bigint)
    coupons                (id bigint, lead_id bigint, created_at timestamptz, amount bigint)
    conversion_predictions (lead_id bigint, experiment_bucket text, predicted_at timestamptz,
                            score double precision)

Tick 0 adds the customers. Every tick shows 0-7 impressions (a fifth of them clicked), opens one
lead (id = tick + 1) with a prediction in the control or experiment bucket and, for a third of
them, a coupon. Half of the leads convert 1-20 ticks later: the lead's row is retracted and
inserted again with converted_at and conversion_amount (this generator issues retractions).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.types import FLOAT8, INT8, TEXT, TIMESTAMPTZ
from storage.sources.base import Generator, Output, col, rand_int, rand_unit, timestamps, updates

N_CUSTOMERS = 1000
MAX_IMPRESSIONS = 8
MAX_CONVERSION_TICKS = 20

(_S_INCOME, _S_NIMP, _S_IMPCUST, _S_IMPOFF, _S_CLICK, _S_CLICKOFF, _S_LEADCUST, _S_CONVERTS,
 _S_CONVDELAY, _S_CONVAMT, _S_COUPON, _S_COUPONAMT, _S_BUCKET, _S_SCORE) = range(14)


class Marketing(Generator):
    kind = "marketing"

    OUTPUTS = {
        "customers": (col("id", INT8), col("email", TEXT), col("income", INT8)),
        "impressions": (col("id", INT8), col("customer_id", INT8), col("impression_time", TIMESTAMPTZ)),
        "clicks": (col("impression_id", INT8), col("click_time", TIMESTAMPTZ)),
        "leads": (col("id", INT8), col("customer_id", INT8), col("created_at", TIMESTAMPTZ),
                  col("converted_at", TIMESTAMPTZ, True), col("conversion_amount", INT8, True)),
        "coupons": (col("id", INT8), col("lead_id", INT8), col("created_at", TIMESTAMPTZ), col("amount", INT8)),
        "conversion_predictions": (col("lead_id", INT8), col("experiment_bucket", TEXT),
                                   col("predicted_at", TIMESTAMPTZ), col("score", FLOAT8)),
    }

    def outputs(self) -> list[Output]:
        return [Output(n, c) for n, c in self.OUTPUTS.items()]

    def _types(self, name: str):
        return tuple(c.type for c in self.OUTPUTS[name])

    def _lead(self, ticks: np.ndarray, converted: bool) -> list:
        seed = self.options.seed
        cust = rand_int(seed, ticks, _S_LEADCUST, 1, N_CUSTOMERS + 1)
        created = timestamps(self.due_ms(ticks))
        if not converted:
            return [ticks + 1, cust, created, pa.nulls(len(ticks), pa.timestamp("us", tz="UTC")),
                    pa.nulls(len(ticks), pa.int64())]
        at = ticks + rand_int(seed, ticks, _S_CONVDELAY, 1, MAX_CONVERSION_TICKS + 1)
        return [ticks + 1, cust, created, timestamps(self.due_ms(at)),
                rand_int(seed, ticks, _S_CONVAMT, 10, 1000)]

    def generate(self, start: int, end: int) -> dict[str | None, pa.Table]:
        seed, out = self.options.seed, {}
        if start == 0 and end > 0:
            ids = np.arange(1, N_CUSTOMERS + 1, dtype=np.int64)
            emails = pc.binary_join_element_wise(pa.array(["customer"] * N_CUSTOMERS),
                                                 pc.cast(pa.array(ids), pa.string()), "")
            emails = pc.binary_join_element_wise(emails, pa.array(["@example.com"] * N_CUSTOMERS), "")
            income = rand_int(seed, np.zeros(N_CUSTOMERS, np.int64), _S_INCOME, 10_000, 200_000, ids)
            out["customers"] = updates(self._types("customers"), [ids, emails, income])
        ticks = np.arange(start, end, dtype=np.int64)
        due = self.due_ms(ticks)
        # Impressions and clicks.
        n = rand_int(seed, ticks, _S_NIMP, 0, MAX_IMPRESSIONS)
        t = np.repeat(ticks, n)
        idx = np.arange(len(t), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        imp_id = t * MAX_IMPRESSIONS + idx + 1
        imp_time = np.repeat(due, n) + rand_int(seed, t, _S_IMPOFF, 0, max(self.options.tick_ms, 1), idx)
        out["impressions"] = updates(self._types("impressions"),
                                     [imp_id, rand_int(seed, t, _S_IMPCUST, 1, N_CUSTOMERS + 1, idx),
                                      timestamps(imp_time)])
        clicked = rand_int(seed, t, _S_CLICK, 0, 5, idx) == 0
        out["clicks"] = updates(self._types("clicks"),
                                [imp_id[clicked], timestamps(imp_time[clicked] + rand_int(
                                    seed, t[clicked], _S_CLICKOFF, 1, 60_000, idx[clicked]))])
        # Leads opened in these ticks, and conversions of leads opened up to 20 ticks before.
        parts = [updates(self._types("leads"), self._lead(ticks, False))]
        earlier = np.arange(max(start - MAX_CONVERSION_TICKS, 0), end, dtype=np.int64)
        converts = rand_int(seed, earlier, _S_CONVERTS, 0, 2, 0) == 1
        at = earlier + rand_int(seed, earlier, _S_CONVDELAY, 1, MAX_CONVERSION_TICKS + 1)
        done = earlier[converts & (at >= start) & (at < end)]
        if len(done):
            parts.append(updates(self._types("leads"), self._lead(done, False), -1))
            parts.append(updates(self._types("leads"), self._lead(done, True), 1))
        out["leads"] = pa.concat_tables(parts)
        coupon = rand_int(seed, ticks, _S_COUPON, 0, 3) == 0
        ct = ticks[coupon]
        out["coupons"] = updates(self._types("coupons"),
                                 [ct + 1, ct + 1, timestamps(self.due_ms(ct)), rand_int(seed, ct, _S_COUPONAMT, 5, 51)])
        bucket = pa.array(["control", "experiment"]).take(pa.array(rand_int(seed, ticks, _S_BUCKET, 0, 2)))
        out["conversion_predictions"] = updates(self._types("conversion_predictions"),
                                                [ticks + 1, bucket, timestamps(due), rand_unit(seed, ticks, _S_SCORE)])
        return out
