"""CREATE / DROP / ALTER CLUSTER and CREATE / DROP CLUSTER REPLICA.

Each cluster is its own compute controller with its own replicas (server/compute_clusters.py);
every replica of a cluster computes every dataflow of that cluster (dataflow/controller.py merges
their outputs), so a new replica is ready to answer once its statement returns, and dropping one
is invisible to readers while another is up. The cluster list is durable (catalog/clusters.py):
a restart brings the same clusters and replicas back. Every replica of every cluster holds Spark
task slots for its workers; one the master has no room for is refused with 53000. Only superusers
run these statements (server/adapter/privileges.py's default for a statement kind without a rule
of its own), as only a role with CREATECLUSTER may in Materialize.

    CREATE CLUSTER c2 (SIZE = '1');                    -- a managed cluster: replica r1 of 1 worker
    CREATE MATERIALIZED VIEW v IN CLUSTER c2 AS ...;   -- computed by c2's replicas
    DROP CLUSTER c2 CASCADE;                           -- and its materialized views and indexes
"""

from __future__ import annotations

import asyncio

from catalog.clusters import ClusterSpec
from dataflow.controller import REPLICA_START_SECONDS
from dataflow.errors import SqlError, SqlState
from planner.cluster_syntax import (AlterCluster, CreateCluster, CreateClusterReplica, DropCluster,
                                    DropClusterReplica)
from server.api import CommandComplete, Session

INSUFFICIENT_RESOURCES = "53000"
_SIZE_DETAIL = "A replica's size is its number of dataflow workers: '1', '2', '4', ..."
MAX_REPLICATION_FACTOR = 16


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
        return await _create_replica(coord, stmt)
    if isinstance(stmt, DropClusterReplica):
        return await _drop_replicas(coord, session, stmt)
    if isinstance(stmt, CreateCluster):
        return await _create_cluster(coord, stmt)
    if isinstance(stmt, AlterCluster):
        return await _alter_cluster(coord, session, stmt)
    return await _drop_clusters(coord, session, stmt)


def _check_slots(coord, workers: int, what: str) -> None:
    slots = coord.spark_context.defaultParallelism
    used = coord.compute.slots_in_use()
    if used + workers > slots:
        raise SqlError(INSUFFICIENT_RESOURCES, f"not enough Spark task slots for {what}",
                       detail=f"{used} of the Spark master's {slots} task slots run the other replicas' workers.",
                       hint="Drop a replica or a cluster, or start the server with a Spark master that has "
                            "more slots (--spark-master local[N] or a larger cluster).")


def _timed_out(name: str) -> SqlError:
    return SqlError(INSUFFICIENT_RESOURCES, f"the workers of replica '{name}' did not start within "
                                            f"{REPLICA_START_SECONDS} seconds",
                    hint="The Spark master may lack free task slots.")


def _cluster(coord, name: str) -> ClusterSpec:
    spec = coord.catalog.clusters().by_name(name)
    if spec is None or coord.compute.get(spec.id) is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name}'")
    return spec


# -- clusters -------------------------------------------------------------------------------------

async def _create_cluster(coord, stmt: CreateCluster) -> CommandComplete:
    if stmt.replicas is not None:
        size = None
        replicas = [(name, replica_size(s)) for name, s in stmt.replicas]
        if not replicas:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "a cluster without replicas not yet supported",
                           detail="Without a replica the cluster would compute nothing.")
        seen = [n for n, _ in replicas]
        duplicate = next((n for n in seen if seen.count(n) > 1), None)
        if duplicate is not None:
            raise SqlError(SqlState.DUPLICATE_OBJECT, f"cluster replica '{stmt.name}.{duplicate}' already exists")
    else:
        size = replica_size(stmt.size)
        factor = 1 if stmt.replication_factor is None else stmt.replication_factor
        _check_factor(factor)
        replicas = [(f"r{n}", size) for n in range(1, factor + 1)]
    async with coord.cluster_lock:
        if coord.catalog.clusters().by_name(stmt.name) is not None:
            raise SqlError(SqlState.DUPLICATE_OBJECT, f"cluster '{stmt.name}' already exists")
        _check_slots(coord, sum(w for _, w in replicas), f"the {len(replicas)} replica(s) of cluster '{stmt.name}'")
        clusters = coord.catalog.clusters().with_cluster(stmt.name, size, replicas)
        spec = clusters.by_name(stmt.name)
        try:
            controller = await coord.start_cluster(spec)  # its replicas' jobs; can take seconds
        except asyncio.TimeoutError:
            raise _timed_out(f"{stmt.name}.{replicas[0][0]}") from None
        async with coord.write_lock:
            coord.catalog.set_clusters(clusters)
            coord.add_cluster(spec, controller)
    return CommandComplete("CREATE CLUSTER")


def _check_factor(factor: int) -> None:
    if factor == 0:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "REPLICATION FACTOR 0 not yet supported",
                       detail="Without a replica the cluster would compute nothing.")
    if factor > MAX_REPLICATION_FACTOR:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"invalid REPLICATION FACTOR: {factor}",
                       detail=f"At most {MAX_REPLICATION_FACTOR} replicas per cluster.")


