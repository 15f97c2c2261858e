"""SQLAlchemy 2 over psycopg 2, psycopg 3 and pg8000: connect (dialect initialisation reads
version(), current_schema(), standard_conforming_strings, and psycopg 3 looks types up inside a
savepoint), then the Inspector's listings, which read pg_class, pg_namespace and
pg_table_is_visible, and its column reflection (json_build_object, pg_attrdef, format_type).
Compared with the same calls against PostgreSQL."""

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
    ddl = [f"CREATE TABLE {names['table']} (k int NOT NULL, s text DEFAULT 'x', n numeric(10,2), v varchar(7))",
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
        # Column reflection (what pandas' to_sql and Superset's dataset picker use): names,
        # types as format_type prints them, nullability, defaults.
        "columns": {rel: [(c["name"], str(c["type"]), c["nullable"], c["default"]) for c in insp.get_columns(rel)]
                    for rel in ("sa_cat_t", "sa_cat_v", "sa_cat_mv")},
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


def test_pandas_to_sql_and_read_sql(slipstream, unique_prefix):
    """pandas through SQLAlchemy: to_sql creates the table (reflecting it first) and inserts the
    frame; a materialized view over it reflects a later append; read_sql reads it back."""
    pd = pytest.importorskip("pandas")
    table, view = f"{unique_prefix}pd", f"{unique_prefix}pd_mv"
    eng = _engine(slipstream, "psycopg2", "slipstream", "slipstream")
    frame = pd.DataFrame({"k": [1, 2, 3], "name": ["a", "b", None], "amount": [1.5, 2.25, -3.0]})
    assert frame.to_sql(table, eng, index=False) == 3
    with eng.begin() as conn:
        conn.execute(sa.text(f"CREATE MATERIALIZED VIEW {view} AS SELECT count(*) AS n, sum(amount) AS total FROM {table}"))
    frame.iloc[:1].assign(k=4).to_sql(table, eng, index=False, if_exists="append")
    back = pd.read_sql(f"SELECT k, name, amount FROM {table} ORDER BY k", eng)
    assert back["k"].tolist() == [1, 2, 3, 4]
    assert back["name"].tolist()[:2] == ["a", "b"] and back["name"].isna().tolist() == [False, False, True, False]
    summary = pd.read_sql(sa.text(f"SELECT n, total FROM {view}"), eng)
    assert summary.to_dict("records") == [{"n": 4, "total": 2.25}]
