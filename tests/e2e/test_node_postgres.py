"""node-postgres (the `pg` package) as a client: tests/e2e/node/scenario.js runs the same scenario
against Slipstream and against PostgreSQL and the answers must be equal, except the materialized
view, which Slipstream keeps current (PostgreSQL's would need REFRESH). The package is installed
with npm into tests/e2e/node on first use; the test is skipped, saying so, without node and npm."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

NODE_DIR = Path(__file__).parent / "node"


@pytest.fixture(scope="module")
def node_pg():
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are not installed")
    if not (NODE_DIR / "node_modules" / "pg").is_dir():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=NODE_DIR, check=True,
                       timeout=300, capture_output=True)
    return NODE_DIR / "scenario.js"


def _run(script: Path, host: str, port: int, user: str, database: str, prefix: str) -> dict:
    result = subprocess.run(["node", str(script), host, str(port), user, database, prefix],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_node_postgres_scenario_matches_postgres(node_pg, slipstream, pg_oracle, unique_prefix):
    got = _run(node_pg, slipstream.host, slipstream.port, "slipstream", "slipstream", unique_prefix)
    want = _run(node_pg, pg_oracle.host, pg_oracle.port, pg_oracle.user, "postgres", unique_prefix)
    assert got.pop("mv") == [{"n": "3", "s": "14.75"}]  # kept current through the later insert
    want.pop("mv")
    assert got == want
    assert got["error"] == "22012"
