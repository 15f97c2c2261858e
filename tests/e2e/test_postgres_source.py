"""PostgreSQL CDC sources end to end, over real sockets: a real upstream PostgreSQL 15 with
wal_level=logical (tests/support/pg_upstream.py, SCRAM-SHA-256 logins), a real Slipstream server.

A random write workload runs upstream (inserts, updates, deletes, NULLs, multi-table
transactions); after each round the test waits until the source's progress LSN reaches the
upstream's current LSN and compares a materialized view over the subsources (a join and
aggregates) and the subsources themselves with the same queries run upstream. Then Slipstream is
killed with SIGKILL, more is written upstream, and after the restart everything must match again
(nothing lost, nothing twice); then the upstream is restarted under the running source. Also:
the refusals of CREATE CONNECTION / CREATE SOURCE, a schema change reported as the subsource's
error, and DROP SOURCE dropping the replication slot.
"""

from __future__ import annotations

import random
import signal
import time
from decimal import Decimal

import psycopg
import pytest

from tests.support.pg_upstream import PgUpstream
from tests.support.slipstream_server import SlipstreamServer

pytestmark = pytest.mark.e2e

PASSWORD = "s3cret pw"

UPSTREAM_DDL = """
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id int PRIMARY KEY, name text NOT NULL, region text, ip inet);
CREATE TABLE shop.orders (id int PRIMARY KEY, customer_id int NOT NULL, amount numeric(12,2),
                          note text, placed timestamptz NOT NULL DEFAULT now(), tags text[]);
CREATE TABLE shop.extra (k int, v int);
CREATE TABLE shop.plain (k int PRIMARY KEY);
ALTER TABLE shop.customers REPLICA IDENTITY FULL;
ALTER TABLE shop.orders REPLICA IDENTITY FULL;
ALTER TABLE shop.extra REPLICA IDENTITY FULL;
CREATE PUBLICATION pub FOR TABLE shop.customers, shop.orders, shop.extra;
CREATE PUBLICATION pub_plain FOR TABLE shop.plain;
"""

VIEW_QUERY = ("SELECT c.region, count(*) AS n, sum(o.amount) AS total, count(o.note) AS notes, "
              "max(o.amount) AS top FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.region")


@pytest.fixture(scope="module")
def upstream():
    pg = PgUpstream.start()
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute(UPSTREAM_DDL)
        pg.password_auth("repl", PASSWORD)
        yield pg
    finally:
        pg.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pgsource")
    srv = SlipstreamServer.start(data_dir=tmp / "data", log_file=tmp / "server.log", workers=1)
    yield srv
    srv.stop()


