"""What one statement's view of the system catalogs is made of."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.items import CatalogItem


@dataclass(frozen=True)
class RoleInfo:
    name: str
    oid: int
    superuser: bool = True
    login: bool = True


@dataclass(frozen=True)
class ProcInfo:
    """One function signature of the library, as pg_proc shows it."""

    name: str
    oid: int
    arg_oids: tuple[int, ...]
    result_oid: int
    kind: str = "f"  # f function, a aggregate, w window
    retset: bool = False
    variadic_oid: int = 0


@dataclass(frozen=True)
class SessionRow:
    """One connection, as pg_stat_activity shows it."""

    pid: int
    user: str
    database: str
    application_name: str = ""
    state: str = "active"
    query: str = ""
    backend_start: object = None
    client_addr: str | None = None
    client_port: int | None = None


@dataclass(frozen=True)
class CatalogSnapshot:
    items: tuple[CatalogItem, ...]
    database: str
    user: str
    search_path: tuple[str, ...] = ("public",)
    roles: tuple[RoleInfo, ...] = ()
    procs: tuple[ProcInfo, ...] = ()
    settings: tuple[tuple[str, str], ...] = ()
    sessions: tuple[SessionRow, ...] = ()
    # (name, oid) of the databases and (database, name, oid) of their schemas.
    databases: tuple[tuple[str, int], ...] = (("slipstream", 16384),)
    schemas: tuple[tuple[str, str, int], ...] = (("slipstream", "public", 2200),)
    # Column defaults by item id: (column number from 1, expression text).
    defaults: dict = field(default_factory=dict, hash=False, compare=False)
    # Running sources' statistics (storage.sources.base.SourceStatistics), for mz_internal.
    source_statistics: tuple = ()
    # Secrets and connections (catalog.secrets.Secret / Connection: names, never values).
    secrets: tuple = field(default=(), hash=False, compare=False)
    connections: tuple = field(default=(), hash=False, compare=False)
    sinks: tuple = field(default=(), hash=False, compare=False)  # catalog.sinks.Sink
    # The running replicas of every cluster (catalog.replicas.ReplicaStatus), for
    # mz_cluster_replicas; the clusters as recorded (catalog.clusters.ClusterSpec), for mz_clusters.
    cluster_replicas: tuple = ()
    clusters: tuple = ()
    # aclitem[] text per object key (catalog/privileges.py: ("item", id), ("schema", "db.s"),
    # ("database", db)), None where nothing was granted; owners of databases and schemas.
    acls: dict = field(default_factory=dict, hash=False, compare=False)
    owners: dict = field(default_factory=dict, hash=False, compare=False)
    # Privileges granted per object key (grantee -> letters), and the roles whose grants the
    # statement's user may see in information_schema.table_privileges (None: all, a superuser).
    grants: dict = field(default_factory=dict, hash=False, compare=False)
    user_roles: frozenset | None = field(default=None, hash=False, compare=False)
    # (role, member) pairs of role membership (GRANT role TO member), for pg_auth_members.
    memberships: tuple = field(default=(), hash=False, compare=False)

    def schema_oid(self, schema: str) -> int:
        """The OID of a schema of this statement's database (system schemas included)."""
        from catalog.system.relations import SYSTEM_SCHEMAS
        if schema in SYSTEM_SCHEMAS:
            return SYSTEM_SCHEMAS[schema]
        for d, n, o in self.schemas:
            if d == self.database and n == schema:
                return o
        return 0

    def role_oid(self, name: str) -> int:
        for r in self.roles:
            if r.name == name:
                return r.oid
        return SUPERUSER_OID


SUPERUSER_OID = 10
