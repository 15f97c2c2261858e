"""Load-generator sources over real sockets: COUNTER ticking, AUCTION feeding a join+aggregate
materialized view read by SUBSCRIBE (equal to a fresh SELECT at the same timestamp and to
PostgreSQL's answer over the same subsource rows), kill -9 and restart without duplicated or
skipped rows (in tests/e2e/test_restart.py, whose server is restarted anyway), DROP SOURCE, and
the SQLSTATEs of bad statements. Every test drops its sources:
the shared server runs the whole suite and should not keep ticking for later tests."""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.sources import assert_counter_consistent, wait_for
from tests.support.subscribe import Reconstruction, psycopg_fetch

pytestmark = pytest.mark.e2e


def test_counter_ticks_show_and_drop(slipstream, unique_prefix):
    src = f"{unique_prefix}counter"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SOURCE {src} FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms')")
        try:
            wait_for(conn, f"SELECT count(*) FROM {src}", lambda n: n >= 5)
            n = assert_counter_consistent(conn, src)
            assert n >= 5
            shown = {r[0]: r[1:] for r in conn.execute("SHOW SOURCES").fetchall()}
            assert shown[src] == ("load-generator", "quickstart", "")
            assert shown[f"{src}_progress"] == ("progress", None, "")
            assert conn.execute(f"SELECT type FROM mz_sources WHERE name = '{src}'").fetchall() == [("load-generator",)]
            assert conn.execute(f"SELECT relkind FROM pg_class WHERE relname = '{src}'").fetchall() == [("r",)]
            assert conn.execute(f"SHOW CREATE SOURCE {src}").fetchone()[1].startswith(f"CREATE SOURCE {src} FROM")
            stats = conn.execute(
                "SELECT s.offset_committed, s.updates_committed, s.messages_received, s.write_frontier, t.status "
                "FROM mz_internal.mz_source_statistics s JOIN mz_internal.mz_source_statuses t ON s.id = t.id "
                f"JOIN mz_sources m ON m.id = s.id WHERE m.name = '{src}'").fetchone()
            assert stats[0] >= 5 and stats[1] >= 5 and stats[2] >= 5 and stats[3] > 0 and stats[4] == "running"
            # A view over a source is maintained like one over a table.
            conn.execute(f"CREATE MATERIALIZED VIEW {src}_mv AS SELECT count(*) AS n, sum(counter) AS s FROM {src}")
            n, s = conn.execute(f"SELECT n, s FROM {src}_mv").fetchone()
            assert s == n * (n + 1) // 2
            with pytest.raises(psycopg.errors.DependentObjectsStillExist):
                conn.execute(f"DROP SOURCE {src}")
            with pytest.raises(psycopg.errors.WrongObjectType):
                conn.execute(f"INSERT INTO {src} VALUES (1)")
        finally:
            conn.execute(f"DROP SOURCE IF EXISTS {src} CASCADE")
        shown = {r[0] for r in conn.execute("SHOW SOURCES").fetchall()}
        assert src not in shown and f"{src}_progress" not in shown
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute(f"SELECT * FROM {src}")
        conn.execute(f"DROP SOURCE IF EXISTS {src}")  # a notice, not an error


def test_counter_up_to_and_as_of(slipstream, unique_prefix):
    src = f"{unique_prefix}bounded"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SOURCE {src} FROM LOAD GENERATOR COUNTER "
                     "(TICK INTERVAL '50ms', AS OF 10, UP TO 15, MAX CARDINALITY 8)")
        try:
            # AS OF 10: ticks 0..10 at once (the initial snapshot), then one per tick up to 14.
            wait_for(conn, f'SELECT "offset" FROM {src}_progress', lambda v: v == 15)
            time.sleep(0.3)
            assert conn.execute(f"SELECT counter FROM {src} ORDER BY 1").fetchall() == [(v,) for v in range(8, 16)]
        finally:
            conn.execute(f"DROP SOURCE {src}")


SQL_VIEW = ("SELECT a.item, count(*) AS bids, max(b.amount) AS top, sum(b.amount) AS total "
            "FROM {s}.auctions a JOIN {s}.bids b ON a.id = b.auction_id GROUP BY a.item")


