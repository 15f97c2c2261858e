"""A prepared DELETE of a list of keys (`id = ANY($1)`, a writer's batch delete) keeps its plan
across executions with the keys bound late (server/adapter/plan_cache.py). Checked against
PostgreSQL through asyncpg (which prepares once and binds every execution): the row counts,
the table and a view maintained over it, with lists that repeat keys, miss, are empty or hold
a NULL, inside transactions with other writes and alone."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.support.clients import asyncpg_connect

pytestmark = pytest.mark.e2e


def test_prepared_key_list_deletes_agree_with_postgresql(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix

    async def run(server, materialized: bool) -> list:
        rng = random.Random(7)
        conn = await asyncpg_connect(server)
        seen = []
        try:
            await conn.execute(f"CREATE TABLE {p}t (id bigint, g int, x bigint)")
            if materialized:
                await conn.execute(f"CREATE INDEX {p}t_id ON {p}t (id)")
            view = "MATERIALIZED VIEW" if materialized else "VIEW"
            await conn.execute(f"CREATE {view} {p}v AS SELECT g, count(*) AS n, sum(x) AS s FROM {p}t GROUP BY g")
            await conn.executemany(f"INSERT INTO {p}t VALUES ($1, $2, $3)",
                                   [(i, i % 5, i * 3) for i in range(60)])
            delete = f"DELETE FROM {p}t WHERE id = ANY($1::bigint[])"
            for step in range(40):
                keys = [rng.randrange(80) for _ in range(rng.randrange(0, 9))]
                if step % 9 == 4:
                    keys.append(None)  # (planned as usual: no kept plan for a NULL key)
                if step % 2:
                    async with conn.transaction():
                        seen.append(await conn.execute(delete, keys))
                        await conn.execute(f"INSERT INTO {p}t VALUES ($1, $2, $3)",
                                           rng.randrange(80), rng.randrange(5), rng.randrange(100))
                        seen.append(await conn.execute(delete, keys[:2]))  # sees the insert above
                else:
                    seen.append(await conn.execute(delete, keys))
                seen.append(sorted(tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}t")))
                seen.append(sorted(tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}v")))
        finally:
            await conn.close()
        return seen

    assert asyncio.run(run(slipstream, True)) == asyncio.run(run(pg_oracle, False))
