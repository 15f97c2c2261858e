"""Roles, passwords and TLS on a real Slipstream server (`serve --auth scram-sha-256 --tls-cert
--tls-key --tls-require`, the default role's password from SLIPSTREAM_DEFAULT_PASSWORD), with
psql, psycopg 3, asyncpg and pgjdbc (skipped, saying so, where the pgjdbc jar is absent).

One server for the run (tests/e2e/conftest.py `auth_tls_server`: Spark takes ~10 s to start),
shared with test_client_matrix.py; every test names its roles uniquely.
The other authentication methods are covered in-process by tests/pgwire/test_pgwire_auth.py.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import subprocess
import uuid

import asyncpg
import psycopg
import pytest

from tests.support.auth_server import DEFAULT_PASSWORD
from tests.support.jdbc import pgjdbc_jar
from tests.support.tls_certs import openssl_available

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not openssl_available(), reason="the openssl CLI makes the test certificates")]

FAILED = 'password authentication failed for user "{}"'
JAR = pgjdbc_jar()


@pytest.fixture(scope="module")
def server(auth_tls_server):
    """The run's one auth/TLS server (tests/e2e/conftest.py), shared with test_client_matrix.py."""
    return auth_tls_server


@pytest.fixture
def role() -> str:
    return f"r_{uuid.uuid4().hex[:8]}"


def conninfo(server, user: str, password: str | None, certs, **params: str) -> str:
    parts = {"host": "localhost", "port": str(server.port), "user": user, "dbname": "slipstream",
             "sslmode": "verify-full", "sslrootcert": str(certs.ca), "connect_timeout": "10", **params}
    if password is not None:
        parts["password"] = password
    quoted = {k: v.replace("\\", "\\\\").replace("'", "\\'") for k, v in parts.items()}
    return " ".join(f"{k}='{v}'" for k, v in quoted.items())


def admin(server, certs) -> psycopg.Connection:
    return psycopg.connect(conninfo(server, "slipstream", DEFAULT_PASSWORD, certs), autocommit=True)


def sql_error(conn: psycopg.Connection, sql: str) -> tuple[str, str]:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql)
    return e.value.sqlstate, e.value.diag.message_primary


