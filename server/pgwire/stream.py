"""A byte stream over an asyncio transport that notices a disconnect immediately.

asyncio's StreamReader only reports EOF to whoever is reading; a connection that is busy sending
an endless SUBSCRIBE is not reading, so it would never learn that the client left. This protocol
calls `on_lost` from `connection_lost`, which lets the connection cancel its running statement.
It also applies backpressure both ways: reading pauses while too much input is buffered, and
`drain()` waits while the transport's write buffer is full.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Callable

from server.pgwire.protocol import ConnectionClosed

_READ_HIGH_WATER = 4 << 20


class WireStream(asyncio.Protocol):
    def __init__(self, on_connected: Callable[["WireStream"], None]) -> None:
        self._on_connected = on_connected
        self._buf = bytearray()
        self._eof = False
        self._closed = False
        self._read_waiter: asyncio.Future | None = None
        self._write_ready = asyncio.Event()
        self._write_ready.set()
        self._reading_paused = False
        self._wanted = 0  # bytes the reader waits for: a message larger than the high-water mark
        self.transport: asyncio.Transport | None = None
        self.on_lost: Callable[[], None] | None = None
        self.tls = False

    # ---- asyncio.Protocol callbacks
    def connection_made(self, transport) -> None:
        self.transport = transport
        self._on_connected(self)

    def data_received(self, data: bytes) -> None:
        self._buf += data
        if len(self._buf) > max(_READ_HIGH_WATER, self._wanted) and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc) -> None:
        self._eof = True
        self._closed = True
        self._write_ready.set()
        self._wake()
        if self.on_lost is not None:
            self.on_lost()

    def pause_writing(self) -> None:
        self._write_ready.clear()

    def resume_writing(self) -> None:
        self._write_ready.set()

    # ---- reading
    def _wake(self) -> None:
        w = self._read_waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def read_exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            if self._eof:
                raise ConnectionClosed()
            # A message larger than the high-water mark (PostgreSQL allows up to 1 GiB) must be
            # read whole: reading stays on until it is (paused, it would wait forever).
            self._wanted = n
            if self._reading_paused and not self._closed:
                self._reading_paused = False
                self.transport.resume_reading()
            self._read_waiter = asyncio.get_running_loop().create_future()
            try:
                await self._read_waiter
            finally:
                self._read_waiter = None
        self._wanted = 0
        data = bytes(self._buf[:n])
        del self._buf[:n]
        if self._reading_paused and len(self._buf) < _READ_HIGH_WATER // 2 and not self._closed:
            self._reading_paused = False
            self.transport.resume_reading()
        return data

    @property
    def buffered(self) -> int:
        """Bytes received and not yet read."""
        return len(self._buf)

    # ---- TLS
    async def start_tls(self, context, timeout: float = 60.0) -> None:
        """Upgrade the connection to TLS in place (after answering SSLRequest with 'S'). The
        client's ClientHello cannot have been read yet: it only sends it after the 'S'."""
        loop = asyncio.get_running_loop()
        try:
            self.transport = await loop.start_tls(self.transport, self, context, server_side=True,
                                                  ssl_handshake_timeout=timeout)
        except (OSError, ssl.SSLError, asyncio.TimeoutError, ConnectionError) as e:
            self._closed = self._eof = True
            raise ConnectionClosed() from e
        self.tls = True

    # ---- writing
    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionClosed()
        self.transport.write(data)

    async def drain(self) -> None:
        if self._closed:
            raise ConnectionClosed()
        await self._write_ready.wait()
        if self._closed:
            raise ConnectionClosed()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
