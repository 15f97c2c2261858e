"""Encoding of parts (Parquet in blob storage) and an LRU cache of decoded parts.

Parts are immutable once written, so a decoded part can be cached by key forever (until evicted).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict

import pyarrow as pa
import pyarrow.parquet as pq

PARQUET_COMPRESSION = "zstd"


# Arrow types Parquet cannot store, kept as their 16 raw bytes (same layout) in the file.
_INTERVAL = pa.month_day_nano_interval()
_RAW16 = pa.binary(16)


def _view_columns(table: pa.Table, src: pa.DataType, dst: pa.DataType) -> pa.Table:
    for i, field in enumerate(table.schema):
        if field.type == src:
            col = table.column(i)
            col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
            table = table.set_column(i, pa.field(field.name, dst, field.nullable), col.view(dst))
    return table


def encode_part(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(_view_columns(table, _INTERVAL, _RAW16), buf, compression=PARQUET_COMPRESSION,
                   write_statistics=["time"])
    return buf.getvalue()


def decode_part(data: bytes, schema: pa.Schema) -> pa.Table:
    table = pq.read_table(io.BytesIO(data))
    if any(f.type == _INTERVAL for f in schema):
        table = _view_columns(table, _RAW16, _INTERVAL)
    if not table.schema.equals(schema):
        table = table.cast(schema)
    return table


class PartCache:
    """Thread-safe LRU of decoded parts bounded by Arrow bytes."""

    def __init__(self, max_bytes: int = 256 << 20) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._items: OrderedDict[str, pa.Table] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> pa.Table | None:
        with self._lock:
            table = self._items.get(key)
            if table is not None:
                self._items.move_to_end(key)
            return table

    def put(self, key: str, table: pa.Table) -> None:
        size = table.nbytes
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = table
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.nbytes

    def discard(self, key: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
