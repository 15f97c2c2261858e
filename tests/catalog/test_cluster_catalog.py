"""The durable cluster list: quickstart on a fresh catalog, clusters and replicas survive
reopening with their ids, ids are never reused, a catalog from before clusters keeps its
replicas, and materialized views and indexes record their cluster."""

import json
from pathlib import Path

from catalog.clusters import Clusters
from catalog.durable import Catalog
from catalog.items import ItemKind
from dataflow.types import INT4, Column


def test_fresh_catalog_has_quickstart(tmp_path: Path):
    cat = Catalog.open(tmp_path / "catalog.sqlite")
    clusters = cat.clusters()
    assert [(c.id, c.name, c.size) for c in clusters.clusters] == [("u1", "quickstart", None)]
    assert [(r.id, r.name, r.size) for r in clusters.by_name("quickstart").replicas] == [("u1", "r1", None)]


def test_clusters_and_replicas_survive_reopen_and_ids_are_not_reused(tmp_path: Path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    cat.set_clusters(cat.clusters().with_cluster("c2", 1, [("r1", 1), ("r2", 1)]))
    cat.set_clusters(cat.clusters().with_replica("quickstart", "r2", 2))
    cat.set_clusters(cat.clusters().without_replica("c2", "r2"))
    cat.close()
    again = Catalog.open(path)
    clusters = again.clusters()
    c2 = clusters.by_name("c2")
    assert (c2.id, c2.size, c2.managed) == ("u2", 1, True)
    assert [(r.id, r.name, r.size) for r in c2.replicas] == [("u2", "r1", 1)]
    assert [(r.id, r.name) for r in clusters.by_name("quickstart").replicas] == [("u1", "r1"), ("u4", "r2")]
    assert clusters.by_id("u2") == c2
    after = clusters.without_cluster("c2").with_cluster("c2", None, [("a", 1)])
    assert after.by_name("c2").id == "u3" and after.by_name("c2").replicas[0].id == "u5"
    assert not after.by_name("c2").managed
    assert Clusters.from_json(after.to_json()) == after


def test_catalog_from_before_clusters_keeps_quickstart_replicas(tmp_path: Path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    cat.set_setting("cluster_replicas", json.dumps({"replicas": [{"id": "u2", "name": "r2", "size": 1}],
                                                    "last_id": 2}))
    cat.close()
    clusters = Catalog.open(path).clusters()
    assert [(r.id, r.name) for r in clusters.by_name("quickstart").replicas] == [("u2", "r2")]
    assert clusters.with_replica("quickstart", "r3", 1).by_name("quickstart").replicas[-1].id == "u3"


def test_items_record_their_cluster(tmp_path: Path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    t = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "CREATE TABLE t (a int)")
    mv = cat.create(ItemKind.MATERIALIZED_VIEW, "public", "m", (Column("a", INT4),),
                    "CREATE MATERIALIZED VIEW m IN CLUSTER c2 AS SELECT a FROM t", definition="SELECT a FROM t",
                    depends_on=(t.id,), cluster_id="u2")
    cat.close()
    again = Catalog.open(path)
    assert again.get(mv.id).cluster_id == "u2"
    assert again.get(t.id).cluster_id is None
