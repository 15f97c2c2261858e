"""Client authentication and TLS for the pgwire server, the way PostgreSQL does them.

    config = AuthConfig.build("scram-sha-256", tls_cert="server.crt", tls_key="server.key")
    server = PgServer(adapter, auth=config, roles=catalog.role_store)

Methods (`--auth`), as in pg_hba.conf:
- trust: no password. Any user name is admitted, as Slipstream always did, except a role that
  exists and is NOLOGIN.
- password: AuthenticationCleartextPassword (R 3); checked against the role's SCRAM or md5 secret.
- md5: AuthenticationMD5Password (R 5, 4-byte salt) for a role whose secret is md5; a role with a
  SCRAM secret (the default) gets SCRAM instead, as PostgreSQL does.
- scram-sha-256: SASL (R 10/11/12), SCRAM-SHA-256 per RFC 5802/7677 as PostgreSQL implements it
  (18-byte server nonce, the role's stored salt and iteration count). Over TLS,
  SCRAM-SHA-256-PLUS (tls-server-end-point channel binding) is offered too.

A role that does not exist, or has no usable secret, goes through the same exchange with a
made-up salt and then fails, so a client cannot probe which roles exist: every failure is 28P01
`password authentication failed for user "..."`. A NOLOGIN role that authenticates is refused
with 28000 `role "..." is not permitted to log in`. No password is ever logged.

TLS (`--tls-cert/--tls-key`): SSLRequest is answered 'S' and the connection upgraded in place
(`loop.start_tls`); with `--tls-require` a connection that did not ask for TLS is refused with
28000 `no pg_hba.conf entry for host ..., no encryption`, PostgreSQL's words for a `hostssl`-only
pg_hba.conf.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import ssl
import struct
from dataclasses import dataclass
from pathlib import Path

from catalog.roles import Role, SCRAM_ITERATIONS, parse_scram_secret
from dataflow.errors import SqlError
from server.pgwire import protocol as p
from server.pgwire.protocol import BodyReader, ConnectionClosed, ProtocolViolation

METHODS = ("trust", "password", "md5", "scram-sha-256")
AUTH_TIMEOUT_S = 60.0  # PostgreSQL's authentication_timeout
MAX_AUTH_TOKEN_LENGTH = 65535  # PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH
SCRAM_NONCE_LEN = 18  # PostgreSQL's SCRAM_RAW_NONCE_LEN

_R = struct.Struct(">i")
_INVALID_PASSWORD = "28P01"
_INVALID_AUTHORIZATION = "28000"
_PROTOCOL_VIOLATION = "08P01"


def auth_failed(user: str) -> SqlError:
    return SqlError(_INVALID_PASSWORD, f'password authentication failed for user "{user}"', severity="FATAL")


def _malformed(detail: str) -> SqlError:
    return SqlError(_PROTOCOL_VIOLATION, "malformed SCRAM message", detail=detail, severity="FATAL")


# ------------------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class AuthConfig:
    method: str = "trust"
    tls: ssl.SSLContext | None = None
    tls_require: bool = False
    # tls-server-end-point channel binding data: the hash of our certificate (None: no -PLUS).
    cert_hash: bytes | None = None

    @classmethod
    def build(cls, method: str = "trust", tls_cert: str | Path | None = None,
              tls_key: str | Path | None = None, tls_require: bool = False) -> "AuthConfig":
        if method not in METHODS:
            raise ValueError(f"unknown authentication method {method!r} (one of {', '.join(METHODS)})")
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("--tls-cert and --tls-key go together")
        if tls_require and tls_cert is None:
            raise ValueError("--tls-require needs --tls-cert and --tls-key")
        ctx, cert_hash = None, None
        if tls_cert is not None:
            ctx = tls_context(tls_cert, tls_key)
            cert_hash = certificate_hash(Path(tls_cert).read_text())
        return cls(method, ctx, tls_require, cert_hash)


def tls_context(cert: str | Path, key: str | Path) -> ssl.SSLContext:
    """A server-side context: TLS 1.2 or newer (PostgreSQL's ssl_min_protocol_version)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    ctx.set_alpn_protocols(["postgresql"])  # what libpq 17 asks for; harmless for older clients
    return ctx


# Signature algorithm OID -> the hash tls-server-end-point uses (RFC 5929: MD5 and SHA-1 become
# SHA-256), as PostgreSQL's be_tls_get_certificate_hash.
_SIGNATURE_HASHES = {
    "1.2.840.113549.1.1.4": "sha256", "1.2.840.113549.1.1.5": "sha256",  # md5/sha1 WithRSA
    "1.2.840.113549.1.1.11": "sha256", "1.2.840.113549.1.1.12": "sha384",
    "1.2.840.113549.1.1.13": "sha512", "1.2.840.113549.1.1.14": "sha224",
    "1.2.840.10045.4.1": "sha256", "1.2.840.10045.4.3.1": "sha224",  # ecdsa-with-SHA1/224
    "1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384", "1.2.840.10045.4.3.4": "sha512",
    "1.2.840.10040.4.3": "sha256", "2.16.840.1.101.3.4.3.2": "sha256",  # dsa-with-sha1/sha256
}


def _der_item(der: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of contents, end of contents) of the DER item at `pos`."""
    tag, n = der[pos], der[pos + 1]
    pos += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(der[pos:pos + k], "big")
        pos += k
    return tag, pos, pos + n


def _oid(body: bytes) -> str:
    parts = [body[0] // 40, body[0] % 40]
    v = 0
    for b in body[1:]:
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            parts.append(v)
            v = 0
    return ".".join(map(str, parts))


def certificate_hash(pem: str) -> bytes | None:
    """tls-server-end-point data for the first certificate in `pem`: its DER hashed with the
    hash of its signature algorithm; None when the algorithm has no such hash (Ed25519), in
    which case SCRAM-SHA-256-PLUS is not offered."""
    begin = pem.find("-----BEGIN CERTIFICATE-----")
    end = pem.find("-----END CERTIFICATE-----", begin)
    if begin < 0 or end < 0:
        return None
    der = ssl.PEM_cert_to_DER_cert(pem[begin:end + len("-----END CERTIFICATE-----")])
    try:
        _, body, _ = _der_item(der, 0)  # Certificate SEQUENCE
        _, _, tbs_end = _der_item(der, body)  # tbsCertificate
        _, alg, _ = _der_item(der, tbs_end)  # signatureAlgorithm SEQUENCE
        tag, oid_start, oid_end = _der_item(der, alg)
        if tag != 0x06:
            return None
        name = _SIGNATURE_HASHES.get(_oid(der[oid_start:oid_end]))
    except IndexError:
        return None
    return None if name is None else hashlib.new(name, der).digest()


# ------------------------------------------------------------------------------ the exchange


class Authenticator:
    """Runs one connection's authentication exchange. `roles` looks roles up: `get(name) ->
    Role | None` and `mock_salt(name) -> bytes` (catalog.roles.RoleStore)."""

    def __init__(self, config: AuthConfig, roles, stream, user: str, tls: bool) -> None:
        self.config = config
        self.roles = roles
        self.stream = stream
        self.user = user
        self.tls = tls

    async def run(self) -> Role | None:
        """Authenticate; returns the role (None for a user name that is no role, under trust).
        Raises SqlError (FATAL) on failure, ConnectionClosed if the client goes away (psql does
        that to ask for a password, then reconnects)."""
        role = self.roles.get(self.user) if self.roles is not None else None
        method = self.config.method
        if method == "trust":
            return role
        try:
            await asyncio.wait_for(self._exchange(method, role), AUTH_TIMEOUT_S)
        except asyncio.TimeoutError:
            raise SqlError(_PROTOCOL_VIOLATION, "canceling authentication due to timeout", severity="FATAL") from None
        return role

    async def _exchange(self, method: str, role: Role | None) -> None:
        if method == "password":
            password = await self._cleartext()
            if role is None or not role.verify_password(password):
                raise auth_failed(self.user)
        elif method == "md5" and role is not None and role.md5 is not None and role.scram is None:
            await self._md5(role)
        else:
            await self._scram(role)

    # -- messages

    async def _send(self, code: int, data: bytes = b"") -> None:
        self.stream.write(p.message(b"R", _R.pack(code) + data))
        await self.stream.drain()

    async def _response(self, what: str) -> bytes:
        header = await self.stream.read_exactly(5)
        if header[:1] != b"p":
            raise SqlError(_PROTOCOL_VIOLATION, f"expected {what} response, got message type {header[0]}",
                           severity="FATAL")
        length = struct.unpack(">i", header[1:])[0]
        if length < 4 or length - 4 > MAX_AUTH_TOKEN_LENGTH:
            raise ProtocolViolation("invalid message length")
        return await self.stream.read_exactly(length - 4)

    # -- cleartext and md5

    async def _cleartext(self) -> str:
        await self._send(3)
        body = await self._response("password")
        password = BodyReader(body).cstring()
        if password == "":
            raise SqlError(_INVALID_PASSWORD, "empty password returned by client", severity="FATAL")
        return password

    async def _md5(self, role: Role) -> None:
        salt = secrets.token_bytes(4)
        await self._send(5, salt)
        body = await self._response("password")
        answer = BodyReader(body).cstring()
        if answer == "":
            raise SqlError(_INVALID_PASSWORD, "empty password returned by client", severity="FATAL")
        expected = "md5" + hashlib.md5(role.md5[3:].encode() + salt).hexdigest()
        if not hmac.compare_digest(answer.encode(), expected.encode()):
            raise auth_failed(self.user)

    # -- SCRAM-SHA-256

    async def _scram(self, role: Role | None) -> None:
        secret = parse_scram_secret(role.scram) if role is not None and role.scram else None
        plus = self.tls and self.config.cert_hash is not None
        mechanisms = (["SCRAM-SHA-256-PLUS"] if plus else []) + ["SCRAM-SHA-256"]
        await self._send(10, b"".join(m.encode() + b"\x00" for m in mechanisms) + b"\x00")

        r = BodyReader(await self._response("SASL"))
        mechanism = r.cstring()
        if mechanism not in mechanisms:
            raise SqlError(_PROTOCOL_VIOLATION, "client selected an invalid SASL authentication mechanism",
                           severity="FATAL")
        n = r.int32()
        if n == -1:  # no initial response: ask for it with an empty challenge
            await self._send(11)
            first = (await self._response("SASL")).decode("utf-8", "replace")
        else:
            first = r.bytes(n).decode("utf-8", "replace")
        scram = ScramServer(mechanism == "SCRAM-SHA-256-PLUS", plus, self.config.cert_hash)
        if secret is None:
            salt, iterations, stored_key, server_key = self.roles.mock_salt(self.user), SCRAM_ITERATIONS, None, None
        else:
            salt, iterations = secret.salt, secret.iterations
            stored_key, server_key = secret.stored_key, secret.server_key
        server_first = scram.client_first(first, salt, iterations)
        await self._send(11, server_first.encode())
        final = (await self._response("SASL")).decode("utf-8", "replace")
        proof_ok, server_final = scram.client_final(final, stored_key, server_key)
        if not proof_ok:
            raise auth_failed(self.user)
        await self._send(12, server_final.encode())


def _attr(s: str, name: str, where: str) -> str:
    if not s.startswith(name + "="):
        raise _malformed(f'Expected attribute "{name}" but found "{s[:1]}".' if s
                         else f'Expected attribute "{name}" but found end of string.')
    return s[len(name) + 1:]


class ScramServer:
    """The server side of one SCRAM-SHA-256 exchange, with PostgreSQL's checks and messages."""

    def __init__(self, plus: bool, server_supports_binding: bool, cert_hash: bytes | None) -> None:
        self.plus = plus
        self.server_supports_binding = server_supports_binding
        self.cert_hash = cert_hash
        self.cbind_flag = ""
        self.gs2_header = ""
        self.client_first_bare = ""
        self.server_first = ""
        self.nonce = ""

    def client_first(self, msg: str, salt: bytes, iterations: int) -> str:
        flag = msg[:1]
        if flag == "n":
            if self.plus:
                raise _malformed("The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not "
                                 "include channel binding data.")
            rest = msg[1:]
        elif flag == "y":
            if self.plus:
                raise _malformed("The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not "
                                 "include channel binding data.")
            if self.server_supports_binding:
                raise SqlError(_INVALID_AUTHORIZATION, "SCRAM channel binding negotiation error",
                               detail="The client supports SCRAM channel binding but thinks the server does not.  "
                                      "However, this server does support channel binding.", severity="FATAL")
            rest = msg[1:]
        elif flag == "p":
            if not self.plus:
                raise _malformed("The client selected SCRAM-SHA-256 without channel binding, but the SCRAM "
                                 "message includes channel binding data.")
            comma = msg.find(",")
            cb_type = _attr(msg[:comma if comma >= 0 else len(msg)], "p", "client-first-message")
            if cb_type != "tls-server-end-point":
                raise SqlError(_PROTOCOL_VIOLATION, f'unsupported SCRAM channel-binding type "{cb_type}"',
                               severity="FATAL")
            rest = msg[comma:] if comma >= 0 else ""
        else:
            raise _malformed(f'Unexpected channel-binding flag "{flag}".' if flag
                             else 'Unexpected channel-binding flag "".')
        self.cbind_flag = flag
        if not rest.startswith(","):
            raise _malformed(f'Comma expected, but found character "{rest[:1]}".')
        rest = rest[1:]
        if rest.startswith("a"):
            raise SqlError("0A000", "client uses authorization identity, but it is not supported", severity="FATAL")
        if not rest.startswith(","):
            raise _malformed(f'Unexpected attribute "{rest[:1]}" in client-first-message.')
        self.gs2_header = msg[:len(msg) - len(rest) + 1]
        bare = rest[1:]
        self.client_first_bare = bare
        if bare.startswith("m"):
            raise SqlError("0A000", "client requires an unsupported SCRAM extension", severity="FATAL")
        parts = bare.split(",")
        _attr(parts[0], "n", "client-first-message")  # the user name: PostgreSQL ignores it
        if len(parts) < 2:
            raise _malformed('Expected attribute "r" but found end of string.')
        client_nonce = _attr(parts[1], "r", "client-first-message")
        if not client_nonce or any(not (0x21 <= ord(ch) <= 0x7E) or ch == "," for ch in client_nonce):
            raise _malformed("Client nonce is not printable." if client_nonce else "Client nonce is empty.")
        server_nonce = base64.b64encode(secrets.token_bytes(SCRAM_NONCE_LEN)).decode()
        self.nonce = client_nonce + server_nonce
        self.server_first = f"r={self.nonce},s={base64.b64encode(salt).decode()},i={iterations}"
        return self.server_first

    def client_final(self, msg: str, stored_key: bytes | None, server_key: bytes | None) -> tuple[bool, str]:
        """(proof verified, server-final-message). A mock exchange (no keys) never verifies."""
        parts = msg.split(",")
        channel_binding = _attr(parts[0], "c", "client-final-message")
        if self.plus:
            expected = base64.b64encode(b"p=tls-server-end-point,," + (self.cert_hash or b"")).decode()
            if not hmac.compare_digest(channel_binding.encode(), expected.encode()):
                raise SqlError(_INVALID_AUTHORIZATION, "SCRAM channel binding check failed", severity="FATAL")
        elif not ((channel_binding == "biws" and self.cbind_flag == "n")
                  or (channel_binding == "eSws" and self.cbind_flag == "y")):
            raise SqlError(_PROTOCOL_VIOLATION,
                           "unexpected SCRAM channel-binding attribute in client-final-message", severity="FATAL")
        if len(parts) < 3:
            raise _malformed('Expected attribute "p" but found end of string.')
        final_nonce = _attr(parts[1], "r", "client-final-message")
        proof_attr = parts[-1]
        proof_b64 = _attr(proof_attr, "p", "client-final-message")
        try:
            proof = base64.b64decode(proof_b64, validate=True)
        except ValueError:
            raise _malformed("Malformed proof in client-final-message.") from None
        if len(proof) != 32:
            raise _malformed("Malformed proof in client-final-message.")
        if final_nonce != self.nonce:
            raise SqlError(_PROTOCOL_VIOLATION, "invalid SCRAM response", detail="Nonce does not match.",
                           severity="FATAL")
        without_proof = msg[:len(msg) - len(proof_attr) - 1]
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        if stored_key is None or server_key is None:
            return False, ""
        client_signature = hmac.new(stored_key, auth_message, "sha256").digest()
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), stored_key):
            return False, ""
        server_signature = hmac.new(server_key, auth_message, "sha256").digest()
        return True, "v=" + base64.b64encode(server_signature).decode()


def hba_refusal(host: str, user: str, database: str) -> SqlError:
    """PostgreSQL's answer when only hostssl lines match: the connection did not use TLS."""
    return SqlError(_INVALID_AUTHORIZATION,
                    f'no pg_hba.conf entry for host "{host}", user "{user}", database "{database}", no encryption',
                    severity="FATAL")


__all__ = ["AuthConfig", "Authenticator", "METHODS", "ConnectionClosed", "auth_failed", "hba_refusal"]
