"""A small asyncio client for PostgreSQL's walsender (replication=database connections).

asyncpg has no replication (CopyBoth) support, so the source speaks this part of the protocol
itself: the startup message with `replication=database`, authentication (trust, cleartext
password, md5, SCRAM-SHA-256), simple queries (`IDENTIFY_SYSTEM`, `CREATE_REPLICATION_SLOT`,
`DROP_REPLICATION_SLOT`), and `START_REPLICATION ... LOGICAL`, after which the server streams
CopyData messages: XLogData ('w': the pgoutput bytes of one message, storage/sources/postgres/
pgoutput.py decodes them) and primary keepalives ('k'); the client answers with standby status
updates ('r') naming the LSN up to which its data is durable (the slot's confirmed_flush_lsn).

    conn = await ReplicationConnection.connect(ConnectParams("127.0.0.1", 5432, "repl", "pw", "db"))
    slot = await conn.create_slot("s1")              # SlotInfo(name, consistent_point, snapshot)
    ... read the snapshot through asyncpg: SET TRANSACTION SNAPSHOT slot.snapshot ...
    await conn.start_replication("s1", slot.consistent_point, "pub")
    async for msg in conn.messages():                # XLogData | Keepalive
        ...
    conn.send_status(flush_lsn)

The session settings (DateStyle ISO, TimeZone UTC, extra_float_digits 3, ...) are fixed in the
startup message so every value's text form is the one Slipstream's text casts read.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import struct
import time
from dataclasses import dataclass
from typing import AsyncIterator

# Session settings for every upstream connection (this one and asyncpg's snapshot reads): values
# then print in one canonical text form whatever the server's defaults.
SESSION_SETTINGS = {
    "client_encoding": "UTF8", "DateStyle": "ISO, MDY", "IntervalStyle": "postgres",
    "TimeZone": "UTC", "extra_float_digits": "3", "bytea_output": "hex",
}
PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in Unix microseconds


class UpstreamError(Exception):
    """An error the upstream server reported (its SQLSTATE and message) or a broken protocol."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


@dataclass(frozen=True)
class ConnectParams:
    host: str
    port: int
    user: str
    password: str | None
    database: str
    connect_timeout: float = 10.0


@dataclass(frozen=True)
class SlotInfo:
    name: str
    consistent_point: int  # LSN
    snapshot: str | None


@dataclass(frozen=True)
class XLogData:
    start: int
    end: int
    data: bytes


@dataclass(frozen=True)
class Keepalive:
    wal_end: int
    reply_requested: bool


