"""Arrangements: multi-version indexed collections of updates.

An arrangement keeps every update of a collection in a *spine* of immutable batches, each sorted
by the 64-bit hash of the key columns (the key columns stay in the batch so matches are checked
for real equality). New batches are appended and merged like a size-tiered LSM tree
(`merge_due`): once the newest FAN_IN batches are of about one size they merge into one,
advancing times to `since` and consolidating, so cancelled updates disappear. (A binary spine,
merging whenever the newest batch is as large as the one before, moved each update through
twice as many merges, each an Arrow `take` of all their rows; merging at half the size cost
~20% more again.) A probe finds its matches by binary search on the sorted hashes
(`numpy.searchsorted`) of each batch, so work follows the probe, not the
state.

Small inserts (<= SMALL_BATCH rows, e.g. one changed row) skip the sort/merge machinery: they
are consolidated and appended to a *pending* run, unsorted, with their key
hashes cached beside them. A probe compares its hashes with the pending hashes directly (a tiny
NumPy outer comparison); once the pending run reaches SMALL_BATCH rows it is built into a spine
batch like any other insert. Readers see pending rows exactly like spine rows.

>>> from dataflow.types import INT8, TEXT
>>> from dataflow.batch import batch_from_rows, rows_of
>>> a = Arrangement(key=(0,))
>>> a.insert(batch_from_rows([(1, "x"), (2, "y")], [INT8, TEXT], time=1))
>>> a.insert(batch_from_rows([(1, "x")], [INT8, TEXT], time=2, diff=-1))
>>> rows_of(a.snapshot(2))
[(2, 'y')]
>>> rows_of(a.lookup(batch_from_rows([(2,)], [INT8], time=0), (0,)))
[(2, 'y')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval

from dataflow.batch import (DIFF, SMALL_BATCH, TIME, advance_times, consolidate, hash_columns, snapshot_at,
                           with_names)

HASH = "__hash"


@dataclass
class _SpineBatch:
    table: pa.Table  # c0..cN-1, time, diff, __hash; sorted by __hash
    hashes: np.ndarray

    def __len__(self) -> int:
        return self.table.num_rows


def keys_equal(a: pa.Table, a_cols: Sequence[int], b: pa.Table, b_cols: Sequence[int],
               nulls_equal: bool = True, nans_equal: bool = False) -> np.ndarray:
    """Row-wise equality of key columns of two equally long tables (NULL = NULL, NaN = NaN if
    asked: grouping treats NaN as one value, as PostgreSQL does)."""
    from dataflow.scalar import _comparable  # local import: scalar is heavier and imports us not

    eq = np.ones(a.num_rows, dtype=bool)
    for ca, cb in zip(a_cols, b_cols):
        x, y = a.column(ca), b.column(cb)
        if a.num_rows <= SMALL_BATCH and x.type == y.type:
            # A few rows of one type: Python equality (NaN != NaN, as in pc.equal) is cheaper
            # than the five kernels below.
            eq &= np.array([_py_equal(u, v, nulls_equal, nans_equal) for u, v in zip(x.to_pylist(), y.to_pylist())],
                           bool)
            continue
        x = x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x
        y = y.combine_chunks() if isinstance(y, pa.ChunkedArray) else y
        if x.type == y.type and pa.types.is_integer(x.type) and not x.null_count and not y.null_count:
            # Integers without NULLs (the usual key): one NumPy comparison, not five kernels.
            eq &= x.to_numpy() == y.to_numpy()
            continue
        x, y = _comparable(x, y)
        if x.type == interval.ARROW:
            # Arrow has no = for intervals: a key is the same when its three fields are.
            (xm, xd, xu), (ym, yd, yu) = interval.split(x), interval.split(y)
            e = pa.array((xm == ym) & (xd == yd) & (xu == yu), mask=~(interval.valid_mask(x) & interval.valid_mask(y)))
        else:
            e = pc.equal(x, y)
        if nulls_equal:
            e = pc.if_else(pc.and_(x.is_null(), y.is_null()), True, e)
        if nans_equal and pa.types.is_floating(x.type):
            e = pc.or_(e, pc.fill_null(pc.and_(pc.is_nan(x), pc.is_nan(y)), False))
        eq &= pc.fill_null(e, False).to_numpy(zero_copy_only=False)
    return eq


def _py_equal(u, v, nulls_equal: bool, nans_equal: bool = False) -> bool:
    if u is None or v is None:
        return nulls_equal and u is None and v is None
    return bool(u == v) or (nans_equal and u != u and v != v)


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For probe i with match range [lo[i], hi[i]): (probe index, matched position) pairs."""
    counts = hi - lo
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    probe = np.repeat(np.arange(len(lo)), counts)
    starts = np.cumsum(counts) - counts
    pos = np.repeat(lo, counts) + (np.arange(total) - np.repeat(starts, counts))
    return probe, pos


