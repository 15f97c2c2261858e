"""SQLAlchemy 2 over psycopg 2, psycopg 3 and pg8000: connect (dialect initialisation reads
version(), current_schema(), standard_conforming_strings, and psycopg 3 looks types up inside a
savepoint), then the Inspector's listings, which read pg_class, pg_namespace and
pg_table_is_visible. Compared with the same calls against PostgreSQL."""

from __future__ import annotations

import pytest

sa = pytest.importorskip("sqlalchemy")

pytestmark = pytest.mark.e2e

DRIVERS = ["psycopg2", "psycopg", "pg8000"]


def _engine(server, driver: str, user: str, database: str):
    return sa.create_engine(f"postgresql+{driver}://{user}@{server.host}:{server.port}/{database}")


@pytest.fixture(scope="module")
def objects(slipstream, pg_oracle):
    names = {"table": "sa_cat_t", "view": "sa_cat_v", "mv": "sa_cat_mv"}
    ddl = [f"CREATE TABLE {names['table']} (k int, s text)",
           f"CREATE VIEW {names['view']} AS SELECT k FROM {names['table']}",
           f"CREATE MATERIALIZED VIEW {names['mv']} AS SELECT count(*) AS n FROM {names['table']}"]
    for server, user, db in ((slipstream, "slipstream", "slipstream"), (pg_oracle, pg_oracle.user, "postgres")):
        with _engine(server, "psycopg2", user, db).begin() as conn:
            for stmt in ddl:
                conn.execute(sa.text(stmt))
    return names


def _listing(server, driver, user, db):
    insp = sa.inspect(_engine(server, driver, user, db))
    return {
        "tables": sorted(n for n in insp.get_table_names() if n.startswith("sa_cat_")),
        "views": sorted(n for n in insp.get_view_names() if n.startswith("sa_cat_")),
        "mvs": sorted(n for n in insp.get_materialized_view_names() if n.startswith("sa_cat_")),
        "has": (insp.has_table("sa_cat_t"), insp.has_table("sa_cat_nope")),
        "schema": insp.default_schema_name,
    }


@pytest.mark.parametrize("driver", DRIVERS)
def test_inspector_lists_relations_as_postgres_does(slipstream, pg_oracle, objects, driver):
    got = _listing(slipstream, driver, "slipstream", "slipstream")
    want = _listing(pg_oracle, driver, pg_oracle.user, "postgres")
    assert got == want
    assert got["mvs"] == ["sa_cat_mv"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_orm_style_transaction_with_savepoint(slipstream, unique_prefix, driver):
    """begin_nested() is a SAVEPOINT; rolling it back drops only the inner writes."""
    table = f"{unique_prefix}{driver}_sp"
    eng = _engine(slipstream, driver, "slipstream", "slipstream")
    with eng.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table} (x int)"))
    with eng.begin() as conn:
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (1)"))
        nested = conn.begin_nested()
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (2)"))
        nested.rollback()
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (3)"))
    with eng.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT x FROM {table} ORDER BY x")).fetchall()
    assert [r[0] for r in rows] == [1, 3]
