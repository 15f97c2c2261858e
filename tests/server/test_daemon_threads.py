"""The warm daemon threads that evaluate constant plans (server/daemon_threads.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from server.daemon_threads import DaemonThreads


def test_results_errors_and_thread_reuse():
    threads = DaemonThreads(idle_seconds=5)

    async def main():
        names = set()
        for i in range(20):
            assert await threads.run(lambda x: x * 2, i) == 2 * i
            names.add(await threads.run(lambda: threading.get_ident()))
        with pytest.raises(ZeroDivisionError):
            await threads.run(lambda: 1 / 0)
        return names

    names = asyncio.run(main())
    assert len(names) == 1  # one warm thread served every call in turn


def test_a_long_call_does_not_delay_another_and_cancelling_answers_at_once():
    threads = DaemonThreads(idle_seconds=5)
    release = threading.Event()

    async def main():
        slow = asyncio.ensure_future(threads.run(release.wait, 10))
        await asyncio.sleep(0.05)
        t0 = time.perf_counter()
        assert await threads.run(lambda: "quick") == "quick"  # on a second thread
        quick = time.perf_counter() - t0
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        release.set()
        await asyncio.sleep(0.05)  # the cancelled call's thread finishes and settles nothing
        assert await threads.run(lambda: 7) == 7
        return quick

    assert asyncio.run(main()) < 1.0


def test_idle_threads_leave_and_the_pool_starts_again():
    threads = DaemonThreads(name="pool-test", idle_seconds=0.1)

    def alive() -> int:
        return sum(1 for t in threading.enumerate() if t.name == "pool-test")

    async def main():
        await asyncio.gather(*(threads.run(time.sleep, 0.05) for _ in range(4)))
        assert alive() >= 2
        deadline = time.monotonic() + 5
        while alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert alive() == 0
        assert await threads.run(lambda: "again") == "again"

    asyncio.run(main())
