"""Parsing of the cluster statements and IN CLUSTER, and the planner's choice of indexes by
cluster (a plan may read only the indexes of the cluster it runs on)."""

import pytest

from catalog.durable import Catalog
from catalog.items import ItemKind
from dataflow.errors import SqlError
from dataflow.types import INT4, Column
from planner import plan_statement
from planner.cluster_syntax import (AlterCluster, CreateCluster, CreateClusterReplica, DropCluster,
                                    DropClusterReplica)
from planner.context import SessionInfo
from planner.dialect import parse_one_statement
from planner.parse import parse


@pytest.mark.parametrize("sql, expected", [
    ("CREATE CLUSTER c2 (SIZE = '1')", CreateCluster("c2", "1", None, None)),
    ("CREATE CLUSTER c2 SIZE '2', REPLICATION FACTOR 3", CreateCluster("c2", "2", 3, None)),
    ("create cluster c2 (replication factor = 2, size = '1')", CreateCluster("c2", "1", 2, None)),
    ("CREATE CLUSTER c3 REPLICAS (a (SIZE = '1'), b (SIZE '2'))", CreateCluster("c3", None, None, (("a", "1"), ("b", "2")))),
    ('CREATE CLUSTER "Big" REPLICAS ()', CreateCluster("Big", None, None, ())),
    ("DROP CLUSTER c2", DropCluster(("c2",), False, False)),
    ("DROP CLUSTER IF EXISTS c2, c3 CASCADE", DropCluster(("c2", "c3"), True, True)),
    ("DROP CLUSTER c2 RESTRICT", DropCluster(("c2",), False, False)),
    ("ALTER CLUSTER c2 SET (REPLICATION FACTOR = 2)", AlterCluster("c2", False, 2)),
    ("ALTER CLUSTER IF EXISTS c2 SET (REPLICATION FACTOR 1)", AlterCluster("c2", True, 1)),
    ("CREATE CLUSTER REPLICA c2.r9 SIZE = '1'", CreateClusterReplica("c2", "r9", "1")),
    ("DROP CLUSTER REPLICA c2.r1, quickstart.r2", DropClusterReplica((("c2", "r1"), ("quickstart", "r2")), False)),
])
def test_cluster_statements_parse(sql, expected):
    assert parse_one_statement(sql) == expected


@pytest.mark.parametrize("sql, sqlstate", [
    ("CREATE CLUSTER c2 (AVAILABILITY ZONES = ('a'))", "0A000"),
    ("CREATE CLUSTER c2 (DISK = true, SIZE = '1')", "0A000"),
    ("CREATE CLUSTER c2 (REPLICATION FACTOR = 2)", "22023"),     # SIZE is required
    ("CREATE CLUSTER c2 (SIZE = '1', SIZE = '2')", "42601"),
    ("CREATE CLUSTER c2 (SIZE = '1', REPLICATION FACTOR = 'x')", "22023"),
    ("CREATE CLUSTER c3 REPLICAS (a (SIZE = '1', AVAILABILITY ZONE = 'z'))", "0A000"),
    ("ALTER CLUSTER c2 SET (SIZE = '2')", "0A000"),
    ("ALTER CLUSTER c2 RENAME TO c3", "0A000"),
    ("CREATE CLUSTER REPLICA r2 (SIZE = '1')", "42601"),          # needs cluster.replica
    ("DROP CLUSTER", "42601"),
])
def test_cluster_statement_errors(sql, sqlstate):
    with pytest.raises(SqlError) as err:
        parse_one_statement(sql)
    assert err.value.sqlstate == sqlstate, err.value


def _catalog(tmp_path):
    cat = Catalog.open(tmp_path / "catalog.sqlite")
    cat.set_clusters(cat.clusters().with_cluster("c2", 1, [("r1", 1)]))
    t = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "CREATE TABLE t (a int)")
    v = cat.create(ItemKind.VIEW, "public", "v", (Column("a", INT4),), "CREATE VIEW v AS SELECT a FROM t",
                   definition="SELECT a FROM t", depends_on=(t.id,))
    idx = cat.create(ItemKind.INDEX, "public", "v_idx", v.columns, "CREATE INDEX v_idx IN CLUSTER c2 ON v (a)",
                     depends_on=(v.id,), index_on=v.id, index_key=(0,), cluster_id="u2")
    return cat, t, idx


def _reads(plan) -> set[str]:
    from dataflow.plan import collections_read
    return set(collections_read(plan))


def test_in_cluster_is_recorded_and_only_that_clusters_indexes_are_read(tmp_path):
    cat, t, idx = _catalog(tmp_path)
    (stmt,) = parse("CREATE MATERIALIZED VIEW m IN CLUSTER c2 AS SELECT a FROM v")
    plan = plan_statement(cat, stmt)
    assert plan.cluster == "c2" and _reads(plan.plan) == {idx.id}
    (stmt,) = parse("CREATE MATERIALIZED VIEW m AS SELECT a FROM v")
    plan = plan_statement(cat, stmt)                                # the session's: quickstart
    assert plan.cluster == "quickstart" and _reads(plan.plan) == {t.id}
    session = SessionInfo(settings={"cluster": "c2"})
    (stmt,) = parse("SELECT a FROM v")
    assert _reads(plan_statement(cat, stmt, session=session).plan) == {idx.id}
    assert _reads(plan_statement(cat, stmt).plan) == {t.id}
    (stmt,) = parse("CREATE INDEX IN CLUSTER c2 ON t (a)")
    assert plan_statement(cat, stmt).cluster == "c2"


def test_in_cluster_on_a_plain_view_is_refused(tmp_path):
    cat, _, _ = _catalog(tmp_path)
    (stmt,) = parse("CREATE VIEW w IN CLUSTER c2 AS SELECT 1")
    with pytest.raises(SqlError) as err:
        plan_statement(cat, stmt)
    assert err.value.sqlstate == "42601"


def test_index_lookups_use_only_the_peeking_clusters_indexes(tmp_path):
    from planner.index_lookup import use_index_lookups

    cat, t, _ = _catalog(tmp_path)
    t_idx = cat.create(ItemKind.INDEX, "public", "t_idx", t.columns, "CREATE INDEX t_idx IN CLUSTER c2 ON t (a)",
                       depends_on=(t.id,), index_on=t.id, index_key=(0,), cluster_id="u2")
    (stmt,) = parse("SELECT a FROM t WHERE a = 5")
    plan = plan_statement(cat, stmt).plan

    assert f"IndexLookup(id='{t_idx.id}'" in repr(use_index_lookups(plan, cat, "c2"))
    assert "IndexLookup" not in repr(use_index_lookups(plan, cat, "quickstart"))
