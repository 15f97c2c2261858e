"""Databases and schemas as Materialize has them: CREATE/DROP SCHEMA and DATABASE, qualified and
three-part names, search_path, the connection's database, the catalogs listing them, and all of
it surviving a restart."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psql, psycopg_connect

pytestmark = pytest.mark.e2e


def _error(conn, sql) -> str:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql)
    return e.value.sqlstate


def test_schema_objects_search_path_and_drop(slipstream, unique_prefix):
    s = f"{unique_prefix}s"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SCHEMA {s}")
        assert _error(conn, f"CREATE SCHEMA {s}") == "42P06"
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        conn.execute(f"CREATE TABLE {s}.t (a int)")
        conn.execute(f"INSERT INTO {s}.t VALUES (1), (2)")
        conn.execute(f"CREATE MATERIALIZED VIEW {s}.mv AS SELECT sum(a) AS total FROM {s}.t")
        assert _error(conn, "SELECT * FROM mv") == "42P01"  # not on the search path
        conn.execute(f"SET search_path = {s}, public")
        assert conn.execute("SELECT total FROM mv").fetchall() == [(3,)]
        assert conn.execute("SELECT current_schema()").fetchone() == (s,)
        conn.execute("CREATE TABLE u (b int)")  # the first schema of the path
        assert conn.execute("SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "WHERE c.relname = 'u'").fetchall() == [(s,)]
        assert conn.execute(f"SELECT 'u'::regclass::text, '{s}.t'::regclass::text").fetchone() == ("u", "t")
        conn.execute("SET search_path = public")
        assert conn.execute(f"SELECT '{s}.t'::regclass::text").fetchone() == (f"{s}.t",)
        assert (s, "") in conn.execute("SHOW SCHEMAS").fetchall()
        assert conn.execute("SELECT schema_name FROM information_schema.schemata WHERE schema_name = %s",
                            (s,)).fetchall() == [(s,)]
        assert _error(conn, f"DROP SCHEMA {s}") == "2BP01"
        conn.execute(f"DROP SCHEMA {s} CASCADE")
        assert _error(conn, f"SELECT * FROM {s}.t") == "42P01"
        assert _error(conn, f"CREATE TABLE {s}.t (a int)") == "3F000"
        assert _error(conn, "DROP SCHEMA pg_catalog") == "42501"


def test_databases_and_three_part_names(slipstream, unique_prefix):
    d = f"{unique_prefix}db"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE DATABASE {d}")
        assert _error(conn, f"CREATE DATABASE {d}") == "42P04"
        conn.execute(f"CREATE TABLE {d}.public.x (z int)")
        conn.execute(f"INSERT INTO {d}.public.x VALUES (5)")
        assert conn.execute(f"SELECT z FROM {d}.public.x").fetchall() == [(5,)]
        assert _error(conn, "SELECT * FROM x") == "42P01"  # another database's table
        assert (d, "") in conn.execute("SHOW DATABASES").fetchall()
    with psycopg.connect(f"postgresql://slipstream@{slipstream.host}:{slipstream.port}/{d}", autocommit=True) as other:
        assert other.execute("SELECT current_database(), z FROM x").fetchall() == [(d, 5)]
        assert other.execute("SELECT datname FROM pg_database WHERE datname = %s", (d,)).fetchall() == [(d,)]
        assert _error(other, f"DROP DATABASE {d}") == "55006"
    assert "x" in psql(slipstream, r"\dt", database=d)
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"DROP DATABASE {d}")
        assert _error(conn, f"SELECT * FROM {d}.public.x") == "42P01"
        conn.execute(f"DROP DATABASE IF EXISTS {d}")


def test_schemas_survive_a_restart(fresh_slipstream):
    with psycopg_connect(fresh_slipstream) as conn:
        conn.execute("CREATE SCHEMA sales")
        conn.execute("CREATE TABLE sales.orders (id int, amount int)")
        conn.execute("INSERT INTO sales.orders VALUES (1, 10), (2, 5)")
        conn.execute("CREATE MATERIALIZED VIEW sales.total AS SELECT sum(amount) AS s FROM sales.orders")
        conn.execute("CREATE DATABASE archive")
        conn.execute("CREATE TABLE archive.public.old (x int)")
    fresh_slipstream.restart()
    with psycopg_connect(fresh_slipstream) as conn:
        conn.execute("INSERT INTO sales.orders VALUES (3, 1)")
        assert conn.execute("SELECT s FROM sales.total").fetchall() == [(16,)]
        assert ("sales", "") in conn.execute("SHOW SCHEMAS").fetchall()
        assert ("archive", "") in conn.execute("SHOW DATABASES").fetchall()
        assert conn.execute("SELECT count(*) FROM archive.public.old").fetchall() == [(0,)]
