"""mz_catalog: Materialize's catalog relations (dbt-materialize and Materialize's own tools read
these), generated from the same objects as pg_catalog."""

from __future__ import annotations

from catalog.items import ItemKind
from catalog.system.pg_catalog import index_definition, user_items, view_definition
from catalog.system.relations import relation
from catalog.system.snapshot import CatalogSnapshot


def _owner(snap, item) -> str:
    return f"u{snap.role_oid(item.owner)}"


def schema_id(snap: CatalogSnapshot, schema: str) -> str:
    """mz_schemas.id of a schema: 's' and the OID for system schemas, 'u' and the OID for users'."""
    from catalog.system.relations import SYSTEM_SCHEMAS
    return f"{'s' if schema in SYSTEM_SCHEMAS else 'u'}{snap.schema_oid(schema)}"


def database_id(oid: int) -> str:
    return f"u{oid}"


def source_type(item) -> str:
    """mz_sources.type (and SHOW SOURCES' type): load-generator, webhook, subsource or progress."""
    import json
    config = json.loads(item.definition or "{}")
    if item.kind is ItemKind.SOURCE:
        return config.get("type", "load-generator")
    return "progress" if config.get("output") == "progress" else "subsource"


def _of_kind(kind: ItemKind):
    def rows(snap: CatalogSnapshot):
        return [(i.id, i.oid, schema_id(snap, i.schema), i.name, _owner(snap, i)) for i in user_items(snap)
                if i.kind is kind]
    return rows


relation("mz_catalog", "mz_tables", 16100, "id text, oid oid, schema_id text, name text, owner_id text")(
    _of_kind(ItemKind.TABLE))


@relation("mz_catalog", "mz_views", 16101, "id text, oid oid, schema_id text, name text, definition text, owner_id text")
def mz_views(snap: CatalogSnapshot):
    return [(i.id, i.oid, schema_id(snap, i.schema), i.name, view_definition(i), _owner(snap, i))
            for i in user_items(snap) if i.kind is ItemKind.VIEW]


@relation("mz_catalog", "mz_materialized_views", 16102,
          "id text, oid oid, schema_id text, name text, cluster_id text, definition text, owner_id text")
def mz_materialized_views(snap: CatalogSnapshot):
    return [(i.id, i.oid, schema_id(snap, i.schema), i.name, i.cluster_id, view_definition(i), _owner(snap, i))
            for i in user_items(snap) if i.kind is ItemKind.MATERIALIZED_VIEW]


@relation("mz_catalog", "mz_indexes", 16103,
          "id text, oid oid, name text, on_id text, cluster_id text, owner_id text, create_sql text")
def mz_indexes(snap: CatalogSnapshot):
    by_id = {i.id: i for i in snap.items}
    return [(i.id, i.oid, i.name, i.index_on, i.cluster_id, _owner(snap, i),
             index_definition(i, by_id[i.index_on]) if i.index_on in by_id else i.create_sql)
            for i in user_items(snap) if i.kind is ItemKind.INDEX]


@relation("mz_catalog", "mz_columns", 16104,
          "id text, name text, position int8, nullable bool, type text, default text, type_oid oid, type_mod int4")
def mz_columns(snap: CatalogSnapshot):
    from catalog.system.pg_catalog import _type_modifier
    rows = []
    for i in user_items(snap):
        if i.kind is ItemKind.INDEX:
            continue
        defaults = dict(snap.defaults.get(i.id, ()))
        for n, c in enumerate(i.columns, start=1):
            rows.append((i.id, c.name, n, c.nullable, c.type.name, defaults.get(n), c.type.oid,
                         _type_modifier(c.type)))
    return rows


@relation("mz_catalog", "mz_objects", 16105, "id text, oid oid, schema_id text, name text, type text, owner_id text")
def mz_objects(snap: CatalogSnapshot):
    return [(i.id, i.oid, schema_id(snap, i.schema), i.name, i.kind.value, _owner(snap, i)) for i in user_items(snap)]


@relation("mz_catalog", "mz_schemas", 16106, "id text, oid oid, database_id text, name text, owner_id text")
def mz_schemas(snap: CatalogSnapshot):
    """The schemas of every database (system schemas belong to none)."""
    from catalog.system.relations import SYSTEM_SCHEMAS
    db_oid = dict(snap.databases)
    rows = [(f"u{o}", o, database_id(db_oid.get(d, 0)), n, "s1") for d, n, o in snap.schemas]
    return rows + [(f"s{o}", o, None, n, "s1") for n, o in SYSTEM_SCHEMAS.items() if n != "mz_internal"]


@relation("mz_catalog", "mz_databases", 16107, "id text, oid oid, name text, owner_id text")
def mz_databases(snap: CatalogSnapshot):
    return [(database_id(oid), oid, name, "s1") for name, oid in snap.databases]


