"""The compute clusters as the durable catalog records them: each cluster's id, name, managed
size and replicas, so a restart brings back the clusters and replicas that were created
(CREATE / DROP / ALTER CLUSTER, CREATE / DROP CLUSTER REPLICA: server/adapter/clusters.py).

Ids are Materialize's: clusters and replicas are numbered 'u1', 'u2', ... each in their own
sequence, and an id is never reused. A fresh catalog has one cluster, quickstart (u1), with one
replica r1 sized by `--workers`. A *managed* cluster (`CREATE CLUSTER c (SIZE = '2',
REPLICATION FACTOR = 2)`) records its size and names its replicas r1, r2, ...; an unmanaged one
(`CREATE CLUSTER c REPLICAS (a (SIZE = '1'))`, and quickstart) has no size of its own.

>>> clusters = Clusters.default()
>>> clusters = clusters.with_cluster("c2", 1, [("r1", 1), ("r2", 1)])
>>> [(c.id, c.name, [r.id for r in c.replicas]) for c in clusters.clusters]
[('u1', 'quickstart', ['u1']), ('u2', 'c2', ['u2', 'u3'])]
>>> clusters.without_cluster("c2").with_cluster("c3", None, [("a", 2)]).by_name("c3").id   # never reused
'u3'
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from catalog.replicas import CLUSTER, ReplicaSpec

_SETTING = "clusters"
_LEGACY_SETTING = "cluster_replicas"  # quickstart's replicas, before there were other clusters


@dataclass(frozen=True)
class ClusterSpec:
    id: str  # mz_clusters.id
    name: str
    replicas: tuple[ReplicaSpec, ...]
    size: int | None = None  # a managed cluster's replica size (workers); None: unmanaged

    @property
    def managed(self) -> bool:
        return self.size is not None

    def replica(self, name: str) -> ReplicaSpec | None:
        return next((r for r in self.replicas if r.name == name), None)


@dataclass(frozen=True)
class Clusters:
    clusters: tuple[ClusterSpec, ...]
    last_cluster_id: int
    last_replica_id: int

    @staticmethod
    def default() -> "Clusters":
        return Clusters((ClusterSpec("u1", CLUSTER, (ReplicaSpec("u1", "r1", None),)),), 1, 1)

    @staticmethod
    def from_json(text: str) -> "Clusters":
        data = json.loads(text)
        return Clusters(tuple(ClusterSpec(c["id"], c["name"], tuple(ReplicaSpec(**r) for r in c["replicas"]),
                                          c.get("size")) for c in data["clusters"]),
                        data["last_cluster_id"], data["last_replica_id"])

    def to_json(self) -> str:
        return json.dumps({"clusters": [{"id": c.id, "name": c.name, "size": c.size,
                                         "replicas": [asdict(r) for r in c.replicas]} for c in self.clusters],
                           "last_cluster_id": self.last_cluster_id, "last_replica_id": self.last_replica_id})

    @staticmethod
    def load(catalog) -> "Clusters":
        """From the catalog's settings; a catalog written before clusters existed recorded only
        quickstart's replicas, which become quickstart's."""
        stored = catalog.get_setting(_SETTING)
        if stored is not None:
            return Clusters.from_json(stored)
        legacy = catalog.get_setting(_LEGACY_SETTING)
        if legacy is None:
            return Clusters.default()
        data = json.loads(legacy)
        replicas = tuple(ReplicaSpec(**r) for r in data["replicas"])
        return Clusters((ClusterSpec("u1", CLUSTER, replicas),), 1, data["last_id"])

    def save(self, catalog) -> None:
        catalog.set_setting(_SETTING, self.to_json())

    # -- lookups --------------------------------------------------------------------------------

    def by_name(self, name: str) -> ClusterSpec | None:
        return next((c for c in self.clusters if c.name == name), None)

    def by_id(self, id: str) -> ClusterSpec | None:
        return next((c for c in self.clusters if c.id == id), None)

    # -- changes (each returns a new value; the caller saves it) --------------------------------

    def with_cluster(self, name: str, size: int | None, replicas: list[tuple[str, int]]) -> "Clusters":
        specs = tuple(ReplicaSpec(f"u{self.last_replica_id + n}", r, s) for n, (r, s) in enumerate(replicas, 1))
        cluster = ClusterSpec(f"u{self.last_cluster_id + 1}", name, specs, size)
        return Clusters(self.clusters + (cluster,), self.last_cluster_id + 1, self.last_replica_id + len(specs))

    def without_cluster(self, name: str) -> "Clusters":
        return replace(self, clusters=tuple(c for c in self.clusters if c.name != name))

    def with_replica(self, cluster: str, name: str, size: int | None) -> "Clusters":
        spec = ReplicaSpec(f"u{self.last_replica_id + 1}", name, size)
        return Clusters(tuple(replace(c, replicas=c.replicas + (spec,)) if c.name == cluster else c
                              for c in self.clusters), self.last_cluster_id, self.last_replica_id + 1)

    def without_replica(self, cluster: str, name: str) -> "Clusters":
        return replace(self, clusters=tuple(
            replace(c, replicas=tuple(r for r in c.replicas if r.name != name)) if c.name == cluster else c
            for c in self.clusters))
