"""Key kernels: values that make SQL equality an identity the engine can hash and group by.

The engine's keys (GROUP BY, DISTINCT, set operations, join keys) compare values by their
representation. Intervals are equal by *span* in SQL (`'1 mon' = '30 days' = '720:00:00'`)
while each keeps its own fields, so the planner (`planner.equality_keys`) keys on
`interval_span(i)` and shows a member of each group, the least by fields:
`interval_from_member_key(min(interval_member_key(i)))`.

>>> import pyarrow as pa
>>> from dataflow.interval import parse, fmt
>>> i = pa.array([parse("1 mon"), parse("30 days"), parse("720:00:00"), None])
>>> _span([i], None).to_pylist()[:3] == [2592000000000] * 3
True
>>> [fmt(v) for v in _from_member_key([_member_key([i], None)], None).to_pylist()[:3]]
['1 mon', '30 days', '720:00:00']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval
from dataflow.expr import Call

SPAN_ARROW = pa.decimal128(38, 0)
_DAY = pa.scalar(interval.USECS_PER_DAY, pa.decimal128(11, 0))
# Big-endian with the sign bit flipped: bytewise order is numeric order.
_MEMBER = np.dtype([("months", ">u4"), ("days", ">u4"), ("us", ">u8")])


def _arr(a) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def _span(vals: list[pa.Array], expr: Call | None) -> pa.Array:
    """Each interval's span in microseconds (months as 30 days, days as 24 hours), exact as a
    38-digit decimal (the largest span needs 22 digits); NULL stays NULL."""
    arr = _arr(vals[0])
    months, days, us = interval.split(arr)
    whole_days = pa.array(months * 30 + days).cast(pa.decimal128(19, 0))
    span = pc.add_checked(pc.multiply_checked(whole_days, _DAY), pa.array(us).cast(pa.decimal128(19, 0)))
    span = span.cast(SPAN_ARROW)
    if arr.null_count:
        span = pc.if_else(arr.is_valid(), span, pa.nulls(len(arr), SPAN_ARROW))
    return span


def _member_key(vals: list[pa.Array], expr: Call | None) -> pa.Array:
    """The interval's fields as 16 bytes whose bytewise order is (months, days, microseconds)
    order, so `min` picks one member of a group deterministically."""
    arr = _arr(vals[0])
    months, days, us = interval.split(arr)
    rec = np.empty(len(arr), _MEMBER)
    rec["months"] = (months.astype(np.int32).view(np.uint32) ^ np.uint32(1 << 31))
    rec["days"] = (days.astype(np.int32).view(np.uint32) ^ np.uint32(1 << 31))
    rec["us"] = (us.view(np.uint64) ^ np.uint64(1 << 63))
    valid = None if not arr.null_count else arr.is_valid().buffers()[1]
    return pa.Array.from_buffers(pa.binary(16), len(arr), [valid, pa.py_buffer(rec.tobytes())],
                                 null_count=arr.null_count, offset=0).cast(pa.binary())


def _from_member_key(vals: list[pa.Array], expr: Call | None) -> pa.Array:
    """The inverse of `_member_key`."""
    arr = _arr(vals[0])
    n = len(arr)
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(n, bool)
    raw = pc.fill_null(arr, pa.scalar(bytes(16), arr.type)).cast(pa.binary(16))
    rec = np.frombuffer(raw.buffers()[1], _MEMBER, count=raw.offset + n)[raw.offset:]
    months = (rec["months"] ^ np.uint32(1 << 31)).view(np.int32).astype(np.int64)
    days = (rec["days"] ^ np.uint32(1 << 31)).view(np.int32).astype(np.int64)
    us = (rec["us"] ^ np.uint64(1 << 63)).view(np.int64)
    return interval.join(months, days, us, valid)


KERNELS = {
    "interval_span": _span,
    "interval_member_key": _member_key,
    "interval_from_member_key": _from_member_key,
}
