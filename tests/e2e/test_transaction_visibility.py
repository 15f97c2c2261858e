"""Reads inside BEGIN ... COMMIT see the transaction's own writes (as in PostgreSQL); reads of
what the replica maintains from a table the transaction wrote (materialized views, indexed
views, SUBSCRIBE) are refused with Materialize's 25000 "transaction in write-only mode"; other
sessions see nothing until COMMIT, and then all of it, across tables, at one timestamp."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def test_reads_see_own_writes(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as a, psycopg_connect(slipstream) as b:
        a.autocommit = True
        b.autocommit = True
        a.execute(f"CREATE TABLE {p}acct (id int, balance int)")
        a.execute(f"CREATE TABLE {p}log (id int, amount int)")
        a.execute(f"CREATE INDEX {p}acct_id ON {p}acct (id)")
        a.execute(f"INSERT INTO {p}acct VALUES (1, 100), (2, 50)")
        a.execute(f"CREATE MATERIALIZED VIEW {p}total AS SELECT sum(balance) AS s FROM {p}acct")
        a.execute(f"CREATE VIEW {p}big AS SELECT id FROM {p}acct WHERE balance > 60")
        a.execute(f"CREATE TABLE {p}other (x int)")
        a.execute(f"CREATE MATERIALIZED VIEW {p}other_n AS SELECT count(*) AS n FROM {p}other")

        a.execute("BEGIN")
        a.execute(f"INSERT INTO {p}acct VALUES (3, 7)")
        a.execute(f"UPDATE {p}acct SET balance = balance - 10 WHERE id = 1")
        a.execute(f"DELETE FROM {p}acct WHERE id = 2")
        a.execute(f"INSERT INTO {p}log VALUES (1, -10)")
        # Own writes, also through an equality on the indexed key and a join of both tables.
        assert a.execute(f"SELECT * FROM {p}acct ORDER BY id").fetchall() == [(1, 90), (3, 7)]
        assert a.execute(f"SELECT balance FROM {p}acct WHERE id = 1").fetchall() == [(90,)]
        assert a.execute(f"SELECT a.id, a.balance, l.amount FROM {p}acct a JOIN {p}log l USING (id)"
                         ).fetchall() == [(1, 90, -10)]
        # An UPDATE sees the row the transaction inserted.
        assert a.execute(f"UPDATE {p}acct SET balance = balance + 1 WHERE id = 3").statusmessage == "UPDATE 1"
        assert a.execute(f"SELECT count(*), sum(balance) FROM {p}acct").fetchall() == [(2, 98)]
        # INSERT ... SELECT reads the transaction's rows too.
        a.execute(f"INSERT INTO {p}log SELECT id, balance FROM {p}acct WHERE id = 3")
        assert a.execute(f"SELECT * FROM {p}log ORDER BY id").fetchall() == [(1, -10), (3, 8)]
        # A plain view over a written table is planned over the table: it sees the own writes.
        assert a.execute(f"SELECT id FROM {p}big").fetchall() == [(1,)]
        # A view over a table the transaction did not write is readable.
        assert a.execute(f"SELECT n FROM {p}other_n").fetchall() == [(0,)]
        # Others see nothing yet.
        assert b.execute(f"SELECT * FROM {p}acct ORDER BY id").fetchall() == [(1, 100), (2, 50)]
        assert b.execute(f"SELECT count(*) FROM {p}log").fetchall() == [(0,)]
        a.execute("COMMIT")
        assert b.execute(f"SELECT * FROM {p}acct ORDER BY id").fetchall() == [(1, 90), (3, 8)]
        assert b.execute(f"SELECT * FROM {p}log ORDER BY id").fetchall() == [(1, -10), (3, 8)]
        assert b.execute(f"SELECT s FROM {p}total").fetchall() == [(98,)]

        # ROLLBACK: the own writes were only ever visible to the transaction.
        a.execute("BEGIN")
        a.execute(f"DELETE FROM {p}acct")
        assert a.execute(f"SELECT count(*) FROM {p}acct").fetchall() == [(0,)]
        a.execute("ROLLBACK")
        assert a.execute(f"SELECT count(*) FROM {p}acct").fetchall() == [(2,)]


@pytest.mark.parametrize("read", ["SELECT s FROM {p}total", "SELECT * FROM {p}rich",
                                  "SUBSCRIBE {p}acct", "DECLARE c CURSOR FOR SUBSCRIBE {p}total"])
def test_maintained_reads_of_written_tables_are_refused(slipstream, unique_prefix, read):
    p = unique_prefix
    with psycopg_connect(slipstream) as a:
        a.autocommit = True
        a.execute(f"CREATE TABLE {p}acct (id int, balance int)")
        a.execute(f"INSERT INTO {p}acct VALUES (1, 100)")
        a.execute(f"CREATE MATERIALIZED VIEW {p}total AS SELECT sum(balance) AS s FROM {p}acct")
        a.execute(f"CREATE VIEW {p}rich AS SELECT * FROM {p}acct WHERE balance > 10")
        a.execute(f"CREATE INDEX {p}rich_idx ON {p}rich (id)")
        a.execute("BEGIN")
        a.execute(f"INSERT INTO {p}acct VALUES (2, 5)")
        with pytest.raises(psycopg.Error) as err:
            a.execute(read.format(p=p))
        assert err.value.sqlstate == "25000"
        assert "transaction in write-only mode" in str(err.value)
        a.execute("ROLLBACK")
        # Without own writes the same reads work (the SUBSCRIBE forms need a cursor to stop).
        if not read.startswith(("SUBSCRIBE", "DECLARE")):
            assert a.execute(read.format(p=p)).fetchall() in ([(100,)], [(1, 100)])
