"""Views over a source that only gains rows (a webhook source without a retention window),
planned with operators that keep less state (planner/rules/append_only.py): min/max keeping
each group's current value, TopK keeping each group's first rows. Checked against PostgreSQL
after every batch of arrivals, NaN and NULL included; EXPLAIN says what is kept; the same views
over a source with a retention window (which deletes) keep everything and stay right."""

from __future__ import annotations

import json
import math
import random

import psycopg
import pytest

from tests.e2e.test_webhook_sources import post
from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

VIEWS = {
    "ext": "SELECT (body->>'k')::int AS k, max((body->>'v')::int) AS mx, min((body->>'v')::int) AS mn, "
           "max((body->>'f')::float8) AS fmx, min((body->>'f')::float8) AS fmn, max(body->>'s') AS smx, "
           "count(*) AS n FROM {src} GROUP BY 1",
    "top": "SELECT (body->>'k')::int AS k, (body->>'v')::int AS v, body->>'s' AS s FROM {src} "
           "ORDER BY (body->>'v')::int DESC NULLS LAST, body->>'s' LIMIT 4",
    "glob": "SELECT max((body->>'v')::int) AS mx, min(body->>'s') AS mn FROM {src} WHERE (body->>'k')::int > 0",
}


def _norm(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _rows(conn, sql):
    return sorted((tuple(_norm(v) for v in r) for r in conn.execute(sql).fetchall()), key=repr)


def _body(rng: random.Random) -> dict:
    return {"k": rng.randrange(4), "v": rng.choice([None, rng.randrange(-50, 50)]),
            "f": rng.choice([None, 0.5, -1.0, "NaN", 3e10, rng.random()]),
            "s": rng.choice([None, "a", "b", "zz", "ü", ""])}


def test_append_only_views_track_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    rng = random.Random(7)
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.execute(f"CREATE SOURCE {p}w FROM WEBHOOK BODY FORMAT JSON")
        pg.execute(f"DROP TABLE IF EXISTS {p}w")
        pg.execute(f"CREATE TABLE {p}w (body jsonb)")
        try:
            for name, q in VIEWS.items():
                ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS {q.format(src=f'{p}w')}")
            plan = "\n".join(r[0] for r in ss.execute(f"EXPLAIN {VIEWS['ext'].format(src=f'{p}w')}").fetchall())
            assert "append-only input: min/max keep their current value only" in plan, plan
            plan = "\n".join(r[0] for r in ss.execute(f"EXPLAIN MATERIALIZED VIEW {p}top").fetchall())
            assert "first offset+limit rows (append-only input)" in plan, plan
            path = f"/api/webhook/slipstream/public/{p}w"
            for batch in range(6):
                for _ in range(rng.randint(1, 12)):
                    body = json.dumps(_body(rng))
                    assert post(slipstream, path, body.encode())[0] == 200
                    pg.execute(f"INSERT INTO {p}w VALUES (%s::jsonb)", (body,))
                for name, q in VIEWS.items():
                    want = _rows(pg, q.format(src=f"{p}w"))
                    assert _rows(ss, f"SELECT * FROM {p}{name}") == want, (name, batch)
                    assert _rows(ss, q.format(src=f"{p}w")) == want, (name, batch)  # one-off SELECT
        finally:
            ss.execute(f"DROP SOURCE {p}w CASCADE")
            pg.execute(f"DROP TABLE IF EXISTS {p}w")


def test_a_source_with_a_retention_window_is_not_append_only(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as ss:
        ss.execute(f"CREATE SOURCE {p}r FROM WEBHOOK BODY FORMAT JSON WITH (RETENTION WINDOW = '1h')")
        try:
            plan = "\n".join(r[0] for r in ss.execute(
                f"EXPLAIN SELECT max((body->>'v')::int) FROM {p}r").fetchall())
            assert "append-only" not in plan and "min/max, DISTINCT or ordered" in plan, plan
        finally:
            ss.execute(f"DROP SOURCE {p}r CASCADE")
