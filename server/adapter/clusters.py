"""CREATE / DROP CLUSTER REPLICA: start or stop a replica of the compute cluster.

Every replica computes every dataflow (dataflow/controller.py merges their outputs), so a new
replica is ready to answer once this statement returns, and dropping one is invisible to readers
while another is up. The replica list is durable (catalog/replicas.py): a restart brings the same
replicas back. Only superusers run these statements (server/adapter/privileges.py's default for a
statement kind without a rule of its own), as only a role with CREATECLUSTER may in Materialize.
"""

from __future__ import annotations

import asyncio

from catalog.replicas import CLUSTER
from dataflow.controller import REPLICA_START_SECONDS
from dataflow.errors import SqlError, SqlState
from planner.cluster_syntax import CreateClusterReplica, DropClusterReplica, check_cluster
from server.api import CommandComplete, Session

INSUFFICIENT_RESOURCES = "53000"
_SIZE_DETAIL = "A replica's size is its number of dataflow workers: '1', '2', '4', ..."


def replica_size(size: str) -> int:
    """SIZE 'n' as a number of workers.

    >>> replica_size("2")
    2
    """
    text = size.strip()
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"invalid SIZE: '{size}'", detail=_SIZE_DETAIL)
    return int(text)


async def execute_cluster_statement(coord, session: Session, stmt) -> CommandComplete:
    if isinstance(stmt, CreateClusterReplica):
        return await _create(coord, stmt)
    return await _drop(coord, session, stmt)


async def _create(coord, stmt: CreateClusterReplica) -> CommandComplete:
    check_cluster(stmt.cluster)
    workers = replica_size(stmt.size)
    compute = coord.compute
    async with coord.write_lock:
        if stmt.name in compute.replicas or coord.replicas.get(stmt.name) is not None:
            raise SqlError(SqlState.DUPLICATE_OBJECT, f"cluster replica '{CLUSTER}.{stmt.name}' already exists")
        slots = coord.spark.sparkContext.defaultParallelism
        used = compute.slots_in_use()
        if used + workers > slots:
            raise SqlError(INSUFFICIENT_RESOURCES,
                           f"not enough Spark task slots for a replica of {workers} workers",
                           detail=f"{used} of the Spark master's {slots} task slots run the other replicas' workers.",
                           hint="Drop a replica, or start the server with a Spark master that has more "
                                "slots (--spark-master local[N] or a larger cluster).")
        try:
            await compute.add_replica(stmt.name, workers)
        except asyncio.TimeoutError:  # its workers did not all connect (the controller's bound)
            raise SqlError(INSUFFICIENT_RESOURCES, f"the workers of replica '{stmt.name}' did not start within "
                                                   f"{REPLICA_START_SECONDS} seconds",
                           hint="The Spark master may lack free task slots.") from None
        coord.replicas = coord.replicas.added(stmt.name, workers)
        coord.replicas.save(coord.catalog)
    return CommandComplete("CREATE CLUSTER REPLICA")


async def _drop(coord, session: Session, stmt: DropClusterReplica) -> CommandComplete:
    compute = coord.compute
    async with coord.write_lock:
        names = []
        for cluster, name in stmt.replicas:
            check_cluster(cluster)
            if name not in compute.replicas:
                if not stmt.if_exists:
                    raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster replica '{cluster}.{name}'")
                session.pending_notices.append(
                    ("00000", f"cluster replica '{cluster}.{name}' does not exist, skipping"))
            elif name not in names:
                names.append(name)
        if names and len(compute.replicas) == len(names):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "dropping every replica of a cluster not yet supported",
                           detail="Without a replica the cluster would compute nothing.",
                           hint="Create another replica first (CREATE CLUSTER REPLICA).")
        for name in names:
            await compute.drop_replica(name)
            coord.replicas = coord.replicas.dropped(name)
            coord.replicas.save(coord.catalog)
    return CommandComplete("DROP CLUSTER REPLICA")