def merge_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The permutation of concat(a, b) that sorts it, for sorted `a` and `b` (O(n), stable).

    >>> merge_order(np.array([1, 4, 9], np.uint64), np.array([4, 5], np.uint64)).tolist()
    [0, 1, 3, 4, 2]
    """
    n = len(a) + len(b)
    pos_b = np.searchsorted(a, b, side="right") + np.arange(len(b))
    is_b = np.zeros(n, bool)
    is_b[pos_b] = True
    perm = np.empty(n, np.int64)
    perm[pos_b] = np.arange(len(a), n)
    perm[~is_b] = np.arange(len(a))
    return perm


def merge_order_many(runs: list[np.ndarray]) -> np.ndarray:
    """The permutation of the concatenation of sorted `runs` that sorts it (stable).

    >>> merge_order_many([np.array([1, 9], np.uint64), np.array([4], np.uint64), np.array([2, 4], np.uint64)]).tolist()
    [0, 3, 2, 4, 1]
    """
    order, merged = np.arange(len(runs[0])), runs[0]
    for run in runs[1:]:
        step = merge_order(merged, run)
        order = np.concatenate([order, np.arange(len(order), len(order) + len(run))])[step]
        merged = np.concatenate([merged, run])[step]
    return order


# How many spine batches of about one size merge at once. Two (a binary spine) moves each update
# through ~log2(n/b) merges; four through ~log4(n/b), at the price of probing up to ~3 batches
# per size class. At 1M orders and 10k-change batches the orders index's merges were ~55% of a
# worker's CPU, nearly all Arrow `take`s re-gathering the same rows (see `merge_due`).
FAN_IN = 4


def merge_due(sizes: Sequence[int]) -> int:
    """How many of the newest batches of a spine (sizes, oldest first) to merge now, or 0. A
    size-tiered rule: the newest FAN_IN batches merge once they are of about one size (the
    oldest of them at most twice the newest), and the newest batch folds into the one before
    it once it is more than twice as large (a large write after small ones), so sizes fall
    geometrically from oldest to newest and a probe searches a logarithmic number of batches.

    >>> merge_due([1000, 10, 10, 10]), merge_due([1000, 10, 10, 10, 10]), merge_due([10, 100])
    (0, 4, 2)
    """
    if len(sizes) >= FAN_IN and sizes[-FAN_IN] <= 2 * sizes[-1]:
        return FAN_IN
    if len(sizes) >= 2 and sizes[-1] > 2 * sizes[-2]:
        return 2
    return 0


class TooManyMatches(Exception):
    """A probe would match more stored updates than the caller allowed (`count` of them)."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