def test_auction_view_subscribe_matches_select_and_postgres(slipstream, pg_oracle, unique_prefix):
    schema = f"{unique_prefix}auction"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE SOURCE {schema}.house FROM LOAD GENERATOR AUCTION (TICK INTERVAL '100ms') "
                     "FOR ALL TABLES")
        try:
            names = {r[0]: r[1] for r in conn.execute(f"SHOW SOURCES FROM {schema}").fetchall()}
            assert names == {"accounts": "subsource", "auctions": "subsource", "bids": "subsource",
                             "organizations": "subsource", "users": "subsource",
                             "house": "load-generator", "house_progress": "progress"}
            cols = conn.execute("SELECT column_name, data_type FROM information_schema.columns "
                                f"WHERE table_schema = '{schema}' AND table_name = 'bids' ORDER BY ordinal_position").fetchall()
            assert cols == [("id", "bigint"), ("buyer", "bigint"), ("auction_id", "bigint"), ("amount", "integer"),
                            ("bid_time", "timestamp with time zone")]
            conn.execute(f"CREATE MATERIALIZED VIEW {schema}.winners AS {SQL_VIEW.format(s=schema)}")
            wait_for(conn, f'SELECT "offset" FROM {schema}.house_progress', lambda v: v >= 20)
            with psycopg_connect(slipstream, autocommit=False) as sub:
                sub.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {schema}.winners WITH (PROGRESS)")
                rows: list = []
                deadline = time.monotonic() + 30
                while sum(1 for r in rows if r[1]) < 5:
                    assert time.monotonic() < deadline, rows
                    rows.extend(psycopg_fetch(sub, "c"))
            # The state up to the last progress row P: every update at a time < P.
            last = max(i for i, r in enumerate(rows) if r[1])
            t = int(rows[last][0]) - 1
            rec = Reconstruction()
            rec.apply(rows[:last + 1], progress=True)
            selected = conn.execute(f"SELECT * FROM {schema}.winners AS OF {t}").fetchall()
            assert rec.rows() == sorted((tuple(r) for r in selected), key=repr)
            # The same query in PostgreSQL over the subsources' rows at that timestamp.
            auctions = conn.execute(f"SELECT * FROM {schema}.auctions AS OF {t}").fetchall()
            bids = conn.execute(f"SELECT * FROM {schema}.bids AS OF {t}").fetchall()
            with psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
                pg.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                pg.execute(f'CREATE SCHEMA "{schema}"')
                pg.execute(f"CREATE TABLE {schema}.auctions (id bigint, seller bigint, item text, end_time timestamptz)")
                pg.execute(f"CREATE TABLE {schema}.bids (id bigint, buyer bigint, auction_id bigint, amount int, "
                           "bid_time timestamptz)")
                with pg.cursor() as cur:
                    cur.executemany(f"INSERT INTO {schema}.auctions VALUES (%s, %s, %s, %s)", auctions)
                    cur.executemany(f"INSERT INTO {schema}.bids VALUES (%s, %s, %s, %s, %s)", bids)
                expected = sorted(pg.execute(SQL_VIEW.format(s=schema)).fetchall())
                pg.execute(f'DROP SCHEMA "{schema}" CASCADE')
            assert expected and sorted(tuple(r) for r in selected) == expected
        finally:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_source_statement_errors(slipstream, unique_prefix):
    p = unique_prefix
    cases = [
        (f"CREATE SOURCE {p}k FROM MYSQL CONNECTION k (TOPIC 't')", "0A000"),
        (f"CREATE SOURCE {p}k FROM POSTGRES CONNECTION {p}nope (PUBLICATION 'p') FOR ALL TABLES", "42704"),
        (f"CREATE SOURCE {p}k FROM WEBHOOK BODY FORMAT AVRO", "0A000"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR KEY VALUE (KEYS 16)", "0A000"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (SEED 3)", "0A000"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER FOR ALL TABLES", "42601"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR AUCTION", "42601"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR NOPE", "42601"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (TICK INTERVAL '0s')", "22023"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (TICK INTERVAL 'soon')", "22007"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (SCALE FACTOR 1)", "22023"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (UP TO -1)", "22023"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (UP TO 1.5)", "22023"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (UP TO 3, UP TO 4)", "42601"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR COUNTER (FASTER)", "42601"),
        (f"CREATE SOURCE {p}k FROM LOAD GENERATOR TPCH (SCALE FACTOR 0) FOR ALL TABLES", "22023"),
        (f"DROP SOURCE {p}missing", "42P01"),
    ]
    with psycopg_connect(slipstream) as conn:
        for sql, code in cases:
            with pytest.raises(psycopg.Error) as info:
                conn.execute(sql)
            assert info.value.sqlstate == code, (sql, info.value.sqlstate, str(info.value))
        conn.execute(f"CREATE TABLE {p}t (a int)")
        try:
            with pytest.raises(psycopg.errors.WrongObjectType):
                conn.execute(f"DROP SOURCE {p}t")
            # A name taken by a table: nothing of the source is created.
            with pytest.raises(psycopg.errors.DuplicateTable):
                conn.execute(f"CREATE SOURCE {p}c FROM LOAD GENERATOR COUNTER EXPOSE PROGRESS AS {p}t")
            assert conn.execute(f"SELECT count(*) FROM mz_sources WHERE name LIKE '{p}%'").fetchone()[0] == 0
            conn.execute(f"CREATE SCHEMA {p}s")
            conn.execute(f"CREATE SOURCE {p}s.m FROM LOAD GENERATOR MARKETING (TICK INTERVAL '1h') FOR ALL TABLES")
            with pytest.raises(psycopg.errors.WrongObjectType):
                conn.execute(f"SELECT * FROM {p}s.m")
            with pytest.raises(psycopg.errors.FeatureNotSupported):
                conn.execute(f"DROP SOURCE {p}s.leads")
            wait_for(conn, f"SELECT count(*) FROM {p}s.customers", lambda n: n == 1000)
            conn.execute(f"CREATE SOURCE IF NOT EXISTS {p}s.m FROM LOAD GENERATOR COUNTER")  # notice
            conn.execute(f"DROP SOURCE {p}s.m")  # subsources go with it
            assert conn.execute(f"SELECT count(*) FROM mz_sources WHERE name LIKE '{p}%'").fetchone()[0] == 0
        finally:
            conn.execute(f"DROP TABLE {p}t")
            conn.execute(f"DROP SCHEMA IF EXISTS {p}s CASCADE")
