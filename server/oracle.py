"""The timestamp oracle: hands out write timestamps and says which time reads use.

Timestamps are milliseconds since the Unix epoch (as in Materialize), strictly increasing per
write. `read_ts()` is the latest *applied* write timestamp, so a read never misses a write that
finished before it started (strict serializability), and never goes backwards. Across restarts the
oracle starts above a durable high-water mark that it bumps ahead of use in windows, so it never
hands out a timestamp twice even if the wall clock stepped back.

    oracle = TimestampOracle(load=..., store=...)
    ts = oracle.allocate_write_ts()   # e.g. 1700000000123
    ...write at ts...
    oracle.applied(ts)                # now oracle.read_ts() >= ts
"""

from __future__ import annotations

import time
from typing import Callable

# How far ahead of use the durable high-water mark is bumped.
WINDOW_MS = 5_000


def now_ms() -> int:
    return int(time.time() * 1000)


class TimestampOracle:
    def __init__(self, load: Callable[[], int | None], store: Callable[[int], None],
                 clock: Callable[[], int] = now_ms) -> None:
        self._store = store
        self._clock = clock
        durable = load() or 0
        self._last_write = max(durable, 0)
        self._read = self._last_write
        self._high_water = durable

    def allocate_write_ts(self) -> int:
        ts = max(self._clock(), self._last_write + 1)
        if ts >= self._high_water:
            self._high_water = ts + WINDOW_MS
            self._store(self._high_water)
        self._last_write = ts
        return ts

    def applied(self, ts: int) -> None:
        self._read = max(self._read, ts)

    def read_ts(self) -> int:
        return self._read
