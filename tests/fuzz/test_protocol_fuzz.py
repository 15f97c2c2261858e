"""A bounded protocol and statement fuzz run against a real server (tests/fuzz/protocol.py; the
long run is scripts/protocol_fuzz): the server never crashes or hangs, sessions survive their SQL
errors, other sessions keep working, and no malformed statement gets an internal error."""

from __future__ import annotations

import pytest

from tests.fuzz.protocol import fuzz_server, prepare
from tests.support.clients import psycopg_connect
from tests.support.slipstream_server import SlipstreamServer

pytestmark = pytest.mark.e2e

SECONDS = 45


@pytest.fixture
def fuzz_target(tmp_path):
    server = SlipstreamServer.start(data_dir=tmp_path / "data", log_file=tmp_path / "server.log",
                                    extra_args=("--statement-timeout", "10s"))
    yield server
    server.stop()


def test_protocol_and_statement_fuzz(fuzz_target):
    server = fuzz_target
    stats = fuzz_server(server.host, server.port, SECONDS, seed=20261123, health=prepare(server.dsn))
    print(stats)
    assert server.process.poll() is None, "the server exited"
    assert stats.statements > 50 and stats.protocol_rounds > 10, stats
    assert not stats.internal_errors, "\n".join(stats.internal_errors[:20])
    with psycopg_connect(server) as conn:   # every fuzz session is gone
        assert conn.execute("SELECT count(*) FROM pg_stat_activity").fetchone() == (1,)
