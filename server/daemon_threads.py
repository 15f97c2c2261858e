"""Blocking calls run on daemon threads kept warm between calls.

Constant plans (catalog queries, `SELECT 1`, `generate_series`) are evaluated off the event
loop so that a large one does not hold up other sessions. Starting a thread per statement cost
about a third of a millisecond, a fifth of such a query's whole time, and catalog queries are
hot (clients introspect after every DDL). The threads are daemons: a statement cancelled while
it runs (`SELECT pg_sleep(30)` stopped by a CancelRequest) answers at once, and its thread,
which cannot be interrupted, finishes on its own without keeping the process alive. The pool
grows when every thread is busy (a long statement never delays another) and a thread idle for
`idle_seconds` exits.

    threads = DaemonThreads()
    result = await threads.run(evaluate_constant, plan, ts)
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any, Callable


class DaemonThreads:
    def __init__(self, name: str = "constant-plan", idle_seconds: float = 30.0) -> None:
        self.name = name
        self.idle_seconds = idle_seconds
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for a job and not yet claimed by a submitted one

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that thread will take this job
        self._jobs.put((fn, args, loop, fut))
        if start:
            threading.Thread(target=self._serve, daemon=True, name=self.name).start()
        return await fut

    def _serve(self) -> None:
        while True:
            try:
                fn, args, loop, fut = self._jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # not claimed by a job on its way: leave
                        self._idle -= 1
                        return
                continue  # claimed: its job is about to arrive
            try:
                result, error = fn(*args), None
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
                result, error = None, e
            # Idle before the caller learns the result: its next call finds this thread.
            with self._lock:
                self._idle += 1
            try:
                loop.call_soon_threadsafe(_settle, fut, result, error)
            except RuntimeError:
                pass  # the loop has closed: nobody is waiting any more


def _settle(fut: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if fut.cancelled():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)
