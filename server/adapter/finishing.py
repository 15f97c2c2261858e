"""Turning a peek's consolidated batch into the rows a client sees: multiplicities expanded,
ORDER BY / OFFSET / LIMIT applied, sort-only columns projected away (Materialize's
RowSetFinishing, done in environmentd)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from dataflow.batch import rows_of
from dataflow.errors import SqlError, SqlState
from planner.statements import Finishing


def expand(batch: pa.Table) -> list[tuple[Any, ...]]:
    """Rows repeated by their (positive) multiplicity."""
    diffs = batch.column("diff").to_numpy()
    if (diffs < 0).any():
        raise SqlError(SqlState.INTERNAL_ERROR, "invalid data: a row has negative multiplicity")
    if batch.num_rows and (diffs != 1).any():
        batch = batch.take(pa.array(np.repeat(np.arange(batch.num_rows), diffs)))
    return rows_of(batch)


def _sort(rows: list[tuple], order_by: tuple[tuple[int, bool, bool], ...]) -> list[tuple]:
    # Stable passes from the last key to the first; NULLs placed per key (PG: last for ASC).
    for col, desc, nulls_last in reversed(order_by):
        present = [r for r in rows if r[col] is not None]
        nulls = [r for r in rows if r[col] is None]
        present.sort(key=lambda r: r[col], reverse=desc)
        rows = present + nulls if nulls_last else nulls + present
    return rows


def finish(batch: pa.Table, finishing: Finishing) -> list[tuple[Any, ...]]:
    rows = expand(batch)
    if finishing.order_by:
        rows = _sort(rows, finishing.order_by)
    if finishing.offset:
        rows = rows[finishing.offset:]
    if finishing.limit is not None:
        rows = rows[: finishing.limit]
    if finishing.project is not None:
        cols = finishing.project
        rows = [tuple(r[c] for c in cols) for r in rows]
    return rows
