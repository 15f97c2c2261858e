"""The compute cluster's replicas as the durable catalog records them, so a restart brings back
the replicas that were created (CREATE / DROP CLUSTER REPLICA; server/adapter/clusters.py).

A replica's size is its number of dataflow workers; the first replica, `r1`, is created with the
server and takes its size from `--workers` at every start unless it was dropped.

>>> replicas = ClusterReplicas.default()
>>> replicas.specs[0].workers(3)
3
>>> replicas.added("r2", 2).specs[-1]
ReplicaSpec(id='u2', name='r2', size=2)
>>> replicas.added("r2", 2).dropped("r2").added("r3", 1).specs[-1].id    # ids are never reused
'u3'
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

CLUSTER = "quickstart"
_SETTING = "cluster_replicas"


@dataclass(frozen=True)
class ReplicaSpec:
    id: str  # mz_cluster_replicas.id
    name: str
    size: int | None  # workers; None: the server's --workers

    def workers(self, default: int) -> int:
        return self.size if self.size is not None else default


@dataclass(frozen=True)
class ReplicaStatus:
    """What mz_cluster_replicas and mz_cluster_replica_statuses show of a running replica."""

    id: str
    name: str
    workers: int
    online: bool
    changed_at: float  # seconds since the epoch


@dataclass(frozen=True)
class ClusterReplicas:
    specs: tuple[ReplicaSpec, ...]
    last_id: int

    @staticmethod
    def default() -> "ClusterReplicas":
        return ClusterReplicas((ReplicaSpec("u1", "r1", None),), 1)

    @staticmethod
    def load(catalog) -> "ClusterReplicas":
        stored = catalog.get_setting(_SETTING)
        if stored is None:
            return ClusterReplicas.default()
        data = json.loads(stored)
        return ClusterReplicas(tuple(ReplicaSpec(**r) for r in data["replicas"]), data["last_id"])

    def save(self, catalog) -> None:
        catalog.set_setting(_SETTING, json.dumps({"replicas": [asdict(s) for s in self.specs],
                                                  "last_id": self.last_id}))

    def get(self, name: str) -> ReplicaSpec | None:
        return next((s for s in self.specs if s.name == name), None)

    def added(self, name: str, size: int) -> "ClusterReplicas":
        return ClusterReplicas(self.specs + (ReplicaSpec(f"u{self.last_id + 1}", name, size),), self.last_id + 1)

    def dropped(self, name: str) -> "ClusterReplicas":
        return ClusterReplicas(tuple(s for s in self.specs if s.name != name), self.last_id)
