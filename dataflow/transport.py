"""Length-prefixed pickled frames over TCP: the wire between the compute controller and its
workers, and between workers (the exchange). Arrow tables inside messages pickle as Arrow IPC
streams, so a batch crosses the wire without per-row work.

Why IPC and not Arrow's own pickling: a table's pickle carries every buffer it views whole, so
a slice (`partition` hands each worker a slice of one reordered table) sent half a million rows
of a million-row buffer and the receiver kept all of it alive: at a million orders each worker
held twice its share of the table. IPC writes a slice's rows only, and for small tables it is
~3x cheaper both ways (a 1-row batch: ~17 + 14 us against 54 + 34 us).

>>> import pyarrow as pa
>>> t = pa.table({"a": list(range(1000))}).slice(10, 2)
>>> frame = encode_frame({"batch": t})
>>> len(frame) < 1000, decode_payload(frame[8:])["batch"].to_pydict()
(True, {'a': [10, 11]})
"""

from __future__ import annotations

import copyreg
import io
import pickle
import socket
import struct
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

_HEADER = struct.Struct("!Q")
MAX_FRAME = 1 << 34
# Above this a table's IPC size is measured first and written into one buffer of that size
# (a growing output stream re-copies as it grows: ~1.8x slower on a 26 MB table).
_SIZED_WRITE_BYTES = 1 << 20


def _write_stream(sink, table: pa.Table) -> None:
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


def _ipc_stream(table: pa.Table) -> pa.Buffer:
    if table.nbytes < _SIZED_WRITE_BYTES:
        sink = pa.BufferOutputStream()
        _write_stream(sink, table)
        return sink.getvalue()
    mock = pa.MockOutputStream()
    _write_stream(mock, table)
    buf = pa.allocate_buffer(mock.size())
    _write_stream(pa.FixedSizeBufferWriter(buf), table)
    return buf


def _table_from_ipc(data: Any) -> pa.Table:
    return ipc.open_stream(data).read_all()


# Only tables: messages carry no bare record batches or arrays (those still pickle as Arrow does).
_DISPATCH = copyreg.dispatch_table.copy()
_DISPATCH[pa.Table] = lambda table: (_table_from_ipc, (_ipc_stream(table),))


def encode_frame(obj: Any) -> bytes:
    out = io.BytesIO()
    out.write(bytes(_HEADER.size))
    pickler = pickle.Pickler(out, protocol=5)
    pickler.dispatch_table = _DISPATCH  # this pickler's only: Arrow's own pickling elsewhere is untouched
    pickler.dump(obj)
    frame = out.getbuffer()
    _HEADER.pack_into(frame, 0, len(frame) - _HEADER.size)
    del frame
    return out.getvalue()


def decode_payload(payload: Any) -> Any:
    return pickle.loads(payload)


def send_frame(sock: socket.socket, obj: Any) -> None:
    sock.sendall(encode_frame(obj))


def _recv_exactly(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed the connection")
        got += k
    return buf  # pickle reads a bytearray as it is: no copy of the frame


def recv_frame(sock: socket.socket) -> Any:
    (length,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    if length > MAX_FRAME:
        raise ConnectionError(f"frame of {length} bytes exceeds the limit")
    return decode_payload(_recv_exactly(sock, length))


async def read_frame_async(reader) -> Any:
    """The asyncio twin of recv_frame, for the controller side."""
    header = await reader.readexactly(_HEADER.size)
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ConnectionError(f"frame of {length} bytes exceeds the limit")
    return decode_payload(await reader.readexactly(length))