def psql(server, certs, user: str, password: str | None, sql: str, **params: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(["psql", "-X", "-w", "-At", "-c", sql, conninfo(server, user, None, certs, **params)],
                          capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)


async def asyncpg_value(server, certs, user: str, password: str, sql: str, **kw):
    kw.setdefault("ssl", ssl.create_default_context(cafile=str(certs.ca)))
    kw.setdefault("host", "localhost")
    conn = await asyncpg.connect(port=server.port, user=user, password=password,
                                 database="slipstream", timeout=30, statement_cache_size=0, **kw)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


def asyncpg_error(server, certs, user: str, password: str, **kw) -> asyncpg.PostgresError:
    with pytest.raises(asyncpg.PostgresError) as e:
        asyncio.run(asyncpg_value(server, certs, user, password, "SELECT 1", **kw))
    return e.value


def test_default_role_over_tls(server, certs):
    done = psql(server, certs, "slipstream", DEFAULT_PASSWORD, "SELECT current_user")
    assert done.returncode == 0 and done.stdout.strip() == "slipstream", done.stderr
    with admin(server, certs) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.info.parameter_status("is_superuser") == "on"
        assert conn.execute("SHOW password_encryption").fetchone() == ("scram-sha-256",)
    assert asyncio.run(asyncpg_value(server, certs, "slipstream", DEFAULT_PASSWORD, "SELECT 40 + 2")) == 42
    err = asyncpg_error(server, certs, "slipstream", "wrong")
    assert err.sqlstate == "28P01" and str(err) == FAILED.format("slipstream")


def test_plain_connections_are_refused(server, certs):
    refused = 'no pg_hba.conf entry for host "127.0.0.1", user "slipstream", database "slipstream", no encryption'
    done = psql(server, certs, "slipstream", DEFAULT_PASSWORD, "SELECT 1", sslmode="disable", host="127.0.0.1")
    assert done.returncode == 2 and refused in done.stderr
    err = asyncpg_error(server, certs, "slipstream", DEFAULT_PASSWORD, ssl=False, host="127.0.0.1")
    assert err.sqlstate == "28000" and str(err) == refused


def test_created_role_logs_in_and_changes_its_password(server, certs, role):
    with admin(server, certs) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'first pw'")
        assert conn.execute("SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = %s",
                            (role,)).fetchone() == (True, False)
    done = psql(server, certs, role, "first pw", "SELECT current_user")
    assert done.returncode == 0 and done.stdout.strip() == role, done.stderr
    assert asyncio.run(asyncpg_value(server, certs, role, "first pw", "SELECT session_user")) == role
    with psycopg.connect(conninfo(server, role, "first pw", certs), autocommit=True) as conn:
        assert conn.info.parameter_status("is_superuser") == "off"
        assert sql_error(conn, "CREATE ROLE someone_else") == ("42501", "permission denied to create role")
        assert sql_error(conn, "DROP ROLE slipstream") == ("42501", "permission denied to drop role")
        assert sql_error(conn, f"ALTER ROLE {role} SUPERUSER") == ("42501", "permission denied")
        assert sql_error(conn, "ALTER ROLE slipstream PASSWORD 'mine now'") == ("42501", "permission denied")
        conn.execute(f"ALTER ROLE {role} PASSWORD 'second pw'")  # its own password: allowed
    err = asyncpg_error(server, certs, role, "first pw")
    assert err.sqlstate == "28P01" and str(err) == FAILED.format(role)
    assert asyncio.run(asyncpg_value(server, certs, role, "second pw", "SELECT 1")) == 1
    with admin(server, certs) as conn:
        conn.execute(f"ALTER USER {role} WITH NOLOGIN")
    err = asyncpg_error(server, certs, role, "second pw")
    assert err.sqlstate == "28000" and str(err) == f'role "{role}" is not permitted to log in'
    with admin(server, certs) as conn:
        conn.execute(f"DROP ROLE {role}")
    assert asyncpg_error(server, certs, role, "second pw").sqlstate == "28P01"


def test_role_statement_errors(server, certs, role):
    with admin(server, certs) as conn:
        conn.execute(f"CREATE USER {role}")
        assert sql_error(conn, f"CREATE ROLE {role}") == ("42710", f'role "{role}" already exists')
        assert sql_error(conn, "ALTER ROLE no_such_role PASSWORD 'x'") == ("42704", 'role "no_such_role" does not exist')
        assert sql_error(conn, "DROP ROLE no_such_role") == ("42704", 'role "no_such_role" does not exist')
        assert sql_error(conn, f"DROP ROLE {role}, no_such_role") == ("42704", 'role "no_such_role" does not exist')
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("DROP ROLE IF EXISTS no_such_role")
        assert notices == ['role "no_such_role" does not exist, skipping']
        assert sql_error(conn, "CREATE ROLE x_unsupported CREATEDB") == (
            "0A000", "CREATE ROLE option CREATEDB not yet supported")
        assert sql_error(conn, "ALTER ROLE slipstream VALID UNTIL 'infinity'") == (
            "0A000", "ALTER ROLE option VALID UNTIL not yet supported")
        assert sql_error(conn, "DROP ROLE slipstream") == ("55006", "current user cannot be dropped")
        assert sql_error(conn, "ALTER ROLE slipstream NOSUPERUSER") == ("42501", "permission denied to alter role")
        assert sql_error(conn, "SET password_encryption = 'plain'") == (
            "22023", 'invalid value for parameter "password_encryption": "plain"')
        conn.execute(f"ALTER ROLE {role} PASSWORD ''")
        assert notices[-1] == "empty string is not a valid password, clearing password"
        names = [r[0] for r in conn.execute("SHOW ROLES").fetchall()]
        assert "slipstream" in names and role in names
        conn.execute(f"DROP ROLE {role}")
        assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", (role,)).fetchone() == (0,)


def test_md5_secret_cannot_log_in_under_scram(server, certs, role):
    """As in PostgreSQL: with scram-sha-256 a role whose password was stored as md5 cannot log in."""
    with admin(server, certs) as conn:
        conn.execute("SET password_encryption = 'md5'")
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        conn.execute(f"CREATE ROLE {role}_s LOGIN PASSWORD 'pw'")
        conn.execute("RESET password_encryption")
        conn.execute(f"ALTER ROLE {role}_s PASSWORD 'pw'")  # now scram-sha-256 again
    assert asyncpg_error(server, certs, role, "pw").sqlstate == "28P01"
    assert asyncio.run(asyncpg_value(server, certs, f"{role}_s", "pw", "SELECT 1")) == 1


def test_prehashed_password_as_psql_password_sends_it(server, certs, role):
    """psql's \\password sends ALTER USER ... PASSWORD 'SCRAM-SHA-256$...': stored as given."""
    from catalog.roles import scram_secret
    with admin(server, certs) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"ALTER USER {role} PASSWORD '{scram_secret('hashed on the client')}'")
    done = psql(server, certs, role, "hashed on the client", "SELECT 1", channel_binding="require")
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def auth_check(tmp_path_factory):
    if not JAR or not shutil.which("javac"):
        pytest.skip("pgjdbc jar or javac not on this machine")
    out = tmp_path_factory.mktemp("jdbc_auth")
    source = os.path.join(os.path.dirname(__file__), "jdbc", "AuthCheck.java")
    subprocess.run(["javac", "-cp", JAR, "-d", str(out), source], check=True, timeout=120)
    return [shutil.which("java") or "java", "-cp", f"{JAR}{os.pathsep}{out}", "AuthCheck"]


def test_pgjdbc(server, certs, auth_check, role):
    with admin(server, certs) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'jdbc pw'")

    def run(user: str, password: str, query: str, **params: str) -> str:
        options = {"sslmode": "verify-full", "sslrootcert": str(certs.ca), **params}
        url = f"jdbc:postgresql://localhost:{server.port}/slipstream?" + "&".join(f"{k}={v}" for k, v in options.items())
        done = subprocess.run(auth_check + [url, user, password, query], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run(role, "jdbc pw", "SELECT current_user") == role
    assert run("slipstream", DEFAULT_PASSWORD, "SELECT 6 * 7") == "42"
    assert run(role, "nope", "SELECT 1").startswith(f"ERROR 28P01 FATAL: {FAILED.format(role)}")
    refused = run(role, "jdbc pw", "SELECT 1", sslmode="disable")
    assert refused.startswith("ERROR 28000") and "no encryption" in refused


def test_roles_survive_a_restart_and_no_secret_is_written_in_clear(server, certs, role):
    with admin(server, certs) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD 'durable pw'")
    server.restart()
    with psycopg.connect(conninfo(server, role, "durable pw", certs), autocommit=True) as conn:
        assert conn.info.parameter_status("is_superuser") == "on"
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
    stored = b"".join(p.read_bytes() for p in server.data_dir.rglob("catalog.sqlite*") if p.is_file())
    assert b"SCRAM-SHA-256$4096:" in stored
    for secret in (b"durable pw", b"first pw", b"second pw", b"jdbc pw", DEFAULT_PASSWORD.encode()):
        assert secret not in stored
        assert secret not in server.log_file.read_bytes()
