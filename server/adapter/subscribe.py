"""SUBSCRIBE: a dataflow whose every step's output streams to the client, in Materialize's format.

Each row is (mz_timestamp numeric, [mz_progressed bool,] mz_diff int8, columns...). The snapshot
comes first, all at the AS OF time; then each change at its own time; with PROGRESS, a row with only
mz_timestamp set (mz_progressed true) says that every later row has at least that timestamp: one
first at the AS OF time, then one each time the frontier advances, even when nothing changed.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, AsyncIterator

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.controller import StepOutput
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.types import BOOL, INT8, Column, numeric
from dataflow.worker import HISTORY_MS
from planner.statements import SubscribePlan
from server.adapter.finishing import result_rows

MZ_TIMESTAMP = Column("mz_timestamp", numeric(20, 0), nullable=False)


def subscribe_columns(plan: SubscribePlan) -> list[Column]:
    head = [MZ_TIMESTAMP]
    if plan.progress:
        head.append(Column("mz_progressed", BOOL))
    head.append(Column("mz_diff", INT8))
    return head + list(plan.columns)


async def subscribe_rows(coordinator, plan: SubscribePlan,
                         cluster: str = "quickstart") -> AsyncIterator[list[tuple[Any, ...]]]:
    """Start the subscription's dataflow on `cluster` (the session's, which the plan was planned
    for) and yield batches of output rows until UP TO (or forever)."""
    if plan.envelope_upsert_key is not None:
        raise unsupported("SUBSCRIBE ... ENVELOPE UPSERT")
    compute = coordinator.check_readable(plan.plan, cluster)
    read_ts = coordinator.read_ts()
    as_of = read_ts if plan.as_of is None else plan.as_of
    if plan.as_of is not None and plan.as_of < read_ts - HISTORY_MS:
        raise SqlError(SqlState.DATA_EXCEPTION,
                       f"Timestamp ({plan.as_of}) is not valid for all inputs: the earliest readable time is "
                       f"{read_ts - HISTORY_MS}", hint=f"AS OF can go back at most {HISTORY_MS} ms.")
    if plan.up_to is not None and plan.up_to <= as_of:
        return
    id = compute.new_id("s")
    queue = compute.create_dataflow(id, plan.plan, as_of, "subscribe", until=plan.up_to)
    width = len(plan.columns)
    nulls = (None,) * width
    try:
        if plan.progress:
            yield [(Decimal(as_of), True, None) + nulls]
        frontier = as_of
        while True:
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            if not isinstance(item, StepOutput):
                continue
            if item.errors:
                raise item.errors[0]
            batch = item.batch
            if not plan.snapshot:
                batch = batch.filter(pc.greater(batch.column("time"), pa.scalar(as_of, pa.uint64())))
            if plan.up_to is not None:
                batch = batch.filter(pc.less(batch.column("time"), pa.scalar(plan.up_to, pa.uint64())))
            rows: list[tuple] = []
            if batch.num_rows:
                batch = batch.sort_by([("time", "ascending")])
                times = batch.column("time").to_pylist()
                diffs = batch.column("diff").to_pylist()
                values = result_rows(batch, [c.type for c in plan.columns])
                if plan.progress:
                    rows = [(Decimal(t), False, d) + v for t, d, v in zip(times, diffs, values)]
                else:
                    rows = [(Decimal(t), d) + v for t, d, v in zip(times, diffs, values)]
            upper = item.upper if plan.up_to is None else min(item.upper, plan.up_to)
            if plan.progress and upper > frontier:
                rows.append((Decimal(upper), True, None) + nulls)
            frontier = max(frontier, upper)
            if rows:
                yield rows
            if plan.up_to is not None and frontier >= plan.up_to:
                return
    finally:
        compute.drop_dataflow(id)
