"""Fixtures shared by e2e modules: the certificates and the one Slipstream server with SCRAM
authentication and required TLS (tests/support/auth_server.py), used by test_auth_tls.py and
test_client_matrix.py. The server is stopped right after the last test that uses it."""

from __future__ import annotations

import pytest

from tests.support.auth_server import start_auth_tls_server
from tests.support.tls_certs import make_certs, openssl_available

_AUTH_FIXTURE = "auth_tls_server"


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    if not openssl_available():
        pytest.skip("the openssl CLI makes the test certificates")
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="session")
def auth_tls_server(tmp_path_factory, certs, request):
    server = start_auth_tls_server(tmp_path_factory.mktemp("auth_server"), certs)
    request.config._slipstream_auth_server = server
    yield server
    server.stop()


def pytest_runtest_teardown(item, nextitem):
    """Stop the shared auth/TLS server once no later test needs it (the session-scoped fixture's
    own teardown then finds it stopped)."""
    server = getattr(item.config, "_slipstream_auth_server", None)
    if server is None or _AUTH_FIXTURE not in getattr(item, "fixturenames", ()):
        return
    later = item.session.items[item.session.items.index(item) + 1:]
    if not any(_AUTH_FIXTURE in getattr(i, "fixturenames", ()) for i in later):
        server.stop()
