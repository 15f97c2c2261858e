"""pgcli against Slipstream and PostgreSQL, through pgcli's own code over real sockets: its
completion refresh (PGExecute.schemata/tables/views/columns/functions/datatypes/foreignkeys/
search_path/databases, the catalog queries pgcli sends after every DDL) and its backslash
commands (pgspecial's \\d family). Slipstream's answers must equal PostgreSQL's for the objects
the test creates; system objects differ (Slipstream has mz_catalog, PostgreSQL its own
functions) and are filtered out by the prefix."""

from __future__ import annotations

import psycopg
import pytest

pgcli_pgexecute = pytest.importorskip("pgcli.pgexecute")
pgspecial_main = pytest.importorskip("pgspecial.main")

pytestmark = pytest.mark.e2e


def _objects(p: str) -> list[str]:
    return [f"CREATE TABLE {p}t (a int NOT NULL, b text, c numeric(8,2))",
            f"CREATE TABLE {p}u (k bigint, t_a int)",
            f"CREATE VIEW {p}v AS SELECT a, b FROM {p}t",
            f"CREATE MATERIALIZED VIEW {p}mv AS SELECT a, count(*) AS n FROM {p}t GROUP BY a",
            f"CREATE INDEX {p}ti ON {p}t (a)"]


def _refresh(ex, p: str) -> dict[str, list]:
    """What pgcli's completer learns, restricted to this test's objects."""
    mine = lambda rows: sorted(r for r in rows if any(isinstance(x, str) and x.startswith(p) for x in r))  # noqa: E731
    return {
        "tables": mine(ex.tables()),
        "views": mine(ex.views()),
        "table_columns": mine(ex.table_columns()),
        "view_columns": mine(ex.view_columns()),
        "foreignkeys": mine(ex.foreignkeys()),
        "datatypes": mine(ex.datatypes()),
        "functions": mine((f.schema_name, f.func_name) for f in ex.functions()),
        "public in schemata": ["public" in ex.schemata()],
        "search_path": [ex.search_path()[-1]],
    }


def _special(ex, p: str) -> dict[str, list]:
    special = pgspecial_main.PGSpecial()
    out = {}
    for cmd in (f"\\d {p}t", f"\\d {p}v", f"\\d {p}mv", f"\\dt {p}*", f"\\dv {p}*", f"\\dm {p}*",
                f"\\di {p}*", f"\\df {p}*", f"\\d {p}ti"):
        results = []
        for title, rows, headers, status, *_ in ex.run(cmd, pgspecial=special):
            results.append((headers, [tuple(r) for r in (rows or [])]))
        out[cmd] = results
    return out


def _normalise_owner(value, owner: str):
    if isinstance(value, dict):
        return {k: _normalise_owner(v, owner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_normalise_owner(v, owner) for v in value)
    return "OWNER" if value == owner else value


def test_pgcli_completion_and_describe_like_postgres(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    with psycopg.connect(slipstream.dsn, autocommit=True) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for stmt in _objects(p):
            ss.execute(stmt)
            pg.execute(stmt)
    ours_ex = pgcli_pgexecute.PGExecute(dsn=slipstream.dsn)
    theirs_ex = pgcli_pgexecute.PGExecute(dsn=pg_oracle.dsn)
    ours = _normalise_owner({**_refresh(ours_ex, p), **_special(ours_ex, p)}, "slipstream")
    theirs = _normalise_owner({**_refresh(theirs_ex, p), **_special(theirs_ex, p)}, pg_oracle.user)
    assert ours["tables"] == [("public", f"{p}t"), ("public", f"{p}u")]
    assert len(ours["table_columns"]) == 5
    for key in theirs:
        assert ours[key] == theirs[key], key
