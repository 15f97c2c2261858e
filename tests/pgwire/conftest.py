"""Fixtures: the real PgServer on a uvloop event loop in a background thread, so synchronous
clients (psql, psycopg) and asyncio clients (asyncpg, on the test's own loop) both reach it over
real sockets."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import pytest
import uvloop

from server.pgwire.server import PgServer
from pgwire_fake_adapter import FakeAdapter


@dataclass
class RunningServer:
    host: str
    port: int
    adapter: FakeAdapter
    server: PgServer
    loop: asyncio.AbstractEventLoop

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user=alice dbname=db"

    def call(self, coro, timeout: float = 10):
        """Run a coroutine on the server's loop (to inspect server state from a test)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@pytest.fixture(scope="module")
def pg() -> RunningServer:
    loop = uvloop.new_event_loop()
    adapter = FakeAdapter()
    server = PgServer(adapter, host="127.0.0.1", port=0)
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    yield RunningServer("127.0.0.1", server.port, adapter, server, loop)
    asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
