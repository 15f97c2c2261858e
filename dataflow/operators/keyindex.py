"""KeyIndex: a vectorised dictionary from key tuples to dense slot numbers.

Stateful per-key operators (reduce, distinct, threshold) keep their state in NumPy arrays
indexed by slot. The index holds the sorted 64-bit key hashes (found by `searchsorted`) and the
key rows themselves in slot order; after a hash match the key columns are compared, and keys
that collide are placed by open addressing (re-mixed hashes), so groups never merge.

Small batches (<= SMALL_BATCH rows, e.g. one changed row) first try a Python dict from key
values to slots, filled by earlier small batches: slots never move, so an entry never goes
stale, and Python equality agrees with SQL grouping for the values Arrow hands back (NULL = NULL,
-0.0 = 0.0, 1.5 = 1.50; a NaN is a fresh object each time, so it simply misses). Any miss sends
the whole batch down the vectorised path, whose answers then fill the dict.

>>> from dataflow.batch import batch_from_rows
>>> from dataflow.types import TEXT
>>> ix = KeyIndex(1)
>>> ix.slots_for(batch_from_rows([("a",), ("b",), ("a",), (None,)], [TEXT], 0).select(["c0"])).tolist()
[0, 1, 0, 2]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import keys_equal
from dataflow.batch import SMALL_BATCH, hash_columns
from dataflow.errors import SqlError, SqlState

_REMIX = np.uint64(0xBF58476D1CE4E5B9)
# The small-batch dict is cleared when it grows past this many keys (bounded memory).
RECENT_MAX = 1 << 16


class KeyIndex:
    def __init__(self, arity: int) -> None:
        self.arity = arity
        self.size = 0
        self._hashes = np.zeros(0, np.uint64)  # sorted
        self._slots = np.zeros(0, np.int64)    # slot of each sorted hash
        # Key rows in slot order: a base of one chunk and, after it, a tail (combined into one
        # chunk when read) folded into the base when it reaches an eighth of it. Arrow's take
        # on a table of several chunks concatenates them first: with 1M keys (V2 at 10M
        # orders) each lookup of a step's few hundred keys copied the 1M keys (~0.6 ms, several
        # per step).
        self._keys: pa.Table | None = None
        self._tail: pa.Table | None = None
        self._recent: dict[tuple, int] = {}    # key values -> slot, for keys seen in small batches

    def keys(self, slots: np.ndarray) -> pa.Table:
        """The key rows of the given slots."""
        if self.arity == 0:
            return pa.table({})
        assert self._keys is not None
        base, tail = self._keys, self._tail
        nb = base.num_rows
        if tail is None or not len(slots) or slots.max() < nb:
            return base.take(pa.array(slots))
        if tail.column(0).num_chunks > 1:
            tail = self._tail = tail.combine_chunks()
        if slots.min() >= nb:
            return tail.take(pa.array(slots - nb))
        in_base = slots < nb
        got = pa.concat_tables([base.take(pa.array(slots[in_base])), tail.take(pa.array(slots[~in_base] - nb))])
        placed = np.concatenate([np.flatnonzero(in_base), np.flatnonzero(~in_base)])  # where each row goes
        return got.combine_chunks().take(pa.array(np.argsort(placed)))

    def slots_for(self, keys: pa.Table) -> np.ndarray:
        """Slot per key row, allocating slots for keys never seen before.

        Open addressing over the hash: a key whose hash is already taken by a different key
        (a collision: e.g. two decimals equal as floats) moves on to a re-mixed hash, round by
        round, vectorised over all the rows still pending."""
        n = keys.num_rows
        if self.arity == 0:
            self.size = max(self.size, 1)
            return np.zeros(n, np.int64)
        if n > SMALL_BATCH:
            return self._slots_general(keys)
        try:
            rows = list(zip(*[keys.column(i).to_pylist() for i in range(self.arity)]))
            got = [self._recent.get(r) for r in rows]
        except TypeError:  # unhashable values (lists, structs): the general path only
            return self._slots_general(keys)
        if None not in got:
            return np.array(got, np.int64)
        slots = self._slots_general(keys)
        if len(self._recent) > RECENT_MAX:
            self._recent.clear()
        self._recent.update(zip(rows, slots.tolist()))
        return slots

    def _slots_general(self, keys: pa.Table) -> np.ndarray:
        n = keys.num_rows
        keys = keys.rename_columns([f"k{i}" for i in range(self.arity)])
        cols = list(range(self.arity))
        hc = hash_columns(keys, cols)
        slots = np.full(n, -1, np.int64)
        pending = np.arange(n)
        for _ in range(64):
            if not len(pending):
                return slots
            cand = self._probe(keys, pending, hc[pending])
            sub = keys.take(pa.array(pending)) if len(pending) != n else keys
            ok = keys_equal(sub, cols, self.keys(cand), cols, nulls_equal=True, nans_equal=True)
            slots[pending[ok]] = cand[ok]
            pending = pending[~ok]
            with np.errstate(over="ignore"):
                hc[pending] = (hc[pending] ^ (hc[pending] >> np.uint64(31))) * _REMIX + np.uint64(1)
        raise SqlError(SqlState.INTERNAL_ERROR, "could not place group keys: too many hash collisions")

    def _probe(self, keys: pa.Table, rows: np.ndarray, h: np.ndarray) -> np.ndarray:
        """The slot stored under each hash, allocating new slots for hashes not stored yet."""
        m = len(rows)
        pos = _searchsorted_sorted_needles(self._hashes, h)
        posc = np.minimum(pos, max(len(self._hashes) - 1, 0))
        found = (pos < len(self._hashes)) & (self._hashes[posc] == h) if len(self._hashes) else np.zeros(m, bool)
        cand = np.full(m, -1, np.int64)
        cand[found] = self._slots[posc[found]]
        if found.all():
            return cand
        new_idx = np.flatnonzero(~found)
        # A hash table (Arrow's dictionary encoding) numbers the new hashes in order of first
        # appearance in O(n), where a sort would be O(n log n) (10 regions in 6M rows: no sort).
        encoded = pc.dictionary_encode(pa.array(h[new_idx], pa.uint64()))
        codes = encoded.indices.to_numpy().astype(np.int64, copy=False)
        uniq = encoded.dictionary.to_numpy()
        first = _first_positions(codes)
        new_slots = self.size + np.arange(len(uniq), dtype=np.int64)
        cand[new_idx] = self.size + codes
        self.size += len(uniq)
        new_keys = keys.take(pa.array(rows[new_idx[first]])).combine_chunks()
        if self._keys is None:
            self._keys = new_keys
        else:
            new_keys = new_keys.cast(self._keys.schema)
            tail = new_keys if self._tail is None else pa.concat_tables([self._tail, new_keys])
            if 8 * tail.num_rows >= self._keys.num_rows:  # (amortised: each key is copied O(1) times)
                self._keys, self._tail = pa.concat_tables([self._keys, tail]).combine_chunks(), None
            else:
                self._tail = tail
        by_hash = np.argsort(uniq)
        self._hashes, self._slots = _merge_sorted(self._hashes, self._slots, uniq[by_hash], new_slots[by_hash])
        return cand


def _searchsorted_sorted_needles(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """np.searchsorted, but the needles are searched in sorted order: the binary searches then
    walk the (large) haystack in order, which is several times faster than random probes."""
    if len(needles) < 2 or len(haystack) == 0:
        return np.searchsorted(haystack, needles)
    order = np.argsort(needles)
    pos = np.empty(len(needles), np.int64)
    pos[order] = np.searchsorted(haystack, needles[order])
    return pos


def _first_positions(codes: np.ndarray) -> np.ndarray:
    """Position of the first occurrence of each code, for codes numbered in order of first
    appearance (as dictionary encoding numbers them): a code appears first where it exceeds every
    code before it."""
    if not len(codes):
        return np.zeros(0, np.int64)
    is_first = np.empty(len(codes), dtype=bool)
    is_first[0] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=is_first[1:])
    return np.flatnonzero(is_first)


def _merge_sorted(ha: np.ndarray, sa: np.ndarray, hb: np.ndarray, sb: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Merge two hash-sorted (hash, slot) arrays in O(n) (no re-sort of the old index)."""
    if not len(ha):
        return hb, sb
    pos_b = np.searchsorted(ha, hb) + np.arange(len(hb))
    n = len(ha) + len(hb)
    is_b = np.zeros(n, bool)
    is_b[pos_b] = True
    h = np.empty(n, ha.dtype)
    s = np.empty(n, sa.dtype)
    h[pos_b], s[pos_b] = hb, sb
    h[~is_b], s[~is_b] = ha, sa
    return h, s
