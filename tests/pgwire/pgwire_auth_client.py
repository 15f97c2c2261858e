"""A raw protocol-v3 login for authentication tests: it answers cleartext, md5 and SCRAM-SHA-256
(optionally -PLUS over TLS) challenges by hand and returns what the server sent, so tests can
check the exact exchange (which request codes, in which order) and the error fields, which
libpq-based drivers do not expose for connection failures.

    trace = login("127.0.0.1", port, "alice", "pw")
    # [('R', 10, ['SCRAM-SHA-256']), ('R', 11), ('R', 12), ('R', 0), ('K',), ('Z',)]
    trace = login(..., password="bad")
    # [..., ('E', {'S': 'FATAL', 'C': '28P01', 'M': 'password authentication failed for user "alice"'})]
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import socket
import ssl
import struct

SSL_REQUEST = struct.pack(">ii", 8, 80877103)
GSSENC_REQUEST = struct.pack(">ii", 8, 80877104)


def _msg(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack(">i", len(body) + 4) + body


def startup_packet(user: str, database: str = "db") -> bytes:
    body = struct.pack(">i", 196608) + f"user\0{user}\0database\0{database}\0\0".encode()
    return struct.pack(">i", len(body) + 4) + body


def _recv_exactly(sock, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("server closed the connection")
        buf += chunk
    return buf


def _read(sock) -> tuple[bytes, bytes]:
    head = _recv_exactly(sock, 5)
    return head[:1], _recv_exactly(sock, struct.unpack(">i", head[1:])[0] - 4)


def _fields(body: bytes) -> dict[str, str]:
    return {chr(p[0]): p[1:].decode() for p in body.split(b"\x00") if p}


def connect(host: str, port: int, tls: ssl.SSLContext | None = None, server_hostname: str = "localhost"):
    sock = socket.create_connection((host, port), timeout=10)
    if tls is None:
        return sock
    sock.sendall(SSL_REQUEST)
    answer = _recv_exactly(sock, 1)
    if answer != b"S":
        raise AssertionError(f"server answered SSLRequest with {answer!r}")
    return tls.wrap_socket(sock, server_hostname=server_hostname)


def login(host: str, port: int, user: str, password: str, *, tls: ssl.SSLContext | None = None,
          gs2: str | None = None, mechanism: str | None = None, tamper_nonce: bool = False,
          keep_open: bool = False):
    """Log in and return the trace. `gs2` overrides the GS2 header ('n,,', 'y,,',
    'p=tls-server-end-point,,'); `mechanism` picks the SASL mechanism (default: -PLUS when
    offered over TLS, else SCRAM-SHA-256). With `keep_open`, returns (trace, socket, BackendKeyData
    (pid, key)) and leaves the session open."""
    sock = connect(host, port, tls)
    trace: list[tuple] = []
    state: dict = {}
    try:
        sock.sendall(startup_packet(user))
        while True:
            kind, body = _read(sock)
            if kind == b"E":
                trace.append(("E", _fields(body)))
                return trace
            if kind == b"Z":
                trace.append(("Z",))
                if keep_open:
                    return trace, sock, state.get("key")
                return trace
            if kind == b"K":
                state["key"] = struct.unpack(">iI", body)
            if kind != b"R":
                if kind != b"S":  # ParameterStatus: not interesting here
                    trace.append((kind.decode(),))
                continue
            code = struct.unpack(">i", body[:4])[0]
            if code == 3:
                trace.append(("R", 3))
                sock.sendall(_msg(b"p", password.encode() + b"\0"))
            elif code == 5:
                trace.append(("R", 5))
                inner = hashlib.md5((password + user).encode()).hexdigest()
                outer = "md5" + hashlib.md5(inner.encode() + body[4:8]).hexdigest()
                sock.sendall(_msg(b"p", outer.encode() + b"\0"))
            elif code == 10:
                mechs = [m.decode() for m in body[4:].split(b"\0") if m]
                trace.append(("R", 10, mechs))
                mech = mechanism or ("SCRAM-SHA-256-PLUS" if "SCRAM-SHA-256-PLUS" in mechs else "SCRAM-SHA-256")
                header = gs2 or ("p=tls-server-end-point,," if mech.endswith("-PLUS") else "n,,")
                nonce = base64.b64encode(os.urandom(18)).decode()
                bare = f"n=,r={nonce}"
                first = (header + bare).encode()
                state.update(header=header, bare=bare, nonce=nonce, sock=sock)
                sock.sendall(_msg(b"p", mech.encode() + b"\0" + struct.pack(">i", len(first)) + first))
            elif code == 11:
                trace.append(("R", 11))
                server_first = body[4:].decode()
                attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
                assert attrs["r"].startswith(state["nonce"])
                state["server_first_attrs"] = attrs
                salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attrs["s"]),
                                             int(attrs["i"]))
                client_key = hmac.new(salted, b"Client Key", "sha256").digest()
                state["server_key"] = hmac.new(salted, b"Server Key", "sha256").digest()
                cbind = state["header"].encode()
                if state["header"].startswith("p="):
                    cbind += _endpoint_hash(sock)
                r = attrs["r"] + ("x" if tamper_nonce else "")
                without_proof = f"c={base64.b64encode(cbind).decode()},r={r}"
                auth_message = f"{state['bare']},{server_first},{without_proof}".encode()
                state["auth_message"] = auth_message
                signature = hmac.new(hashlib.sha256(client_key).digest(), auth_message, "sha256").digest()
                proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
                sock.sendall(_msg(b"p", f"{without_proof},p={proof}".encode()))
            elif code == 12:
                expected = hmac.new(state["server_key"], state["auth_message"], "sha256").digest()
                verified = body[4:].decode() == "v=" + base64.b64encode(expected).decode()
                trace.append(("R", 12, "server signature ok" if verified else "server signature WRONG"))
            else:
                trace.append(("R", code))
    finally:
        if not (keep_open and trace and trace[-1] == ("Z",)):
            sock.close()


def _endpoint_hash(sock) -> bytes:
    """tls-server-end-point data, as a client computes it from the certificate it received."""
    der = sock.getpeercert(binary_form=True)
    return hashlib.sha256(der).digest()  # our test certificates are signed with SHA-256


def codes(trace: list[tuple]) -> list:
    """The trace reduced to request codes and the error's SQLSTATE: [10, 11, 12, 0, 'K', 'Z']."""
    out = []
    for t in trace:
        if t[0] == "R":
            out.append(t[1])
        elif t[0] == "E":
            out.append(("E", t[1]["C"]))
        else:
            out.append(t[0])
    return out
