"""Limits that keep the server up, over real sockets, compared with PostgreSQL 15 where it has
the same limit: statement_timeout (SET, and the server default `--statement-timeout`),
idle_in_transaction_session_timeout, max_connections (`--max-connections`) and max_result_size.

The module starts one server of its own (the options are server-wide; one worker, to be quick).
That privileges survive a restart is shown on the durable catalog itself
(tests/catalog/test_privileges_durable.py): the server rebuilds them from it at start.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.support.slipstream_server import SlipstreamServer

pytestmark = pytest.mark.e2e

MAX_CONNECTIONS = 4


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("limits_server")
    s = SlipstreamServer.start(data_dir=base / "data", log_file=base / "server.log", workers=1,
                               extra_args=("--max-connections", str(MAX_CONNECTIONS),
                                           "--statement-timeout", "20s"))
    yield s
    s.stop()


def _error(conn, sql: str) -> tuple[str | None, str]:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql).fetchall()
    return e.value.sqlstate, e.value.diag.message_primary


def test_statement_timeout(server, pg_oracle):
    for dsn in (server.dsn, pg_oracle.dsn):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET statement_timeout = '300ms'")
            start = time.monotonic()
            assert _error(conn, "SELECT pg_sleep(5)") == ("57014", "canceling statement due to statement timeout")
            assert time.monotonic() - start < 3
            assert conn.execute("SELECT 1").fetchone() == (1,)  # the session goes on
            conn.execute("SET statement_timeout = 0")
            assert conn.execute("SELECT pg_sleep(0.4), 2").fetchone() == ("", 2)
            assert _error(conn, "SET statement_timeout = 'soon'")[0] == "22023"
    with psycopg.connect(server.dsn, autocommit=True) as conn:  # the server's default
        assert conn.execute("SHOW statement_timeout").fetchone() == ("20s",)
        conn.execute("SET statement_timeout = '1s'")
        conn.execute("RESET statement_timeout")
        assert conn.execute("SHOW statement_timeout").fetchone() == ("20s",)


def test_statement_timeout_as_a_role_default(server):
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute("CREATE ROLE lim_slow LOGIN")
        admin.execute("ALTER ROLE lim_slow SET statement_timeout = '300ms'")
        assert _error(admin, "ALTER ROLE lim_slow SET statement_timeout = 'never'")[0] == "22023"
    dsn = server.dsn.replace("slipstream@", "lim_slow@", 1)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("300ms",)
        assert _error(conn, "SELECT pg_sleep(3)") == ("57014", "canceling statement due to statement timeout")
        conn.execute("ALTER ROLE CURRENT_USER RESET statement_timeout")  # a role may change its own
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("20s",)  # the server's default again


def test_idle_in_transaction_session_timeout(server, pg_oracle):
    for dsn in (server.dsn, pg_oracle.dsn):
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET idle_in_transaction_session_timeout = '300ms'")
        conn.execute("SELECT pg_sleep(0.5)")  # idle or busy outside a transaction: no limit
        conn.execute("BEGIN")
        conn.execute("SELECT 1")
        time.sleep(1.0)
        with pytest.raises(psycopg.Error) as e:
            conn.execute("SELECT 2").fetchall()
        assert (e.value.sqlstate, e.value.diag.message_primary) == \
            ("25P03", "terminating connection due to idle-in-transaction timeout"), dsn
        assert conn.closed or conn.broken
        conn.close()


def test_max_connections(server):
    held = [psycopg.connect(server.dsn, autocommit=True) for _ in range(MAX_CONNECTIONS)]
    try:
        with pytest.raises(psycopg.OperationalError) as e:
            psycopg.connect(server.dsn, autocommit=True, connect_timeout=10)
        assert "sorry, too many clients already" in str(e.value)
        for conn in held:  # the others keep working
            assert conn.execute("SELECT 1").fetchone() == (1,)
        held.pop().close()
        deadline = time.monotonic() + 5
        while True:  # the server notices the closed connection asynchronously
            try:
                held.append(psycopg.connect(server.dsn, autocommit=True))
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert held[-1].execute("SHOW max_connections").fetchone() == (str(MAX_CONNECTIONS),)
    finally:
        for conn in held:
            conn.close()


def test_max_result_size(server):
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("SET max_result_size = '64kB'")
        sqlstate, message = _error(conn, "SELECT x, repeat('x', 100) FROM generate_series(1, 10000) AS x")
        assert (sqlstate, message) == ("53200", "result exceeds max size of 65.5 KB")
        assert conn.execute("SELECT count(*) FROM generate_series(1, 10000)").fetchone() == (10000,)
        assert _error(conn, "SET max_result_size = 'lots'")[0] == "22023"
        conn.execute("SET max_query_result_size = '1MB'")  # Materialize's session-level name
        assert _error(conn, "SELECT x, repeat('x', 200) FROM generate_series(1, 10000) AS x") == \
            ("53200", "result exceeds max size of 1048.6 KB")
