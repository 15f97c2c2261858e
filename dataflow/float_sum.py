"""Exact sums of doubles per group, so that a float sum survives retractions unchanged.

A running float64 sum is not invertible: after `+1e20, +1, -1e20` it holds 0 where the rows
left sum to 1. Here every finite double is split exactly into 32-bit limbs of one wide
fixed-point integer per group (a "superaccumulator"): a double is m * 2**e with |m| < 2**53,
which covers at most three limbs. Adding and retracting are integer additions, so the sum is
always exactly the sum of the rows present, whatever happened before; reading it rounds that
exact value once to the nearest double (ties to even). Everything is vectorised in NumPy.

Only the limbs that the values seen so far can touch are kept (a window of the 2**-1152 ..
2**1024 range), so a column of ordinary magnitudes costs a few int64 per group.

>>> s = ExactFloatSums()
>>> s.grow(1)
>>> s.add(np.array([0, 0]), np.array([1e20, 1.0]), np.array([1, 1]))
>>> s.add(np.array([0]), np.array([1e20]), np.array([-1]))
>>> s.result(np.array([0])).tolist()
[1.0]
"""

from __future__ import annotations

import numpy as np

_BITS = 32
_MASK = np.int64((1 << _BITS) - 1)
# Position 0 of the fixed-point integer is 2**_BASE: below the least significant bit of the
# smallest subnormal's mantissa as NumPy's frexp scales it (2**-1126), and a multiple of 32.
_BASE = -1152
# Limb sums stay exact while every |limb| < 2**62; carries are propagated before that.
_LIMIT = float(2 ** 62)
_HEADROOM = 2  # limbs above the highest one a value touches, for carries and the sign
_SPLIT_BITS = 20
_SPLIT = 1 << _SPLIT_BITS


