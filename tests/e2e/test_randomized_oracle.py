"""A seeded random workload of inserts, updates and deletes on two tables, applied with the
same buildpg-built statements to Slipstream and to a real PostgreSQL; after every statement the
join+aggregate MV on Slipstream equals the same query on PostgreSQL."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.support.clients import asyncpg_connect
from tests.support.statements import delete, execute, insert, update

pytestmark = pytest.mark.e2e

STATEMENTS = 150
SEED = 20240607
REGIONS = ["north", "south", "east", "west"]
STATUSES = ["captured", "pending", "refunded"]

QUERY = ("SELECT c.region, count(*), sum(o.amount), min(o.amount), max(o.amount) "
         "FROM {orders} o JOIN {customers} c ON o.customer_id = c.id "
         "WHERE o.status = 'captured' GROUP BY c.region")


def random_statement(rng: random.Random, customers: str, orders: str, next_order: list[int]):
    kind = rng.random()
    if kind < 0.15:
        return insert(customers, ["id", "region"],
                      [(rng.randint(1, 12), rng.choice(REGIONS)) for _ in range(rng.randint(1, 3))])
    if kind < 0.25:
        return update(customers, {"region": rng.choice(REGIONS)}, {"id": rng.randint(1, 12)})
    if kind < 0.30:
        return delete(customers, {"id": rng.randint(1, 12)})
    if kind < 0.65:
        rows = []
        for _ in range(rng.randint(1, 4)):
            next_order[0] += 1
            rows.append((next_order[0], rng.randint(1, 14), rng.randint(-50, 500),
                         rng.choice(STATUSES)))
        return insert(orders, ["id", "customer_id", "amount", "status"], rows)
    if kind < 0.85:
        assignments = rng.choice([{"status": rng.choice(STATUSES)},
                                  {"amount": rng.randint(-50, 500)},
                                  {"customer_id": rng.randint(1, 14)}])
        return update(orders, assignments, {"id": rng.randint(1, max(1, next_order[0]))})
    return delete(orders, {"id": rng.randint(1, max(1, next_order[0]))})


def test_random_workload_matches_postgres(slipstream, pg_oracle, unique_prefix):
    customers, orders, mv = f"{unique_prefix}customers", f"{unique_prefix}orders", \
        f"{unique_prefix}by_region"
    ddl = [f"CREATE TABLE {customers} (id int, region text)",
           f"CREATE TABLE {orders} (id int, customer_id int, amount int, status text)"]
    query = QUERY.format(orders=orders, customers=customers)

    async def scenario():
        ss = await asyncpg_connect(slipstream)
        pg = await asyncpg_connect(pg_oracle)
        try:
            for stmt in ddl:
                await ss.execute(stmt)
                await pg.execute(stmt)
            await ss.execute(f"CREATE MATERIALIZED VIEW {mv} AS {query}")
            rng, next_order = random.Random(SEED), [0]
            for step in range(STATEMENTS):
                statement = random_statement(rng, customers, orders, next_order)
                tag_ss = await execute(ss, statement)
                tag_pg = await execute(pg, statement)
                assert tag_ss == tag_pg, f"step {step}: {statement}"
                got = sorted(tuple(r) for r in await ss.fetch(f"SELECT * FROM {mv}"))
                want = sorted(tuple(r) for r in await pg.fetch(query))
                assert got == want, f"step {step} after {statement}"
        finally:
            await ss.close()
            await pg.close()

    asyncio.run(scenario())
