"""Materialized views (single table; inner equi-join with WHERE, GROUP BY and aggregates),
plain views, indexes on views and tables, SHOW TABLES / SHOW MATERIALIZED VIEWS, DROP."""

from __future__ import annotations

import decimal

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

CUSTOMERS = [(1, "north"), (2, "north"), (3, "south"), (4, "east")]
ORDERS = [  # id, customer_id, amount, status
    (1, 1, 10, "captured"), (2, 1, 30, "captured"), (3, 2, 5, "pending"),
    (4, 3, 7, "captured"), (5, 3, 9, "captured"), (6, 4, 100, "refunded"), (7, 9, 50, "captured"),
]


def expected_by_region(orders, customers):
    region_of = dict(customers)
    groups: dict[str, list[int]] = {}
    for _, customer_id, amount, status in orders:
        if status == "captured" and customer_id in region_of:
            groups.setdefault(region_of[customer_id], []).append(amount)
    return sorted((region, len(a), sum(a), min(a), max(a), decimal.Decimal(sum(a)) / len(a))
                  for region, a in groups.items())


def normalise(rows):
    """avg is numeric: compare it to 10 places so engines may differ in trailing scale."""
    return sorted((*r[:5], round(decimal.Decimal(r[5]), 10)) for r in rows)


def setup_tables(conn, p):
    conn.execute(f"CREATE TABLE {p}customers (id int, region text)")
    conn.execute(f"CREATE TABLE {p}orders (id int, customer_id int, amount int, status text)")
    conn.execute(f"INSERT INTO {p}customers VALUES "
                 + ", ".join(f"({i}, '{r}')" for i, r in CUSTOMERS))
    conn.execute(f"INSERT INTO {p}orders VALUES "
                 + ", ".join(f"({i}, {c}, {a}, '{s}')" for i, c, a, s in ORDERS))


def test_views_indexes_show_and_drop(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        setup_tables(conn, p)
        conn.execute(f"CREATE MATERIALIZED VIEW {p}big_orders AS "
                     f"SELECT id, amount FROM {p}orders WHERE amount >= 10")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}by_region AS "
                     f"SELECT c.region, count(*) AS n, sum(o.amount) AS total, "
                     f"min(o.amount) AS lo, max(o.amount) AS hi, avg(o.amount) AS mean "
                     f"FROM {p}orders o JOIN {p}customers c ON o.customer_id = c.id "
                     f"WHERE o.status = 'captured' GROUP BY c.region")
        conn.execute(f"CREATE VIEW {p}captured AS "
                     f"SELECT id, customer_id, amount FROM {p}orders WHERE status = 'captured'")
        conn.execute(f"CREATE INDEX {p}captured_idx ON {p}captured (customer_id)")
        conn.execute(f"CREATE INDEX {p}orders_idx ON {p}orders (id)")

        assert conn.execute(f"SELECT id, amount FROM {p}big_orders ORDER BY id").fetchall() == \
            [(1, 10), (2, 30), (6, 100), (7, 50)]
        rows = conn.execute(f"SELECT region, n, total, lo, hi, mean FROM {p}by_region").fetchall()
        assert normalise(rows) == normalise(expected_by_region(ORDERS, CUSTOMERS))
        assert conn.execute(f"SELECT id FROM {p}captured WHERE customer_id = 3 ORDER BY id"
                            ).fetchall() == [(4,), (5,)]
        assert conn.execute(f"SELECT amount FROM {p}orders WHERE id = 6").fetchall() == [(100,)]

        cur = conn.execute("SHOW TABLES")
        assert cur.description[0].name == "name"
        tables = {r[0] for r in cur.fetchall()}
        assert {f"{p}customers", f"{p}orders"} <= tables
        assert f"{p}by_region" not in tables

        cur = conn.execute("SHOW MATERIALIZED VIEWS")
        assert [c.name for c in cur.description][:2] == ["name", "cluster"]
        mvs = {r[0]: r[1] for r in cur.fetchall()}
        assert {f"{p}big_orders", f"{p}by_region"} <= set(mvs)
        assert all(isinstance(mvs[n], str) and mvs[n] for n in (f"{p}big_orders", f"{p}by_region"))
        assert f"{p}orders" not in mvs

        conn.execute(f"DROP INDEX {p}captured_idx")
        assert conn.execute(f"SELECT count(*) FROM {p}captured").fetchone() == (5,)  # orders 1, 2, 4, 5, 7
        conn.execute(f"DROP INDEX {p}orders_idx")
        conn.execute(f"DROP VIEW {p}captured")
        conn.execute(f"DROP MATERIALIZED VIEW {p}big_orders")
        conn.execute(f"DROP MATERIALIZED VIEW {p}by_region")
        mvs = {r[0] for r in conn.execute("SHOW MATERIALIZED VIEWS").fetchall()}
        assert not {f"{p}big_orders", f"{p}by_region"} & mvs
        for name in ("captured", "big_orders", "by_region"):
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute(f"SELECT * FROM {p}{name}")
        conn.execute(f"DROP TABLE {p}orders")
        conn.execute(f"DROP TABLE {p}customers")
        tables = {r[0] for r in conn.execute("SHOW TABLES").fetchall()}
        assert not {f"{p}customers", f"{p}orders"} & tables


def test_mv_follows_changes_to_both_join_inputs(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        setup_tables(conn, p)
        conn.execute(f"CREATE MATERIALIZED VIEW {p}by_region AS "
                     f"SELECT c.region, count(*), sum(o.amount), min(o.amount), max(o.amount), "
                     f"avg(o.amount) FROM {p}orders o JOIN {p}customers c "
                     f"ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region")
        orders, customers = list(ORDERS), list(CUSTOMERS)
        conn.execute(f"UPDATE {p}customers SET region = 'west' WHERE id = 1")
        customers[0] = (1, "west")
        conn.execute(f"INSERT INTO {p}customers VALUES (9, 'east')")
        customers.append((9, "east"))
        conn.execute(f"DELETE FROM {p}orders WHERE id = 4")
        orders = [o for o in orders if o[0] != 4]
        rows = conn.execute(f"SELECT * FROM {p}by_region").fetchall()
        assert normalise(rows) == normalise(expected_by_region(orders, customers))


def test_show_the_namespace_and_cluster_commands(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}s (a int)")
        conn.execute(f"CREATE VIEW {p}sv AS SELECT a FROM {p}s")
        assert ("slipstream", "") in conn.execute("SHOW DATABASES").fetchall()
        assert ("public", "") in conn.execute("SHOW SCHEMAS").fetchall()
        assert [r[0] for r in conn.execute("SHOW CLUSTERS").fetchall()] == ["quickstart"]
        objects = {r[0]: r[1] for r in conn.execute("SHOW OBJECTS").fetchall()}
        assert objects[f"{p}s"] == "table" and objects[f"{p}sv"] == "view"
        assert conn.execute("SHOW SOURCES").fetchall() == []


def test_create_then_drop_at_once_leaves_the_replica_up(slipstream, unique_prefix):
    """A table dropped before the workers have imported it (CREATE and DROP back to back) must
    not take the replica down: the next queries answer normally."""
    with psycopg_connect(slipstream) as conn:
        for i in range(5):
            conn.execute(f"CREATE TABLE {unique_prefix}gone{i} (a int)")
            conn.execute(f"DROP TABLE {unique_prefix}gone{i}")
        conn.execute(f"CREATE TABLE {unique_prefix}kept (a int)")
        conn.execute(f"INSERT INTO {unique_prefix}kept VALUES (1)")
        assert conn.execute(f"SELECT a FROM {unique_prefix}kept").fetchall() == [(1,)]
