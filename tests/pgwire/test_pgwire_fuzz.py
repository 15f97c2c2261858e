"""Random bytes, before and after startup, must never crash the server or leak sessions."""

from __future__ import annotations

import socket
import struct
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgwire_raw_client import RawClient, msg, query

FRONTEND_KINDS = list(b"QPBDECSHXdcfF")


def drain(sock: socket.socket, timeout: float = 3.0) -> None:
    """Half-close and read until the server closes (it must, at EOF) or the timeout passes."""
    sock.shutdown(socket.SHUT_WR)
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, socket.timeout):
        pass


def server_still_works(pg) -> bool:
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(query("select 1"))
    ok = [k for k, _ in c.read_until_ready()] == [b"T", b"D", b"C", b"Z"]
    c.close()
    return ok


def assert_no_internal_errors(caplog) -> None:
    """Bad input must be answered as a client error, never hit the internal-error path."""
    bad = [r for r in caplog.records if r.name.startswith("server.pgwire") and r.levelname == "ERROR"]
    assert not bad, bad[0].getMessage() + "\n" + (bad[0].exc_text or "")


# Message-shaped noise finds more paths than pure noise: a valid kind byte, a plausible length.
message_noise = st.lists(
    st.one_of(
        st.binary(max_size=40),
        st.builds(lambda k, body: msg(bytes([k]), body), st.sampled_from(FRONTEND_KINDS),
                  st.binary(max_size=40)),
    ),
    max_size=6,
).map(b"".join)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(noise=message_noise)
def test_noise_after_startup(pg, caplog, noise):
    c = RawClient(pg.host, pg.port)
    c.startup()
    c.send(noise)
    drain(c.sock)
    c.close()
    assert server_still_works(pg)
    assert_no_internal_errors(caplog)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(noise=st.one_of(st.binary(max_size=60),
                       st.binary(max_size=40).map(lambda b: struct.pack(">ii", len(b) + 8, 196608) + b)))
def test_noise_instead_of_startup(pg, caplog, noise):
    with socket.create_connection((pg.host, pg.port), timeout=5) as s:
        s.sendall(noise)
        drain(s)
    assert server_still_works(pg)
    assert_no_internal_errors(caplog)


def test_every_fuzzed_session_was_closed(pg):
    time.sleep(0.3)
    started = {s.pid for s in pg.adapter.started_sessions}
    closed = set(pg.adapter.closed_sessions)
    assert started and started <= closed | _currently_open(pg)


def _currently_open(pg) -> set[int]:
    return {conn.session.pid for conn in pg.server._registry.connections() if conn.session}
