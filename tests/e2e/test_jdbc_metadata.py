"""pgjdbc's DatabaseMetaData and ResultSetMetaData (the catalog queries DBeaver, Metabase and
Tableau rely on) against Slipstream and PostgreSQL: tests/e2e/jdbc/Metadata.java prints what the
driver learns (schemas, tables with their types, column names/types/nullability/precision from a
query's metadata) and both outputs must match, except that PostgreSQL's materialized view keeps its
creation-time contents. Skipped, saying so, without a pgjdbc jar (tests/support/jdbc.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.jdbc import pgjdbc_jar

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).parent / "jdbc" / "Metadata.java"
JAR = pgjdbc_jar()


@pytest.fixture(scope="module")
def metadata(tmp_path_factory):
    if not JAR or not shutil.which("javac"):
        pytest.skip("pgjdbc jar or javac not on this machine")
    out = tmp_path_factory.mktemp("jdbc_md")
    subprocess.run(["javac", "-cp", JAR, "-d", str(out), str(SOURCE)], check=True, timeout=120)
    return [shutil.which("java") or "java", "-cp", f"{JAR}{os.pathsep}{out}", "Metadata"]


def _run(cmd, host, port, database, user, prefix) -> list[str]:
    url = f"jdbc:postgresql://{host}:{port}/{database}?sslmode=disable"
    done = subprocess.run(cmd + [url, user, prefix], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_jdbc_metadata_like_postgres(slipstream, pg_oracle, metadata, unique_prefix):
    ours = _run(metadata, slipstream.host, slipstream.port, "slipstream", "slipstream", unique_prefix)
    theirs = _run(metadata, pg_oracle.host, pg_oracle.port, "postgres", pg_oracle.user, unique_prefix)
    assert "table mv MATERIALIZED VIEW" in ours and "column amount numeric 2 nullable=1 table=t precision=10 scale=2" in ours
    assert ours == theirs
