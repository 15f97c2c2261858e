"""The sqllogictest corpus's queries as materialized views under random inserts, updates and
deletes, compared with PostgreSQL after every change (tests/fuzz/slt_views.py). Bounded for CI: a
seeded sample of query records per file and a few changes; `scripts/slt_views` runs every record
with more changes."""

from __future__ import annotations

import psycopg
import pytest

from tests.fuzz.slt_views import CORPUS, run_file
from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

SEED = 7
SAMPLE = 4        # query records per file
CHANGES = 3       # changes per group of views


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.parent.name}/{p.stem}" for p in CORPUS])
def test_slt_file_as_views(slipstream, pg_oracle, path):
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        rep = run_file(path, ss, pg, seed=SEED, changes=CHANGES, sample=SAMPLE)
    assert not rep.differences, "\n\n".join(d.report() for d in rep.differences)
    # Nothing vanishes: every query record is a view, refused (0A000) or skipped for a reason.
    assert rep.views + sum(rep.refused.values()) + sum(rep.skipped.values()) == rep.queries