class Arrangement:
    """Updates indexed by the hash of `key` columns, in a geometrically merged spine."""

    def __init__(self, key: Sequence[int], since: int = 0) -> None:
        self.key = tuple(key)
        self.since = since
        self.spine: list[_SpineBatch] = []
        self.schema: pa.Schema | None = None
        # Recent small inserts, not yet in the spine: tables (with HASH) and their key hashes.
        self._pending: list[pa.Table] = []
        self._pending_h: np.ndarray = np.zeros(0, np.uint64)
        self._pending_table: pa.Table | None = None  # concatenation of _pending, built lazily

    def __len__(self) -> int:
        return sum(len(b) for b in self.spine) + len(self._pending_h)

    # -- writing ------------------------------------------------------------------------------

    def insert(self, batch: pa.Table, hashes: np.ndarray | None = None) -> None:
        """Add updates; `hashes` (optional) are `hash_columns(batch, self.key)` if the caller
        already has them."""
        if batch.num_rows == 0:
            return
        batch = with_names(batch)
        if self.schema is None:
            self.schema = batch.schema
        elif batch.schema != self.schema:
            batch = batch.cast(self.schema)
        h = hash_columns(batch, self.key) if hashes is None else hashes
        table = batch.append_column(HASH, pa.array(h, pa.uint64()))
        if batch.num_rows <= SMALL_BATCH:
            # Consolidated on entry, as every spine batch is (a tiny batch: cheap).
            built = consolidate(advance_times(table, self.since) if self.since else table)
            if built.num_rows == 0:
                return
            if built is not table:
                table, h = built, built[HASH].to_numpy()
            self._pending.append(table)
            self._pending_h = np.concatenate([self._pending_h, h]) if len(self._pending_h) else h
            self._pending_table = None
            if len(self._pending_h) >= SMALL_BATCH:
                self._flush_pending()
            return
        self._push(self._build(table))

    def pending_rows(self) -> int:
        """How many updates wait in the pending run (not yet in the spine)."""
        return len(self._pending_h)

    def _pending_rows(self) -> pa.Table | None:
        if not self._pending:
            return None
        if self._pending_table is None:
            t = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending = [t]
            self._pending_table = t
        return self._pending_table

    def _flush_pending(self) -> None:
        t = self._pending_rows()
        self._pending, self._pending_h, self._pending_table = [], np.zeros(0, np.uint64), None
        if t is not None:
            self._push(self._build(t))

    def _build(self, table: pa.Table, presorted: bool = False) -> _SpineBatch | None:
        """A spine batch of `table` (which carries HASH): times advanced, consolidated, sorted by
        hash. `presorted`: the rows already come in hash order (consolidate keeps row order)."""
        table = advance_times(table, self.since) if self.since else table
        table = consolidate(table)
        if table.num_rows == 0:
            return None
        h = table[HASH].to_numpy()
        if presorted and (len(h) < 2 or bool((h[1:] >= h[:-1]).all())):
            return _SpineBatch(table, h)
        # (Rows consolidate set apart for hash collisions come last: then sort after all.)
        order = np.argsort(h)  # any order among equal hashes will do; quicksort is ~5x faster
        table = table.take(pa.array(order))
        return _SpineBatch(table, h[order])

    def _push(self, b: _SpineBatch | None) -> None:
        if b is not None:
            self.spine.append(b)
        while True:
            run = merge_due([len(b) for b in self.spine])
            if not run:
                return
            merged = self._merge(self.spine[-run:])
            del self.spine[-run:]
            if merged is not None:
                self.spine.append(merged)

    def _merge(self, batches: list[_SpineBatch]) -> _SpineBatch | None:
        """One spine batch of several. Each is consolidated and sorted by its cached key hashes,
        so they merge linearly, and only updates whose key hash occurs more than once can
        combine or cancel: those alone are consolidated. Under a unique key (an index on
        orders(id)) that is the few updated keys, not the whole batch: hashing every row for
        consolidation was most of a merge."""
        order = merge_order_many([b.hashes for b in batches])
        h = np.concatenate([b.hashes for b in batches])[order]
        both = pa.concat_tables([b.table for b in batches])
        shared = np.zeros(len(h), bool)
        repeat = h[1:] == h[:-1]
        shared[1:] |= repeat
        shared[:-1] |= repeat
        if shared.any():
            grouped = self._build(both.take(pa.array(order[shared])), presorted=True)
            lone, lone_h = order[~shared], h[~shared]
            if grouped is None:
                order, h = lone, lone_h
            else:
                # One gather of the big table: the lone rows from it and the consolidated
                # ones from the end of it, in hash order.
                perm = merge_order(lone_h, grouped.hashes)
                order = np.concatenate([lone, np.arange(both.num_rows, both.num_rows + len(grouped))])[perm]
                h = np.concatenate([lone_h, grouped.hashes])[perm]
                both = pa.concat_tables([both, grouped.table])
            if not len(order):
                return None
        table = both.take(pa.array(order))
        return _SpineBatch(advance_times(table, self.since) if self.since else table, h)

    def compact(self, since: int) -> None:
        """Allow times before `since` to be forgotten: they read as `since` from now on and are
        physically advanced (and consolidated) when batches merge."""
        self.since = max(self.since, since)

    def compact_now(self) -> None:
        """Merge the whole spine into one consolidated batch at the current `since`."""
        self._flush_pending()
        if len(self.spine) > 1 or (self.spine and self.since):
            merged = self._build(pa.concat_tables([b.table for b in self.spine]))
            self.spine = [merged] if merged is not None else []

    # -- reading ------------------------------------------------------------------------------

    def _finish(self, tables: list[pa.Table]) -> pa.Table:
        if not tables:
            return self.empty()
        out = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        out = out.drop_columns([HASH])
        return advance_times(out, self.since) if self.since else out

    def empty(self) -> pa.Table:
        if self.schema is None:
            return pa.table({TIME: pa.array([], pa.uint64()), DIFF: pa.array([], pa.int64())})
        return self.schema.empty_table()

    def bytes_per_row(self) -> float:
        """The average in-memory size of a stored update (0 when empty)."""
        rows = sum(len(b) for b in self.spine) + self.pending_rows()
        if rows == 0:
            return 0.0
        size = sum(b.table.nbytes for b in self.spine)
        pending = self._pending_rows()
        if pending is not None:
            size += pending.nbytes
        return size / rows

    def matches(self, probe: pa.Table, probe_key: Sequence[int], nulls_equal: bool = True,
                probe_hashes: np.ndarray | None = None,
                max_matches: int | None = None) -> tuple[np.ndarray, pa.Table]:
        """Every stored update whose key equals a probe row's key: (probe row index per match,
        the matched updates). Times are read as of `since`. `probe_hashes` (optional) are
        `hash_columns(probe, probe_key)` if the caller already has them. With `max_matches`,
        more candidate matches than that raise `TooManyMatches` before any is materialised."""
        if probe.num_rows == 0 or not (self.spine or self._pending):
            return np.zeros(0, np.int64), self.empty()
        ph = hash_columns(probe, probe_key) if probe_hashes is None else probe_hashes
        # Binary search with sorted needles walks the big array in order (cache friendly).
        porder = np.argsort(ph) if len(ph) > 1 else np.zeros(len(ph), np.int64)
        sph = ph[porder]
        ranges = [(np.searchsorted(b.hashes, sph, side="left"), np.searchsorted(b.hashes, sph, side="right"))
                  for b in self.spine]
        if max_matches is not None:
            total = sum(int((hi - lo).sum()) for lo, hi in ranges)
            if self._pending:
                total += int((ph[:, None] == self._pending_h[None, :]).sum())
            if total > max_matches:
                raise TooManyMatches(total)
        probe_idx, found = [], []
        for b, (lo, hi) in zip(self.spine, ranges):
            if len(sph) == 1:
                # One key: its matches are one run of the sorted batch, a slice (no copy).
                n = int(hi[0] - lo[0])
                if n:
                    probe_idx.append(np.zeros(n, np.int64))
                    found.append(b.table.slice(int(lo[0]), n))
                continue
            pi, pos = expand_ranges(lo, hi)
            pi = porder[pi]
            if len(pi):
                probe_idx.append(pi)
                found.append(b.table.take(pa.array(pos)))
        if self._pending:
            # The pending run is tiny: compare every probe hash with every pending hash.
            pi, pos = np.nonzero(ph[:, None] == self._pending_h[None, :])
            if len(pi):
                probe_idx.append(pi)
                found.append(self._pending_rows().take(pa.array(pos)))
        if not found:
            return np.zeros(0, np.int64), self.empty()
        pidx = np.concatenate(probe_idx)
        table = pa.concat_tables(found) if len(found) > 1 else found[0]
        # Hash equality is not key equality: check the key columns themselves.
        # NaN equals NaN in SQL (PostgreSQL's float semantics), also as a join key.
        ok = keys_equal(probe.take(pa.array(pidx)), probe_key, table, self.key, nulls_equal, nans_equal=True)
        if not ok.all():
            pidx, table = pidx[ok], table.filter(pa.array(ok))
        return pidx, self._finish([table])

    def lookup(self, keys_batch: pa.Table, key_cols: Sequence[int]) -> pa.Table:
        """The stored updates whose key matches any row of `keys_batch` (each match once)."""
        if keys_batch.num_rows == 0:
            return self.empty()
        # Probe each distinct key once so duplicates in the probe don't duplicate matches.
        cols = [keys_batch.column(c) for c in key_cols]
        names = [f"k{i}" for i in range(len(cols))]
        if not cols:
            distinct = pa.table({"k": pa.array([0])})
        elif keys_batch.num_rows == 1:  # a point lookup: distinct already (no hash aggregation)
            distinct = pa.Table.from_arrays(cols, names=names)
        elif len(cols) == 1:  # (NULLs and NaNs come together as in the aggregation; ~8x cheaper)
            distinct = pa.Table.from_arrays([pc.unique(cols[0])], names=names)
        else:
            distinct = pa.Table.from_arrays(cols, names=names).group_by(names, use_threads=False).aggregate([])
            distinct = distinct.select(names)
        _, table = self.matches(distinct, list(range(len(key_cols))))
        return table

    def updates(self) -> pa.Table:
        """Every stored update (times read as of `since`), unconsolidated across batches."""
        pending = self._pending_rows()
        return self._finish([b.table for b in self.spine] + ([pending] if pending is not None else []))

    def snapshot(self, as_of: int) -> pa.Table:
        """The collection's contents at `as_of`, consolidated, all at time `as_of`."""
        return snapshot_at(self.updates(), as_of)