class Workload:
    """Random upstream transactions over customers and orders (seeded)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.next_customer = 1
        self.next_order = 1
        self.customers: list[int] = []
        self.orders: list[int] = []

    def _amount(self):
        return None if self.rng.random() < 0.1 else Decimal(self.rng.randint(1, 100_000)) / 100

    def _note(self):
        return None if self.rng.random() < 0.4 else self.rng.choice(["gift", "rush", "", "it's \"fine\"", "ü,\n x"])

    def new_customer(self, cur) -> None:
        cid = self.next_customer
        self.next_customer += 1
        region = self.rng.choice(["north", "south", "east", None])
        cur.execute("INSERT INTO shop.customers VALUES (%s, %s, %s, %s)",
                    (cid, f"c{cid}", region, f"10.0.{cid % 250}.{cid % 7}"))
        self.customers.append(cid)

    def new_order(self, cur) -> None:
        oid = self.next_order
        self.next_order += 1
        tags = None if self.rng.random() < 0.5 else ["a", self.rng.choice(["b", "c d"])]
        cur.execute("INSERT INTO shop.orders (id, customer_id, amount, note, tags) VALUES (%s, %s, %s, %s, %s)",
                    (oid, self.rng.choice(self.customers), self._amount(), self._note(), tags))
        self.orders.append(oid)

    def round(self, conn, transactions: int) -> None:
        for _ in range(transactions):
            with conn.transaction():
                cur = conn.cursor()
                if not self.customers:
                    self.new_customer(cur)
                for _ in range(self.rng.randint(1, 4)):
                    r = self.rng.random()
                    if r < 0.1:
                        self.new_customer(cur)
                    elif r < 0.5 or not self.orders:
                        self.new_order(cur)
                    elif r < 0.75:
                        cur.execute("UPDATE shop.orders SET amount = %s, note = %s WHERE id = %s",
                                    (self._amount(), self._note(), self.rng.choice(self.orders)))
                    elif r < 0.85:
                        cur.execute("UPDATE shop.customers SET region = %s WHERE id = %s",
                                    (self.rng.choice(["north", "south", "west", None]), self.rng.choice(self.customers)))
                    else:
                        oid = self.rng.choice(self.orders)
                        cur.execute("DELETE FROM shop.orders WHERE id = %s", (oid,))
                        self.orders.remove(oid)


def upstream_lsn(pg: PgUpstream) -> int:
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        return int(conn.execute("SELECT pg_current_wal_lsn() - '0/0'").fetchone()[0])


def wait_caught_up(server: SlipstreamServer, target: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                row = conn.execute("SELECT max(lsn) FROM pg_progress").fetchone()
                last = row[0]
                if last is not None and last >= target:
                    return
                status = conn.execute("SELECT status, error FROM mz_internal.mz_source_statuses "
                                      "WHERE name = 'pg'").fetchall()
        except psycopg.OperationalError:
            status = "(not answering)"
        time.sleep(0.2)
    raise AssertionError(f"the source's progress {last} did not reach {target}; status {status}\n"
                         + server.log_tail(40))


def compare(pg: PgUpstream, server: SlipstreamServer) -> None:
    with psycopg.connect(pg.dsn, autocommit=True) as up, psycopg.connect(server.dsn, autocommit=True) as ss:
        up.execute("SET search_path = shop")
        expected = sorted(up.execute(VIEW_QUERY).fetchall(), key=repr)
        assert expected, "the workload wrote nothing"
        assert sorted(ss.execute("SELECT * FROM mv").fetchall(), key=repr) == expected
        for table, cols in (("orders", "id, customer_id, amount, note, placed, tags"),
                            ("customers", "id, name, region, ip")):
            want = sorted(up.execute(f"SELECT {cols} FROM {table}").fetchall(), key=repr)
            got = sorted(ss.execute(f"SELECT {cols} FROM {table}").fetchall(), key=repr)
            if table == "customers":  # inet arrives as text (TEXT COLUMNS)
                want = [(*r[:3], str(r[3])) for r in want]
            assert got == want, table


def check_round(pg, server, workload, conn, transactions):
    workload.round(conn, transactions)
    wait_caught_up(server, upstream_lsn(pg))
    compare(pg, server)


def test_postgres_source(upstream: PgUpstream, server: SlipstreamServer):
    pg = upstream
    workload = Workload(20261124)
    with psycopg.connect(pg.dsn, autocommit=True) as up:
        workload.round(up, 30)  # before the source exists: its snapshot
    with psycopg.connect(server.dsn, autocommit=True) as ss:
        ss.execute("CREATE SECRET pgpass AS 'wrong'")
        options = f"HOST '{pg.host}', PORT {pg.port}, USER 'repl', PASSWORD SECRET pgpass, DATABASE 'postgres'"
        with pytest.raises(psycopg.errors.SqlclientUnableToEstablishSqlconnection) as e:
            ss.execute(f"CREATE CONNECTION pgc TO POSTGRES ({options})")
        assert "password authentication failed" in str(e.value)
        ss.execute(f"ALTER SECRET pgpass AS '{PASSWORD}'")
        ss.execute(f"CREATE CONNECTION pgc TO POSTGRES ({options})")
        assert ss.execute("SHOW SECRETS").fetchall() == [("pgpass", "")]
        assert ss.execute("SHOW CONNECTIONS").fetchall() == [("pgc", "postgres", "")]
        assert ss.execute("SELECT name FROM mz_secrets").fetchall() == [("pgpass",)]
        all_text = str(ss.execute("SELECT * FROM mz_secrets").fetchall()) + \
            str(ss.execute("SELECT * FROM mz_connections").fetchall())
        assert PASSWORD not in all_text and "wrong" not in all_text
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            ss.execute("DROP SECRET pgpass")
        # Refusals: not REPLICA IDENTITY FULL; an unsupported type without TEXT COLUMNS.
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="REPLICA IDENTITY FULL"):
            ss.execute("CREATE SOURCE bad FROM POSTGRES CONNECTION pgc (PUBLICATION 'pub_plain') FOR ALL TABLES")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match='column "shop.customers.ip" has unsupported type inet'):
            ss.execute("CREATE SOURCE bad FROM POSTGRES CONNECTION pgc (PUBLICATION 'pub') FOR ALL TABLES")
        with pytest.raises(psycopg.errors.UndefinedObject, match='publication "nope" does not exist'):
            ss.execute("CREATE SOURCE bad FROM POSTGRES CONNECTION pgc (PUBLICATION 'nope') FOR ALL TABLES")
        ss.execute("CREATE SOURCE pg FROM POSTGRES CONNECTION pgc (PUBLICATION 'pub', TEXT COLUMNS (customers.ip)) "
                   "FOR TABLES (shop.customers, shop.orders, shop.extra)")
        rows = dict(ss.execute("SELECT name, type FROM mz_sources").fetchall())
        assert rows == {"pg": "postgres", "customers": "subsource", "orders": "subsource", "extra": "subsource",
                        "pg_progress": "progress"}
        ss.execute(f"CREATE MATERIALIZED VIEW mv AS {VIEW_QUERY}")
    wait_caught_up(server, upstream_lsn(pg))
    compare(pg, server)  # the snapshot

    with psycopg.connect(pg.dsn, autocommit=True) as up:
        for _ in range(3):
            check_round(pg, server, workload, up, 40)

        # kill -9 Slipstream in the middle of ingesting, write more, restart.
        workload.round(up, 20)
        server.kill(signal.SIGKILL)
        workload.round(up, 40)
        server.restart()
        wait_caught_up(server, upstream_lsn(pg))
        compare(pg, server)
        check_round(pg, server, workload, up, 20)

    # Restart the upstream under the running source: it reconnects and resumes.
    pg.restart()
    with psycopg.connect(pg.dsn, autocommit=True) as up:
        check_round(pg, server, workload, up, 30)
        with psycopg.connect(server.dsn, autocommit=True) as ss:
            stats = ss.execute("SELECT s.updates_committed, s.offset_committed, s.snapshot_committed "
                               "FROM mz_internal.mz_source_statistics s JOIN mz_sources m ON m.id = s.id "
                               "WHERE m.name = 'pg'").fetchone()
            assert stats[0] > 0 and stats[1] >= upstream_lsn(pg) - 10_000_000 and stats[2] is True
            assert ss.execute("SELECT status FROM mz_internal.mz_source_statuses WHERE name = 'pg'").fetchone() \
                == ("running",)

        # An incompatible schema change: the subsource reports it; the others go on.
        up.execute("INSERT INTO shop.extra VALUES (1, 1)")
        up.execute("ALTER TABLE shop.extra ALTER COLUMN v TYPE bigint")
        up.execute("INSERT INTO shop.extra VALUES (2, 2)")
        check_round(pg, server, workload, up, 10)
        with psycopg.connect(server.dsn, autocommit=True) as ss:
            with pytest.raises(psycopg.errors.InternalError_, match="changed its type"):
                ss.execute("SELECT * FROM extra").fetchall()
            status, error = ss.execute("SELECT status, error FROM mz_internal.mz_source_statuses "
                                       "WHERE name = 'extra'").fetchone()
            assert status == "stalled" and "changed its type" in error

            slots = up.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0]
            assert slots == 1
            ss.execute("DROP SOURCE pg CASCADE")
            deadline = time.monotonic() + 20
            while up.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] and \
                    time.monotonic() < deadline:
                time.sleep(0.2)
            assert up.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0
            ss.execute("DROP CONNECTION pgc")
            ss.execute("DROP SECRET pgpass")
            assert ss.execute("SHOW CONNECTIONS").fetchall() == []


def test_connection_and_source_statement_errors(server: SlipstreamServer):
    from tests.support.ports import free_port
    closed = free_port()
    cases = [
        ("CREATE SECRET s AS decode('aa', 'hex')", "0A000"),
        ("ALTER SECRET missing AS 'x'", "42704"),
        ("DROP SECRET missing", "42704"),
        ("DROP CONNECTION missing", "42704"),
        (f"CREATE CONNECTION k TO MYSQL (HOST 'localhost')", "0A000"),
        (f"CREATE CONNECTION c TO POSTGRES (HOST '127.0.0.1', PORT {closed}, USER 'u', SSL MODE 'require')", "0A000"),
        (f"CREATE CONNECTION c TO POSTGRES (HOST '127.0.0.1', PORT {closed}, USER 'u', PASSWORD 'x')", "22023"),
        (f"CREATE CONNECTION c TO POSTGRES (HOST '127.0.0.1', PORT {closed}, USER 'u', PASSWORD SECRET nope)", "42704"),
        (f"CREATE CONNECTION c TO POSTGRES (HOST '127.0.0.1', PORT {closed}, USER 'u')", "08001"),
        (f"CREATE CONNECTION c TO POSTGRES (PORT {closed}, USER 'u')", "22023"),
        ("CREATE SOURCE s FROM POSTGRES CONNECTION nope (PUBLICATION 'p') FOR ALL TABLES", "42704"),
        ("CREATE SOURCE s FROM POSTGRES CONNECTION c FOR ALL TABLES", "22023"),
        ("CREATE SOURCE s FROM POSTGRES CONNECTION c (PUBLICATION 'p')", "42601"),
        ("CREATE SOURCE s FROM POSTGRES CONNECTION c (PUBLICATION 'p', TEXT COLUMNS (c)) FOR ALL TABLES", "22023"),
        ("CREATE SOURCE s FROM POSTGRES CONNECTION c (PUBLICATION 'p', EXCLUDE COLUMNS (t.c)) FOR ALL TABLES", "0A000"),
    ]
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql, code in cases:
            with pytest.raises(psycopg.Error) as info:
                conn.execute(sql)
            assert info.value.sqlstate == code, (sql, info.value)
        # Without validation a connection is created as given (its sources then report the error).
        conn.execute(f"CREATE CONNECTION later TO POSTGRES (HOST '127.0.0.1', PORT {closed}, USER 'u') "
                     "WITH (VALIDATE = false)")
        with pytest.raises(psycopg.errors.SqlclientUnableToEstablishSqlconnection, match="cannot connect"):
            conn.execute("CREATE SOURCE unreachable FROM POSTGRES CONNECTION later (PUBLICATION 'p') FOR ALL TABLES")
        conn.execute("DROP CONNECTION later")
