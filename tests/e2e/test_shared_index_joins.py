"""One-off joins that probe an index in place (planner/shared_arrangements.py,
SharedJoinOp): under random inserts, updates and deletes, every join read over an indexed
relation equals the same read over an unindexed copy (which arranges its input itself), for
keys of several types, an indexed materialized view, and a read in a transaction."""

from __future__ import annotations

import random

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

QUERIES = [
    "SELECT o.id, d.name FROM {p}o o JOIN {p}{d} d ON o.did = d.id ORDER BY 1, 2",
    "SELECT d.name, count(*), sum(o.amount) FROM {p}o o JOIN {p}{d} d ON o.did = d.id GROUP BY 1 ORDER BY 1",
    "SELECT o.id, d.id FROM {p}{d} d JOIN {p}o o ON d.tag = o.tag ORDER BY 1, 2",
    "SELECT o.id FROM {p}o o LEFT JOIN {p}{d} d ON o.did = d.id WHERE d.id IS NULL ORDER BY 1",
    "SELECT o.id, d.name FROM {p}o o, {p}{d} d WHERE o.did = d.id AND d.name <> 'n1' ORDER BY 1, 2",
    "SELECT m.name, m.n, o.id FROM {p}o o JOIN {p}{d}m m ON o.tag = m.name ORDER BY 1, 3",
    # The indexed side filters and computes: the join probes the index and applies them to the
    # rows it matched.
    "SELECT o.id, d.name, d.x FROM {p}o o JOIN (SELECT id, name, length(name) * 10 + id AS x FROM {p}{d} "
    "WHERE tag <> 't2' AND name LIKE 'n%') d ON o.did = d.id ORDER BY 1, 2, 3",
]


def _tables(conn, p: str) -> None:
    """Orders, and the same relation twice: `plain` without an index, `idx` with indexes on id
    and tag (and a view of it indexed on name)."""
    conn.execute(f"CREATE TABLE {p}o (id bigint, did bigint, tag text, amount int)")
    for d in ("plain", "idx"):
        conn.execute(f"CREATE TABLE {p}{d} (id bigint, name text, tag text)")
        conn.execute(f"CREATE MATERIALIZED VIEW {p}{d}m AS SELECT name, count(*) AS n FROM {p}{d} GROUP BY name")
    conn.execute(f"CREATE INDEX {p}idx_id ON {p}idx (id)")
    conn.execute(f"CREATE INDEX {p}idx_tag ON {p}idx (tag)")
    conn.execute(f"CREATE INDEX {p}idxm_name ON {p}idxm (name)")


def _changes(conn, p: str, rng: random.Random, ids: list[int], round_: int, orders: int, rows: int) -> None:
    """One round of random inserts, updates and deletes, the same on both copies."""
    for _ in range(orders):
        conn.execute(f"INSERT INTO {p}o VALUES (%s, %s, %s, %s)",
                     (rng.randrange(1000), rng.choice(ids), f"t{rng.randrange(5)}", rng.randrange(50)))
    for _ in range(rows):
        row = (rng.choice(ids), f"n{rng.randrange(4)}", f"t{rng.randrange(5)}")
        for d in ("plain", "idx"):
            conn.execute(f"INSERT INTO {p}{d} VALUES (%s, %s, %s)", row)
    victim = rng.choice(ids)
    for d in ("plain", "idx"):
        conn.execute(f"DELETE FROM {p}{d} WHERE id = %s", (victim,))
        conn.execute(f"UPDATE {p}{d} SET name = 'n9' WHERE id = %s", (victim + 1,))
    conn.execute(f"DELETE FROM {p}o WHERE amount < %s", (round_,))


def test_joins_over_indexes_equal_joins_over_copies(slipstream, unique_prefix):
    p = unique_prefix
    rng = random.Random(5)
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        _tables(conn, p)
        ids = list(range(30))
        for round_ in range(6):
            _changes(conn, p, rng, ids, round_, orders=12, rows=6)
            for q in QUERIES:
                want = conn.execute(q.format(p=p, d="plain")).fetchall()
                got = conn.execute(q.format(p=p, d="idx")).fetchall()
                assert got == want, (round_, q)
        # In a transaction (reads at one timestamp, the index among them).
        conn.autocommit = False
        with conn.transaction():
            for q in QUERIES[:2]:
                assert conn.execute(q.format(p=p, d="idx")).fetchall() == \
                    conn.execute(q.format(p=p, d="plain")).fetchall()


def test_materialized_views_over_indexes_equal_views_over_copies(slipstream, unique_prefix):
    """The same joins as materialized views: a view over the indexed table probes its indexes
    in place; dropping an index re-plans the view without it, and a view made after the index
    is back shares it again. Every view equals its twin over the unindexed copy after every
    round of changes."""
    p = unique_prefix
    rng = random.Random(6)
    views = [q.rsplit(" ORDER BY", 1)[0].replace("o.id, d.id", "o.id AS oid, d.id AS did") for q in QUERIES]
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        _tables(conn, p)
        made = []

        def make_views(tag: str) -> None:
            for i, q in enumerate(views):
                for d in ("plain", "idx"):
                    conn.execute(f"CREATE MATERIALIZED VIEW {p}v{tag}{i}{d} AS {q.format(p=p, d=d)}")
                made.append(f"{tag}{i}")

        make_views("a")

        def explain(view: str) -> str:
            return "\n".join(r[0] for r in conn.execute(f"EXPLAIN MATERIALIZED VIEW {p}{view}").fetchall())

        assert "arrangement, shared" in explain("va0idx") and "shared" not in explain("va0plain")
        assert "arrangement, shared" in explain("va4idx") and "arrangement, shared" in explain("va6idx")
        ids = list(range(20))
        for round_ in range(8):
            _changes(conn, p, rng, ids, round_, orders=10, rows=5)
            if round_ == 3:
                conn.execute(f"DROP INDEX {p}idx_id")       # the views re-planned without it
                assert "arrangement, shared" not in explain("va0idx")
            if round_ == 5:
                conn.execute(f"CREATE INDEX {p}idx_id2 ON {p}idx (id)")
                make_views("b")                              # made after it: they share it
                assert "arrangement, shared" in explain("vb0idx")
                # (a view made before an index never reads it: planned alike after a restart)
                assert "arrangement, shared" not in explain("va0idx")
            for v in made:
                want = sorted(conn.execute(f"SELECT * FROM {p}v{v}plain").fetchall())
                got = sorted(conn.execute(f"SELECT * FROM {p}v{v}idx").fetchall())
                assert got == want, (round_, v)


