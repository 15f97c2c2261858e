"""Row partitioning for parallel readers: a row goes to partition `hash(row columns) % count`.

Uses `dataflow.batch.hash_columns` when the engine provides it, so persist's partitions line up
with the engine's exchange; otherwise a deterministic pandas hash (fixed key) of the row columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .updates import row_columns


def hash_rows(table: pa.Table) -> np.ndarray:
    """A uint64 hash per row over all row columns (c0..cN-1 come first; not time or diff)."""
    cols = row_columns(table)
    try:
        from dataflow.batch import hash_columns  # the engine's hash, when it exists
    except ImportError:
        hash_columns = None
    if hash_columns is not None:
        return np.asarray(hash_columns(table, list(range(len(cols)))), dtype=np.uint64)
    if not cols:
        return np.zeros(table.num_rows, dtype=np.uint64)
    df = table.select(cols).to_pandas()
    return pd.util.hash_pandas_object(df, index=False).to_numpy(dtype=np.uint64)


def partition_rows(table: pa.Table, index: int, count: int) -> pa.Table:
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"invalid partition ({index}, {count})")
    if count == 1 or table.num_rows == 0:
        return table
    keep = (hash_rows(table) % np.uint64(count)) == np.uint64(index)
    return table.filter(pa.array(keep))