@relation("mz_catalog", "mz_clusters", 16108, "id text, name text, owner_id text, size text, replication_factor int4")
def mz_clusters(snap: CatalogSnapshot):
    """Every compute cluster: a managed one (CREATE CLUSTER c (SIZE = ...)) shows its size; an
    unmanaged one (quickstart, CREATE CLUSTER c REPLICAS (...)) NULL, as Materialize shows it.
    replication_factor counts the replicas."""
    return [(c.id, c.name, "s1", str(c.size) if c.size is not None else None, len(c.replicas))
            for c in snap.clusters]


@relation("mz_catalog", "mz_cluster_replicas", 16114,
          "id text, name text, cluster_id text, size text, availability_zone text, owner_id text")
def mz_cluster_replicas(snap: CatalogSnapshot):
    return [(r.id, r.name, r.cluster_id, str(r.workers), None, "s1") for r in snap.cluster_replicas]


@relation("mz_internal", "mz_cluster_replica_statuses", 16115,
          "replica_id text, process_id int8, status text, reason text, updated_at timestamptz")
def mz_cluster_replica_statuses(snap: CatalogSnapshot):
    """One row per worker of each replica: online, or offline while the replica (re)starts."""
    import datetime as dt
    return [(r.id, w, "online" if r.online else "offline", None,
             dt.datetime.fromtimestamp(r.changed_at, dt.timezone.utc))
            for r in snap.cluster_replicas for w in range(r.workers)]


@relation("mz_catalog", "mz_sources", 16109, "id text, oid oid, schema_id text, name text, type text, owner_id text")
def mz_sources(snap: CatalogSnapshot):
    return [(i.id, i.oid, schema_id(snap, i.schema), i.name, source_type(i), _owner(snap, i))
            for i in user_items(snap) if i.kind in (ItemKind.SOURCE, ItemKind.SUBSOURCE)]


@relation("mz_internal", "mz_source_statistics", 16112,
          "id text, messages_received int8, bytes_received int8, updates_staged int8, updates_committed int8, "
          "snapshot_committed bool, offset_known int8, offset_committed int8, write_frontier int8, lag_ms int8")
def mz_source_statistics(snap: CatalogSnapshot):
    """Per source, since this environmentd started (offsets are durable: the progress relation)."""
    names = {i.id for i in user_items(snap)}
    return [(s.id, s.messages_received, s.bytes_received, s.updates_staged, s.updates_committed,
             s.snapshot_committed, s.offset_known, s.offset_committed, s.write_frontier, s.lag_ms)
            for s in snap.source_statistics if s.id in names]


@relation("mz_internal", "mz_source_statuses", 16113,
          "id text, name text, type text, last_status_change_at timestamptz, status text, error text")
def mz_source_statuses(snap: CatalogSnapshot):
    import datetime as dt
    by_id = {i.id: i for i in user_items(snap)}
    rows = []
    for s in snap.source_statistics:
        item = by_id.get(s.id)
        if item is None:
            continue
        at = dt.datetime.fromtimestamp(s.last_status_change_ms / 1000, dt.timezone.utc)
        rows.append((s.id, item.name, source_type(item), at, s.status, s.error))
    return rows
@relation("mz_catalog", "mz_secrets", 16116, "id text, oid oid, schema_id text, name text, owner_id text")
def mz_secrets(snap: CatalogSnapshot):
    """Names only: a secret's value is never shown (catalog/secrets.py)."""
    return [(s.id, s.oid, schema_id(snap, s.schema), s.name, f"u{snap.role_oid(s.owner)}")
            for s in snap.secrets if s.database == snap.database]


@relation("mz_catalog", "mz_connections", 16117,
          "id text, oid oid, schema_id text, name text, type text, owner_id text, create_sql text")
def mz_connections(snap: CatalogSnapshot):
    return [(c.id, c.oid, schema_id(snap, c.schema), c.name, c.type, f"u{snap.role_oid(c.owner)}", c.create_sql)
            for c in snap.connections if c.database == snap.database]


@relation("mz_catalog", "mz_sinks", 16110, "id text, oid oid, schema_id text, name text, type text, owner_id text")
def mz_sinks(snap: CatalogSnapshot):
    """CREATE SINK's sinks (catalog/sinks.py)."""
    return [(s.id, s.oid, schema_id(snap, s.schema), s.name, s.type, f"u{snap.role_oid(s.owner)}")
            for s in snap.sinks if s.database == snap.database]


@relation("mz_catalog", "mz_roles", 16111, "id text, oid oid, name text, inherit bool")
def mz_roles(snap: CatalogSnapshot):
    from catalog.system.pg_catalog import _roles
    return [(f"u{r.oid}", r.oid, r.name, True) for r in _roles(snap)]