def test_join_chains_reordered_to_read_indexes_track_postgres(slipstream, pg_oracle, unique_prefix):
    """TPC-H Q3's shape (customers, their orders, the orders' items) with indexes on the
    customers' and the orders' keys: as written only the customers' index could be read; the
    chain is re-ordered (items first) so both are, and the views equal PostgreSQL's answers
    under random inserts, updates and deletes of every relation."""
    import psycopg

    p = unique_prefix
    rng = random.Random(8)
    ddl = [f"CREATE TABLE {p}cust (id int, region text)",
           f"CREATE TABLE {p}ord (id int, cust_id int, day int)",
           f"CREATE TABLE {p}item (ord_id int, qty int)"]
    views = {
        "q3": f"SELECT c.region, o.day, sum(i.qty) AS qty, count(*) AS n FROM {p}cust c, {p}ord o, {p}item i "
              f"WHERE c.id = o.cust_id AND i.ord_id = o.id AND o.day > 2 AND c.region <> 'r3' GROUP BY c.region, o.day",
        "rows": f"SELECT c.id AS cid, o.id AS oid, i.qty FROM {p}cust c JOIN {p}ord o ON c.id = o.cust_id "
                f"JOIN {p}item i ON i.ord_id = o.id WHERE i.qty < o.day * 3",
    }
    with psycopg_connect(slipstream) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        ss.autocommit = True
        for sql in ddl:
            ss.execute(sql)
            pg.execute(sql)
        ss.execute(f"CREATE INDEX {p}cust_id ON {p}cust (id)")
        ss.execute(f"CREATE INDEX {p}ord_id ON {p}ord (id)")
        for name, sql in views.items():
            ss.execute(f"CREATE MATERIALIZED VIEW {p}{name} AS {sql}")
            pg.execute(f"CREATE VIEW {p}{name} AS {sql}")
        plan = "\n".join(r[0] for r in ss.execute(f"EXPLAIN MATERIALIZED VIEW {p}q3").fetchall())
        assert plan.count("arrangement, shared") == 2, plan

        def both(sql: str, args=()) -> None:
            ss.execute(sql, args)
            pg.execute(sql, args)

        for round_ in range(8):
            for _ in range(6):
                both(f"INSERT INTO {p}cust VALUES (%s, %s)", (rng.randrange(12), f"r{rng.randrange(4)}"))
                both(f"INSERT INTO {p}ord VALUES (%s, %s, %s)", (rng.randrange(30), rng.randrange(12), rng.randrange(6)))
                both(f"INSERT INTO {p}item VALUES (%s, %s)", (rng.randrange(30), rng.randrange(10)))
            both(f"DELETE FROM {p}cust WHERE id = %s", (rng.randrange(12),))
            both(f"UPDATE {p}ord SET day = day + 1 WHERE cust_id = %s", (rng.randrange(12),))
            both(f"DELETE FROM {p}item WHERE qty = %s", (rng.randrange(10),))
            for name in views:
                got = sorted(ss.execute(f"SELECT * FROM {p}{name}").fetchall())
                want = sorted(pg.execute(f"SELECT * FROM {p}{name}").fetchall())
                assert got == want, (round_, name)


def test_an_index_of_a_view_reads_indexes_in_place(slipstream, unique_prefix):
    """An index of a (not materialized) view computes the view; its joins read the indexes
    created before it in place, as a materialized view's do. It equals the same view over
    the unindexed copy under random changes, through a DROP INDEX of what it reads (it is
    re-planned without it) and a new index."""
    p = unique_prefix
    rng = random.Random(9)
    q = "SELECT o.id AS oid, d.name, d.tag FROM {p}o o JOIN {p}{d} d ON o.did = d.id WHERE d.name <> 'n2'"
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        _tables(conn, p)
        for d in ("plain", "idx"):
            conn.execute(f"CREATE VIEW {p}jv{d} AS {q.format(p=p, d=d)}")
            conn.execute(f"CREATE INDEX {p}jv{d}_oid ON {p}jv{d} (oid)")
        ids = list(range(20))
        for round_ in range(6):
            _changes(conn, p, rng, ids, round_, orders=10, rows=5)
            if round_ == 2:
                conn.execute(f"DROP INDEX {p}idx_id")   # the view's index is re-planned without it
            if round_ == 4:
                conn.execute(f"CREATE INDEX {p}idx_id3 ON {p}idx (id)")
            for probe in ("", " WHERE oid = 3"):
                want = sorted(conn.execute(f"SELECT * FROM {p}jvplain{probe}").fetchall())
                got = sorted(conn.execute(f"SELECT * FROM {p}jvidx{probe}").fetchall())
                assert got == want, (round_, probe)
