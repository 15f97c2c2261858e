"""Background compaction: an append that leaves its shard with too many batches asks for a
merge here instead of running it before the write is acknowledged (at 1M orders, merging the
orders shard's batches made one COMMIT in a few take ~0.5 s).

One daemon thread merges the shards asked for, in the order asked, each once however often it
was asked while it waited. It is safe beside appends and reads: a compaction swaps batches in
the shard's state by compare-and-set (an append in between is kept: see `Shard.compact`), and a
reader that finds a part removed under it reads the state again. A compaction cut short by the
process's end leaves at most a part no state refers to (as a crash would), never a lost write.

Example: with `auto_compact_batches=16`, the append that makes the orders shard's 17th batch
returns once its part and the new state are durable; this thread then merges batches (as
`Shard.compact` would have before the append returned) while the next appends go on.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from .errors import ShardDropped

if TYPE_CHECKING:
    from .shard import Shard

log = logging.getLogger(__name__)


class Compactor:
    def __init__(self) -> None:
        self._pending: dict[str, Shard] = {}  # shard id -> shard, in the order asked
        self._busy = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def request(self, shard: "Shard") -> None:
        """Merge `shard`'s batches soon (once, if it is already waiting)."""
        with self._cond:
            if self._closed:
                return
            self._pending.setdefault(shard.shard_id, shard)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="persist-compactor", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Until nothing waits and nothing runs (tests; shutdown). False if `timeout` passed."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Finish the merge under way (not the waiting ones: the next start's appends ask again)
        and stop the thread."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._closed)
                if self._closed:
                    return
                shard = self._pending.pop(next(iter(self._pending)))
                self._busy = True
            try:
                shard.compact()
            except ShardDropped:
                pass
            except Exception:  # the appends are durable; the next one asks again
                log.exception("shard %s: background compaction failed", shard.shard_id)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
