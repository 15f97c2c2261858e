"""Length-prefixed pickled frames over TCP: the wire between the compute controller and its
workers, and between workers (the exchange). Arrow tables inside messages pickle as Arrow IPC
buffers, so a batch crosses the wire without per-row work."""

from __future__ import annotations

import pickle
import socket
import struct
from typing import Any

_HEADER = struct.Struct("!Q")
MAX_FRAME = 1 << 34


def encode_frame(obj: Any) -> bytes:
    payload = pickle.dumps(obj, protocol=5)
    return _HEADER.pack(len(payload)) + payload


def send_frame(sock: socket.socket, obj: Any) -> None:
    sock.sendall(encode_frame(obj))


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed the connection")
        got += k
    return bytes(buf)


def recv_frame(sock: socket.socket) -> Any:
    (length,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    if length > MAX_FRAME:
        raise ConnectionError(f"frame of {length} bytes exceeds the limit")
    return pickle.loads(_recv_exactly(sock, length))


async def read_frame_async(reader) -> Any:
    """The asyncio twin of recv_frame, for the controller side."""
    header = await reader.readexactly(_HEADER.size)
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ConnectionError(f"frame of {length} bytes exceeds the limit")
    return pickle.loads(await reader.readexactly(length))
