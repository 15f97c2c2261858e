"""Join order of a FROM list: an item with no equality to the items before it waits until one
that has is joined, so `FROM part, supplier, lineitem WHERE p = l.p AND s = l.s` (TPC-H Q9's
shape, which at SF 1 made a 106M-row cross product of part and supplier) joins on keys all the
way; a real cross product stays where nothing connects. Answers equal PostgreSQL's, columns in
the written order (`SELECT *`)."""

from __future__ import annotations

import pytest

from planner import parse, plan_statement
from tests.planner.engine_oracle import joins_in, oracle_fixtures, pg_answer

DDL = ["CREATE TABLE part (pk int, name text)",
       "CREATE TABLE supp (sk int, nk int)",
       "CREATE TABLE li (pk int, sk int, q int)",
       "CREATE TABLE nat (nk int, n text)",
       "CREATE TABLE lone (z int)"]
DATA = ["INSERT INTO part VALUES (1, 'green a'), (2, 'red'), (3, 'green b'), (4, NULL)",
        "INSERT INTO supp VALUES (10, 1), (20, 2), (30, NULL)",
        "INSERT INTO li VALUES (1, 10, 5), (1, 20, 6), (3, 20, 7), (2, 10, 8), (NULL, 30, 9), (4, NULL, 1)",
        "INSERT INTO nat VALUES (1, 'x'), (2, 'y'), (3, 'z')",
        "INSERT INTO lone VALUES (7), (8)"]

REORDERED = [
    "SELECT * FROM part, supp, li WHERE part.pk = li.pk AND supp.sk = li.sk",
    "SELECT n, name, sum(q) FROM part, supp, li, nat WHERE part.pk = li.pk AND supp.sk = li.sk "
    "AND supp.nk = nat.nk AND name LIKE 'green%' GROUP BY 1, 2",
    "SELECT * FROM nat, part, li, supp WHERE supp.nk = nat.nk AND li.pk = part.pk AND li.sk = supp.sk",
    "SELECT part.*, nat.* FROM part, nat, supp, li WHERE li.pk = part.pk AND li.sk = supp.sk AND supp.nk = nat.nk "
    "AND li.q > nat.nk",
]
KEPT = [
    "SELECT * FROM part, li, supp WHERE part.pk = li.pk AND supp.sk = li.sk",
    "SELECT * FROM part, lone, li WHERE part.pk = li.pk",           # lone connects to nothing
    "SELECT count(*) FROM part, supp",
]

pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", REORDERED + KEPT)
def test_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)


@pytest.mark.parametrize("sql", REORDERED)
def test_every_join_has_a_key(sql, db):
    plan = plan_statement(db.catalog, parse(sql)[0]).plan
    joins = joins_in(plan)
    assert joins and all(j.left_key for j in joins), plan


def test_an_unconnected_item_is_still_a_cross_product(db):
    plan = plan_statement(db.catalog, parse(KEPT[1])[0]).plan
    assert sum(1 for j in joins_in(plan) if not j.left_key) == 1
