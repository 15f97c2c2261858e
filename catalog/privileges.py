"""Privileges, ownership of databases and schemas, and role membership, in the durable catalog's
SQLite database (the same connection and lock as the items and roles, one transaction per change).

Objects are named by a kind and a key:

    ("database", "slipstream")          a database, by name
    ("schema", "slipstream.public")     a schema, by database and name
    ("item", "u12")                     a table, view, materialized view or index, by catalog id
    ("cluster", "u1")                   a compute cluster, by its id (catalog/clusters.py)

Privileges are PostgreSQL's aclitem letters (r SELECT, a INSERT, w UPDATE, d DELETE, D TRUNCATE,
x REFERENCES, t TRIGGER, U USAGE, C CREATE, T TEMPORARY, c CONNECT). The store keeps only what was
granted; an owner holds every privilege of its object implicitly (as PostgreSQL's acldefault), so
an object nobody granted anything on has no rows (relacl NULL, as in PostgreSQL). The grantee
"public" is PostgreSQL's PUBLIC: every role. Items carry their owner themselves
(`CatalogItem.owner`); databases and schemas have theirs here (the default role when not set).

At creation the store grants PUBLIC USAGE on the default database and on its `public` schema
(Materialize's defaults; PostgreSQL 15 gives PUBLIC USAGE on `public` too) and USAGE on the
`quickstart` cluster (Materialize's default), and TEMPORARY and
CONNECT on the database (PostgreSQL's defaults, which Slipstream does not enforce). The adapter
grants PUBLIC USAGE on the `public` schema and TEMPORARY, CONNECT on every new database.

    store = PrivilegeStore(conn, lock)
    store.grant(("item", "u1"), ["alice"], "ra")
    store.acl(("item", "u1"))          # {"alice": "ar"}
"""

from __future__ import annotations

import contextvars
import sqlite3
import threading

from catalog.roles import DEFAULT_ROLE
from catalog.sqlite_writes import write_atomically

# PostgreSQL's ACL_ALL_RIGHTS_STR order: how privilege letters print in an aclitem.
ACL_ORDER = "arwdDxtXUCTcsA"

PRIVILEGE_LETTERS = {
    "SELECT": "r", "INSERT": "a", "UPDATE": "w", "DELETE": "d", "TRUNCATE": "D", "REFERENCES": "x",
    "TRIGGER": "t", "USAGE": "U", "CREATE": "C", "TEMPORARY": "T", "TEMP": "T", "CONNECT": "c",
}
LETTER_NAMES = {"r": "SELECT", "a": "INSERT", "w": "UPDATE", "d": "DELETE", "D": "TRUNCATE",
                "x": "REFERENCES", "t": "TRIGGER", "U": "USAGE", "C": "CREATE", "T": "TEMPORARY",
                "c": "CONNECT"}

# Which privileges each kind of object has (an owner holds all of them).
VALID = {
    "table": "arwdDxt",
    "view": "r",  # Materialize: views and materialized views are read-only, SELECT is all there is
    "materialized view": "r",
    "schema": "UC",
    "database": "UCTc",
    "cluster": "UC",  # Materialize: USAGE to run queries on it, CREATE to put views and indexes in it
}

PUBLIC = "public"


def valid_privileges(kind: str) -> str:
    """The privileges of an object kind; relations of kinds not listed (sources, ...) are
    read-only: SELECT."""
    return VALID.get(kind, "r")

# The role on whose behalf the current statement runs: new catalog items are owned by it
# (`Catalog.create` reads it). The adapter sets it per statement; the default is the superuser.
CURRENT_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("slipstream_current_role", default=DEFAULT_ROLE)

Key = tuple[str, str]


def ordered(letters: str) -> str:
    return "".join(c for c in ACL_ORDER if c in letters)


class PrivilegeStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock, default_database: str,
                 default_schema: str) -> None:
        self._conn = conn
        self._lock = lock
        conn.execute("CREATE TABLE IF NOT EXISTS acl (kind TEXT NOT NULL, key TEXT NOT NULL, "
                     "grantee TEXT NOT NULL, privs TEXT NOT NULL, PRIMARY KEY (kind, key, grantee))")
        conn.execute("CREATE TABLE IF NOT EXISTS owners (kind TEXT NOT NULL, key TEXT NOT NULL, "
                     "owner TEXT NOT NULL, PRIMARY KEY (kind, key))")
        conn.execute("CREATE TABLE IF NOT EXISTS role_members (role TEXT NOT NULL, member TEXT NOT NULL, "
                     "PRIMARY KEY (role, member))")
        conn.execute("CREATE TABLE IF NOT EXISTS role_settings (role TEXT NOT NULL, name TEXT NOT NULL, "
                     "value TEXT NOT NULL, PRIMARY KEY (role, name))")
        conn.execute("CREATE TABLE IF NOT EXISTS acl_seeded (done INTEGER NOT NULL)")
        if conn.execute("SELECT count(*) FROM acl_seeded").fetchone()[0] == 0:
            conn.execute("INSERT OR IGNORE INTO acl VALUES ('database', ?, ?, 'UTc')", (default_database, PUBLIC))
            conn.execute("INSERT OR IGNORE INTO acl VALUES ('schema', ?, ?, 'U')",
                         (f"{default_database}.{default_schema}", PUBLIC))
            conn.execute("INSERT INTO acl_seeded VALUES (1)")
        if conn.execute("SELECT count(*) FROM acl_seeded WHERE done = 2").fetchone()[0] == 0:
            # (also for a catalog from before clusters had privileges: PUBLIC kept using quickstart)
            conn.execute("INSERT OR IGNORE INTO acl VALUES ('cluster', 'u1', ?, 'U')", (PUBLIC,))
            conn.execute("INSERT INTO acl_seeded VALUES (2)")
        self._acl: dict[Key, dict[str, str]] = {}
        for kind, key, grantee, privs in conn.execute("SELECT kind, key, grantee, privs FROM acl"):
            self._acl.setdefault((kind, key), {})[grantee] = privs
        self._owners: dict[Key, str] = {(k, key): o for k, key, o in conn.execute("SELECT kind, key, owner FROM owners")}
        self._members: set[tuple[str, str]] = set(conn.execute("SELECT role, member FROM role_members"))
        self._settings: dict[str, dict[str, str]] = {}
        for role, name, value in conn.execute("SELECT role, name, value FROM role_settings"):
            self._settings.setdefault(role, {})[name] = value

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        write_atomically(self._conn, statements)

    # -- reads

    def acl(self, obj: Key) -> dict[str, str]:
        """grantee -> privilege letters explicitly granted on `obj`."""
        return dict(self._acl.get(obj, {}))

    def has_rows(self, obj: Key) -> bool:
        return bool(self._acl.get(obj))

    def owner(self, obj: Key) -> str:
        """The owner of a database or schema."""
        return self._owners.get(obj, DEFAULT_ROLE)

    def memberships(self) -> set[tuple[str, str]]:
        return set(self._members)

    def roles_of(self, user: str) -> set[str]:
        """`user`, every role it is a member of (transitively: PostgreSQL's INHERIT), and PUBLIC."""
        out = {user, PUBLIC}
        frontier = [user]
        while frontier:
            r = frontier.pop()
            for role, member in self._members:
                if member == r and role not in out:
                    out.add(role)
                    frontier.append(role)
        return out

    def referencing(self, role: str) -> list[Key]:
        """Objects on which `role` holds privileges or that it owns (database/schema)."""
        found = [k for k, acl in self._acl.items() if role in acl]
        found += [k for k, o in self._owners.items() if o == role]
        return found

    # -- writes

    def grant(self, obj: Key, grantees: list[str], letters: str) -> None:
        with self._lock:
            stmts, new = [], {}
            for g in grantees:
                privs = ordered(set(self._acl.get(obj, {}).get(g, "")) | set(letters))
                new[g] = privs
                stmts.append(("INSERT INTO acl VALUES (?, ?, ?, ?) ON CONFLICT(kind, key, grantee) "
                              "DO UPDATE SET privs = excluded.privs", (obj[0], obj[1], g, privs)))
            self._write(stmts)
            self._acl.setdefault(obj, {}).update(new)

    def revoke(self, obj: Key, grantees: list[str], letters: str) -> None:
        with self._lock:
            stmts, new = [], {}
            for g in grantees:
                privs = ordered(set(self._acl.get(obj, {}).get(g, "")) - set(letters))
                new[g] = privs
                if privs:
                    stmts.append(("UPDATE acl SET privs = ? WHERE kind = ? AND key = ? AND grantee = ?",
                                  (privs, obj[0], obj[1], g)))
                else:
                    stmts.append(("DELETE FROM acl WHERE kind = ? AND key = ? AND grantee = ?", (obj[0], obj[1], g)))
            self._write(stmts)
            acl = self._acl.setdefault(obj, {})
            for g, privs in new.items():
                if privs:
                    acl[g] = privs
                else:
                    acl.pop(g, None)

    def set_owner(self, obj: Key, owner: str) -> None:
        with self._lock:
            self._write([("INSERT INTO owners VALUES (?, ?, ?) ON CONFLICT(kind, key) DO UPDATE SET owner = excluded.owner",
                          (obj[0], obj[1], owner))])
            self._owners[obj] = owner

    def forget(self, objects: list[Key]) -> None:
        """Drop every privilege and owner row of objects that no longer exist."""
        objects = [o for o in objects if o in self._acl or o in self._owners]
        if not objects:
            return
        with self._lock:
            stmts = []
            for kind, key in objects:
                stmts.append(("DELETE FROM acl WHERE kind = ? AND key = ?", (kind, key)))
                stmts.append(("DELETE FROM owners WHERE kind = ? AND key = ?", (kind, key)))
            self._write(stmts)
            for o in objects:
                self._acl.pop(o, None)
                self._owners.pop(o, None)

    def add_member(self, role: str, member: str) -> None:
        with self._lock:
            self._write([("INSERT OR IGNORE INTO role_members VALUES (?, ?)", (role, member))])
            self._members.add((role, member))

    def remove_member(self, role: str, member: str) -> None:
        with self._lock:
            self._write([("DELETE FROM role_members WHERE role = ? AND member = ?", (role, member))])
            self._members.discard((role, member))

    def forget_role(self, role: str) -> None:
        """A dropped role's memberships and settings go with it (its privileges were checked to
        be gone)."""
        with self._lock:
            self._write([("DELETE FROM role_members WHERE role = ? OR member = ?", (role, role)),
                         ("DELETE FROM role_settings WHERE role = ?", (role,))])
            self._members = {(r, m) for r, m in self._members if role not in (r, m)}
            self._settings.pop(role, None)

    # -- per-role defaults of session variables (ALTER ROLE ... SET)

    def role_settings(self, role: str) -> dict[str, str]:
        return dict(self._settings.get(role, {}))

    def set_role_setting(self, role: str, name: str | None, value: str | None) -> None:
        """Set one default (value None removes it; name None removes all)."""
        with self._lock:
            if name is None:
                self._write([("DELETE FROM role_settings WHERE role = ?", (role,))])
                self._settings.pop(role, None)
            elif value is None:
                self._write([("DELETE FROM role_settings WHERE role = ? AND name = ?", (role, name))])
                self._settings.get(role, {}).pop(name, None)
            else:
                self._write([("INSERT INTO role_settings VALUES (?, ?, ?) ON CONFLICT(role, name) "
                              "DO UPDATE SET value = excluded.value", (role, name, value))])
                self._settings.setdefault(role, {})[name] = value


