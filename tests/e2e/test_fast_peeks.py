"""Fast-path peeks (dataflow/fast_peek.py): reads answered from an arrangement without a dataflow,
a lookup sent only to the workers that own its keys, concurrent reads batched per worker.

Each read is checked against the same statement over an unindexed copy of the table (answered by
a dataflow that scans it), for key types whose hashes the controller must compute exactly as the
index's exchange does: a wrong owner would silently answer "no rows"."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

COLUMNS = "id bigint, i int, s text, n numeric, d date, ts timestamp, f float8, b bool, v varchar(10), c char(3)"
ROWS = 40


def _row(i: int) -> str:
    return (f"({i}, {i % 9 - 4}, 's{i % 13}', {i % 11}.{i % 3}5, DATE '2024-01-01' + {i % 17}, "
            f"TIMESTAMP '2024-03-01 10:00' + INTERVAL '{i % 7} hours', {(i % 5) / 4}, {str(i % 2 == 0).lower()}, "
            f"'v{i % 6}', 'c{i % 4}')")


def test_lookups_on_every_key_type_agree_with_scans(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        for t in ("plain", "indexed"):
            conn.execute(f"CREATE TABLE {p}{t} ({COLUMNS})")
            conn.execute(f"INSERT INTO {p}{t} VALUES " + ", ".join(_row(i) for i in range(ROWS)))
        names = [c.split()[0] for c in COLUMNS.split(", ")]
        for col in names:
            conn.execute(f"CREATE INDEX {p}indexed_{col} ON {p}indexed ({col})")
        conn.execute(f"CREATE INDEX {p}indexed_pair ON {p}indexed (s, d)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}mv AS SELECT s, count(*) AS n, sum(i) AS total "
                     f"FROM {p}indexed GROUP BY s")
        conn.execute(f"CREATE INDEX {p}mv_s ON {p}mv (s)")
        values = conn.execute(f"SELECT {', '.join(names)} FROM {p}plain").fetchall()
        checked = 0
        for k, col in enumerate(names):
            for value in {row[k] for row in values}:
                sql = f"SELECT * FROM {{t}} WHERE {col} = %s ORDER BY id"
                want = conn.execute(sql.format(t=f"{p}plain"), (value,)).fetchall()
                got = conn.execute(sql.format(t=f"{p}indexed"), (value,)).fetchall()
                assert got == want and want, (col, value)
                checked += 1
        assert checked > 80
        # Several keys: each worker answers its share.
        many = "SELECT id, s FROM {t} WHERE id IN (0, 1, 2, 3, 5, 8, 13, 21, 34, 1000) ORDER BY id"
        assert conn.execute(many.format(t=f"{p}indexed")).fetchall() == \
            conn.execute(many.format(t=f"{p}plain")).fetchall()
        pair = "SELECT id FROM {t} WHERE s = 's3' AND d = DATE '2024-01-04' ORDER BY id"
        assert conn.execute(pair.format(t=f"{p}indexed")).fetchall() == \
            conn.execute(pair.format(t=f"{p}plain")).fetchall()
        # A whole indexed view, and a lookup in it through a computed chain.
        assert conn.execute(f"SELECT s, n, total FROM {p}mv ORDER BY s").fetchall() == \
            conn.execute(f"SELECT s, count(*), sum(i) FROM {p}plain GROUP BY s ORDER BY s").fetchall()
        assert conn.execute(f"SELECT n * 2, upper(s) FROM {p}mv WHERE s = 's4'").fetchall() == \
            conn.execute(f"SELECT count(*) * 2, upper(s) FROM {p}plain WHERE s = 's4' GROUP BY s").fetchall()
        # A key no worker holds.
        assert conn.execute(f"SELECT * FROM {p}indexed WHERE id = -1").fetchall() == []


def test_errors_and_own_writes_through_the_fast_path(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t (id int, v int)")
        conn.execute(f"CREATE INDEX {p}t_id ON {p}t (id)")
        for i in range(20):  # each read sees the write acknowledged just before it
            conn.execute(f"INSERT INTO {p}t VALUES ({i}, {i * 10})")
            assert conn.execute(f"SELECT v FROM {p}t WHERE id = {i}").fetchall() == [(i * 10,)]
        conn.execute(f"UPDATE {p}t SET v = 0 WHERE id = 3")
        with pytest.raises(Exception) as e:
            conn.execute(f"SELECT 1 / v FROM {p}t WHERE id = 3")
        assert getattr(e.value, "sqlstate", None) == "22012"
        assert conn.execute(f"SELECT 100 / v FROM {p}t WHERE id = 5").fetchall() == [(2,)]


def test_concurrent_point_reads_each_get_their_own_answer(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        conn.execute(f"CREATE TABLE {p}t (k int, v text)")
        conn.execute(f"INSERT INTO {p}t SELECT g, 'v' || g FROM generate_series(1, 500) g")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}mv AS SELECT k, v, length(v) AS n FROM {p}t")
        conn.execute(f"CREATE INDEX {p}mv_k ON {p}mv (k)")

    async def client(seed: int) -> int:
        c = await asyncpg.connect(slipstream.dsn)
        try:
            st = await c.prepare(f"SELECT v, n FROM {p}mv WHERE k = $1")
            for j in range(40):
                k = (seed * 37 + j * 11) % 520  # some keys past the table: no rows
                rows = await st.fetch(k)
                want = [(f"v{k}", len(f"v{k}"))] if 1 <= k <= 500 else []
                assert [tuple(r) for r in rows] == want, k
            return 40
        finally:
            await c.close()

    async def main() -> int:
        return sum(await asyncio.gather(*(client(s) for s in range(24))))

    assert asyncio.run(main()) == 24 * 40


def test_point_reads_of_unindexed_views_narrow_before_consolidating(slipstream, pg_oracle, unique_prefix):
    """A point read of an unindexed view filters the view's raw updates by its conditions that
    cannot fail before consolidating them (fast_peek's prefilter). Checked against PostgreSQL
    under churn that leaves many cancelled copies in the view's history: NULL keys, float keys
    with NaN and -0, text keys; and a condition that can fail (a division) sees only rows that
    exist, never an update consolidation cancels."""
    import random

    import psycopg

    p = unique_prefix
    rng = random.Random(11)
    ddl = f"CREATE TABLE {p}t (id int, k int, f float8, s text, x int)"
    mv = (f"CREATE MATERIALIZED VIEW {p}mv AS SELECT k, f, s, count(*) AS n, sum(x) AS sx, min(x) AS mx "
          f"FROM {p}t GROUP BY k, f, s")
    pg_mv = mv.replace("MATERIALIZED VIEW", "VIEW")
    floats = ["0", "-0", "'NaN'", "1.5", "NULL"]
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for conn, view in ((ss, mv), (pg, pg_mv)):
            conn.execute(ddl)
            conn.execute(view)
        queries = [f"SELECT * FROM {p}mv WHERE k = {k}" for k in (0, 1, 2, 7)] + \
            [f"SELECT k, n FROM {p}mv WHERE f = {f} AND k >= 1" for f in floats[:4]] + \
            [f"SELECT * FROM {p}mv WHERE s = 's1' OR k IS NULL",
             f"SELECT k, n FROM {p}mv WHERE k = 1 AND 10 / mx > 0",
             f"SELECT k, sx FROM {p}mv WHERE k IS NOT DISTINCT FROM NULL"]
        compared = 0
        for round_ in range(12):
            for _ in range(6):
                i = rng.randrange(30)
                k = rng.choice(["NULL", "0", "1", "2", "7"])
                row = f"({i}, {k}, {rng.choice(floats)}, 's{rng.randrange(3)}', {rng.randrange(1, 4)})"
                for conn in (ss, pg):
                    conn.execute(f"DELETE FROM {p}t WHERE id = {i}")
                    conn.execute(f"INSERT INTO {p}t VALUES {row}")
            # A row whose x = 0 would fail `10 / mx` in group k = 1: inserted and deleted, it
            # never exists at a read's time.
            ss.execute(f"INSERT INTO {p}t VALUES (99, 1, 1.5, 's9', 0)")
            ss.execute(f"DELETE FROM {p}t WHERE id = 99")
            for sql in queries:
                got = sorted(map(repr, ss.execute(sql).fetchall()))
                want = sorted(map(repr, pg.execute(sql).fetchall()))
                assert got == want, (round_, sql)
                compared += 1
        assert compared == 12 * len(queries)
