"""Turning a peek's consolidated batch into the rows a client sees: multiplicities expanded,
ORDER BY / OFFSET / LIMIT applied, sort-only columns projected away (Materialize's
RowSetFinishing, done in environmentd)."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from dataflow.batch import rows_of
from dataflow.errors import SqlError, SqlState
from dataflow.types import DEFAULT_NUMERIC_SCALE, SqlType, TypeKind
from planner.statements import Finishing


# Wide enough for every decimal128 value: Decimal's default context (28 digits) would round
# the 38 digits numeric can hold.
_EXACT = Context(prec=80)


def _normalize(d: Decimal | None) -> Decimal | None:
    # Unconstrained numeric is stored with a fixed scale; show it as the value's own digits.
    if d is None or not d.is_finite():
        return d
    n = d.normalize(_EXACT)
    return n.quantize(Decimal(1), context=_EXACT) if n.as_tuple().exponent > 0 else n


def result_rows(batch: pa.Table, types: Sequence[SqlType] | None = None) -> list[tuple[Any, ...]]:
    """Row values as Python tuples, with unconstrained numerics trimmed of storage zeros. With
    `types` (the leading columns' SQL types), numeric(p, 16) keeps its 16 digits; without, any
    decimal of the unconstrained storage scale is trimmed."""
    rows = rows_of(batch)

    def unconstrained(i: int, f: pa.Field) -> bool:
        if types is not None and i < len(types):
            return types[i].kind is TypeKind.NUMERIC and types[i].scale is None
        return pa.types.is_decimal(f.type) and f.type.scale == DEFAULT_NUMERIC_SCALE
    fixed = [i for i, f in enumerate(batch.schema) if f.name.startswith("c") and unconstrained(i, f)]
    if not fixed or not rows:
        return rows
    out = []
    for r in rows:
        r = list(r)
        for i in fixed:
            r[i] = _normalize(r[i])
        out.append(tuple(r))
    return out


_FEW = 16


def expand(batch: pa.Table, types: Sequence[SqlType] | None = None) -> list[tuple[Any, ...]]:
    """Rows repeated by their (positive) multiplicity."""
    if batch.num_rows <= _FEW:  # (a point read: Python on a few values beats NumPy's calls)
        diffs = batch.column("diff").to_pylist()
        if any(d < 0 for d in diffs):
            raise SqlError(SqlState.INTERNAL_ERROR, "invalid data: a row has negative multiplicity")
        rows = result_rows(batch, types)
        if any(d != 1 for d in diffs):
            rows = [r for r, d in zip(rows, diffs) for _ in range(d)]
        return rows
    diffs = batch.column("diff").to_numpy()
    if (diffs < 0).any():
        raise SqlError(SqlState.INTERNAL_ERROR, "invalid data: a row has negative multiplicity")
    if batch.num_rows and (diffs != 1).any():
        batch = batch.take(pa.array(np.repeat(np.arange(batch.num_rows), diffs)))
    return result_rows(batch, types)


def _sort(rows: list[tuple], order_by: tuple[tuple[int, bool, bool], ...]) -> list[tuple]:
    # Stable passes from the last key to the first; NULLs placed per key (PG: last for ASC).
    for col, desc, nulls_last in reversed(order_by):
        present = [r for r in rows if r[col] is not None]
        nulls = [r for r in rows if r[col] is None]
        if any(isinstance(r[col], float) and r[col] != r[col] for r in present):
            # NaN sorts above every other float, as in PostgreSQL (Python's < on NaN is false).
            present.sort(key=lambda r: (r[col] != r[col], r[col] if r[col] == r[col] else 0.0), reverse=desc)
        else:
            present.sort(key=lambda r: r[col], reverse=desc)
        rows = present + nulls if nulls_last else nulls + present
    return rows


def finish(batch: pa.Table, finishing: Finishing,
           types: Sequence[SqlType] | None = None) -> list[tuple[Any, ...]]:
    rows = expand(batch, types)
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
