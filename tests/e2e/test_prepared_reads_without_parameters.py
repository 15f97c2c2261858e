"""A read without parameters, executed through the extended protocol, keeps its plan across
executions (server/adapter/plan_cache.py: a closed-loop reader's `SELECT * FROM v1` skips the
planner). Checked against PostgreSQL through asyncpg (which prepares each text once): after
writes, inside a transaction that wrote (its table), after the view it reads is replaced by another of the
same name, and after `SET search_path` makes the same text name another table."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.clients import asyncpg_connect

pytestmark = pytest.mark.e2e


def test_kept_reads_without_parameters_agree_with_postgresql(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix

    async def run(server, materialized: bool) -> list:
        conn = await asyncpg_connect(server)
        view = "MATERIALIZED VIEW" if materialized else "VIEW"
        seen: list = []

        async def read(sql: str) -> None:
            seen.append(sorted(tuple(r) for r in await conn.fetch(sql)))

        try:
            for schema in ("a", "b"):
                await conn.execute(f"CREATE SCHEMA {p}{schema}")
                await conn.execute(f"CREATE TABLE {p}{schema}.t (k int, x int)")
            await conn.execute(f"INSERT INTO {p}a.t VALUES (1, 10), (2, 20)")
            await conn.execute(f"INSERT INTO {p}b.t VALUES (7, 70)")
            await conn.execute(f"CREATE {view} {p}a.v AS SELECT k, sum(x) AS s FROM {p}a.t GROUP BY k")
            by_view = f"SELECT * FROM {p}a.v"
            by_path = "SELECT k, x FROM t WHERE x > 5"
            await conn.execute(f"SET search_path TO {p}a")
            for i in range(3):
                await read(by_view)
                await read(by_path)
                await conn.execute(f"INSERT INTO {p}a.t VALUES ($1, $2)", i, 100 + i)
            async with conn.transaction():
                await conn.execute(f"DELETE FROM {p}a.t WHERE k = 1")
                await read(by_path)  # sees the transaction's own delete
            await read(by_view)
            # The same name, another definition: the kept plan was for the old catalog.
            await conn.execute(f"DROP {view} {p}a.v")
            await conn.execute(f"CREATE {view} {p}a.v AS SELECT k, count(*) AS s FROM {p}a.t GROUP BY k")
            await read(by_view)
            # The same text, another table.
            await conn.execute(f"SET search_path TO {p}b")
            await read(by_path)
            await conn.execute(f"SET search_path TO {p}a")
            await read(by_path)
        finally:
            for schema in ("a", "b"):
                await conn.execute(f"DROP SCHEMA IF EXISTS {p}{schema} CASCADE")
            await conn.close()
        return seen

    ours, theirs = asyncio.run(run(slipstream, True)), asyncio.run(run(pg_oracle, False))
    assert ours == theirs
    assert len(ours) == 11 and ours[-2] == [(7, 70)]