class ExactFloatSums:
    """Per-slot exact sums of finite doubles (callers count infinities and NaN apart)."""

    def __init__(self) -> None:
        self.limbs = np.zeros((0, 0), np.int64)  # [slot, limb] for limbs lo .. lo + width - 1
        self.lo = 0
        self.bound = 0.0  # an upper bound of |limb| over all cells

    def grow(self, size: int) -> None:
        n = len(self.limbs)
        if n < size:
            extra = np.zeros((max(size, 2 * n) - n, self.limbs.shape[1]), np.int64)
            self.limbs = np.concatenate([self.limbs, extra])

    def add(self, slots: np.ndarray, values: np.ndarray, diff: np.ndarray) -> None:
        """Add values[i] * diff[i] to the sum of slots[i] (values finite float64)."""
        nz = values != 0
        if not nz.all():
            slots, values, diff = slots[nz], values[nz], diff[nz]
        if not len(values):
            return
        mant, exp = np.frexp(values)
        m = (np.abs(mant) * 2.0 ** 53).astype(np.uint64)  # exact: |m| < 2**53
        pos = (exp.astype(np.int64) - 53) - _BASE  # bit position of m's least significant bit
        self.add_mantissas(slots, m, pos, np.where(values < 0, -diff, diff).astype(np.int64))

    def add_mantissas(self, slots: np.ndarray, m: np.ndarray, pos: np.ndarray, d: np.ndarray) -> None:
        """Add m[i] * 2**pos[i] * d[i] (bit positions from 0 = this accumulator's unit; m
        uint64 below 2**54) to the sum of slots[i]. `add` feeds the mantissas of doubles; the
        reduce's variance feeds the exact parts of squares at a unit of its own."""
        d = d.astype(np.int64)
        slots = slots.astype(np.int64)
        # A multiplicity of 2**20 or more is split: v * d = v * (d mod 2**20) + (v * 2**20) * (d div 2**20),
        # and v * 2**20 is the same mantissa 20 bits higher. Every part then weighs < 2**52.
        while True:
            big = np.flatnonzero(np.abs(d) >= _SPLIT)
            if not len(big):
                break
            q = np.sign(d[big]) * (np.abs(d[big]) >> _SPLIT_BITS)
            d[big] -= q << _SPLIT_BITS
            slots, m = np.concatenate([slots, slots[big]]), np.concatenate([m, m[big]])
            pos, d = np.concatenate([pos, pos[big] + _SPLIT_BITS]), np.concatenate([d, q])
        limb, off = pos // _BITS, (pos % _BITS).astype(np.uint64)
        one = np.uint64(1)
        c0 = (m & ((one << (np.uint64(_BITS) - off)) - one)) << off
        rest = m >> (np.uint64(_BITS) - off)
        c1, c2 = rest & np.uint64(0xFFFFFFFF), rest >> np.uint64(_BITS)
        self._window(int(limb.min()), int(limb.max()) + 3 + _HEADROOM)
        weight = np.abs(d).astype(np.float64) * 2.0 ** _BITS
        total = float(weight.sum())
        if self.bound + total > _LIMIT:
            self._carry()
        if self.bound + total <= _LIMIT:
            self._add_chunk(slots, limb, (c0, c1, c2), d)
            self.bound += total
            return
        start = 0  # more than one carry's worth: in chunks, carrying before each
        while start < len(d):
            self._carry()
            end = start + int(np.searchsorted(np.cumsum(weight[start:]), _LIMIT - self.bound, side="right"))
            sl = slice(start, max(end, start + 1))
            self._add_chunk(slots[sl], limb[sl], (c0[sl], c1[sl], c2[sl]), d[sl])
            self.bound += float(weight[sl].sum())
            start = sl.stop

    def _add_chunk(self, slots: np.ndarray, limb: np.ndarray, chunks: tuple, sign: np.ndarray) -> None:
        width = self.limbs.shape[1]
        flat = self.limbs.reshape(-1)  # a view: the additions land in self.limbs
        base = slots.astype(np.int64) * width + (limb - self.lo)
        for k, c in enumerate(chunks):
            np.add.at(flat, base + k, c.astype(np.int64) * sign)

    def _window(self, lo: int, hi: int) -> None:
        """Make the kept limbs cover absolute limbs lo .. hi - 1."""
        n, width = self.limbs.shape
        if width == 0:
            self.lo = lo
            self.limbs = np.zeros((n, hi - lo), np.int64)
            return
        left = max(0, self.lo - lo)
        right = max(0, hi - (self.lo + width))
        if left or right:
            self.limbs = np.pad(self.limbs, ((0, 0), (left, right)))
            self.lo -= left
            if right:
                self._carry()  # the old top limb held the sign: move it to the new top

    def _carry(self) -> None:
        self.limbs = _normalized(self.limbs)
        self.bound = float(2 ** _BITS) if len(self.limbs) else 0.0
        if len(self.limbs) and self.limbs.shape[1]:
            self.bound = max(self.bound, float(np.abs(self.limbs[:, -1]).max()))

    def result(self, slots: np.ndarray) -> np.ndarray:
        """The exact sums of `slots`, each rounded once to the nearest double (ties to even;
        a subnormal result may be rounded twice); +-inf beyond the double range."""
        n = len(slots)
        if n == 0 or self.limbs.shape[1] == 0:
            return np.zeros(n, np.float64)
        # Two zero limbs above (the top is then small) and two below (for the 96-bit window).
        x = np.pad(self.limbs[slots], ((0, 0), (2, 2)))
        x = _normalized(x)
        neg = x[:, -1] < 0
        if neg.any():
            x[neg] = _normalized(-x[neg])
        nonzero = x != 0
        any_nz = nonzero.any(axis=1)
        width = x.shape[1]
        h = width - 1 - np.argmax(nonzero[:, ::-1], axis=1)  # highest non-zero limb
        h = np.where(any_nz, np.maximum(h, 2), 2)
        rows = np.arange(n)
        x2, x1, x0 = (x[rows, h - k].astype(np.uint64) for k in range(3))
        below = np.cumsum(nonzero, axis=1)  # count of non-zero limbs at or below each index
        sticky = np.where(h >= 3, below[rows, np.maximum(h - 3, 0)] > 0, False)
        bitlen = np.frexp(x2.astype(np.float64))[1].astype(np.int64)  # 1..32 (0 for zero)
        shift = np.where(x2 > 0, _BITS - bitlen, 0).astype(np.uint64)
        hi64 = (x2 << np.uint64(_BITS)) | x1
        keep = np.uint64(_BITS) - shift  # bits of x0 that drop out of the 64-bit window
        y = np.where(shift > 0, (hi64 << shift) | (x0 >> keep), hi64)
        lost = x0 & ((np.uint64(1) << keep) - np.uint64(1))
        sticky = sticky | (lost != 0)
        y = y | sticky.astype(np.uint64)
        # y * 2**(32 - shift) in units of limb h - 2 (absolute limb lo - 2 + h - 2).
        e = (self.lo - 2 + h - 2) * _BITS + _BASE + (_BITS - shift.astype(np.int64))
        with np.errstate(over="ignore", under="ignore"):
            out = np.ldexp(y.astype(np.float64), e)
        out = np.where(any_nz, out, 0.0)
        return np.where(neg, -out, out)


def _normalized(x: np.ndarray) -> np.ndarray:
    """The same numbers with every limb but the top one in [0, 2**32) (the top one signed)."""
    x = x.copy()
    for k in range(x.shape[1] - 1):
        carry = x[:, k] >> _BITS  # arithmetic shift: floor division, right for negatives
        x[:, k] &= _MASK
        x[:, k + 1] += carry
    return x
