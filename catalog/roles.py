"""Roles and their password secrets, kept in the durable catalog's SQLite database.

A role's password is never stored: only PostgreSQL's own secret formats are, exactly as
pg_authid.rolpassword holds them, so a secret can be copied between Slipstream and PostgreSQL:

    SCRAM-SHA-256$<iterations>:<salt base64>$<StoredKey base64>:<ServerKey base64>
    md5<hex md5 of password || user name>

A role has at most one secret (as in PostgreSQL): which one a new password gets follows the
session's `password_encryption` (scram-sha-256 by default, or md5); a password given already in
one of these forms (psql's \\password sends it so) is stored as given.

    store = RoleStore(sqlite3.connect(":memory:"), next_oid=lambda: 20001)
    store.create("alice", login=True, superuser=False, secret=scram_secret("pw"))
    store.get("alice").verify_password("pw")    # True

`Catalog.roles()` (catalog/durable.py) lists them for pg_roles / pg_authid; the pgwire
authenticator reads `Catalog.role(name)`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass, replace
from typing import Callable

from catalog.sqlite_writes import write_atomically
from dataflow.errors import SqlError, SqlState

DEFAULT_ROLE = "slipstream"  # the role that exists from the start (PostgreSQL's bootstrap superuser)
DEFAULT_ROLE_OID = 10  # PostgreSQL's BOOTSTRAP_SUPERUSERID: clients recognise it
SCRAM_ITERATIONS = 4096  # PostgreSQL's scram_iterations default
SCRAM_SALT_LEN = 16  # PostgreSQL's SCRAM_DEFAULT_SALT_LEN
PASSWORD_ENCRYPTIONS = ("md5", "scram-sha-256")

_SCRAM_RE = re.compile(r"^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$")
_MD5_RE = re.compile(r"^md5[0-9a-f]{32}$")


# ----------------------------------------------------------------------------------- secrets


@dataclass(frozen=True)
class ScramSecret:
    iterations: int
    salt: bytes
    stored_key: bytes
    server_key: bytes


def parse_scram_secret(secret: str) -> ScramSecret | None:
    """The parts of a `SCRAM-SHA-256$...` secret; None if `secret` is not one."""
    m = _SCRAM_RE.match(secret or "")
    if m is None:
        return None
    try:
        salt, stored, server = (base64.b64decode(m.group(i), validate=True) for i in (2, 3, 4))
    except ValueError:
        return None
    if len(stored) != 32 or len(server) != 32 or int(m.group(1)) < 1:
        return None
    return ScramSecret(int(m.group(1)), salt, stored, server)


def salted_password(password: str, salt: bytes, iterations: int) -> bytes:
    # PostgreSQL runs the password through SASLprep first; for the ASCII passwords (and any
    # password SASLprep leaves unchanged) this is the identity. See docs/sql-semantics.md.
    return hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)


def scram_keys(salted: bytes) -> tuple[bytes, bytes, bytes]:
    """(ClientKey, StoredKey, ServerKey) from a salted password (RFC 5802)."""
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    return client_key, hashlib.sha256(client_key).digest(), server_key


def scram_secret(password: str, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS) -> str:
    """PostgreSQL's SCRAM-SHA-256 secret for `password` (a fresh random salt unless given)."""
    salt = secrets.token_bytes(SCRAM_SALT_LEN) if salt is None else salt
    _, stored, server = scram_keys(salted_password(password, salt, iterations))
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored)}:{b64(server)}"


def md5_secret(password: str, user: str) -> str:
    """PostgreSQL's md5 secret: 'md5' || md5(password || user name)."""
    return "md5" + hashlib.md5((password + user).encode("utf-8")).hexdigest()


def is_secret(text: str) -> bool:
    """Whether a PASSWORD '...' literal is already a secret (stored as given, as PostgreSQL does)."""
    return bool(_MD5_RE.match(text)) or parse_scram_secret(text) is not None


def encrypt_password(password: str, user: str, method: str) -> str:
    """The secret CREATE/ALTER ROLE ... PASSWORD stores: the literal itself if it is a secret
    already, otherwise the password hashed by `method` (password_encryption)."""
    if is_secret(password):
        return password
    if method == "md5":
        return md5_secret(password, user)
    return scram_secret(password)


# ----------------------------------------------------------------------------------- roles


