"""Reads inside an explicit transaction see the transaction's own (uncommitted) writes.

A transaction's writes are buffered in the session until COMMIT (`SessionState.writes`). A read in
the block (SELECT, INSERT ... SELECT, the read of an UPDATE/DELETE, DECLARE, COPY TO) is planned
as usual, then every read of a table the transaction wrote becomes

    Union_(Get(table), Constant(rows it inserted), Negate(Constant(rows it deleted)))

so it sees the committed contents at the read's timestamp plus the transaction's own changes,
as in PostgreSQL. What the replica maintains cannot see uncommitted writes: a read of a
materialized view, an index or an indexed view that depends (directly or not) on a table the
transaction wrote is refused with Materialize's error for reads in a write transaction,
`25000 transaction in write-only mode`, as is SUBSCRIBE to anything the transaction wrote.
(docs/sql-semantics.md, "Transactions".)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import concat, consolidate
from dataflow.errors import SqlError, SqlState
from dataflow.plan import Constant, Get, Negate, Plan, Union_, collections_read

WRITE_ONLY_MESSAGE = "transaction in write-only mode"


def pending_by_table(writes: Iterable) -> dict[str, pa.Table]:
    """The transaction's buffered changes per table, consolidated (PendingWrite.updates)."""
    per: dict[str, list[pa.Table]] = {}
    for w in writes:
        if w.updates is not None and w.updates.num_rows:
            per.setdefault(w.table_id, []).append(w.updates)
    out = {}
    for id, batches in per.items():
        batch = concat(batches)
        at = batch.schema.get_field_index("time")
        batch = consolidate(batch.set_column(at, "time", pa.nulls(batch.num_rows, pa.uint64()).fill_null(0)))
        if batch.num_rows:
            out[id] = batch
    return out


def _rows(batch: pa.Table, positive: bool) -> tuple[tuple, ...]:
    diff = batch.column("diff")
    mask = pc.greater(diff, 0) if positive else pc.less(diff, 0)
    sel = batch.filter(mask)
    if not sel.num_rows:
        return ()
    n = sel.num_columns - 2
    cols = [sel.column(i).to_pylist() for i in range(n)]
    counts = pc.abs(sel.column("diff")).to_pylist()
    out = []
    for r, count in enumerate(counts):
        row = tuple(c[r] for c in cols)
        out.extend([row] * count)
    return tuple(out)


def _delta(get: Get, batch: pa.Table) -> Plan:
    inputs: list[Plan] = [get]
    ins, dels = _rows(batch, True), _rows(batch, False)
    if ins:
        inputs.append(Constant(ins, get.types))
    if dels:
        inputs.append(Negate(Constant(dels, get.types)))
    return get if len(inputs) == 1 else Union_(tuple(inputs))


def _depends_on_any(catalog, id: str, written: set[str], seen: set[str]) -> bool:
    if id in written:
        return True
    if id in seen:
        return False
    seen.add(id)
    try:
        item = catalog.get(id)
    except SqlError:
        return False
    deps = set(item.depends_on or ())
    if item.index_on:
        deps.add(item.index_on)
    return any(_depends_on_any(catalog, d, written, seen) for d in deps)


def refuse_derived_reads(catalog, plan: Plan, written: set[str], *, subscribe: bool = False) -> None:
    """25000 when `plan` reads something maintained from a table in `written` (or, for SUBSCRIBE,
    any such table itself): it cannot show the transaction's own writes."""
    for id in collections_read(plan):
        if id in written and not subscribe:
            continue
        if _depends_on_any(catalog, id, written, set()):
            raise SqlError(SqlState.INVALID_TRANSACTION_STATE, WRITE_ONLY_MESSAGE,
                           detail="A materialized view, index or subscription cannot see the writes of "
                                  "a transaction that has not committed; read the tables it wrote, "
                                  "or COMMIT first.")


def with_own_writes(catalog, plan: Plan, pending: dict[str, pa.Table]) -> Plan:
    """`plan` reading the tables in `pending` as they are plus the transaction's changes."""
    if not pending:
        return plan
    written = set(pending)
    refuse_derived_reads(catalog, plan, written)
    if not collections_read(plan) & written:
        return plan
    memo: dict[int, Plan] = {}  # plans share sub-plans: rewrite each node once, keep the sharing

    def rewrite(node):
        if isinstance(node, Get):
            batch = pending.get(node.id)
            return node if batch is None else _delta(node, batch)
        key = id(node)
        if key in memo:
            return memo[key]
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = _rewrite_value(value, rewrite)
            if new is not value:
                changes[f.name] = new
        out = dataclasses.replace(node, **changes) if changes else node
        memo[key] = out
        return out

    return rewrite(plan)


def _is_plan(value) -> bool:
    return dataclasses.is_dataclass(value) and type(value).__module__ == "dataflow.plan"


def _rewrite_value(value, rewrite):
    if _is_plan(value):
        return rewrite(value)
    if isinstance(value, tuple) and value and any(_is_plan(v) for v in value):
        new = tuple(rewrite(v) if _is_plan(v) else v for v in value)
        return new if any(a is not b for a, b in zip(new, value)) else value
    return value
