"""Shared fixtures: a real PostgreSQL oracle, a real Slipstream server, unique object names.

Fixtures (see tests/support for the machinery):
- `pg_oracle` (session): PostgreSQL 15 on a free loopback port, trust auth, fsync off.
- `slipstream` (session): ONE `python -m server.cli serve` for the whole run (Spark is slow to
  start); tests share it, so they must name their objects with `unique_prefix`.
- `fresh_slipstream` (function): a server with its own data dir, for restart/crash tests.
- `unique_prefix` (function): e.g. 'e2e_3fa9c1_', distinct for every test.

When a test that used a server fails, the tail of that server's log is added to the report.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # makes `tests.support` importable from any test module
    sys.path.insert(0, str(REPO_ROOT))

from tests.support.pg_oracle import PgOracle  # noqa: E402
from tests.support.slipstream_server import SlipstreamServer  # noqa: E402


@pytest.fixture(scope="session")
def pg_oracle():
    oracle = PgOracle.start()
    yield oracle
    oracle.stop()


@pytest.fixture(scope="session")
def slipstream(tmp_path_factory):
    base = tmp_path_factory.mktemp("slipstream")
    server = SlipstreamServer.start(data_dir=base / "data", log_file=base / "server.log")
    yield server
    server.stop()


@pytest.fixture
def fresh_slipstream(tmp_path):
    server = SlipstreamServer.start(data_dir=tmp_path / "data", log_file=tmp_path / "server.log")
    yield server
    server.stop()


@pytest.fixture
def unique_prefix() -> str:
    return f"e2e_{uuid.uuid4().hex[:6]}_"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for name in ("slipstream", "fresh_slipstream"):
        server = getattr(item, "funcargs", {}).get(name)
        if isinstance(server, SlipstreamServer):
            report.sections.append((f"{name} server log", server.log_tail()))
