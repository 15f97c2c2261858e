"""The Slipstream server with password authentication and TLS that the e2e tests share:
`serve --auth scram-sha-256 --tls-cert --tls-key --tls-require`, the default role's password
from SLIPSTREAM_DEFAULT_PASSWORD, certificates made by tests/support/tls_certs.py.

tests/e2e/conftest.py starts ONE of these per run (fixtures `certs` and `auth_tls_server`) for
tests/e2e/test_auth_tls.py and tests/e2e/test_client_matrix.py, and stops it after the last
test that uses it (Spark takes ~10-20 s to start; two idle servers cost memory for the rest
of the run)."""

from __future__ import annotations

from pathlib import Path

from tests.support.slipstream_server import SlipstreamServer
from tests.support.tls_certs import Certs

DEFAULT_PASSWORD = "s3cret default 'pw'"


def start_auth_tls_server(base: Path, certs: Certs) -> SlipstreamServer:
    return SlipstreamServer.start(
        data_dir=base / "data", log_file=base / "server.log",
        extra_args=("--auth", "scram-sha-256", "--tls-cert", str(certs.cert), "--tls-key", str(certs.key),
                    "--tls-require"),
        env={"SLIPSTREAM_DEFAULT_PASSWORD": DEFAULT_PASSWORD}, password=DEFAULT_PASSWORD,
        dsn_params=f"sslmode=verify-ca&sslrootcert={certs.ca}")
