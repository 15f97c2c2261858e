"""Row partitioning for parallel readers: a row goes to partition `hash(row columns) % count`.

The hash is the engine's (`dataflow.batch.hash_columns`), so persist's partitions line up with
the engine's exchange and with the controller's split of table writes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dataflow.batch import hash_columns

from .updates import row_columns


def hash_rows(table: pa.Table) -> np.ndarray:
    """A uint64 hash per row over all row columns (c0..cN-1 come first; not time or diff)."""
    return hash_columns(table, list(range(len(row_columns(table)))))


def partition_rows(table: pa.Table, index: int, count: int) -> pa.Table:
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"invalid partition ({index}, {count})")
    if count == 1 or table.num_rows == 0:
        return table
    keep = (hash_rows(table) % np.uint64(count)) == np.uint64(index)
    return table.filter(pa.array(keep))
