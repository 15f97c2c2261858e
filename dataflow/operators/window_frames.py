"""Frame bounds of GROUPS frames and of RANGE frames with offsets, as positions in the sorted
rows of the touched partitions (`dataflow.operators.window`).

* GROUPS: an offset counts peer groups. `n PRECEDING` as a start is the first row of the group
  n groups back (the partition's first row if there is none); as an end, the last row of that
  group. FOLLOWING alike, forwards.
* RANGE with an offset (one ORDER BY key): the frame holds the rows whose key lies within the
  offset of the current row's key. Each row's *target* key (key - offset for PRECEDING in an
  ascending order, key + offset for FOLLOWING; the other way round when descending) is ranked
  together with the keys, and a binary search over `partition * M + rank` finds, for a start,
  the first row at or after the target and, for an end, the first row past it. NULL keys sort
  apart (first or last), so a non-NULL row's frame never reaches them; a NULL row's frame is its
  peer group of NULLs, as in PostgreSQL.

Worked example, `sum(x) OVER (ORDER BY k RANGE BETWEEN 2 PRECEDING AND CURRENT ROW)` over keys
1, 2, 4, 7 of one partition: the targets k - 2 are -1, 0, 2, 5, so the frames start at rows
0, 0, 1, 3 and end at each row's peers: [0,1), [0,2), [1,3), [3,4).

Keys and targets are ranked together by Arrow in one type; targets are computed as PostgreSQL's
in_range functions do: integers and numeric exactly in wide decimals (no overflow: a bound past
the type's range is past every key), dates as timestamps, timestamps by calendar arithmetic with
the interval, floats in double precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval
from dataflow.types import SqlType, TypeKind


def groups_bound(kind: str, off: int, end: bool, peer: np.ndarray, ps: np.ndarray, pe: np.ndarray,
                 gstart: np.ndarray, gend: np.ndarray) -> np.ndarray:
    """A GROUPS bound `kind` ("preceding"/"following") of `off` groups, per row."""
    g = peer + (-off if kind == "preceding" else off)
    first, last = peer[ps], peer[np.maximum(pe - 1, 0)]
    inside = np.clip(g, 0, len(gstart) - 1)
    at = gend[inside] if end else gstart[inside]
    return np.where(g < first, ps, np.where(g > last, pe, at))


def range_bound(kind: str, offset, end: bool, key: pa.Array, key_type: SqlType, desc: bool,
                nulls_last: bool, part: np.ndarray, qs: np.ndarray, qe: np.ndarray) -> np.ndarray:
    """A RANGE bound `kind` with `offset` (a value of the offset's type), per row of the sorted
    rows, whose ORDER BY key is `key`."""
    n = len(key)
    valid = key.is_valid().to_numpy(zero_copy_only=False) if key.null_count else np.ones(n, bool)
    forward = (kind == "following") != desc  # the target lies above the key
    scale = _scale(key_type, offset)
    target = _shifted(key, key_type, offset, forward, scale)
    values = _comparable(key, key_type, scale)
    if key_type.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8):
        # inf - inf: PostgreSQL's in_range takes +inf as infinitely preceding +inf (and -inf as
        # infinitely following -inf), so every non-NaN value is within such a bound: it becomes
        # the first (start) or last (end) non-NaN value of the order.
        v = values.to_numpy(zero_copy_only=False)
        t = target.to_numpy(zero_copy_only=False)
        first = -np.inf if not desc else np.inf
        t = np.where(np.isnan(t) & ~np.isnan(v), -first if end else first, t)
        target = pa.array(t, pa.float64())
    ranks = np.zeros(2 * n, np.int64)
    if valid.any():
        mask = pa.array(valid)
        both = pa.concat_arrays([values.filter(mask), target.filter(mask)])
        dense = pc.rank(both, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
        nv = int(valid.sum())
        ranks[:n][valid] = dense[:nv]       # 1.. ; 0 and M - 1 are the NULLs' places
        ranks[n:][valid] = dense[nv:]
    m = 2 * n + 2
    row_rank, target_rank = ranks[:n], ranks[n:]
    if desc:
        row_rank, target_rank = m - 1 - row_rank, m - 1 - target_rank
    null_place = m - 1 if nulls_last else 0
    composite = part * m + np.where(valid, row_rank, null_place)
    probe = part * m + target_rank
    found = np.searchsorted(composite, probe, side="right" if end else "left")
    # A NULL row's frame is its peers (the NULLs).
    return np.where(valid, found, qe if end else qs)


def _scale(t: SqlType, offset) -> int:
    """The fractional digits integer and numeric keys and targets are compared with: the
    key's and the offset's (0.5 PRECEDING over numeric(10,0))."""
    if not (t.is_integer or t.kind is TypeKind.NUMERIC):
        return 0
    from decimal import Decimal
    digits = -Decimal(str(offset)).normalize().as_tuple().exponent
    return min(max(t.effective_scale if t.kind is TypeKind.NUMERIC else 0, digits, 0), 37)


def _comparable(values: pa.Array, t: SqlType, scale: int = 0) -> pa.Array:
    """Values in the type their targets are computed in: dates as timestamps, integers and
    numeric as exact wide decimals (75 digits: adding two stays within decimal256), real as
    double (PostgreSQL's in_range for real adds a double offset in double precision)."""
    if t.kind is TypeKind.DATE:
        return values.cast(pa.timestamp("us"))
    if t.is_integer or t.kind is TypeKind.NUMERIC:
        return values.cast(pa.decimal256(75, scale))
    if t.kind is TypeKind.FLOAT4:
        return values.cast(pa.float64())
    return values


def _shifted(key: pa.Array, t: SqlType, offset, forward: bool, scale: int = 0) -> pa.Array:
    """key + offset (forward) or key - offset, as PostgreSQL's in_range computes it."""
    from dataflow.functions import datetime as dt
    values = _comparable(key, t, scale)
    sign = 1 if forward else -1
    if t.kind in (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
        months, days, us = interval.fields(offset)
        n = len(values)
        ok = values.is_valid().to_numpy(zero_copy_only=False) if values.null_count else np.ones(n, bool)
        shifted = dt.shift(dt._micros(values), np.full(n, months), np.full(n, days), np.full(n, us), sign)
        return dt._timestamps(shifted, ok, values.type)
    if t.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8):
        v = pc.fill_null(values, 0.0).to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore", over="ignore"):
            out = v + sign * float(offset)
        out = np.where(np.isnan(v), np.nan, out)   # NaN's targets are NaN: its peers
        return pa.array(out, pa.float64())
    from decimal import Decimal
    scalar = pa.scalar(Decimal(str(offset)), pa.decimal256(75, values.type.scale))
    return (pc.add(values, scalar) if forward else pc.subtract(values, scalar)).cast(values.type)


@dataclass(frozen=True)
class Excluded:
    """A frame [lo, hi) less its EXCLUDE part: the rows it holds are, in order, [lo, a), the
    current row where `keep` (EXCLUDE TIES gives it back) and [b, hi).

    Worked example, ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE GROUP at row 3 of rows
    0..6 whose peer group is rows 2..4: [lo, hi) = [1, 6), the cut [2, 5), so the frame holds
    rows 1 and 5; with EXCLUDE TIES it holds 1, 3 and 5; with EXCLUDE CURRENT ROW 1, 2, 4, 5."""

    i: np.ndarray
    lo: np.ndarray
    a: np.ndarray
    keep: np.ndarray
    b: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, kind: str, i: np.ndarray, qs: np.ndarray, qe: np.ndarray, lo: np.ndarray,
           hi: np.ndarray) -> "Excluded":
        """`kind`: "current_row", "group" or "ties"; [qs, qe) each row's peer group."""
        xs, xe = (i, i + 1) if kind == "current_row" else (qs, qe)
        keep = (lo <= i) & (i < hi) if kind == "ties" else np.zeros(len(i), bool)
        return cls(i, lo, np.clip(xs, lo, hi), keep, np.clip(xe, lo, hi), hi)

    def count(self) -> np.ndarray:
        return (self.a - self.lo) + (self.hi - self.b) + self.keep

    def sums(self, x: np.ndarray) -> np.ndarray:
        """sum of x over each frame's rows (exact for integers and object arrays)."""
        p = np.zeros(len(x) + 1, dtype=x.dtype)
        if len(x):
            p[1:] = np.cumsum(x)
        own = x[np.minimum(self.i, max(len(x) - 1, 0))] if len(x) else x
        return (p[self.a] - p[self.lo]) + (p[self.hi] - p[self.b]) + np.where(self.keep, own, 0)

    def nth(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The position of each frame's k-th row (k from 1), and whether it has one."""
        first, mid = self.a - self.lo, self.keep.astype(np.int64)
        pos = np.where(k <= first, self.lo + k - 1,
                       np.where(k <= first + mid, self.i, self.b + (k - first - mid) - 1))
        return pos, (k >= 1) & (k <= self.count())

    def last(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.count()
        return self.nth(np.maximum(n, 1))[0], n > 0
