"""FROM lists mixing comma joins, CROSS JOIN and inner/outer joins, with and without parentheses,
planned and run by the engine and compared with PostgreSQL.

In SQL the comma binds loosest and every JOIN is left-associative at one level, so
`FROM ta, tb FULL JOIN tc ON b = c` is `ta × (tb FULL JOIN tc)`: the padded row of tc keeps
ta's columns. WHERE conditions must not be pushed below a join that NULL-pads their side."""

from __future__ import annotations

import pytest

from tests.planner.engine_oracle import oracle_fixtures, pg_answer

DDL = ["CREATE TABLE ta (a int)", "CREATE TABLE tb (b int, x text)", "CREATE TABLE tc (c int, y text)",
       "CREATE TABLE td (d int)"]
DATA = ["INSERT INTO ta VALUES (1), (2), (NULL)",
        "INSERT INTO tb VALUES (2, 'b2'), (3, 'b3'), (NULL, 'bn'), (2, 'b2bis')",
        "INSERT INTO tc VALUES (3, 'c3'), (4, 'c4'), (NULL, 'cn')",
        "INSERT INTO td VALUES (1), (4)"]

QUERIES = [
    # The reported cases.
    "SELECT * FROM ta, tb FULL JOIN tc ON b = c",
    "SELECT * FROM ta, tb RIGHT JOIN tc ON b = c",
    "SELECT * FROM ta, tb LEFT JOIN tc ON b = c",
    "SELECT * FROM ta, tb JOIN tc ON b = c",
    # Commas after the outer join, and on both sides.
    "SELECT * FROM tb FULL JOIN tc ON b = c, ta",
    "SELECT * FROM ta, tb FULL JOIN tc ON b = c, td",
    "SELECT * FROM ta, tb RIGHT JOIN tc ON b = c, td WHERE a = d",
    "SELECT * FROM ta, tb LEFT JOIN tc ON b = c WHERE a = 1",
    # CROSS JOIN binds like JOIN, not like the comma.
    "SELECT * FROM ta CROSS JOIN tb FULL JOIN tc ON b = c",
    "SELECT * FROM ta CROSS JOIN tb RIGHT JOIN tc ON b = c AND a = 2",
    "SELECT * FROM ta, tb CROSS JOIN tc",
    "SELECT * FROM ta CROSS JOIN tb LEFT JOIN tc ON a = c",
    # Chains of outer joins.
    "SELECT * FROM ta LEFT JOIN tb ON a = b FULL JOIN tc ON b = c",
    "SELECT * FROM ta FULL JOIN tb ON a = b LEFT JOIN tc ON b = c",
    "SELECT * FROM ta RIGHT JOIN tb ON a = b RIGHT JOIN tc ON b = c",
    "SELECT * FROM ta JOIN tb ON a = b RIGHT JOIN tc ON b = c",
    "SELECT * FROM ta LEFT JOIN tb ON a = b JOIN tc ON b + 1 = c",
    # Parentheses change the grouping.
    "SELECT * FROM ta LEFT JOIN (tb FULL JOIN tc ON b = c) ON a = b",
    "SELECT * FROM ta FULL JOIN (tb JOIN tc ON b + 1 = c) ON a = b",
    "SELECT * FROM ta, (tb FULL JOIN tc ON b = c)",
    "SELECT * FROM (ta CROSS JOIN tb) FULL JOIN tc ON b = c",
    "SELECT * FROM (ta LEFT JOIN tb ON a = b) RIGHT JOIN (tc LEFT JOIN td ON c = d) ON b = c",
    "SELECT j.a, j.b FROM (ta JOIN tb ON a = b) AS j",
    "SELECT tb.x, tc.y FROM ta, ((tb LEFT JOIN tc ON b = c))",
    # WHERE conditions on the NULL-padded side of RIGHT / FULL joins are applied after the join.
    "SELECT * FROM ta RIGHT JOIN tb ON a = b WHERE a IS NULL",
    "SELECT * FROM ta RIGHT JOIN tb ON a = b WHERE a > 0",
    "SELECT * FROM ta FULL JOIN tb ON a = b WHERE a > 0 OR b IS NULL",
    "SELECT * FROM ta LEFT JOIN tb ON a = b FULL JOIN tc ON b = c WHERE a = 2",
    "SELECT * FROM ta LEFT JOIN tb ON a = b WHERE a = 2 AND b IS NULL",
    "SELECT * FROM ta LEFT JOIN tb ON a = b WHERE coalesce(b, 0) = 0",
    "SELECT * FROM ta, tb FULL JOIN tc ON b = c WHERE a = 1 AND c IS NULL",
    # USING inside a later chain binds to that chain only.
    "SELECT * FROM tb, ta JOIN td ON a = d",
    "SELECT * FROM ta AS t1, ta AS t2 JOIN td AS t3 ON t2.a = t3.d",
    "SELECT count(*), count(c) FROM ta, tb FULL JOIN tc ON b = c",
]


pg, db = oracle_fixtures(DDL, DATA)


@pytest.mark.parametrize("sql", QUERIES)
def test_join_binding_matches_postgres(sql, db, pg):
    assert db.answer(sql) == pg_answer(pg, sql)