@dataclass(frozen=True)
class Role:
    name: str
    oid: int
    login: bool = False
    superuser: bool = False
    scram: str | None = None  # SCRAM-SHA-256$... or None
    md5: str | None = None  # md5... or None

    @property
    def secret(self) -> str | None:
        """What pg_authid.rolpassword shows."""
        return self.scram or self.md5

    def verify_password(self, password: str) -> bool:
        """Whether a cleartext password matches the role's secret (constant-time compare)."""
        if self.scram is not None:
            parsed = parse_scram_secret(self.scram)
            if parsed is None:
                return False
            _, stored, server = scram_keys(salted_password(password, parsed.salt, parsed.iterations))
            return hmac.compare_digest(stored, parsed.stored_key) and hmac.compare_digest(server, parsed.server_key)
        if self.md5 is not None:
            return hmac.compare_digest(md5_secret(password, self.name), self.md5)
        return False


def _with_secret(role: Role, secret: str | None) -> Role:
    if secret is None:
        return replace(role, scram=None, md5=None)
    if parse_scram_secret(secret) is not None:
        return replace(role, scram=secret, md5=None)
    if _MD5_RE.match(secret):
        return replace(role, scram=None, md5=secret)
    raise ValueError("not a PostgreSQL password secret")


class RoleStore:
    """Roles in a `roles` table of an open SQLite connection (the durable catalog's): each
    change is one transaction. `next_oid` allocates an OID (called inside that transaction)."""

    def __init__(self, conn: sqlite3.Connection, next_oid: Callable[[], int],
                 lock: threading.Lock | None = None) -> None:
        self._conn = conn
        self._next_oid = next_oid
        self._lock = lock or threading.Lock()
        conn.execute("CREATE TABLE IF NOT EXISTS roles (name TEXT PRIMARY KEY, oid INTEGER NOT NULL, "
                     "login INTEGER NOT NULL, superuser INTEGER NOT NULL, secret TEXT)")
        conn.execute("INSERT OR IGNORE INTO roles VALUES (?, ?, 1, 1, NULL)", (DEFAULT_ROLE, DEFAULT_ROLE_OID))
        conn.execute("CREATE TABLE IF NOT EXISTS role_mock_nonce (nonce TEXT NOT NULL)")
        if conn.execute("SELECT count(*) FROM role_mock_nonce").fetchone()[0] == 0:
            conn.execute("INSERT INTO role_mock_nonce VALUES (?)", (secrets.token_hex(32),))
        self._mock_nonce = conn.execute("SELECT nonce FROM role_mock_nonce").fetchone()[0].encode()
        self._roles: dict[str, Role] = {}
        for name, oid, login, superuser, secret in conn.execute("SELECT name, oid, login, superuser, secret FROM roles"):
            self._roles[name] = _with_secret(Role(name, oid, bool(login), bool(superuser)), secret)

    # -- reads

    def roles(self) -> list[Role]:
        return sorted(self._roles.values(), key=lambda r: r.oid)

    def get(self, name: str) -> Role | None:
        return self._roles.get(name)

    # -- writes

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        write_atomically(self._conn, statements)

    def create(self, name: str, *, login: bool, superuser: bool, secret: str | None) -> Role:
        """A new role; 42710 if the name is taken."""
        with self._lock:
            if name in self._roles:
                raise SqlError(SqlState.DUPLICATE_OBJECT, f'role "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                role = _with_secret(Role(name, self._next_oid(), login, superuser), secret)
                self._conn.execute("INSERT INTO roles VALUES (?, ?, ?, ?, ?)",
                                   (name, role.oid, int(login), int(superuser), role.secret))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._roles[name] = role
            return role

    _UNCHANGED = object()

    def alter(self, name: str, *, login: bool | None = None, superuser: bool | None = None,
              secret: object = _UNCHANGED) -> Role:
        """Change some attributes; `secret=None` removes the password. 42704 if no such role."""
        with self._lock:
            role = self._roles.get(name)
            if role is None:
                raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
            if login is not None:
                role = replace(role, login=login)
            if superuser is not None:
                role = replace(role, superuser=superuser)
            if secret is not self._UNCHANGED:
                role = _with_secret(role, secret)  # type: ignore[arg-type]
            self._write([("UPDATE roles SET login = ?, superuser = ?, secret = ? WHERE name = ?",
                          (int(role.login), int(role.superuser), role.secret, name))])
            self._roles[name] = role
            return role

    def drop(self, names: list[str]) -> None:
        """Remove roles, all in one transaction (the caller checked they exist)."""
        with self._lock:
            self._write([("DELETE FROM roles WHERE name = ?", (n,)) for n in names])
            for n in names:
                self._roles.pop(n, None)

    def mock_salt(self, name: str) -> bytes:
        """A salt for a role that does not exist or has no SCRAM secret: the same for the same
        name every time, so a client cannot tell such roles from real ones (PostgreSQL's mock
        authentication). Derived from a random nonce kept with the roles."""
        return hashlib.sha256(self._mock_nonce + b"\x00" + name.encode()).digest()[:SCRAM_SALT_LEN]
