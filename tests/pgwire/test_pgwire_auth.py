"""Authentication and TLS of the real PgServer (in this process, on uvloop, with the fake adapter
and an in-memory role store) against real clients over real sockets: psql, psycopg 3, asyncpg,
and a raw client that shows the exact exchange. The exchanges and error fields asserted here were
taken from PostgreSQL 15 with the same pg_hba.conf methods (see docs/architecture.md).

One server per configuration, started on first use and shared by the module's tests.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import ssl
import struct
import subprocess
import threading
import time

import asyncpg
import psycopg
import pytest
import uvloop

from catalog.roles import RoleStore, md5_secret, scram_secret
from pgwire_auth_client import GSSENC_REQUEST, SSL_REQUEST, codes, connect, login, startup_packet
from pgwire_fake_adapter import FakeAdapter
from server.pgwire.auth import AuthConfig, certificate_hash
from server.pgwire.server import PgServer
from tests.support.tls_certs import make_certs, openssl_available

pytestmark = pytest.mark.skipif(not openssl_available(), reason="the openssl CLI makes the test certificates")

HOST = "127.0.0.1"
PASSWORDS = {"slipstream": "sekrit", "alice": "alice-pw", "mona": "mona-pw", "nolog": "nolog-pw"}
FAILED = 'password authentication failed for user "{}"'


def _roles() -> RoleStore:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    oids = iter(range(20_000, 30_000))
    store = RoleStore(conn, lambda: next(oids))
    store.alter("slipstream", secret=scram_secret(PASSWORDS["slipstream"]))
    store.create("alice", login=True, superuser=False, secret=scram_secret(PASSWORDS["alice"]))
    store.create("mona", login=True, superuser=False, secret=md5_secret(PASSWORDS["mona"], "mona"))
    store.create("nolog", login=False, superuser=False, secret=scram_secret(PASSWORDS["nolog"]))
    store.create("nopw", login=True, superuser=False, secret=None)
    return store


class Running:
    def __init__(self, auth: AuthConfig) -> None:
        self.loop = uvloop.new_event_loop()
        self.adapter = FakeAdapter()
        self.server = PgServer(self.adapter, host=HOST, port=0, auth=auth, roles=_roles())
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.start())
            started.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert started.wait(10)
        self.host, self.port = HOST, self.server.port

    def conninfo(self, user: str, password: str | None = None, **params: str) -> str:
        parts = {"host": HOST, "port": str(self.port), "user": user, "dbname": "db",
                 "connect_timeout": "10", **params}
        if password is not None:
            parts["password"] = password
        return " ".join(f"{k}={v}" for k, v in parts.items())

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def servers(certs):
    started: dict[tuple, Running] = {}

    def get(method: str, tls: bool = False, require: bool = False) -> Running:
        key = (method, tls, require)
        if key not in started:
            auth = AuthConfig.build(method, certs.cert if tls else None, certs.key if tls else None, require)
            started[key] = Running(auth)
        return started[key]

    yield get
    for s in started.values():
        s.close()


def _psql(conninfo: str, sql: str = "SELECT 1", password: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(["psql", "-X", "-w", "-At", "-c", sql, conninfo], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)


async def _asyncpg(server: Running, user: str, password: str | None, **kw):
    conn = await asyncpg.connect(host=HOST, port=server.port, user=user, password=password, database="db",
                                 timeout=10, statement_cache_size=0, **kw)
    try:
        return await conn.fetchval("SELECT 42")
    finally:
        await conn.close()


def _asyncpg_error(server: Running, user: str, password: str | None, **kw) -> BaseException:
    with pytest.raises(asyncpg.PostgresError) as info:
        asyncio.run(_asyncpg(server, user, password, **kw))
    return info.value


# ------------------------------------------------------------------------------ scram-sha-256


def test_scram_clients_log_in(servers):
    s = servers("scram-sha-256")
    done = _psql(s.conninfo("alice"), password=PASSWORDS["alice"])
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    with psycopg.connect(s.conninfo("alice", PASSWORDS["alice"]), autocommit=True) as conn:
        assert conn.execute("SELECT 7").fetchone() == (7,)
        assert conn.info.parameter_status("is_superuser") == "off"
    with psycopg.connect(s.conninfo("slipstream", PASSWORDS["slipstream"]), autocommit=True) as conn:
        assert conn.info.parameter_status("is_superuser") == "on"
    assert asyncio.run(_asyncpg(s, "alice", PASSWORDS["alice"])) == 42


def test_scram_exchange_like_postgres(servers):
    s = servers("scram-sha-256")
    ok = login(HOST, s.port, "alice", PASSWORDS["alice"])
    assert codes(ok) == [10, 11, 12, 0, "K", "Z"]
    assert ok[0][2] == ["SCRAM-SHA-256"]  # no -PLUS without TLS
    assert ok[2][2] == "server signature ok"
    # Every failure looks the same from outside: the whole exchange, then 28P01.
    for user, password in [("alice", "wrong"), ("nosuch", "x"), ("nopw", "x"), ("mona", PASSWORDS["mona"]),
                           ("nolog", "wrong")]:
        trace = login(HOST, s.port, user, password)
        assert codes(trace) == [10, 11, ("E", "28P01")], (user, trace)
        assert trace[-1][1]["M"] == FAILED.format(user) and trace[-1][1]["S"] == "FATAL"
    # NOLOGIN: authentication succeeds, then the login is refused (after AuthenticationOk).
    trace = login(HOST, s.port, "nolog", PASSWORDS["nolog"])
    assert codes(trace) == [10, 11, 12, 0, ("E", "28000")]
    assert trace[-1][1]["M"] == 'role "nolog" is not permitted to log in'


def test_scram_mock_salt_is_stable_per_user(servers):
    s = servers("scram-sha-256")

    def salt(user: str) -> str:
        sock = connect(HOST, s.port)
        try:
            sock.sendall(startup_packet(user))
            sock.recv(1024)  # R 10
            first = b"n,,n=,r=abcdefghijklmnop"
            body = b"SCRAM-SHA-256\0" + struct.pack(">i", len(first)) + first
            sock.sendall(b"p" + struct.pack(">i", len(body) + 4) + body)
            data = sock.recv(1024)
            return dict(kv.split("=", 1) for kv in data[9:].decode().split(","))["s"]
        finally:
            sock.close()

    assert salt("ghost") == salt("ghost") != salt("phantom")


def test_scram_protocol_errors(servers):
    s = servers("scram-sha-256")
    # 'y,,': the client could bind but thinks we cannot, which is true without TLS: accepted.
    assert codes(login(HOST, s.port, "alice", PASSWORDS["alice"], gs2="y,,")) == [10, 11, 12, 0, "K", "Z"]
    trace = login(HOST, s.port, "alice", PASSWORDS["alice"], tamper_nonce=True)
    assert trace[-1][1]["C"] == "08P01" and trace[-1][1]["M"] == "invalid SCRAM response"
    trace = login(HOST, s.port, "alice", PASSWORDS["alice"], mechanism="SCRAM-SHA-256-PLUS")
    assert trace[-1][1]["C"] == "08P01"
    assert trace[-1][1]["M"] == "client selected an invalid SASL authentication mechanism"
    trace = login(HOST, s.port, "alice", PASSWORDS["alice"], gs2="p=tls-server-end-point,,")
    assert trace[-1][1]["M"] == "malformed SCRAM message"


def test_wrong_password_through_drivers(servers):
    s = servers("scram-sha-256")
    err = _asyncpg_error(s, "alice", "wrong")
    assert err.sqlstate == "28P01" and str(err) == FAILED.format("alice")
    with pytest.raises(psycopg.OperationalError, match=FAILED.format("alice")):
        psycopg.connect(s.conninfo("alice", "wrong"))
    done = _psql(s.conninfo("alice"), password="wrong")
    assert done.returncode == 2 and FAILED.format("alice") in done.stderr
    done = _psql(s.conninfo("alice"))  # no password at all: psql gives up without sending one
    assert done.returncode == 2 and "no password supplied" in done.stderr
    err = _asyncpg_error(s, "nolog", PASSWORDS["nolog"])
    assert err.sqlstate == "28000" and str(err) == 'role "nolog" is not permitted to log in'


# ------------------------------------------------------------------------------ md5 and password


def test_md5(servers):
    s = servers("md5")
    assert codes(login(HOST, s.port, "mona", PASSWORDS["mona"])) == [5, 0, "K", "Z"]
    # A role with a SCRAM secret cannot use md5: it gets SCRAM, as in PostgreSQL.
    assert codes(login(HOST, s.port, "alice", PASSWORDS["alice"])) == [10, 11, 12, 0, "K", "Z"]
    trace = login(HOST, s.port, "mona", "wrong")
    assert codes(trace) == [5, ("E", "28P01")] and trace[-1][1]["M"] == FAILED.format("mona")
    assert codes(login(HOST, s.port, "nosuch", "x")) == [10, 11, ("E", "28P01")]
    done = _psql(s.conninfo("mona"), password=PASSWORDS["mona"])
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    with psycopg.connect(s.conninfo("mona", PASSWORDS["mona"]), autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert asyncio.run(_asyncpg(s, "mona", PASSWORDS["mona"])) == 42
    assert asyncio.run(_asyncpg(s, "alice", PASSWORDS["alice"])) == 42
    assert _asyncpg_error(s, "mona", "wrong").sqlstate == "28P01"


def test_cleartext_password(servers):
    s = servers("password")
    for user in ("alice", "mona"):  # checked against a SCRAM secret and an md5 one
        assert codes(login(HOST, s.port, user, PASSWORDS[user])) == [3, 0, "K", "Z"]
    for user, password in [("alice", "wrong"), ("nosuch", "x"), ("nopw", "x")]:
        trace = login(HOST, s.port, user, password)
        assert codes(trace) == [3, ("E", "28P01")] and trace[-1][1]["M"] == FAILED.format(user)
    trace = login(HOST, s.port, "alice", "")
    assert codes(trace) == [3, ("E", "28P01")] and trace[-1][1]["M"] == "empty password returned by client"
    done = _psql(s.conninfo("alice"), password=PASSWORDS["alice"])
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    with psycopg.connect(s.conninfo("mona", PASSWORDS["mona"]), autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert asyncio.run(_asyncpg(s, "alice", PASSWORDS["alice"])) == 42
    assert _asyncpg_error(s, "alice", "wrong").sqlstate == "28P01"


def test_trust(servers):
    s = servers("trust")
    assert codes(login(HOST, s.port, "anyone", "")) == [0, "K", "Z"]  # as Slipstream always did
    trace = login(HOST, s.port, "nolog", "")
    assert codes(trace) == [0, ("E", "28000")]
    assert trace[-1][1]["M"] == 'role "nolog" is not permitted to log in'


# ------------------------------------------------------------------------------ TLS


def test_tls_offered(servers, certs):
    s = servers("scram-sha-256", tls=True)
    pw = PASSWORDS["alice"]
    done = _psql(s.conninfo("alice", sslmode="require"), "SELECT 5", password=pw)
    assert done.returncode == 0 and done.stdout.strip() == "5", done.stderr
    verify = dict(sslmode="verify-full", sslrootcert=str(certs.ca))
    done = _psql(s.conninfo("alice", **verify).replace(f"host={HOST}", "host=localhost"), password=pw)
    assert done.returncode == 0, done.stderr
    # channel_binding=require: libpq must use SCRAM-SHA-256-PLUS (tls-server-end-point).
    done = _psql(s.conninfo("alice", sslmode="require", channel_binding="require"), password=pw)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(s.conninfo("alice", pw, **verify).replace(f"host={HOST}", "host=localhost"),
                         autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.execute("SELECT 3").fetchone() == (3,)
    with psycopg.connect(s.conninfo("alice", pw, sslmode="disable"), autocommit=True) as conn:
        assert not conn.pgconn.ssl_in_use  # TLS is offered, not required
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    assert asyncio.run(_asyncpg(s, "alice", pw, ssl=ctx, server_settings={})) == 42
    # A client that does not trust our CA refuses us.
    done = _psql(s.conninfo("alice", sslmode="verify-ca", sslrootcert=str(certs.key.parent / "ext.cnf")),
                 password=pw)
    assert done.returncode == 2


def test_tls_raw_exchange(servers, certs):
    s = servers("scram-sha-256", tls=True)
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    trace = login(HOST, s.port, "alice", PASSWORDS["alice"], tls=ctx)
    assert trace[0] == ("R", 10, ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"])
    assert codes(trace) == [10, 11, 12, 0, "K", "Z"] and trace[2][2] == "server signature ok"
    plain = login(HOST, s.port, "alice", PASSWORDS["alice"], tls=ctx, mechanism="SCRAM-SHA-256")
    assert codes(plain) == [10, 11, 12, 0, "K", "Z"]
    # 'y,,' over TLS: the client thinks we cannot bind, but we can (a downgrade): refused.
    trace = login(HOST, s.port, "alice", PASSWORDS["alice"], tls=ctx, mechanism="SCRAM-SHA-256", gs2="y,,")
    assert trace[-1][1]["C"] == "28000" and trace[-1][1]["M"] == "SCRAM channel binding negotiation error"
    assert certificate_hash(certs.cert.read_text()) is not None


def test_unencrypted_data_after_ssl_request_is_refused(servers):
    s = servers("scram-sha-256", tls=True)
    with socket.create_connection((HOST, s.port), timeout=5) as sock:
        sock.sendall(SSL_REQUEST + startup_packet("alice"))
        data = sock.recv(4096)
        while True:
            more = sock.recv(4096)
            if not more:
                break
            data += more
    assert data[:1] == b"E" and b"C08P01" in data and b"received unencrypted data after SSL request" in data


def test_gssenc_request_is_declined(servers):
    s = servers("trust", tls=True)
    with socket.create_connection((HOST, s.port), timeout=5) as sock:
        sock.sendall(GSSENC_REQUEST)
        assert sock.recv(1) == b"N"
        sock.sendall(startup_packet("anyone"))
        assert sock.recv(9)[:1] == b"R"


def test_tls_required(servers, certs):
    s = servers("scram-sha-256", tls=True, require=True)
    pw = PASSWORDS["alice"]
    refused = 'no pg_hba.conf entry for host "127.0.0.1", user "alice", database "db", no encryption'
    trace = login(HOST, s.port, "alice", pw)
    assert trace == [("E", {"S": "FATAL", "V": "FATAL", "C": "28000", "M": refused})]
    done = _psql(s.conninfo("alice", sslmode="disable"), password=pw)
    assert done.returncode == 2 and refused in done.stderr
    err = _asyncpg_error(s, "alice", pw, ssl=False)
    assert err.sqlstate == "28000" and str(err) == refused
    done = _psql(s.conninfo("alice", sslmode="require"), password=pw)
    assert done.returncode == 0, done.stderr
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    assert codes(login(HOST, s.port, "alice", pw, tls=ctx)) == [10, 11, 12, 0, "K", "Z"]


def test_cancel_request_with_tls_required(servers):
    s = servers("scram-sha-256", tls=True, require=True)
    with psycopg.connect(s.conninfo("alice", PASSWORDS["alice"], sslmode="require"), autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use
        rows: list[bytes] = []
        errors: list[BaseException] = []

        def consume():
            try:
                with conn.cursor().copy("COPY (subscribe endless) TO STDOUT") as copy:
                    for data in copy:
                        rows.append(bytes(data))
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        t = threading.Thread(target=consume)
        t.start()
        deadline = time.time() + 5
        while len(rows) < 3 and time.time() < deadline:
            time.sleep(0.02)
        assert len(rows) >= 3
        conn.cancel_safe(timeout=5)
        t.join(5)
        assert not t.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], psycopg.errors.QueryCanceled)
        assert conn.execute("SELECT 'still here'").fetchone() == ("still here",)


def test_plain_cancel_request_reaches_a_tls_session(servers, certs):
    """libpq up to 16 (PQcancel) and other drivers send CancelRequest on a new connection without
    TLS: it must work even when --tls-require refuses plain sessions, as in PostgreSQL."""
    s = servers("scram-sha-256", tls=True, require=True)
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    trace, sock, (pid, key) = login(HOST, s.port, "alice", PASSWORDS["alice"], tls=ctx, keep_open=True)
    try:
        query = b"SUBSCRIBE endless\0"
        sock.sendall(b"Q" + struct.pack(">i", len(query) + 4) + query)
        time.sleep(0.2)
        with socket.create_connection((HOST, s.port), timeout=5) as plain:
            plain.sendall(struct.pack(">iiiI", 16, 80877102, pid, key))
            assert plain.recv(1) == b""  # the server closes without replying
        got = b""
        deadline = time.time() + 5
        while b"C57014" not in got and time.time() < deadline:
            got += sock.recv(65536)
        assert b"canceling statement due to user request" in got
    finally:
        sock.close()
