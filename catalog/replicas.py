"""A compute cluster's replicas: what the durable catalog records of one (`ReplicaSpec`, part of
`catalog.clusters.ClusterSpec`) and what the system catalogs show of a running one
(`ReplicaStatus`). The statements are server/adapter/clusters.py.

A replica's size is its number of dataflow workers; quickstart's first replica, `r1`, is created
with the server and takes its size from `--workers` at every start unless it was dropped.

>>> ReplicaSpec("u1", "r1", None).workers(3)
3
>>> ReplicaSpec("u2", "r2", 2).workers(3)
2
"""

from __future__ import annotations

from dataclasses import dataclass

CLUSTER = "quickstart"  # the default cluster, created on a fresh start


@dataclass(frozen=True)
class ReplicaSpec:
    id: str  # mz_cluster_replicas.id (unique across clusters, never reused)
    name: str  # unique within its cluster
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
    cluster_id: str = "u1"
    cluster: str = CLUSTER
