"""The durable catalog: every object's definition in SQLite, mirrored in memory for lookups.

Each change is one SQLite transaction (synchronous=FULL), so an acknowledged DDL survives a crash
and a crash mid-DDL leaves the catalog as it was. Ids ('u1', 'u2', ...) and OIDs are allocated from
counters stored in the same transaction and never reused.

>>> cat = Catalog.open(Path("/tmp/x/catalog.sqlite"))      # doctest: +SKIP
>>> cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "CREATE TABLE t (a int)")
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

from catalog.clusters import Clusters
from catalog.items import CatalogItem, ItemKind
from catalog.privileges import CURRENT_ROLE, PrivilegeStore
from catalog.roles import Role, RoleStore
from catalog.secrets import SecretStore
from dataflow.errors import SqlError, SqlState
from dataflow.types import Column, SqlType, TypeKind

DEFAULT_DATABASE = "slipstream"
DEFAULT_SCHEMA = "public"
FIRST_USER_OID = 20000
DEFAULT_DATABASE_OID = 16384
PUBLIC_SCHEMA_OID = 2200  # PostgreSQL's: clients recognise it

_KIND_WORDS = {
    ItemKind.TABLE: "table",
    ItemKind.VIEW: "view",
    ItemKind.MATERIALIZED_VIEW: "materialized view",
    ItemKind.INDEX: "index",
    ItemKind.SOURCE: "source",
    ItemKind.SUBSOURCE: "source",
}


def _type_to_json(t: SqlType) -> list:
    if t.element is not None:
        return [t.kind.value, t.precision, t.scale, _type_to_json(t.element)]
    return [t.kind.value, t.precision, t.scale]


def _type_from_json(v: list) -> SqlType:
    return SqlType(TypeKind(v[0]), v[1], v[2], _type_from_json(v[3]) if len(v) > 3 else None)


def item_to_json(item: CatalogItem) -> str:
    return json.dumps({
        "id": item.id, "oid": item.oid, "kind": item.kind.value, "database": item.database,
        "schema": item.schema, "name": item.name,
        "columns": [[c.name, _type_to_json(c.type), c.nullable] for c in item.columns],
        "create_sql": item.create_sql, "definition": item.definition,
        "depends_on": list(item.depends_on), "index_on": item.index_on,
        "index_key": list(item.index_key), "owner": item.owner, "cluster_id": item.cluster_id,
        "pg_definitions": item.pg_definitions,
    })


def item_from_json(text: str) -> CatalogItem:
    d = json.loads(text)
    return CatalogItem(
        id=d["id"], oid=d["oid"], kind=ItemKind(d["kind"]), database=d["database"],
        schema=d["schema"], name=d["name"],
        columns=tuple(Column(n, _type_from_json(t), nn) for n, t, nn in d["columns"]),
        create_sql=d["create_sql"], definition=d["definition"],
        depends_on=tuple(d["depends_on"]), index_on=d["index_on"],
        index_key=tuple(d["index_key"]), owner=d.get("owner", "slipstream"),
        # (written before there were clusters: computed by quickstart, u1)
        cluster_id=d.get("cluster_id", "u1" if d["kind"] in ("materialized view", "index") else None),
        # (written before they were kept: shown as written)
        pg_definitions=tuple(d["pg_definitions"]) if d.get("pg_definitions") else None,
    )


class Catalog:
    """Implements `catalog.items.CatalogReader` plus the mutations the adapter sequences."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._items: dict[str, CatalogItem] = {}
        for (text,) in conn.execute("SELECT body FROM items"):
            item = item_from_json(text)
            self._items[item.id] = item
        self._roles = RoleStore(conn, next_oid=lambda: self._next("oid"), lock=self._lock)
        self._privileges = PrivilegeStore(conn, self._lock, DEFAULT_DATABASE, DEFAULT_SCHEMA)
        self._secrets = SecretStore(conn, self._lock, self._next)
        self._clusters: Clusters | None = None
        from catalog.sinks import SinkStore
        self._sinks = SinkStore(conn, self._lock, self._next)

    @classmethod
    def open(cls, path: Path) -> "Catalog":
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT OR IGNORE INTO counters VALUES ('id', 0), ('oid', ?)", (FIRST_USER_OID,))
        conn.execute("CREATE TABLE IF NOT EXISTS databases (name TEXT PRIMARY KEY, oid INTEGER NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS schemas (database TEXT NOT NULL, name TEXT NOT NULL, "
                     "oid INTEGER NOT NULL, PRIMARY KEY (database, name))")
        conn.execute("INSERT OR IGNORE INTO databases VALUES (?, ?)", (DEFAULT_DATABASE, DEFAULT_DATABASE_OID))
        conn.execute("INSERT OR IGNORE INTO schemas VALUES (?, ?, ?)",
                     (DEFAULT_DATABASE, DEFAULT_SCHEMA, PUBLIC_SCHEMA_OID))
        return cls(conn)

    # -- reads (CatalogReader) -------------------------------------------------------------

    @property
    def version(self) -> int:
        """Changes with every write to the catalog (items, namespaces, roles, privileges,
        secrets, sinks, clusters, settings): what was planned against one version holds until
        the next. (The timestamp oracle's high-water mark moves it too, every few seconds of
        writes.)"""
        return self._conn.total_changes

    def __contains__(self, id: str) -> bool:
        return id in self._items

    def get(self, id: str) -> CatalogItem:
        try:
            return self._items[id]
        except KeyError:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown catalog item '{id}'") from None

    def items(self) -> list[CatalogItem]:
        return sorted(self._items.values(), key=lambda i: int(i.id[1:]))

    def databases(self) -> list[tuple[str, int]]:
        """(name, oid) of every database, by name."""
        return [(n, o) for n, o in self._conn.execute("SELECT name, oid FROM databases ORDER BY name")]

    def schemas(self, database: str | None = None) -> list[tuple[str, str, int]]:
        """(database, name, oid) of the schemas of `database` (all when None), by name."""
        rows = self._conn.execute("SELECT database, name, oid FROM schemas ORDER BY database, name")
        return [(d, n, o) for d, n, o in rows if database is None or d == database]

    def indexes_on(self, id: str) -> list[CatalogItem]:
        return [i for i in self.items() if i.kind is ItemKind.INDEX and i.index_on == id]

    def dependents(self, id: str) -> list[CatalogItem]:
        """Objects that read `id` directly (views, materialized views, indexes)."""
        return [i for i in self.items() if id in i.depends_on or i.index_on == id]

    def try_resolve(self, name: tuple[str, ...], search_path: tuple[str, ...] = (DEFAULT_SCHEMA,),
                    database: str = DEFAULT_DATABASE) -> CatalogItem | None:
        parts = [p for p in name]
        if len(parts) == 3:
            database, schemas, obj = parts[0], (parts[1],), parts[2]
        elif len(parts) == 2:
            schemas, obj = (parts[0],), parts[1]
        elif len(parts) == 1:
            schemas, obj = tuple(search_path), parts[0]
        else:
            raise SqlError(SqlState.SYNTAX_ERROR, f"improper qualified name (too many dotted names): {'.'.join(parts)}")
        for schema in schemas:
            for item in self._items.values():
                if item.name == obj and item.schema == schema and item.database == database:
                    return item
        return None

    def resolve(self, name: tuple[str, ...], search_path: tuple[str, ...] = (DEFAULT_SCHEMA,),
                database: str = DEFAULT_DATABASE) -> CatalogItem:
        item = self.try_resolve(name, search_path, database)
        if item is None:
            raise SqlError(SqlState.UNDEFINED_TABLE, f'relation "{".".join(name)}" does not exist')
        return item

    # -- writes ------------------------------------------------------------------------------

    def _next(self, counter: str) -> int:
        (value,) = self._conn.execute("SELECT value FROM counters WHERE name = ?", (counter,)).fetchone()
        self._conn.execute("UPDATE counters SET value = ? WHERE name = ?", (value + 1, counter))
        return value + 1

    def create(self, kind: ItemKind, schema: str, name: str, columns: tuple[Column, ...],
               create_sql: str, *, database: str = DEFAULT_DATABASE, definition: str | None = None,
               depends_on: tuple[str, ...] = (), index_on: str | None = None,
               index_key: tuple[int, ...] = (), cluster_id: str | None = None,
               pg_definitions: tuple[str, str] | None = None) -> CatalogItem:
        """Allocate an id and store the object durably; raises 42P07 if the name is taken."""
        with self._lock:
            existing = self.try_resolve((database, schema, name))
            if existing is not None:
                word = _KIND_WORDS[existing.kind]
                raise SqlError(SqlState.DUPLICATE_TABLE, f'{word} "{name}" already exists')
            if not any(n == schema for _, n, _ in self.schemas(database)):
                if not any(d == database for d, _ in self.databases()):
                    raise SqlError("3D000", f'database "{database}" does not exist')
                raise SqlError("3F000", f'schema "{schema}" does not exist')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                item = CatalogItem(
                    id=f"u{self._next('id')}", oid=self._next("oid"), kind=kind, database=database,
                    schema=schema, name=name, columns=columns, create_sql=create_sql,
                    definition=definition, depends_on=depends_on, index_on=index_on,
                    index_key=index_key, owner=CURRENT_ROLE.get(), cluster_id=cluster_id,
                    pg_definitions=pg_definitions)
                self._conn.execute("INSERT INTO items VALUES (?, ?)", (item.id, item_to_json(item)))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._items[item.id] = item
            return item

    def drop(self, ids: list[str]) -> None:
        """Remove objects durably, all in one transaction."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for id in ids:
                    self._conn.execute("DELETE FROM items WHERE id = ?", (id,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            for id in ids:
                self._items.pop(id, None)
        self._privileges.forget([("item", id) for id in ids])

    def create_database(self, name: str) -> None:
        """A new database with its `public` schema; 42P04 if the name is taken."""
        with self._lock:
            if any(n == name for n, _ in self.databases()):
                raise SqlError("42P04", f'database "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("INSERT INTO databases VALUES (?, ?)", (name, self._next("oid")))
                self._conn.execute("INSERT INTO schemas VALUES (?, ?, ?)", (name, DEFAULT_SCHEMA, self._next("oid")))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def create_schema(self, database: str, name: str) -> None:
        """A new schema; 3D000 if the database does not exist, 42P06 if the name is taken."""
        with self._lock:
            if not any(n == database for n, _ in self.databases()):
                raise SqlError("3D000", f'database "{database}" does not exist')
            if any(n == name for _, n, _ in self.schemas(database)):
                raise SqlError("42P06", f'schema "{name}" already exists')
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("INSERT INTO schemas VALUES (?, ?, ?)", (database, name, self._next("oid")))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def drop_namespaces(self, database: str, schemas: list[str], whole_database: bool) -> None:
        """Forget schemas (and the database itself when `whole_database`); their objects must have
        been dropped already."""
        gone = [("schema", f"{database}.{s}") for s in
                (schemas if not whole_database else [n for _, n, _ in self.schemas(database)])]
        if whole_database:
            gone.append(("database", database))
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for s in schemas:
                    self._conn.execute("DELETE FROM schemas WHERE database = ? AND name = ?", (database, s))
                if whole_database:
                    self._conn.execute("DELETE FROM schemas WHERE database = ?", (database,))
                    self._conn.execute("DELETE FROM databases WHERE name = ?", (database,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        self._privileges.forget(gone)

    def replace(self, item: CatalogItem) -> None:
        with self._lock:
            self._conn.execute("UPDATE items SET body = ? WHERE id = ?", (item_to_json(item), item.id))
            self._items[item.id] = item

    # -- roles (catalog/roles.py) -----------------------------------------------------------

    def roles(self) -> list[Role]:
        """Every role, by OID (the default superuser first)."""
        return self._roles.roles()

    def role(self, name: str) -> Role | None:
        return self._roles.get(name)

    @property
    def privileges(self) -> PrivilegeStore:
        """GRANT / REVOKE / ownership of databases and schemas (catalog/privileges.py)."""
        return self._privileges

    @property
    def secrets(self) -> SecretStore:
        """Secrets and connections (catalog/secrets.py)."""
        return self._secrets

    @property
    def sinks(self):
        """CREATE SINK's sinks (catalog/sinks.py)."""
        return self._sinks

    @property
    def role_store(self) -> RoleStore:
        """CREATE / ALTER / DROP ROLE go through this (see RoleStore)."""
        return self._roles

    # -- small durable settings (e.g. the timestamp oracle's high-water mark) ---------------

    def clusters(self) -> Clusters:
        """The compute clusters and their replicas (catalog/clusters.py)."""
        if self._clusters is None:
            self._clusters = Clusters.load(self)
        return self._clusters

    def set_clusters(self, clusters: Clusters) -> None:
        clusters.save(self)
        self._clusters = clusters

    def get_setting(self, name: str) -> str | None:
        row = self._conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def set_setting(self, name: str, value: str) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO settings VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                               (name, value))

    def close(self) -> None:
        self._conn.close()


def drop_closure(catalog: Catalog, ids: list[str]) -> list[str]:
    """`ids` plus everything that depends on them, transitively, dependents first."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(id: str) -> None:
        if id in seen:
            return
        seen.add(id)
        for dep in catalog.dependents(id):
            visit(dep.id)
        order.append(id)

    for id in ids:
        visit(id)
    return order


def creation_order(catalog: Catalog, ids) -> list[str]:
    """`ids` in the order their items were created, so every item comes after what it reads
    (ids are numbered, and 'u10' sorts before 'u9' as text)."""
    rank = {item.id: n for n, item in enumerate(catalog.items())}
    return sorted(ids, key=lambda id: rank.get(id, len(rank)))


__all__ = ["Catalog", "creation_order", "drop_closure", "DEFAULT_DATABASE", "DEFAULT_SCHEMA", "replace"]
