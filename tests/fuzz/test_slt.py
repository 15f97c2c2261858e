"""The sqllogictest corpus against Slipstream, with PostgreSQL's answers as the expected results
(`python -m tests.fuzz.slt complete FILE` rewrites them from a fresh PostgreSQL):
tests/fuzz/slt/*.slt are regression cases, most of them minimised from differences the fuzzer
found; tests/slt/*.slt cover the types and the function library, family by family."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.slt import run_file
from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

_TESTS = Path(__file__).parent.parent
CORPUS = sorted((_TESTS / "fuzz" / "slt").glob("*.slt")) + sorted((_TESTS / "slt").glob("*.slt"))


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.parent.name}/{p.stem}" for p in CORPUS])
def test_slt_file(slipstream, path):
    with psycopg_connect(slipstream) as conn:
        result = run_file(conn, path)
    assert not result.failures, "\n\n".join(o.message for o in result.failures)
