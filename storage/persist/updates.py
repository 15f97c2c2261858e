"""Whole-batch operations on update tables (c0..cN-1, time, diff): advance, filter, conform.
Consolidation is the engine's (`dataflow.batch.consolidate`: sort-based, ~3x faster than
Arrow's hash aggregation, which persist used to run on every compaction).

All work is columnar (pyarrow.compute); nothing here loops over rows.

>>> import pyarrow as pa
>>> from dataflow.batch import consolidate
>>> t = pa.table({"c0": [1, 1, 2], "time": pa.array([3, 5, 5], pa.uint64()), "diff": [1, 1, -1]})
>>> consolidate(advance_times(t, 5)).to_pydict()
{'c0': [1, 2], 'time': [5, 5], 'diff': [2, -1]}
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def row_columns(table: pa.Table) -> list[str]:
    return [n for n in table.column_names if n not in ("time", "diff")]


def advance_times(table: pa.Table, frontier: int) -> pa.Table:
    """Times before `frontier` become `frontier` (what compaction to a since does)."""
    if table.num_rows == 0 or frontier == 0:
        return table
    times = pc.max_element_wise(table["time"], pa.scalar(frontier, pa.uint64()))
    return table.set_column(table.schema.get_field_index("time"), table.schema.field("time"), times)


def filter_times(table: pa.Table, lower: int | None = None, upper_incl: int | None = None) -> pa.Table:
    """Keep rows with lower <= time <= upper_incl (either bound optional)."""
    mask = None
    if lower is not None and lower > 0:
        mask = pc.greater_equal(table["time"], pa.scalar(lower, pa.uint64()))
    if upper_incl is not None:
        m = pc.less_equal(table["time"], pa.scalar(upper_incl, pa.uint64()))
        mask = m if mask is None else pc.and_(mask, m)
    return table if mask is None else table.filter(mask)


def time_bounds(table: pa.Table) -> tuple[int, int]:
    mm = pc.min_max(table["time"])
    return mm["min"].as_py(), mm["max"].as_py()


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Positional columns renamed and cast to the shard's schema; a clear error if impossible."""
    if table.num_columns != len(schema):
        raise ValueError(
            f"update batch has {table.num_columns} columns, shard expects {len(schema)} "
            f"({', '.join(schema.names)})"
        )
    if table.schema.equals(schema):
        return table
    table = table.rename_columns(schema.names)
    return table.cast(schema)
