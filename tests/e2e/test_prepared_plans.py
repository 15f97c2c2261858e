"""Prepared point reads executed again and again (server/adapter/plan_cache.py keeps their
plans): answers equal PostgreSQL's under random changes, and a kept plan never outlives what it
was planned against - the catalog (a table dropped and created again, an index), the session's
search_path, role and process id (plans are shared by sessions), the parameter's value
(NULL) - nor skips a privilege check."""

from __future__ import annotations

import asyncio
import random

import asyncpg
import psycopg
import pytest

from tests.support.clients import asyncpg_connect, psycopg_connect

pytestmark = pytest.mark.e2e

POINT = "SELECT n, total FROM {p}by_k WHERE k = $1 AND tag = $2"


def test_prepared_point_reads_agree_with_postgres_under_changes(slipstream, pg_oracle, unique_prefix):
    p = unique_prefix
    ddl = [f"CREATE TABLE {p}t (id bigint, k int, tag text, v bigint)"]
    view = (f"CREATE {{mat}}VIEW {p}by_k AS SELECT k, tag, count(*) AS n, sum(v) AS total "
            f"FROM {p}t GROUP BY k, tag")
    rng = random.Random(7)

    async def run():
        ss = await asyncpg_connect(slipstream)
        pg = await asyncpg.connect(pg_oracle.dsn)
        try:
            for sql in ddl:
                await ss.execute(sql)
                await pg.execute(sql)
            await ss.execute(view.format(mat="MATERIALIZED "))
            await pg.execute(view.format(mat=""))
            await ss.execute(f"CREATE INDEX {p}by_k_i ON {p}by_k (k, tag)")
            mine = await ss.prepare(POINT.format(p=p))
            theirs = await pg.prepare(POINT.format(p=p))
            next_id, compared = 0, 0
            for step in range(60):
                if step % 3 == 0 or next_id < 5:  # insert a few rows
                    rows = [(next_id + j, rng.randrange(6), rng.choice(["a", "b", ""]), rng.randrange(-50, 50))
                            for j in range(rng.randrange(1, 4))]
                    next_id += len(rows)
                    for c in (ss, pg):
                        await c.executemany(f"INSERT INTO {p}t VALUES ($1, $2, $3, $4)", rows)
                elif step % 3 == 1:  # delete one
                    gone = rng.randrange(next_id)
                    for c in (ss, pg):
                        await c.execute(f"DELETE FROM {p}t WHERE id = $1", gone)
                for _ in range(4):
                    k, tag = rng.randrange(-1, 7), rng.choice(["a", "b", "", "c", None])
                    want = [tuple(r) for r in await theirs.fetch(k, tag)]
                    got = [tuple(r) for r in await mine.fetch(k, tag)]
                    assert got == want, (step, k, tag)
                    compared += 1
            assert compared == 240
        finally:
            await ss.close()
            await pg.close()

    asyncio.run(run())


def test_kept_plans_follow_the_catalog_and_the_session(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as admin:
        for s in ("a", "b"):
            admin.execute(f"CREATE SCHEMA {p}{s}")
            admin.execute(f"CREATE TABLE {p}{s}.t (id int, v text)")
            admin.execute(f"INSERT INTO {p}{s}.t VALUES (1, '{s}1'), (2, '{s}2')")
        admin.execute(f"CREATE ROLE {p}reader LOGIN")
        admin.execute(f"GRANT USAGE ON SCHEMA {p}a TO {p}reader")
        admin.execute(f"GRANT SELECT ON {p}a.t TO {p}reader")

    async def run():
        conn = await asyncpg_connect(slipstream)
        try:
            await conn.execute(f"SET search_path = {p}a")
            read = await conn.prepare("SELECT v FROM t WHERE id = $1")
            assert [r[0] for r in await read.fetch(1)] == ["a1"]
            assert [r[0] for r in await read.fetch(2)] == ["a2"]
            # The same text in another search_path reads another table.
            await conn.execute(f"SET search_path = {p}b")
            assert [r[0] for r in await read.fetch(1)] == ["b1"]
            # Dropped and created again (a new catalog object with the same name).
            await conn.execute(f"DROP TABLE {p}b.t")
            await conn.execute(f"CREATE TABLE {p}b.t (id int, v text)")
            await conn.execute(f"INSERT INTO {p}b.t VALUES (1, 'new')")
            assert [r[0] for r in await read.fetch(1)] == ["new"]
            await conn.execute(f"CREATE INDEX {p}b_t_id ON {p}b.t (id)")
            assert [r[0] for r in await read.fetch(1)] == ["new"]
            assert await read.fetch(None) == []  # id = NULL matches nothing
            assert [r[0] for r in await read.fetch(1)] == ["new"]
        finally:
            await conn.close()
        # Sessions share kept plans, each with its own search_path and process id.
        sessions = [await asyncpg_connect(slipstream) for _ in range(2)]
        try:
            for conn, s in zip(sessions, ("a", "b")):
                await conn.execute(f"SET search_path = {p}{s}")
            text = "SELECT v, pg_backend_pid() FROM t WHERE id = $1"
            for _ in range(3):
                for conn, s in zip(sessions, ("a", "b")):
                    pid = await conn.fetchval("SELECT pg_backend_pid()")
                    got = [tuple(r) for r in await conn.fetch(text, 1)]
                    assert got == [("new" if s == "b" else "a1", pid)]
        finally:
            for conn in sessions:
                await conn.close()
        # Privileges are checked on every execution.
        reader = await asyncpg.connect(slipstream.dsn.replace("slipstream@", f"{p}reader@", 1),
                                       statement_cache_size=0)
        try:
            read = await reader.prepare(f"SELECT v FROM {p}a.t WHERE id = $1")
            assert [r[0] for r in await read.fetch(2)] == ["a2"]
            with psycopg_connect(slipstream) as admin:
                admin.execute(f"REVOKE SELECT ON {p}a.t FROM {p}reader")
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await read.fetch(2)
        finally:
            await reader.close()

    asyncio.run(run())


def test_transactions_see_their_own_writes_through_kept_plans(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE TABLE {p}t (id int, v int)")
        conn.execute(f"CREATE INDEX {p}t_id ON {p}t (id)")
        conn.execute(f"INSERT INTO {p}t VALUES (1, 10)")
        read = f"SELECT v FROM {p}t WHERE id = %s"
        for _ in range(3):  # kept after the first
            assert conn.execute(read, (1,)).fetchall() == [(10,)]
        with conn.transaction():
            conn.execute(f"INSERT INTO {p}t VALUES (2, 20)")
            assert conn.execute(read, (2,)).fetchall() == [(20,)]
        assert conn.execute(read, (2,)).fetchall() == [(20,)]
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute(read, ("x",))
