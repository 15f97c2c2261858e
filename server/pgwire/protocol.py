"""Protocol v3 framing: constants, backend message builders and a frontend message body reader.

Every builder returns the complete message bytes (type byte + length + body), so callers can
append them to one output buffer and write it with a single syscall.

>>> ready_for_query("I")
b'Z\\x00\\x00\\x00\\x05I'
>>> BodyReader(b"abc\\x00\\x00\\x02").cstring(), BodyReader(b"\\x00\\x02").int16()
('abc', 2)
"""

from __future__ import annotations

import functools
import struct

from dataflow.errors import SqlError

PROTOCOL_V3 = 196608  # 3.0
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_STARTUP_LENGTH = 10_000
MAX_MESSAGE_LENGTH = 1 << 30  # 1 GiB, PostgreSQL's own cap for a single message

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_HEADER = struct.Struct(">ci")
NULL_FIELD = b"\xff\xff\xff\xff"


class ProtocolViolation(Exception):
    """The client broke the protocol: answered with FATAL 08P01 and the connection is closed."""


class ConnectionClosed(Exception):
    """The client went away (EOF or reset)."""


def message(kind: bytes, body: bytes) -> bytes:
    return _HEADER.pack(kind, len(body) + 4) + body


def cstr(s: str) -> bytes:
    return s.encode() + b"\x00"


# ------------------------------------------------------------------------------- backend messages

AUTHENTICATION_OK = message(b"R", _I32.pack(0))
PARSE_COMPLETE = message(b"1", b"")
BIND_COMPLETE = message(b"2", b"")
CLOSE_COMPLETE = message(b"3", b"")
NO_DATA = message(b"n", b"")
PORTAL_SUSPENDED = message(b"s", b"")
EMPTY_QUERY_RESPONSE = message(b"I", b"")
COPY_DONE = message(b"c", b"")


def parameter_status(name: str, value: str) -> bytes:
    return message(b"S", cstr(name) + cstr(value))


def backend_key_data(pid: int, secret_key: int) -> bytes:
    return message(b"K", struct.pack(">iI", pid, secret_key))


def ready_for_query(status: str) -> bytes:
    return message(b"Z", status.encode())


def command_complete(tag: str) -> bytes:
    return message(b"C", cstr(tag))


def negotiate_protocol_version(newest_minor: int, unrecognized: list[str]) -> bytes:
    body = struct.pack(">ii", newest_minor, len(unrecognized)) + b"".join(map(cstr, unrecognized))
    return message(b"v", body)


def _fields(severity: str, sqlstate: str, msg: str, detail: str | None, hint: str | None) -> bytes:
    parts = [b"S", cstr(severity), b"V", cstr(severity), b"C", cstr(sqlstate), b"M", cstr(msg)]
    if detail:
        parts += [b"D", cstr(detail)]
    if hint:
        parts += [b"H", cstr(hint)]
    parts.append(b"\x00")
    return b"".join(parts)


def error_response(err: SqlError, severity: str | None = None) -> bytes:
    return message(b"E", _fields(severity or err.severity, err.sqlstate, err.message,
                                 err.detail, err.hint))


def notice_response(sqlstate: str, msg: str) -> bytes:
    # PostgreSQL raises warning-class conditions (01xxx, and 25xxx such as "there is already a
    # transaction in progress") as WARNING; everything else the adapter reports is a NOTICE.
    severity = "WARNING" if sqlstate[:2] in ("01", "25") else "NOTICE"
    return message(b"N", _fields(severity, sqlstate, msg, None, None))


def row_description(columns, formats: list[int]) -> bytes:
    """columns: sequence of dataflow.types.Column; formats: one format code per column."""
    parts = [_I16.pack(len(columns))]
    for col, fmt in zip(columns, formats):
        t = col.type
        oid = 25 if t.oid == 705 else t.oid  # like PostgreSQL, an unresolved literal is text
        typmod = -1
        if t.oid == 1700 and t.scale is not None and t.precision is not None:
            typmod = ((t.precision << 16) | t.scale) + 4  # PostgreSQL's numeric typmod encoding
        elif oid in (1042, 1043) and t.precision is not None:
            typmod = t.precision + 4  # varchar(n), character(n)
        size = _type_sizes().get(oid, -1)
        parts.append(cstr(col.name))
        parts.append(struct.pack(">ihihih", getattr(col, "table_oid", 0), getattr(col, "attnum", 0), oid, size,
                                 typmod, fmt))
    return message(b"T", b"".join(parts))


@functools.cache
def _type_sizes() -> dict[int, int]:
    """The type size RowDescription carries: pg_type.typlen, as PostgreSQL sends it (time 8,
    interval and uuid 16, name 64; -1 for varlena types)."""
    from catalog.system.pg_types import all_types
    return {row.oid: row.length for row in all_types()}


def parameter_description(oids: list[int]) -> bytes:
    return message(b"t", struct.pack(f">h{len(oids)}i", len(oids), *oids))


def copy_response(kind: bytes, ncols: int, binary: bool) -> bytes:
    """CopyInResponse (b'G') or CopyOutResponse (b'H')."""
    fmt = 1 if binary else 0
    return message(kind, struct.pack(f">bh{ncols}h", fmt, ncols, *([fmt] * ncols)))


def copy_data(data: bytes) -> bytes:
    return _HEADER.pack(b"d", len(data) + 4) + data


# ------------------------------------------------------------------------------- frontend bodies

class BodyReader:
    """Reads fields from a frontend message body; malformed bodies raise ProtocolViolation."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def _need(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise ProtocolViolation("invalid message format")

    def int16(self) -> int:
        self._need(2)
        v = _I16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return v

    def int32(self) -> int:
        self._need(4)
        v = _I32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def uint32(self) -> int:
        self._need(4)
        v = struct.unpack_from(">I", self.buf, self.pos)[0]
        self.pos += 4
        return v

    def byte(self) -> bytes:
        self._need(1)
        v = self.buf[self.pos:self.pos + 1]
        self.pos += 1
        return v

    def bytes(self, n: int) -> bytes:
        self._need(n)
        v = self.buf[self.pos:self.pos + n]
        self.pos += n
        return v

    def cstring(self) -> str:
        end = self.buf.find(b"\x00", self.pos)
        if end < 0:
            raise ProtocolViolation("invalid string in message")
        raw = self.buf[self.pos:end]
        self.pos = end + 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SqlError("22021", 'invalid byte sequence for encoding "UTF8"') from None

    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def rest(self) -> bytes:
        v = self.buf[self.pos:]
        self.pos = len(self.buf)
        return v