def acl_items(store: PrivilegeStore, obj: Key, kind: str, owner: str) -> str | None:
    """aclitem[] as PostgreSQL prints it: NULL when nothing was granted (the owner's default),
    else the owner's entry first and one `grantee=privs/grantor` per grantee (PUBLIC's name
    empty; the grantor shown is the owner, on whose behalf every grant is made)."""
    acl = store.acl(obj)
    if not acl:
        return None
    out = [f"{owner}={valid_privileges(kind)}/{owner}"]
    for grantee, privs in sorted(acl.items(), key=lambda kv: (kv[0] != PUBLIC, kv[0])):
        if grantee == owner:
            continue
        out.append(f"{'' if grantee == PUBLIC else grantee}={privs}/{owner}")
    # arrays are kept as their PostgreSQL text form (docs/architecture.md, Data model)
    return "{" + ",".join(_quote(x) for x in out) + "}"


def _quote(element: str) -> str:
    if any(c in element for c in '{},"\\ ') or element == "":
        return '"' + element.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return element


def catalog_acls(catalog) -> tuple[dict, dict]:
    """(object key -> aclitem list or None, database/schema key -> owner) for the system catalogs."""
    store = getattr(catalog, "privileges", None)
    if store is None:
        return {}, {}
    acls, owners = {}, {}
    for item in catalog.items():
        if item.kind.value != "index":
            acls[("item", item.id)] = acl_items(store, ("item", item.id), item.kind.value, item.owner)
    for name, _ in catalog.databases():
        key = ("database", name)
        owners[key] = store.owner(key)
        acls[key] = acl_items(store, key, "database", owners[key])
    for db, name, _ in catalog.schemas():
        key = ("schema", f"{db}.{name}")
        owners[key] = store.owner(key)
        acls[key] = acl_items(store, key, "schema", owners[key])
    return acls, owners


def schema_key(database: str, schema: str) -> Key:
    return ("schema", f"{database}.{schema}")


def item_key(item) -> Key:
    return ("item", item.id)


class PrivilegeChecker:
    """Answers "may role R do P on object O" from the catalog (one instance per check)."""

    def __init__(self, catalog) -> None:
        self.catalog = catalog
        self.store = catalog.privileges

    def superuser(self, role: str, session=None) -> bool:
        r = self.catalog.role(role)
        if r is None:  # not a role: a trust login (a superuser), or objects of such a login
            if session is not None:
                return session.vars.get("is_superuser", "on") == "on"
            return True
        return r.superuser  # SUPERUSER is not inherited through membership (PostgreSQL)

    def owner(self, obj: tuple[str, str]) -> str:
        if obj[0] == "item":
            return self.catalog.get(obj[1]).owner
        return self.store.owner(obj)

    def is_owner(self, role: str, obj: tuple[str, str]) -> bool:
        return self.owner(obj) in self.store.roles_of(role)

    def has(self, role: str, obj: tuple[str, str], letter: str) -> bool:
        roles = self.store.roles_of(role)
        if self.owner(obj) in roles:
            return True
        acl = self.store.acl(obj)
        return any(letter in acl.get(r, "") for r in roles)
