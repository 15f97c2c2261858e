"""Update batches: Arrow tables of `(row columns c0..cN-1, time uint64, diff int64)`.

Everything here works on whole columns (pyarrow.compute / NumPy); nothing loops per row.

>>> from dataflow.types import INT8, TEXT
>>> b = batch_from_rows([(1, "a"), (1, "a"), (2, None)], [INT8, TEXT], time=5)
>>> rows_of(consolidate(b))
[(1, 'a'), (2, None)]
>>> consolidate(b)["diff"].to_pylist()
[2, 1]
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval
from dataflow.types import SqlType, TypeKind, arrow_schema

TIME = "time"
DIFF = "diff"

# Odd 64-bit constants used to mix per-column hashes into one row hash.
_MIX = np.uint64(0x9E3779B97F4A7C15)
_NULL_HASH = np.uint64(0x5BD1E9955BD1E995)


def row_names(batch: pa.Table) -> list[str]:
    """The row column names of an update batch (everything but time and diff)."""
    return [n for n in batch.column_names if n not in (TIME, DIFF)]


def row_count(batch: pa.Table) -> int:
    return len(row_names(batch))


def empty_batch(types: Sequence[SqlType]) -> pa.Table:
    return arrow_schema(list(types)).empty_table()


def empty_like(batch: pa.Table) -> pa.Table:
    return batch.schema.empty_table()


def _column(values: list, t: SqlType) -> pa.Array:
    if t.kind is TypeKind.NUMERIC and t.scale is None:
        from dataflow.decimal_util import check_unconstrained
        for v in values:  # what the storage cannot hold is 22003, never rounded (Arrow would refuse too)
            if isinstance(v, Decimal):
                check_unconstrained(v)
    return pa.array(values, type=t.arrow)


def batch_from_rows(rows: list[tuple], types: Sequence[SqlType], time: int, diff: int = 1) -> pa.Table:
    """Build a batch from Python rows, all at `time` with multiplicity change `diff`."""
    columns = [_column([r[i] for r in rows], t) for i, t in enumerate(types)]
    return batch_from_columns(columns, types, time, diff, rows=len(rows))


def batch_from_columns(columns: Sequence[pa.Array], types: Sequence[SqlType], time: int, diff: int = 1,
                       rows: int | None = None) -> pa.Table:
    """Build a batch from row columns of these types, every row at `time` with multiplicity
    change `diff`. `rows`: how many (required for rows of no columns, which have no column to
    count them by: `SELECT FROM t` has a row per row of t)."""
    n = rows if rows is not None else len(columns[0])
    cols = list(columns) + [pa.array(np.full(n, time, dtype=np.uint64)), pa.array(np.full(n, diff, dtype=np.int64))]
    return pa.Table.from_arrays(cols, schema=arrow_schema(list(types)))


def with_names(batch: pa.Table) -> pa.Table:
    """Rename columns to the canonical c0..cN-1, time, diff (zero-copy)."""
    n = batch.num_columns - 2
    names = [f"c{i}" for i in range(n)] + [TIME, DIFF]
    return batch if batch.column_names == names else batch.rename_columns(names)


def make_batch(columns: Sequence[pa.Array | pa.ChunkedArray], time, diff) -> pa.Table:
    """Assemble row columns plus time/diff arrays into a canonical update batch."""
    arrays = list(columns) + [time, diff]
    names = [f"c{i}" for i in range(len(columns))] + [TIME, DIFF]
    return pa.Table.from_arrays(arrays, names=names)


def consolidate(batch: pa.Table, hashes: np.ndarray | None = None) -> pa.Table:
    """Sum the diffs of identical (row, time) pairs and drop the ones that cancel out.

    Sort-based: every (row, time) gets a 64-bit hash; the top 40 bits and the row's position are
    packed into one uint64 and sorted (a plain NumPy sort, much cheaper than an argsort), so equal
    rows become adjacent and stay in order of first appearance. Rows sharing a hash are checked
    for real equality; the rare groups where hashes collide are consolidated exactly by Arrow's
    hash aggregation (which groups NULLs together, as a multiset should). Output rows come in
    order of first appearance.

    `hashes`: the batch's `row_hashes`, if the caller kept them (the time is mixed in here).
    Hashing the rows is most of the work: a 750k-row orders batch takes ~40 of ~50 ms."""
    return _consolidate(batch, hashes, want_hashes=False)[0]


def consolidate_hashed(batch: pa.Table, hashes: np.ndarray | None = None) -> tuple[pa.Table, np.ndarray]:
    """`consolidate`, also giving the output's `row_hashes`, for whoever merges it again (a
    trace's spine folds each update O(log n) times; with its hashes kept it hashes it once).

        >>> t = make_batch([pa.array([1, 2, 1])], pa.array([0, 0, 0], pa.uint64()), pa.array([1, 1, -1]))
        >>> out, h = consolidate_hashed(t)
        >>> out.column(0).to_pylist(), bool((h == row_hashes(out)).all())
        ([2], True)
    """
    out, out_hashes = _consolidate(batch, hashes, want_hashes=True)
    return out, (out_hashes if out_hashes is not None else row_hashes(out))


def consolidate_keeping_hashes(batch: pa.Table) -> tuple[pa.Table, np.ndarray | None]:
    """`consolidate`, with the output's `row_hashes` where consolidating made them (None where
    it did not: a few rows consolidated as Python values, a batch too large to sort by hash),
    for a caller that keeps them only if they come free (a table write's part, for the
    compaction that merges it).

        >>> t = make_batch([pa.array(list(range(100)) * 2)], pa.array([0] * 200, pa.uint64()), pa.array([1] * 200))
        >>> out, h = consolidate_keeping_hashes(t)
        >>> out.num_rows, bool((h == row_hashes(out)).all()), consolidate_keeping_hashes(t.slice(0, 3))[1]
        (100, True, None)
    """
    return _consolidate(batch, None, want_hashes=True)


def row_hashes(batch: pa.Table) -> np.ndarray:
    """A uint64 hash per update of its row: every column but time, diff and internal ones
    ("__hash": a function of the key, adds nothing to the row's identity)."""
    cols = [i for i, name in enumerate(batch.column_names) if name not in (TIME, DIFF)
            and not name.startswith("__")]
    return hash_columns(batch, cols)


def _consolidate(batch: pa.Table, rows_h: np.ndarray | None,
                 want_hashes: bool) -> tuple[pa.Table, np.ndarray | None]:
    """`consolidate`; with `want_hashes`, also the output rows' hashes where they come for free (else None)."""
    n = batch.num_rows
    if n == 0:
        return batch, rows_h
    diff = batch[DIFF].to_numpy()
    if n == 1:
        return (batch, rows_h) if diff[0] != 0 else (batch.slice(0, 0), None)
    if n >= 1 << _POS_BITS:
        return _consolidate_arrow(batch), None
    if n <= SMALL_BATCH:
        small = _consolidate_small(batch)
        if small is not None:
            return small, None
    given = rows_h is not None
    if not given:
        rows_h = row_hashes(batch)
    h = rows_h.copy() if (given or want_hashes) else rows_h  # (the time is mixed into h in place)
    if TIME in batch.column_names:
        _combine(h, _mix64(_as_uint64_copy(batch[TIME].to_numpy())))
    h &= ~_POS_MASK
    h |= np.arange(n, dtype=np.uint64)
    h.sort()
    top = h >> np.uint64(_POS_BITS)
    h &= _POS_MASK
    idx = h.view(np.int64)  # positions < 2**24: the same bits as int64, no copy
    new_run = np.empty(n, dtype=bool)
    new_run[0] = True
    np.not_equal(top[1:], top[:-1], out=new_run[1:])
    dirty_rows = None
    if not new_run.all():
        # Every row of a run must equal the run's first row; runs where one doesn't are dirty.
        run_id = np.cumsum(new_run) - 1
        starts = np.flatnonzero(new_run)
        follow = np.flatnonzero(~new_run)
        cols = [i for i, name in enumerate(batch.column_names) if name != DIFF]
        a = batch.take(pa.array(idx[follow]))
        b = batch.take(pa.array(idx[starts[run_id[follow]]]))
        from dataflow.arrangement import keys_equal  # local: arrangement imports this module
        same = keys_equal(a, cols, b, cols, nulls_equal=True, nans_equal=True)
        same &= _same_zero_signs(a, b, cols)
        if not same.all():
            dirty_runs = np.zeros(len(starts), dtype=bool)
            dirty_runs[run_id[follow[~same]]] = True
            dirty = dirty_runs[run_id]
            dirty_rows = np.sort(idx[dirty])
            idx, new_run = idx[~dirty], new_run[~dirty]
    n_dirty = 0 if dirty_rows is None else len(dirty_rows)
    dirty_out = _consolidate_arrow(batch.take(pa.array(dirty_rows))) if n_dirty else None
    if new_run.all() and (not n_dirty or dirty_out.num_rows == n_dirty) and diff.all():
        return batch, rows_h  # every (row, time) distinct and no zero diffs (e.g. a snapshot): as is
    starts = np.flatnonzero(new_run)
    sums = np.add.reduceat(diff[idx], starts) if len(starts) else np.zeros(0, np.int64)
    keep = sums != 0
    # Back into order of first appearance by scattering into a row-sized array (O(n), no sort).
    by_row = np.zeros(n, np.int64)
    by_row[idx[starts[keep]]] = sums[keep]
    firsts = np.flatnonzero(by_row)
    if len(firsts) == n - n_dirty and (not n_dirty or dirty_out.num_rows == n_dirty):
        return batch, rows_h  # nothing merged or cancelled anywhere: no need to copy the rows
    out = _with_diff(batch.take(pa.array(firsts)), by_row[firsts])
    if not n_dirty:
        return out, rows_h[firsts]
    return pa.concat_tables([out, dirty_out]), \
        (np.concatenate([rows_h[firsts], row_hashes(dirty_out)]) if want_hashes else None)


def _same_zero_signs(a: pa.Table, b: pa.Table, cols: Sequence[int]) -> np.ndarray:
    """-0.0 and 0.0 are equal in SQL but different values: rows differing only there are
    different rows (a stored 0 must not read back as -0), so consolidation keeps them apart."""
    same = np.ones(a.num_rows, dtype=bool)
    for i in cols:
        if pa.types.is_floating(a.schema.field(i).type):
            x = pc.fill_null(a.column(i), 1.0).to_numpy()
            y = pc.fill_null(b.column(i), 1.0).to_numpy()
            same &= ((x == 0) & np.signbit(x)) == ((y == 0) & np.signbit(y))
    return same


_POS_BITS = 24
_POS_MASK = np.uint64((1 << _POS_BITS) - 1)


class _NaN:
    """Every NaN's key in `_consolidate_small` (NaNs are one value there, as in the general path)."""


def _float_key(v: float | None) -> object:
    # -0.0 and 0.0 stay apart (the general path checks zero signs); NaNs come together.
    if v is None:
        return None
    return _NaN if v != v else (v, math.copysign(1.0, v))


def _consolidate_small(batch: pa.Table) -> pa.Table | None:
    """`consolidate` for a few rows, as Python values in a dict (the vectorised path's fixed
    cost is ~10x more at this size), with the same result: rows in order of first appearance,
    NULLs equal, NaNs equal, -0.0 apart from 0.0. None when a value cannot be a dict key
    (the general path then)."""
    d = batch.schema.get_field_index(DIFF)
    diffs = batch.column(d).to_pylist()
    columns = []
    for i, f in enumerate(batch.schema):
        if i != d:
            values = batch.column(i).to_pylist()
            columns.append([_float_key(v) for v in values] if pa.types.is_floating(f.type) else values)
    sums: dict = {}
    first: dict = {}
    try:
        for i, key in enumerate(zip(*columns)):
            if key in sums:
                sums[key] += diffs[i]
            else:
                sums[key], first[key] = diffs[i], i
    except TypeError:  # unhashable values (lists, structs)
        return None
    if len(sums) == len(diffs) and all(diffs):
        return batch
    kept = [(first[key], total) for key, total in sums.items() if total]  # (dicts keep order)
    if not kept:
        return batch.slice(0, 0)
    rows, totals = zip(*kept)
    return _with_diff(batch.take(pa.array(rows, pa.int64())), np.array(totals, np.int64))


def _with_diff(batch: pa.Table, diff: np.ndarray) -> pa.Table:
    idx = batch.schema.get_field_index(DIFF)
    return batch.set_column(idx, batch.schema.field(idx), pa.array(diff.astype(np.int64, copy=False)))


def _consolidate_arrow(batch: pa.Table) -> pa.Table:
    """Exact consolidation by Arrow's hash aggregation (NULLs group together)."""
    keys = [n for n in batch.column_names if n != DIFF]
    grouped = batch.group_by(keys, use_threads=False).aggregate([(DIFF, "sum")])
    grouped = grouped.filter(pc.not_equal(grouped[f"{DIFF}_sum"], 0))
    cols = [grouped[f"{DIFF}_sum"] if n == DIFF else grouped[n] for n in batch.column_names]
    out = pa.Table.from_arrays(cols, names=batch.column_names)
    return out.cast(batch.schema) if out.schema != batch.schema else out


def advance_times(batch: pa.Table, as_of: int) -> pa.Table:
    """time = max(time, as_of): updates before the as_of are observed at the as_of."""
    if batch.num_rows == 0:
        return batch
    if batch[TIME].to_numpy().min() >= as_of:
        return batch  # nothing to advance (the usual case): no new column
    idx = batch.schema.get_field_index(TIME)
    times = pc.max_element_wise(batch[TIME], pa.scalar(as_of, pa.uint64()))
    return batch.set_column(idx, batch.schema.field(idx), times)


def snapshot_at(updates: pa.Table, as_of: int) -> pa.Table:
    """The contents at `as_of` of a collection given by its updates: those at or before `as_of`,
    all at time `as_of`, consolidated."""
    if updates.num_rows == 0:
        return updates
    return consolidate(_visible_at(updates, as_of))


def contents_at(updates: pa.Table, as_of: int) -> pa.Table:
    """`snapshot_at` for a reader that takes a multiset (a peek's answer: its rows are repeated
    by count when sent): consolidated only if some visible update retracts. With none, no
    copy of a row can cancel, so the copies may stay apart; a lookup's few rows skip the
    hashing (~0.5 of ~1.8 ms for a 100-key read of a 1M-row index).

        >>> t = make_batch([pa.array([1, 1, 2])], pa.array([0, 1, 5], pa.uint64()), pa.array([1, 1, 1]))
        >>> out = contents_at(t, 3)
        >>> out.column(0).to_pylist(), out["time"].to_pylist(), out["diff"].to_pylist()
        ([1, 1], [3, 3], [1, 1])
    """
    if updates.num_rows == 0:
        return updates
    visible = _visible_at(updates, as_of)
    if visible.num_rows and pc.min(visible[DIFF]).as_py() > 0:
        return visible
    return consolidate(visible)


def _visible_at(updates: pa.Table, as_of: int) -> pa.Table:
    """The updates at or before `as_of`, all at `as_of` (not consolidated)."""
    visible = updates.filter(pc.less_equal(updates[TIME], pa.scalar(as_of, pa.uint64())))
    return advance_times(visible, as_of)


def _mix64(u: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, in place on a uint64 array (bit-identical to the mixing step of
    pandas' `hash_array` for 64-bit numbers, without its per-call overhead). One scratch array
    serves every shift, so a 10M-row column allocates (and page-faults) 80 MB once, not thrice."""
    tmp = np.empty_like(u)
    with np.errstate(over="ignore"):
        np.right_shift(u, np.uint64(30), out=tmp)
        u ^= tmp
        u *= np.uint64(0xBF58476D1CE4E5B9)
        np.right_shift(u, np.uint64(27), out=tmp)
        u ^= tmp
        u *= np.uint64(0x94D049BB133111EB)
        np.right_shift(u, np.uint64(31), out=tmp)
        u ^= tmp
    return u


def _as_uint64_copy(vals: np.ndarray) -> np.ndarray:
    """A writable uint64 copy of 64-bit numbers, reinterpreting their bits."""
    return vals.view(np.uint64).copy() if vals.dtype.itemsize == 8 else vals.astype(np.int64).view(np.uint64)


def _float_hash(vals: np.ndarray) -> np.ndarray:
    vals = vals.astype(np.float64, copy=False)
    u = _as_uint64_copy(vals)
    nan = np.isnan(vals)
    if nan.any():
        u[nan] = np.array(np.nan, np.float64).view(np.uint64)  # every NaN hashes alike
    u[vals == 0.0] = 0  # -0.0 == 0.0 in SQL
    return _mix64(u)


def _column_hash(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A uint64 hash per value that depends only on the value (not its storage width):
    every integer width hashes as int64, every float as float64, decimals by their float value
    (equal decimals of different scales hash alike; collisions are checked by callers)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = col.type
    n = len(col)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if pa.types.is_dictionary(t):
        col = col.dictionary_decode()
        t = col.type
    nulls = col.null_count
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_duration(t):
        if pa.types.is_boolean(t) or pa.types.is_duration(t):  # duration: timetz's int64 keys
            col = col.cast(pa.int64()) if pa.types.is_boolean(t) else col.view(pa.int64())
        vals = (pc.fill_null(col, 0) if nulls else col).to_numpy(zero_copy_only=False)
        if vals.dtype == np.uint64:
            u = vals.copy()  # values past 2**63 keep their bits
        else:
            u = _as_uint64_copy(vals)
        h = _mix64(u)
    elif pa.types.is_floating(t):
        h = _float_hash((pc.fill_null(col, 0.0) if nulls else col).to_numpy(zero_copy_only=False))
    elif pa.types.is_decimal(t):
        f = col.cast(pa.float64(), safe=False)
        h = _float_hash((pc.fill_null(f, 0.0) if nulls else f).to_numpy(zero_copy_only=False))
    elif pa.types.is_date(t) or pa.types.is_timestamp(t):
        # Every date/timestamp hashes as microseconds since the epoch (dates equal midnights).
        us = col.cast(pa.timestamp("us", tz=getattr(t, "tz", None))).view(pa.int64())
        h = _mix64(_as_uint64_copy((pc.fill_null(us, 0) if nulls else us).to_numpy(zero_copy_only=False)))
    elif _is_bytes_like(t) and n <= SMALL_BATCH:
        h = _bytes_hash(col)
    elif _is_bytes_like(t):
        # Hash the distinct values once, then gather (most string columns repeat values).
        enc = pc.dictionary_encode(col)
        idx = pc.fill_null(enc.indices, 0).to_numpy(zero_copy_only=False)
        h = _bytes_hash(enc.dictionary)[idx] if len(enc.dictionary) else np.zeros(n, dtype=np.uint64)
    elif pa.types.is_time(t):
        h = _mix64(_as_uint64_copy(pc.fill_null(col.cast(pa.time64("us")).view(pa.int64()), 0)
                                   .to_numpy(zero_copy_only=False)))
    elif pa.types.is_interval(t):
        h = _interval_hash(col)
    elif pa.types.is_null(t):
        return np.full(n, _NULL_HASH, dtype=np.uint64)
    else:
        # Anything else (no column type the engine stores): the values' text.
        h = _bytes_hash(pa.array([str(v) for v in col.to_pylist()], pa.string()))
    if nulls:
        h = np.where(col.is_null().to_numpy(zero_copy_only=False), _NULL_HASH, h)
    return h


def _is_bytes_like(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t)


# Bytes are hashed this many at a time, so the scratch arrays (24 bytes per byte hashed) stay
# small whatever the column holds.
_BYTES_CHUNK = 1 << 20


def _bytes_hash(col: pa.Array) -> np.ndarray:
    """A uint64 hash per string (or binary) value from its bytes, read from Arrow's offsets and
    data buffers: each byte times a pseudo-random odd coefficient of its position, summed per
    value (np.add.reduceat), mixed with the length and finalised (splitmix64). No Python object
    per value. Null slots hash as their (empty) bytes; the caller overwrites them."""
    n = len(col)
    wide = pa.types.is_large_string(col.type) or pa.types.is_large_binary(col.type)
    _, offsets_buf, data_buf = col.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64 if wide else np.int32, n + 1, col.offset * (8 if wide else 4))
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None and data_buf.size else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    h = np.full(n, _NULL_HASH ^ _MIX, np.uint64)  # (so the empty string does not hash as 0 does)
    if n and offsets[-1] > offsets[0]:
        longest = int(lengths.max())
        coefficients = _COEFFICIENTS if longest <= len(_COEFFICIENTS) else _coefficients(longest)
        if offsets[-1] - offsets[0] <= _BYTES_CHUNK:  # (the usual case: all in one go)
            _bytes_sums(data, offsets, lengths, coefficients, h)
            first = n
        else:
            first = 0
        while first < n:  # whole values, about _BYTES_CHUNK bytes at a time
            last = int(np.searchsorted(offsets, offsets[first] + _BYTES_CHUNK, side="right")) - 1
            last = min(max(last, first + 1), n)
            _bytes_sums(data, offsets[first:last + 1], lengths[first:last], coefficients, h[first:last])
            first = last
    with np.errstate(over="ignore"):
        h ^= lengths.astype(np.uint64) * _MIX
    return _mix64(h)


def _coefficients(length: int) -> np.ndarray:
    """The odd pseudo-random coefficient of each byte position below `length`."""
    c = _mix64(np.arange(length, dtype=np.uint64) + np.uint64(0x243F6A8885A308D3))
    c |= np.uint64(1)
    return c


_COEFFICIENTS = _coefficients(256)  # (a value's bytes past these are weighed by a longer table)


def _bytes_sums(data: np.ndarray, offsets: np.ndarray, lengths: np.ndarray,
                coefficients: np.ndarray, out: np.ndarray) -> None:
    """out[i] = sum over value i's bytes b at position p of (b + 1) * coefficients[p], mod 2**64."""
    nonempty = lengths > 0
    if not nonempty.any():
        return
    starts = offsets[:-1] - offsets[0]
    chunk = data[offsets[0]:offsets[-1]].astype(np.uint64)
    position = np.arange(len(chunk), dtype=np.int64) - np.repeat(starts, lengths)
    with np.errstate(over="ignore"):
        chunk += np.uint64(1)
        chunk *= coefficients[position]
    # Values are contiguous, so the sums start at the non-empty values' first bytes.
    out[nonempty] = np.add.reduceat(chunk, starts[nonempty])


def _interval_hash(col: pa.Array) -> np.ndarray:
    """Intervals by their (months, days, microseconds) fields, as keys compare them."""
    months, days, micros = interval.split(col)
    h = _mix64(micros.view(np.uint64).copy())
    _combine(h, _mix64(days.view(np.uint64).copy()))
    _combine(h, _mix64(months.view(np.uint64).copy()))
    return h


# Batches up to this many rows take the small-batch paths (Python values instead of kernels
# whose fixed cost dominates at this size).
SMALL_BATCH = 64


def hash_columns(batch: pa.Table, columns: Sequence[int]) -> np.ndarray:
    """A deterministic uint64 hash of the given row columns per row (same across processes)."""
    n = batch.num_rows
    h = np.full(n, np.uint64(0x2545F4914F6CDD1D), dtype=np.uint64)
    for c in columns:
        _combine(h, _column_hash(batch.column(c)))
    return h


def _combine(h: np.ndarray, ch: np.ndarray) -> None:
    """h = mix(h ^ ch), in place; `ch` is consumed as scratch space."""
    with np.errstate(over="ignore"):
        h ^= ch
        h *= _MIX
        np.right_shift(h, np.uint64(29), out=ch)
        h ^= ch


def partition(batch: pa.Table, columns: Sequence[int], parts: int) -> list[pa.Table]:
    """Split a batch into `parts` by hash of the key columns (part = hash % parts)."""
    if parts == 1:
        return [batch]
    if batch.num_rows == 0:
        return [batch] * parts
    dest = (hash_columns(batch, columns) % np.uint64(parts)).astype(np.int64)
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(parts + 1))
    taken = batch.take(pa.array(order))
    return [taken.slice(bounds[i], bounds[i + 1] - bounds[i]) for i in range(parts)]


def partition_rows(batch: pa.Table, parts: int) -> list[pa.Table]:
    """Split a batch by the hash of all its row columns: where a table write's rows live on a
    replica's workers, whether the controller splits the write or each worker takes its own
    part of a whole one."""
    return partition(batch, tuple(range(batch.num_columns - 2)), parts)


def rows_of(batch: pa.Table) -> list[tuple]:
    """Row columns only, as Python tuples (for results at the edge of the system)."""
    names = row_names(batch)
    if not names:
        return [()] * batch.num_rows
    cols = [batch[n].to_pylist() for n in names]
    return list(zip(*cols))


def as_schema(batch: pa.Table, schema: pa.Schema) -> pa.Table:
    """`batch` (columns in `schema`'s order) as a table of `schema`: relabelled when only names or
    nullability flags differ and no NULL sits where `schema` allows none (~3 us), else renamed
    and cast (~30 us on a few rows, which every step of every operator paid).

    >>> t = pa.table({"a": [1, 2]})
    >>> as_schema(t, pa.schema([pa.field("c0", pa.int64(), nullable=False)])).schema
    c0: int64 not null
    >>> as_schema(t, pa.schema([pa.field("c0", pa.int32())])).column(0).type
    DataType(int32)
    """
    if batch.schema == schema:
        return batch
    if batch.schema.types == schema.types and all(f.nullable or not c.null_count for c, f in zip(batch.columns, schema)):
        return pa.Table.from_arrays(batch.columns, schema=schema)
    return batch.rename_columns(schema.names).cast(schema)


def concat(batches: Sequence[pa.Table], schema: pa.Schema | None = None) -> pa.Table:
    """Concatenate batches with the same column layout (types are unified to the first)."""
    batches = [b for b in batches if b is not None]
    if not batches:
        assert schema is not None
        return schema.empty_table()
    target = schema or batches[0].schema
    fixed = [as_schema(b, target) for b in batches]
    if len(fixed) == 1:
        return fixed[0]
    return pa.concat_tables(fixed)


def negate(batch: pa.Table) -> pa.Table:
    idx = batch.schema.get_field_index(DIFF)
    return batch.set_column(idx, batch.schema.field(idx), pc.negate(batch[DIFF]))
