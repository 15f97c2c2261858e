"""psql's describe commands against Slipstream, compared with the same commands against a real
PostgreSQL holding the same objects: psql sends its own catalog queries (pg_class, pg_namespace,
pg_am, pg_table_is_visible, OPERATOR(pg_catalog.~) patterns, ...) and prints what comes back, so
equal output means equal answers to those queries. Owners differ by name only (the servers run
as different users) and are normalised."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psql, psycopg_connect

pytestmark = pytest.mark.e2e


def _objects(prefix: str) -> list[str]:
    return [f"CREATE TABLE {prefix}t (a int NOT NULL, b text DEFAULT 'x', c numeric(8,2))",
            f"CREATE TABLE {prefix}u (k bigint)",
            f"CREATE VIEW {prefix}v AS SELECT a, b FROM {prefix}t",
            f"CREATE MATERIALIZED VIEW {prefix}mv AS SELECT a, count(*) AS n FROM {prefix}t WHERE b <> 'z' GROUP BY a",
            f"CREATE INDEX {prefix}ti ON {prefix}t (a)"]


@pytest.fixture(scope="module")
def both(slipstream, pg_oracle):
    prefix = "psqld_"
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for stmt in _objects(prefix):
            ss.execute(stmt)
            pg.execute(stmt)
    yield slipstream, pg_oracle, prefix


def _run(server, command: str, user: str) -> list[str]:
    out = psql(server, command, "-F", "|", user=user, database="slipstream" if user == "slipstream" else "postgres")
    return sorted(line.replace(user, "OWNER") for line in out.splitlines())


@pytest.mark.parametrize("command", [r"\dt psqld_*", r"\dv psqld_*", r"\dm psqld_*", r"\di psqld_*",
                                     r"\dtvmi psqld_*", r"\dp psqld_*", r"\d psqld_t", r"\d+ psqld_t",
                                     r"\d psqld_mv", r"\d+ psqld_mv", r"\d psqld_ti", r"\d psqld_v"])
def test_psql_lists_relations_as_postgres_does(both, command):
    slipstream, pg, prefix = both
    got = _run(slipstream, command, "slipstream")
    want = _run(pg, command, pg.user)
    assert got == want
    assert got, "the command listed nothing"


def test_psql_describes_a_view_as_postgres_does(both):
    """`\\d+ view`: the columns and the definition equal PostgreSQL's, the definition in its
    deparsed, column-qualified form (planner.deparse)."""
    slipstream, pg, _ = both
    got = psql(slipstream, r"\d+ psqld_v", "-P", "tuples_only=off", user="slipstream",
               database="slipstream").splitlines()
    want = psql(pg, r"\d+ psqld_v", "-P", "tuples_only=off", user=pg.user, database="postgres").splitlines()
    assert got == want
    assert got[got.index("View definition:") + 1:] == [" SELECT psqld_t.a,", "    psqld_t.b", "   FROM psqld_t;"]


def test_catalog_definitions_are_postgres_own(both):
    """pg_views, pg_matviews and information_schema.views show the plain form
    (pg_get_viewdef(v)), psql the pretty one: each equal to PostgreSQL's."""
    slipstream, pg, _ = both
    queries = ["SELECT definition FROM pg_views WHERE viewname = 'psqld_v'",
               "SELECT view_definition FROM information_schema.views WHERE table_name = 'psqld_v'",
               "SELECT pg_get_viewdef('psqld_v'::regclass), pg_get_viewdef('psqld_v'::regclass, true)",
               "SELECT pg_get_viewdef('psqld_mv'), pg_get_viewdef('psqld_mv', true)",
               "SELECT definition FROM pg_matviews WHERE matviewname = 'psqld_mv'"]
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg.dsn, autocommit=True) as conn:
        for q in queries:
            assert ss.execute(q).fetchall() == conn.execute(q).fetchall(), q


def test_psql_lists_schemas_and_databases(both):
    slipstream, _, _ = both
    schemas = psql(slipstream, r"\dn", "-F", "|").splitlines()
    assert "public|slipstream" in schemas
    databases = psql(slipstream, r"\l", "-F", "|").splitlines()
    assert any(line.startswith("slipstream|slipstream|UTF8|C|C|") for line in databases)


def test_psql_lists_no_user_functions(both):
    slipstream, _, _ = both
    assert psql(slipstream, r"\df psqld_*") == ""  # an empty list, not an error


def test_catalog_queries_see_ddl_at_once(slipstream, unique_prefix):
    """The catalog is read at the statement's catalog state: a new table is listed by the very
    next query, a dropped one is gone."""
    name = f"{unique_prefix}fresh"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE TABLE {name} (x int)")
        listed = conn.execute("SELECT relname FROM pg_class WHERE relname = %s", (name,)).fetchall()
        cols = conn.execute("SELECT column_name, data_type FROM information_schema.columns "
                            "WHERE table_name = %s", (name,)).fetchall()
        conn.execute(f"DROP TABLE {name}")
        after = conn.execute("SELECT relname FROM pg_class WHERE relname = %s", (name,)).fetchall()
    assert listed == [(name,)]
    assert cols == [("x", "integer")]
    assert after == []


def test_regclass_output_and_binary(slipstream, unique_prefix):
    """A regclass column prints as the relation's name in text, and as its oid in binary."""
    name = f"{unique_prefix}rc"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE TABLE {name} (x int)")
        (oid,) = conn.execute("SELECT oid FROM pg_class WHERE relname = %s", (name,)).fetchone()
        text = conn.execute(f"SELECT '{name}'::regclass, 'int4'::regtype").fetchone()
        binary = conn.execute(f"SELECT '{name}'::regclass::oid", binary=True).fetchone()
        conn.execute(f"DROP TABLE {name}")
    assert text == (name, "integer")
    assert binary == (oid,)