def lsn_to_int(text: str) -> int:
    """'16/B374D848' -> 0x16B374D848."""
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def lsn_text(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class ReplicationConnection:
    """One walsender connection. Not safe for concurrent queries; `send_status` may be called
    from another task while `messages()` is being iterated (each write is one whole message)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.parameters: dict[str, str] = {}
        self.streaming = False

    # -- connecting -----------------------------------------------------------------------------

    @classmethod
    async def connect(cls, params: ConnectParams) -> "ReplicationConnection":
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(params.host, params.port),
                                                    params.connect_timeout)
        except (OSError, asyncio.TimeoutError) as e:
            raise UpstreamError(f"cannot connect to {params.host}:{params.port}: {e or 'timed out'}") from None
        conn = cls(reader, writer)
        try:
            await asyncio.wait_for(conn._startup(params), params.connect_timeout)
        except BaseException:
            conn.close()
            raise
        return conn

    async def _startup(self, params: ConnectParams) -> None:
        fields = {"user": params.user, "database": params.database, "replication": "database",
                  "application_name": "slipstream", **SESSION_SETTINGS}
        body = struct.pack("!i", 196608) + b"".join(k.encode() + b"\0" + v.encode() + b"\0"
                                                     for k, v in fields.items()) + b"\0"
        self._writer.write(struct.pack("!i", len(body) + 4) + body)
        scram: _ScramClient | None = None
        while True:
            kind, payload = await self._read_message()
            if kind == b"R":
                (code,) = struct.unpack_from("!i", payload)
                if code == 0:
                    continue
                if params.password is None and code in (3, 5, 10):
                    raise UpstreamError("the upstream server asks for a password, but the connection has none",
                                        "28P01")
                if code == 3:  # cleartext
                    self._send(b"p", params.password.encode() + b"\0")
                elif code == 5:  # md5(md5(password + user) + salt)
                    inner = hashlib.md5((params.password + params.user).encode()).hexdigest()
                    outer = hashlib.md5(inner.encode() + payload[4:8]).hexdigest()
                    self._send(b"p", b"md5" + outer.encode() + b"\0")
                elif code == 10:  # SASL: mechanisms
                    mechanisms = payload[4:].split(b"\0")
                    if b"SCRAM-SHA-256" not in mechanisms:
                        raise UpstreamError("the upstream server offers no supported SASL mechanism")
                    scram = _ScramClient(params.password)
                    first = scram.client_first()
                    self._send(b"p", b"SCRAM-SHA-256\0" + struct.pack("!i", len(first)) + first)
                elif code == 11 and scram is not None:
                    self._send(b"p", scram.client_final(payload[4:]))
                elif code == 12 and scram is not None:
                    scram.verify_server_final(payload[4:])
                else:
                    raise UpstreamError(f"unsupported authentication request {code} from the upstream server")
            elif kind == b"S":
                name, value = payload.rstrip(b"\0").split(b"\0", 1)
                self.parameters[name.decode()] = value.decode()
            elif kind == b"K":
                continue
            elif kind == b"Z":
                return
            elif kind == b"E":
                raise _error(payload)
            elif kind == b"N":
                continue
            else:
                raise UpstreamError(f"unexpected message {kind!r} during startup")

    # -- messages -------------------------------------------------------------------------------

    def _send(self, kind: bytes, payload: bytes) -> None:
        self._writer.write(kind + struct.pack("!i", len(payload) + 4) + payload)

    async def _read_message(self) -> tuple[bytes, bytes]:
        try:
            header = await self._reader.readexactly(5)
            (length,) = struct.unpack_from("!i", header, 1)
            payload = await self._reader.readexactly(length - 4)
        except (asyncio.IncompleteReadError, ConnectionError) as e:
            raise UpstreamError(f"the upstream server closed the replication connection ({e})") from None
        return header[:1], payload

    async def query(self, sql: str) -> list[tuple[str | None, ...]]:
        """A simple query; its rows as text (None for NULL)."""
        self._send(b"Q", sql.encode() + b"\0")
        await self._writer.drain()
        rows: list[tuple[str | None, ...]] = []
        error: UpstreamError | None = None
        while True:
            kind, payload = await self._read_message()
            if kind == b"D":
                (n,) = struct.unpack_from("!h", payload)
                pos, row = 2, []
                for _ in range(n):
                    (ln,) = struct.unpack_from("!i", payload, pos)
                    pos += 4
                    if ln < 0:
                        row.append(None)
                    else:
                        row.append(payload[pos:pos + ln].decode())
                        pos += ln
                rows.append(tuple(row))
            elif kind == b"E":
                error = _error(payload)
            elif kind == b"Z":
                if error is not None:
                    raise error
                return rows
            # T (row description), C (complete), N (notice), S: nothing to keep

    async def identify_system(self) -> dict[str, str | None]:
        (row,) = await self.query("IDENTIFY_SYSTEM")
        return dict(zip(("systemid", "timeline", "xlogpos", "dbname"), row))

    async def create_slot(self, name: str, export_snapshot: bool = True) -> SlotInfo:
        """CREATE_REPLICATION_SLOT name LOGICAL pgoutput: the slot's consistent point and, with
        `export_snapshot`, the name of a snapshot of the database exactly at that point, valid
        until this connection runs its next command."""
        mode = "EXPORT_SNAPSHOT" if export_snapshot else "NOEXPORT_SNAPSHOT"
        (row,) = await self.query(f"CREATE_REPLICATION_SLOT {quote_ident(name)} LOGICAL pgoutput {mode}")
        return SlotInfo(row[0], lsn_to_int(row[1]), row[2])

    async def start_replication(self, slot: str, lsn: int, publication: str) -> None:
        """START_REPLICATION: from here on the connection streams (see `messages`)."""
        self._send(b"Q", (f"START_REPLICATION SLOT {quote_ident(slot)} LOGICAL {lsn_text(lsn)} "
                          f"(\"proto_version\" '1', \"publication_names\" {quote_literal(quote_ident(publication))})"
                          ).encode() + b"\0")
        await self._writer.drain()
        while True:
            kind, payload = await self._read_message()
            if kind == b"W":
                self.streaming = True
                return
            if kind == b"E":
                error = _error(payload)
                await self._drain_to_ready()
                raise error
            if kind in (b"N", b"S"):
                continue
            raise UpstreamError(f"unexpected message {kind!r} after START_REPLICATION")

    async def _drain_to_ready(self) -> None:
        try:
            while (await asyncio.wait_for(self._read_message(), 5))[0] != b"Z":
                pass
        except (UpstreamError, asyncio.TimeoutError):
            pass

    async def messages(self) -> AsyncIterator[XLogData | Keepalive]:
        """The replication stream: XLogData and keepalives, until the server ends it (an error
        is raised as UpstreamError)."""
        unpack_w = struct.Struct("!QQQ").unpack_from
        unpack_k = struct.Struct("!QQB").unpack_from
        while True:
            kind, payload = await self._read_message()
            if kind == b"d":
                tag = payload[:1]
                if tag == b"w":
                    start, end, _ = unpack_w(payload, 1)
                    yield XLogData(start, end, payload[25:])
                elif tag == b"k":
                    wal_end, _, reply = unpack_k(payload, 1)
                    yield Keepalive(wal_end, bool(reply))
            elif kind == b"E":
                raise _error(payload)
            elif kind == b"c":  # CopyDone: the server ended the stream
                raise UpstreamError("the upstream server ended the replication stream")
            # N (notice), others: ignored

    def send_status(self, flush_lsn: int, reply: bool = False) -> None:
        """Standby status update: everything up to `flush_lsn` is durable here, so the slot may
        release the WAL before it (confirmed_flush_lsn)."""
        now_us = int(time.time() * 1_000_000) - PG_EPOCH_US
        body = b"r" + struct.pack("!QQQqB", flush_lsn, flush_lsn, flush_lsn, now_us, 1 if reply else 0)
        self._send(b"d", body)

    async def drain(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        try:
            if not self._writer.is_closing():
                self._send(b"X", b"")
            self._writer.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass


def _error(payload: bytes) -> UpstreamError:
    fields: dict[str, str] = {}
    for part in payload.split(b"\0"):
        if part:
            fields[chr(part[0])] = part[1:].decode(errors="replace")
    return UpstreamError(fields.get("M", "upstream error"), fields.get("C"))


class _ScramClient:
    """SCRAM-SHA-256 (RFC 5802/7677) as PostgreSQL implements it (no channel binding: 'n,,')."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.first_bare = f"n=,r={self.nonce}"
        self.server_signature = b""

    def client_first(self) -> bytes:
        return ("n,," + self.first_bare).encode()

    def client_final(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        attrs = dict(part.split("=", 1) for part in text.split(","))
        if not attrs["r"].startswith(self.nonce):
            raise UpstreamError("SCRAM: the server's nonce does not extend ours")
        salt, iterations = base64.b64decode(attrs["s"]), int(attrs["i"])
        salted = hashlib.pbkdf2_hmac("sha256", _saslprep(self.password).encode(), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
        stored_key = hashlib.sha256(client_key).digest()
        final_without_proof = f"c=biws,r={attrs['r']}"
        auth_message = f"{self.first_bare},{text},{final_without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        self.server_signature = hmac.new(server_key, auth_message, hashlib.sha256).digest()
        return f"{final_without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify_server_final(self, server_final: bytes) -> None:
        attrs = dict(part.split("=", 1) for part in server_final.decode().split(","))
        if "v" not in attrs or not hmac.compare_digest(base64.b64decode(attrs["v"]), self.server_signature):
            raise UpstreamError("SCRAM: the upstream server's signature is wrong")


def _saslprep(password: str) -> str:
    """PostgreSQL uses the password as is when SASLprep would reject it; ASCII is unchanged."""
    import unicodedata
    return unicodedata.normalize("NFKC", password)