async def _drop_clusters(coord, session: Session, stmt: DropCluster) -> CommandComplete:
    async with coord.cluster_lock:
        specs: list[ClusterSpec] = []
        for name in stmt.names:
            spec = coord.catalog.clusters().by_name(name)
            if spec is None:
                if not stmt.if_exists:
                    raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name}'")
                session.pending_notices.append(("00000", f"cluster '{name}' does not exist, skipping"))
            elif spec not in specs:
                specs.append(spec)
        ids = {spec.id for spec in specs}
        inside = [i.id for i in coord.catalog.items() if i.cluster_id in ids]
        if inside and not stmt.cascade:
            raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                           "cannot drop cluster with active indexes or materialized views",
                           hint="Use DROP CLUSTER ... CASCADE to drop them too.")
        if inside:
            await coord.drop(inside, cascade=True)  # and what depends on them, elsewhere too
        for spec in specs:
            async with coord.write_lock:
                coord.catalog.set_clusters(coord.catalog.clusters().without_cluster(spec.name))
                coord.catalog.privileges.forget([("cluster", spec.id)])
            await coord.remove_cluster(spec.id)
    return CommandComplete("DROP CLUSTER")


async def _alter_cluster(coord, session: Session, stmt: AlterCluster) -> CommandComplete:
    """SET (REPLICATION FACTOR = k) of a managed cluster: replicas r1..rk of its size."""
    async with coord.cluster_lock:
        spec = coord.catalog.clusters().by_name(stmt.name)
        if spec is None:
            if stmt.if_exists:
                session.pending_notices.append(("00000", f"cluster '{stmt.name}' does not exist, skipping"))
                return CommandComplete("ALTER CLUSTER")
            raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{stmt.name}'")
        if not spec.managed:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"REPLICATION FACTOR of cluster '{stmt.name}', which has no SIZE, not yet supported",
                           hint=f"Add or drop its replicas with CREATE / DROP CLUSTER REPLICA {stmt.name}.<name>.")
        _check_factor(stmt.replication_factor)
        current = len(spec.replicas)
        if stmt.replication_factor > current:
            names = [r.name for r in spec.replicas]
            new, n = [], 1
            while len(new) < stmt.replication_factor - current:
                if f"r{n}" not in names:
                    new.append(f"r{n}")
                n += 1
            _check_slots(coord, spec.size * len(new), f"{len(new)} more replica(s) of cluster '{stmt.name}'")
            for name in new:
                await _add_replica(coord, spec.name, name, spec.size)
        else:
            for replica in list(spec.replicas)[stmt.replication_factor:]:
                await _remove_replica(coord, spec.name, replica.name)
    return CommandComplete("ALTER CLUSTER")


# -- replicas -------------------------------------------------------------------------------------

async def _add_replica(coord, cluster: str, name: str, workers: int) -> None:
    spec = _cluster(coord, cluster)
    compute = coord.compute.get(spec.id)
    try:
        await compute.add_replica(name, workers)
    except asyncio.TimeoutError:  # its workers did not all connect (the controller's bound)
        raise _timed_out(f"{cluster}.{name}") from None
    coord.catalog.set_clusters(coord.catalog.clusters().with_replica(cluster, name, workers))


async def _remove_replica(coord, cluster: str, name: str) -> None:
    spec = _cluster(coord, cluster)
    await coord.compute.get(spec.id).drop_replica(name)
    coord.catalog.set_clusters(coord.catalog.clusters().without_replica(cluster, name))


async def _create_replica(coord, stmt: CreateClusterReplica) -> CommandComplete:
    workers = replica_size(stmt.size)
    async with coord.cluster_lock:
        spec = _cluster(coord, stmt.cluster)
        if stmt.name in coord.compute.get(spec.id).replicas or spec.replica(stmt.name) is not None:
            raise SqlError(SqlState.DUPLICATE_OBJECT, f"cluster replica '{stmt.cluster}.{stmt.name}' already exists")
        _check_slots(coord, workers, f"a replica of {workers} workers")
        await _add_replica(coord, stmt.cluster, stmt.name, workers)
    return CommandComplete("CREATE CLUSTER REPLICA")


async def _drop_replicas(coord, session: Session, stmt: DropClusterReplica) -> CommandComplete:
    async with coord.cluster_lock:
        names: list[tuple[str, str]] = []
        for cluster, name in stmt.replicas:
            spec = coord.catalog.clusters().by_name(cluster)
            if spec is None:
                raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{cluster}'")
            if spec.replica(name) is None:
                if not stmt.if_exists:
                    raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster replica '{cluster}.{name}'")
                session.pending_notices.append(
                    ("00000", f"cluster replica '{cluster}.{name}' does not exist, skipping"))
            elif (cluster, name) not in names:
                names.append((cluster, name))
        for cluster in {c for c, _ in names}:
            if len(coord.catalog.clusters().by_name(cluster).replicas) == sum(1 for c, _ in names if c == cluster):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "dropping every replica of a cluster not yet supported",
                               detail="Without a replica the cluster would compute nothing.",
                               hint=f"Create another replica first (CREATE CLUSTER REPLICA {cluster}.<name>), "
                                    f"or drop the cluster (DROP CLUSTER {cluster}).")
        for cluster, name in names:
            await _remove_replica(coord, cluster, name)
    return CommandComplete("DROP CLUSTER REPLICA")
