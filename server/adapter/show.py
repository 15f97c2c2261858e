"""SHOW statements answered from the catalog and the session (Materialize's column names)."""

from __future__ import annotations

from catalog.durable import Catalog
from catalog.items import ItemKind
from dataflow.errors import SqlError, SqlState
from server.api import Rows, Session
from server.adapter.vars import DEFAULTS, get_var
from planner.show import show_columns
from planner.statements import ShowPlan


class _InDatabase:
    """The catalog as SHOW sees it: the objects of the session's database only."""

    def __init__(self, catalog: Catalog, database: str) -> None:
        self._catalog, self._database = catalog, database

    def items(self):
        return [i for i in self._catalog.items() if i.database == self._database]

    def __getattr__(self, name):
        return getattr(self._catalog, name)


def show(plan: ShowPlan, catalog: Catalog, session: Session) -> Rows:
    what = plan.what.lower()
    columns = list(show_columns(plan))
    database = session.vars.get("database", "slipstream")
    catalog = _InDatabase(catalog, database)
    if what == "tables":
        items = sorted((i for i in catalog.items() if i.kind is ItemKind.TABLE and (plan.schema in (None, i.schema))),
                       key=lambda i: i.name)
        return Rows(columns, [(i.name, "") for i in items])
    if what == "views":
        items = sorted((i for i in catalog.items() if i.kind is ItemKind.VIEW and (plan.schema in (None, i.schema))),
                       key=lambda i: i.name)
        return Rows(columns, [(i.name, "") for i in items])
    if what in ("materialized views", "materialized_views"):
        items = sorted((i for i in catalog.items() if i.kind is ItemKind.MATERIALIZED_VIEW
                        and (plan.schema in (None, i.schema))), key=lambda i: i.name)
        return Rows(columns, [(i.name, _cluster_name(catalog, i), "") for i in items])
    if what == "indexes":
        items = [i for i in catalog.items() if i.kind is ItemKind.INDEX]
        if plan.name is not None:
            on = catalog.get(plan.name)
            items = [i for i in items if i.index_on == on.id]
        rows = []
        for i in sorted(items, key=lambda i: i.name):
            on = catalog.get(i.index_on)
            key = "{" + ",".join(on.columns[k].name for k in i.index_key) + "}"
            rows.append((i.name, on.name, _cluster_name(catalog, i), key, ""))
        return Rows(columns, rows)
    if what == "columns":
        item = catalog.get(plan.name)
        return Rows(columns, [(c.name, c.nullable, c.type.name, "") for c in item.columns])
    if what.startswith("create"):
        item = catalog.get(plan.name)
        return Rows(columns, [(item.qualified_name, item.create_sql)])
    if what == "databases":
        return Rows(columns, [(n, "") for n, _ in catalog.databases()])
    if what == "schemas":
        return Rows(columns, [(n, "") for _, n, _ in catalog.schemas(database)])
    if what == "clusters":
        running = _replicas(catalog)
        return Rows(columns, [(c.name, ", ".join(f"{r.name} ({r.workers})" for r in running if r.cluster_id == c.id), "")
                              for c in sorted(catalog.clusters().clusters, key=lambda c: c.name)])
    if what == "cluster replicas":
        return Rows(columns, [(r.cluster, r.name, str(r.workers), r.online, "")
                              for r in sorted(_replicas(catalog), key=lambda r: (r.cluster, r.name))])
    if what == "objects":
        items = sorted((i for i in catalog.items() if plan.schema in (None, i.schema)), key=lambda i: i.name)
        return Rows(columns, [(i.name, i.kind.value, "") for i in items])
    if what == "sources":
        from catalog.system.mz_catalog import source_type
        items = sorted((i for i in catalog.items() if i.kind in (ItemKind.SOURCE, ItemKind.SUBSOURCE)
                        and plan.schema in (None, i.schema)), key=lambda i: i.name)
        return Rows(columns,
                    [(i.name, source_type(i), "quickstart" if i.kind is ItemKind.SOURCE else None, "")
                     for i in items])
    if what == "sinks":  # catalog/sinks.py
        found = [s for s in catalog.sinks.sinks() if s.database == database and plan.schema in (None, s.schema)]
        return Rows(columns, [(s.name, s.type, "quickstart", "") for s in sorted(found, key=lambda s: s.name)])
    if what in ("secrets", "connections"):  # names (and a connection's type), never a secret's value
        store = catalog.secrets
        if what == "secrets":
            found = [s for s in store.secrets() if s.database == database and plan.schema in (None, s.schema)]
            return Rows(columns, [(s.name, "") for s in sorted(found, key=lambda s: s.name)])
        found = [c for c in store.connections() if c.database == database and plan.schema in (None, c.schema)]
        return Rows(columns, [(c.name, c.type, "") for c in sorted(found, key=lambda c: c.name)])
    if what == "roles":
        roles_of = getattr(catalog, "roles", None)
        names = sorted(r.name for r in roles_of()) if roles_of else [session.user]
        return Rows(columns, [(n, "") for n in names])
    if what == "all":
        names = sorted(set(DEFAULTS) | set(session.vars))
        return Rows(columns, [(n, get_var(session.vars, n), "") for n in names])
    if what in ("variable", "var"):
        value = get_var(session.vars, plan.name)
        if value is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'unrecognized configuration parameter "{plan.name}"')
        return Rows(columns, [(value,)])
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"SHOW {plan.what} not yet supported")


def _cluster_name(catalog, item) -> str | None:
    spec = catalog.clusters().by_id(item.cluster_id) if item.cluster_id is not None else None
    return spec.name if spec is not None else None


def _replicas(catalog) -> list:
    """The running replicas (catalog.replicas.ReplicaStatus); none without a coordinator."""
    statuses = getattr(catalog, "cluster_replicas", None)
    return list(statuses()) if statuses else []
