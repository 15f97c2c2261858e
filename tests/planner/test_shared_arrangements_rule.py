"""planner/shared_arrangements.py: a one-off join's input with an index on its join key reads the
index (which the workers then probe in place); other inputs keep reading their relation."""

from __future__ import annotations

import pytest

from dataflow.plan import collections_read
from planner import parse, plan_statement
from planner.shared_arrangements import use_shared_arrangements
from tests.planner.planner_catalog import MemoryCatalog


@pytest.fixture(scope="module")
def cat() -> MemoryCatalog:
    c = MemoryCatalog()
    c.execute("CREATE TABLE orders (id bigint, customer_id bigint, amount bigint)")
    c.execute("CREATE TABLE customers (id bigint, region text, score int)")
    c.execute("CREATE INDEX customers_id ON customers (id)")
    c.execute("CREATE INDEX customers_region ON customers (region)")
    return c


def _gets(cat, sql: str) -> set[str]:
    plan = use_shared_arrangements(plan_statement(cat, parse(sql)[0]).plan, cat)
    return {cat.get(id).name for id in collections_read(plan)}


def test_a_join_on_an_indexed_key_reads_the_index(cat):
    assert _gets(cat, "SELECT o.amount, c.region FROM orders o JOIN customers c ON o.customer_id = c.id") == \
        {"orders", "customers_id"}
    # On the other index's key, that one; the side does not matter.
    assert _gets(cat, "SELECT 1 FROM customers c, (SELECT 'eu' AS r) x WHERE c.region = x.r") == {"customers_region"}


def test_other_keys_keep_the_relation(cat):
    assert _gets(cat, "SELECT 1 FROM orders o JOIN customers c ON o.amount = c.score") == {"orders", "customers"}
    assert _gets(cat, "SELECT 1 FROM orders o JOIN customers c ON o.customer_id = c.id AND o.amount = c.score") == \
        {"orders", "customers"}   # (a two-column key is not the index's)
