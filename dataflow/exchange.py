"""Exchange: moving keyed updates between the workers of one replica.

Every worker calls `shuffle(channel, batch, key)` with the same channel names in the same order;
each gets back the union (over all workers, itself included) of the parts whose key hash maps to
it. Channel names repeat every step, so messages are matched by (channel, round) where the round
counts how many times this worker has used the channel.

>>> ex = LocalExchange()
>>> ex.worker_index, ex.worker_count
(0, 1)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from dataflow.batch import concat, partition


class Exchange(Protocol):
    worker_index: int
    worker_count: int

    def shuffle(self, channel: str, batch: pa.Table, key: tuple[int, ...]) -> pa.Table:
        """Return partition(batch, key, worker_count)[worker_index] from every worker, unioned."""
        ...


@dataclass
class LocalExchange:
    """A single worker: shuffling is the identity."""

    worker_index: int = 0
    worker_count: int = 1

    def shuffle(self, channel: str, batch: pa.Table, key: tuple[int, ...]) -> pa.Table:
        return batch


@dataclass
class _Mailboxes:
    """Shared between the N ThreadExchange endpoints of one in-process replica."""

    workers: int
    cond: threading.Condition = field(default_factory=threading.Condition)
    # (channel, round, destination) -> {source: part}
    boxes: dict = field(default_factory=dict)
    timeout: float = 60.0


class ThreadExchange:
    """N workers as N threads of one process (used by tests to check multi-worker results)."""

    def __init__(self, shared: _Mailboxes, worker_index: int) -> None:
        self._shared = shared
        self.worker_index = worker_index
        self.worker_count = shared.workers
        self._rounds: dict[str, int] = {}

    @staticmethod
    def create(workers: int, timeout: float = 60.0) -> list["ThreadExchange"]:
        shared = _Mailboxes(workers, timeout=timeout)
        return [ThreadExchange(shared, i) for i in range(workers)]

    def shuffle(self, channel: str, batch: pa.Table, key: tuple[int, ...]) -> pa.Table:
        rnd = self._rounds.get(channel, 0)
        self._rounds[channel] = rnd + 1
        parts = partition(batch, key, self.worker_count)
        sh = self._shared
        with sh.cond:
            for dest, part in enumerate(parts):
                sh.boxes.setdefault((channel, rnd, dest), {})[self.worker_index] = part
            sh.cond.notify_all()
            mine = (channel, rnd, self.worker_index)
            ok = sh.cond.wait_for(lambda: len(sh.boxes.get(mine, ())) == self.worker_count, sh.timeout)
            if not ok:
                raise TimeoutError(f"exchange {channel!r} round {rnd}: peers did not arrive")
            received = sh.boxes.pop(mine)
        return concat([received[i] for i in range(self.worker_count)], schema=batch.schema)
