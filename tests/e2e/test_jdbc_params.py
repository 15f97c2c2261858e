"""Parameters of every type bound by pgjdbc (the PostgreSQL JDBC driver, server-side prepared
statements) against Slipstream and PostgreSQL: the same Java program, the same output.

The driver jar comes from the local Maven repository (the machine image has pgjdbc 42.7.x there;
no Maven registry is reachable from this network) or from Debian's libpostgresql-jdbc-java,
which scripts/test installs when neither is there (tests/support/jdbc.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.jdbc import pgjdbc_jar

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).parent / "jdbc" / "BindTypes.java"
JAR = pgjdbc_jar()


@pytest.fixture(scope="module")
def bind_types(tmp_path_factory):
    if not JAR or not shutil.which("javac"):
        pytest.skip("pgjdbc jar or javac not on this machine")
    out = tmp_path_factory.mktemp("jdbc")
    subprocess.run(["javac", "-cp", JAR, "-d", str(out), str(SOURCE)], check=True, timeout=120)
    return [shutil.which("java") or "java", "-cp", f"{JAR}{os.pathsep}{out}", "BindTypes"]


def _run(cmd: list[str], host: str, port: int, database: str, user: str) -> list[str]:
    url = f"jdbc:postgresql://{host}:{port}/{database}?sslmode=disable"
    done = subprocess.run(cmd + [url, user], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_jdbc_binds_every_type_like_postgres(slipstream, pg_oracle, bind_types):
    ours = _run(bind_types, slipstream.host, slipstream.port, "slipstream", "slipstream")
    theirs = _run(bind_types, pg_oracle.host, pg_oracle.port, "postgres", "postgres")
    assert len(ours) == len(theirs) > 15
    diffs = [(a, b) for a, b in zip(ours, theirs) if a != b]
    assert not diffs, "\n".join(f"slipstream: {a}\npostgres:   {b}" for a, b in diffs)


GET_COLUMNS = Path(__file__).parent / "jdbc" / "GetColumns.java"


@pytest.fixture(scope="module")
def get_columns(tmp_path_factory):
    if not JAR or not shutil.which("javac"):
        pytest.skip("pgjdbc jar or javac not on this machine")
    out = tmp_path_factory.mktemp("jdbc_cols")
    subprocess.run(["javac", "-cp", JAR, "-d", str(out), str(GET_COLUMNS)], check=True, timeout=120)
    return [shutil.which("java") or "java", "-cp", f"{JAR}{os.pathsep}{out}", "GetColumns"]


def test_jdbc_get_columns_like_postgres(slipstream, pg_oracle, get_columns):
    """DatabaseMetaData.getColumns: pgJDBC's query numbers columns with a window function."""
    ours = _run(get_columns, slipstream.host, slipstream.port, "slipstream", "slipstream")
    theirs = _run(get_columns, pg_oracle.host, pg_oracle.port, "postgres", "postgres")
    assert len(ours) == 6
    assert ours == theirs
