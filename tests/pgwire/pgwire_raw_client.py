"""A minimal blocking protocol-v3 client over a raw socket, for malformed-input and state-machine
tests that real drivers cannot express."""

from __future__ import annotations

import socket
import struct


def msg(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack(">i", len(body) + 4) + body


def cstr(s: str) -> bytes:
    return s.encode() + b"\x00"


def startup_packet(**params: str) -> bytes:
    body = struct.pack(">i", 196608) + b"".join(cstr(k) + cstr(v) for k, v in params.items()) + b"\x00"
    return struct.pack(">i", len(body) + 4) + body


def parse(name: str, sql: str, oids: list[int] = ()) -> bytes:
    return msg(b"P", cstr(name) + cstr(sql) + struct.pack(f">h{len(oids)}i", len(oids), *oids))


def bind(portal: str, stmt: str, params: list[bytes | None] = (), result_formats: list[int] = ()) -> bytes:
    body = cstr(portal) + cstr(stmt) + struct.pack(">h", 0) + struct.pack(">h", len(params))
    for p in params:
        body += struct.pack(">i", -1) if p is None else struct.pack(">i", len(p)) + p
    body += struct.pack(f">h{len(result_formats)}h", len(result_formats), *result_formats)
    return msg(b"B", body)


def execute(portal: str = "", max_rows: int = 0) -> bytes:
    return msg(b"E", cstr(portal) + struct.pack(">i", max_rows))


def describe(kind: bytes, name: str) -> bytes:
    return msg(b"D", kind + cstr(name))


SYNC = msg(b"S")
FLUSH = msg(b"H")
TERMINATE = msg(b"X")


def query(sql: str) -> bytes:
    return msg(b"Q", cstr(sql))


def error_fields(body: bytes) -> dict[str, str]:
    out = {}
    for part in body.split(b"\x00"):
        if part:
            out[chr(part[0])] = part[1:].decode()
    return out


class RawClient:
    def __init__(self, host: str, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.pid = self.key = None

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv_exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("server closed the connection")
            buf += chunk
        return buf

    def read_message(self) -> tuple[bytes, bytes]:
        head = self._recv_exactly(5)
        length = struct.unpack(">i", head[1:])[0]
        return head[:1], self._recv_exactly(length - 4)

    def read_until_ready(self) -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            kind, body = self.read_message()
            out.append((kind, body))
            if kind == b"Z":
                return out

    def startup(self, **params: str) -> list[tuple[bytes, bytes]]:
        params.setdefault("user", "raw")
        self.send(startup_packet(**params))
        msgs = self.read_until_ready()
        for kind, body in msgs:
            if kind == b"K":
                self.pid, self.key = struct.unpack(">iI", body)
        return msgs

    def closed_by_server(self) -> bool:
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self) -> None:
        self.sock.close()


def send_cancel(host: str, port: int, pid: int, key: int) -> None:
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(struct.pack(">iiiI", 16, 80877102, pid, key))
        s.recv(1)  # the server closes without replying
