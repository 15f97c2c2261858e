"""Privilege checks for every statement, and GRANT / REVOKE / ALTER ... OWNER TO.

The sequencer calls `check(...)` with each statement's plan before running it. What is checked
follows PostgreSQL (and Materialize where PostgreSQL has no such object):

* reading a relation (SELECT, SUBSCRIBE, COPY TO, DECLARE, EXPLAIN, INSERT ... SELECT, subqueries
  of UPDATE/DELETE, CREATE MATERIALIZED VIEW): SELECT on it; a view read is checked further as
  its owner: the owner needs SELECT on what the view reads (PostgreSQL's rule), recursively
  through views; a materialized view is its own relation (nothing behind it is checked).
* writing: INSERT / UPDATE / DELETE on the table (COPY FROM needs INSERT); UPDATE and DELETE
  with a WHERE clause, or an UPDATE whose new values read columns, need SELECT too.
* every object used needs USAGE on its schema and its database (Materialize's rule; PostgreSQL
  has USAGE on schemas only). PUBLIC has USAGE on the default database and each `public` schema.
* CREATE TABLE / VIEW / MATERIALIZED VIEW / INDEX: CREATE on the schema; CREATE INDEX also
  ownership of the indexed relation (Materialize); CREATE SCHEMA: CREATE on the database;
  CREATE DATABASE: superuser.
* clusters (Materialize's rule): a statement that reads a relation (SELECT, SUBSCRIBE, COPY TO,
  DECLARE, and the reads of INSERT ... SELECT, UPDATE, DELETE) needs USAGE on the session's
  cluster; a materialized view or index needs CREATE on the cluster it goes in. PUBLIC has
  USAGE on quickstart.
* DROP, ALTER ... OWNER TO, CREATE OR REPLACE: ownership (`must be owner of table t`).
* a superuser (and a session of a user that is no role, possible only under `--auth trust`)
  passes every check; an owner holds every privilege on its object.
* a statement kind without a rule here is refused to non-superusers (42501), so that a new
  statement is closed until its privileges are defined; a new `Create...Plan` with `schema`
  and `database` fields needs CREATE on the schema.

Errors are 42501 with PostgreSQL's words (`permission denied for table t`, `permission denied for
schema s`, `must be owner of view v`). Privileges live in catalog/privileges.py.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.items import CatalogItem, ItemKind
from catalog.privileges import (PRIVILEGE_LETTERS, PUBLIC, PrivilegeChecker as Privileges, item_key, ordered,
                                schema_key, valid_privileges)
from dataflow.errors import SqlError, SqlState
from planner.mz_ast import ROLE_STATEMENTS
from planner.privilege_syntax import PRIVILEGE_STATEMENTS, AlterOwner, AlterRoleSet, GrantPrivileges, GrantRole
from planner.statements import (ClosePlan, CopyFromPlan, CopyToPlan, CreateIndexPlan, CreateNamespacePlan,
                                CreateTablePlan, CreateViewPlan, DeallocatePlan, DeclarePlan, DeletePlan, DiscardPlan,
                                DropNamespacePlan, DropPlan, EmptyPlan, ExecutePlan, ExplainPlan, FetchPlan,
                                InsertPlan, PreparePlan, SelectPlan, SetVariablePlan, ShowPlan, SubscribePlan,
                                TransactionPlan, UpdatePlan)
from server.api import CommandComplete, Session

INSUFFICIENT_PRIVILEGE = "42501"


def _kind_word(item: CatalogItem) -> str:
    return item.kind.value


# ------------------------------------------------------------------------------------- checks


def _deny(what: str, name: str) -> SqlError:
    return SqlError(INSUFFICIENT_PRIVILEGE, f"permission denied for {what} {name}")


def _not_owner(what: str, name: str) -> SqlError:
    return SqlError(INSUFFICIENT_PRIVILEGE, f"must be owner of {what} {name}")


def _usage(p: Privileges, role: str, database: str, schema: str) -> None:
    if not p.has(role, ("database", database), "U"):
        raise _deny("database", database)
    if not p.has(role, schema_key(database, schema), "U"):
        raise _deny("schema", schema)


def _read(p: Privileges, role: str, item: CatalogItem, seen: set) -> None:
    """`role` reads `item`; a view's own reads are checked as the view's owner."""
    if (role, item.id) in seen:
        return
    seen.add((role, item.id))
    if p.superuser(role):
        return
    _usage(p, role, item.database, item.schema)
    if item.kind is ItemKind.INDEX:
        return
    if not p.has(role, item_key(item), "r"):
        raise _deny(_kind_word(item), item.name)
    if item.kind is ItemKind.VIEW:
        for dep in item.depends_on:
            try:
                inner = p.catalog.get(dep)
            except SqlError:
                continue
            _read(p, item.owner, inner, seen)


def _reads(p: Privileges, role: str, ids, skip_first: str | None = None) -> None:
    seen: set = set()
    ids = list(ids)
    if skip_first is not None and skip_first in ids:
        ids.remove(skip_first)
    for id in dict.fromkeys(ids):
        try:
            item = p.catalog.get(id)
        except SqlError:
            continue
        _read(p, role, item, seen)


def _write(p: Privileges, role: str, item: CatalogItem, letter: str) -> None:
    _usage(p, role, item.database, item.schema)
    if not p.has(role, item_key(item), letter):
        raise _deny(_kind_word(item), item.name)


def _create_in(p: Privileges, role: str, database: str, schema: str) -> None:
    if not p.has(role, ("database", database), "U"):
        raise _deny("database", database)
    if not p.has(role, schema_key(database, schema), "C"):
        raise _deny("schema", schema)


def _use_cluster(p: Privileges, role: str, catalog, name: str, letter: str) -> None:
    """USAGE ("U": run a query on it) or CREATE ("C": put a view or index in it) on a cluster;
    an unknown cluster is the statement's own 42704 later."""
    spec = catalog.clusters().by_name(name) if hasattr(catalog, "clusters") else None
    if spec is not None and not p.has(role, ("cluster", spec.id), letter):
        raise _deny("cluster", name)


def _computes(catalog, reads) -> bool:
    """Whether a statement reads a relation the cluster computes (not only constants and the
    system catalog, which the coordinator answers itself)."""
    for id in reads:
        try:
            catalog.get(id)
        except SqlError:
            continue
        return True
    return False


def _own(p: Privileges, role: str, item: CatalogItem) -> None:
    if not p.is_owner(role, item_key(item)):
        raise _not_owner(_kind_word(item), item.name)


def _update_reads_columns(ast) -> bool:
    """Whether an UPDATE / DELETE reads the target's rows (WHERE, or SET values with columns)."""
    if ast is None:
        return True
    if ast.args.get("where") is not None:
        return True
    if isinstance(ast, exp.Update):
        for e in ast.expressions:
            value = e.expression if isinstance(e, exp.EQ) else e
            if value is not None and any(True for _ in value.find_all(exp.Column)):
                return True
    return False


def check(catalog, session: Session, plan, reads: list[str], ast=None) -> None:
    """Raise 42501 unless the session's role may run `plan` (see the module docstring)."""
    if getattr(catalog, "privileges", None) is None:  # a catalog without privileges (unit tests)
        return
    p = Privileges(catalog)
    role = session.user
    if p.superuser(role, session):
        return
    cluster = session.vars.get("cluster", "quickstart")
    if isinstance(plan, (SelectPlan, SubscribePlan, CopyToPlan, DeclarePlan, InsertPlan, UpdatePlan, DeletePlan)) \
            and _computes(catalog, reads):
        _use_cluster(p, role, catalog, cluster, "U")  # the session's cluster runs it
    if isinstance(plan, (SelectPlan, SubscribePlan, CopyToPlan, DeclarePlan, ExplainPlan)):
        _reads(p, role, reads)
    elif isinstance(plan, (InsertPlan, CopyFromPlan)):
        _write(p, role, catalog.get(plan.table_id), "a")
        _reads(p, role, reads)
    elif isinstance(plan, (UpdatePlan, DeletePlan)):
        item = catalog.get(plan.table_id)
        _write(p, role, item, "w" if isinstance(plan, UpdatePlan) else "d")
        if _update_reads_columns(ast):
            _reads(p, role, [item.id])
        _reads(p, role, reads, skip_first=item.id)
    elif isinstance(plan, CreateTablePlan):
        _create_in(p, role, plan.database, plan.schema)
    elif isinstance(plan, CreateViewPlan):
        _create_in(p, role, plan.database, plan.schema)
        existing = catalog.try_resolve((plan.database, plan.schema, plan.name))
        if existing is not None and plan.or_replace and not plan.if_not_exists:
            _own(p, role, existing)
        if plan.materialized:
            _use_cluster(p, role, catalog, plan.cluster, "C")
            _reads(p, role, reads)
        else:  # PostgreSQL checks a view's reads when it is read, as its owner; USAGE now
            for id in dict.fromkeys(reads):
                item = catalog.get(id)
                _usage(p, role, item.database, item.schema)
    elif isinstance(plan, CreateIndexPlan):
        on = catalog.get(plan.on_id)
        _own(p, role, on)
        _create_in(p, role, plan.database, plan.schema)
        _use_cluster(p, role, catalog, plan.cluster, "C")
    elif isinstance(plan, DropPlan):
        for id in plan.ids:
            _own(p, role, catalog.get(id))
    elif isinstance(plan, CreateNamespacePlan):
        if plan.kind == "database":
            raise SqlError(INSUFFICIENT_PRIVILEGE, "permission denied to create database")
        if not p.has(role, ("database", plan.database), "C"):
            raise _deny("database", plan.database)
    elif isinstance(plan, DropNamespacePlan):
        if plan.kind == "database":
            if not p.is_owner(role, ("database", plan.database)):
                raise _not_owner("database", plan.database)
        else:
            for s in plan.schemas:
                if not p.is_owner(role, schema_key(plan.database, s)):
                    raise _not_owner("schema", s)
    elif type(plan).__name__.startswith("Create") and hasattr(plan, "schema") and hasattr(plan, "database"):
        # Another object created in a schema (e.g. a source): CREATE on the schema, as Materialize.
        _create_in(p, role, plan.database, plan.schema)
    elif not isinstance(plan, _UNCHECKED):
        # A statement this module has no rule for yet is for superusers only: a new kind of
        # statement must not be open to every role by default.
        raise SqlError(INSUFFICIENT_PRIVILEGE, "permission denied",
                       detail="Only superusers may run this statement.")


# Statements that touch no object (or check their own privileges).
_UNCHECKED = (ShowPlan, SetVariablePlan, TransactionPlan, FetchPlan, ClosePlan, DiscardPlan, DeallocatePlan,
              PreparePlan, ExecutePlan, EmptyPlan, *ROLE_STATEMENTS, *PRIVILEGE_STATEMENTS)


def after_create_namespace(catalog, session: Session, plan: CreateNamespacePlan) -> None:
    """A new schema or database is owned by its creator; a new database's `public` schema gets
    USAGE for PUBLIC (as the default database's has)."""
    store = catalog.privileges
    if plan.kind == "database":
        store.set_owner(("database", plan.database), session.user)
        store.set_owner(schema_key(plan.database, "public"), session.user)
        store.grant(schema_key(plan.database, "public"), [PUBLIC], "U")
        store.grant(("database", plan.database), [PUBLIC], "Tc")  # PostgreSQL's default
    else:
        store.set_owner(schema_key(plan.database, plan.name), session.user)


# ------------------------------------------------------------------------- GRANT / REVOKE / OWNER


def _resolve_role(catalog, session: Session, name: str, *, public_ok: bool) -> str:
    if name in ("CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"):
        return session.user
    if name == PUBLIC:
        if public_ok:
            return PUBLIC
    if catalog.role(name) is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
    return name


def _letters(privileges, kind: str, name_for_error: str) -> str:
    valid = valid_privileges(kind)
    if privileges is None:
        return valid
    out = ""
    for priv in privileges:
        letter = PRIVILEGE_LETTERS.get(priv)
        if letter is None or letter not in valid:
            raise SqlError("0LP01", f"invalid privilege type {priv} for {name_for_error}")
        out += letter
    return ordered(out)


def _targets(catalog, session: Session, stmt: GrantPrivileges):
    """(object key, kind, name for messages, owner) per named object."""
    from server.adapter.sequencer import _search_path
    database = session.vars.get("database", "slipstream")
    out = []
    if stmt.kind == "cluster":
        for name in stmt.names:
            spec = catalog.clusters().by_name(name[-1])
            if spec is None:
                raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name[-1]}'")
            out.append((("cluster", spec.id), "cluster", spec.name))
        return out
    if stmt.kind in ("schema", "all tables"):
        for name in stmt.names:
            db, schema = (name[0], name[1]) if len(name) == 2 else (database, name[-1])
            if not any(n == schema for _, n, _ in catalog.schemas(db)):
                raise SqlError("3F000", f'schema "{schema}" does not exist')
            if stmt.kind == "schema":
                out.append((schema_key(db, schema), "schema", schema))
            else:
                for item in catalog.items():
                    if item.database == db and item.schema == schema and item.kind is ItemKind.TABLE:
                        out.append((item_key(item), "table", item.name))
        return out
    if stmt.kind == "database":
        for name in stmt.names:
            db = name[-1]
            if not any(n == db for n, _ in catalog.databases()):
                raise SqlError("3D000", f'database "{db}" does not exist')
            out.append((("database", db), "database", db))
        return out
    for name in stmt.names:
        item = catalog.resolve(tuple(name), _search_path(session), database)
        if item.kind is ItemKind.INDEX:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is an index')
        want = {"view": ItemKind.VIEW, "materialized view": ItemKind.MATERIALIZED_VIEW}.get(stmt.kind)
        if want is not None and item.kind is not want:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is not a {stmt.kind}')
        out.append((item_key(item), item.kind.value, item.name))
    return out


def _grant_privileges(catalog, session: Session, stmt: GrantPrivileges) -> CommandComplete:
    p = Privileges(catalog)
    su = p.superuser(session.user, session)
    grantees = [_resolve_role(catalog, session, g, public_ok=True) for g in stmt.grantees]
    plans = []
    for obj, kind, name in _targets(catalog, session, stmt):
        letters = _letters(stmt.privileges, kind, kind)
        if not su and not p.is_owner(session.user, obj):
            # PostgreSQL: without the grant option (which Slipstream does not have), only the owner
            raise _deny(kind, name)
        plans.append((obj, letters))
    for obj, letters in plans:
        if stmt.revoke:
            catalog.privileges.revoke(obj, grantees, letters)
        else:
            catalog.privileges.grant(obj, grantees, letters)
    return CommandComplete("REVOKE" if stmt.revoke else "GRANT")


def _grant_role(catalog, session: Session, stmt: GrantRole) -> CommandComplete:
    p = Privileges(catalog)
    if not p.superuser(session.user, session):
        # PostgreSQL: the role's ADMIN OPTION holders (or CREATEROLE) may; Slipstream has neither.
        raise SqlError(INSUFFICIENT_PRIVILEGE, f'must have admin option on role "{stmt.roles[0]}"')
    roles = [_resolve_role(catalog, session, r, public_ok=False) for r in stmt.roles]
    members = [_resolve_role(catalog, session, r, public_ok=False) for r in stmt.members]
    store = catalog.privileges
    for role in roles:
        for member in members:
            if stmt.revoke:
                if (role, member) not in store.memberships():
                    session.pending_notices.append(
                        ("01000", f'role "{member}" has not been granted membership in role "{role}" by role "{session.user}"'))
                store.remove_member(role, member)
                continue
            if member == role or role in _members_closure(store, member):
                raise SqlError("0LP01", f'role "{role}" is a member of role "{member}"')
            if (role, member) in store.memberships():
                session.pending_notices.append(("00000", f'role "{member}" is already a member of role "{role}"'))
                continue
            store.add_member(role, member)
    return CommandComplete("REVOKE ROLE" if stmt.revoke else "GRANT ROLE")


def _members_closure(store, role: str) -> set[str]:
    """Roles that are (transitively) members of `role` — granting `role` to one of them would
    make a cycle."""
    out, frontier = {role}, [role]
    members = store.memberships()
    while frontier:
        r = frontier.pop()
        for parent, member in members:
            if parent == r and member not in out:
                out.add(member)
                frontier.append(member)
    return out


def _alter_owner(catalog, session: Session, stmt: AlterOwner) -> CommandComplete:
    from dataclasses import replace

    from server.adapter.sequencer import _search_path
    p = Privileges(catalog)
    su = p.superuser(session.user, session)
    new = _resolve_role(catalog, session, stmt.owner, public_ok=False)
    database = session.vars.get("database", "slipstream")
    tag = f"ALTER {stmt.kind.upper()}"
    if stmt.kind in ("schema", "database"):
        if stmt.kind == "database":
            db = stmt.name[-1]
            if not any(n == db for n, _ in catalog.databases()):
                raise SqlError("3D000", f'database "{db}" does not exist')
            obj, name = ("database", db), db
        else:
            db, schema = (stmt.name[0], stmt.name[1]) if len(stmt.name) == 2 else (database, stmt.name[-1])
            if not any(n == schema for _, n, _ in catalog.schemas(db)):
                raise SqlError("3F000", f'schema "{schema}" does not exist')
            obj, name = schema_key(db, schema), schema
        if not su:
            if not p.is_owner(session.user, obj):
                raise _not_owner(stmt.kind, name)
            if new not in catalog.privileges.roles_of(session.user):
                raise SqlError(INSUFFICIENT_PRIVILEGE, f'must be member of role "{new}"')
        catalog.privileges.set_owner(obj, new)
        return CommandComplete(tag)
    item = catalog.resolve(tuple(stmt.name), _search_path(session), database)
    kind = {"table": ItemKind.TABLE, "view": ItemKind.VIEW, "materialized view": ItemKind.MATERIALIZED_VIEW,
            "index": ItemKind.INDEX}[stmt.kind]
    if item.kind is not kind and not (stmt.kind == "table" and item.kind is not ItemKind.INDEX):
        raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is not a {stmt.kind}')
    if not su:
        _own(p, session.user, item)
        if new not in catalog.privileges.roles_of(session.user):
            raise SqlError(INSUFFICIENT_PRIVILEGE, f'must be member of role "{new}"')
        if not p.has(new, schema_key(item.database, item.schema), "C"):
            raise _deny("schema", item.schema)
    catalog.replace(replace(item, owner=new))
    # PostgreSQL: an index belongs to its table's owner; changing the table's changes its indexes'.
    if item.kind is not ItemKind.INDEX:
        for index in catalog.indexes_on(item.id):
            catalog.replace(replace(index, owner=new))
    return CommandComplete(tag)


async def execute_privilege_statement(coord, session: Session, stmt) -> CommandComplete:
    catalog = coord.catalog
    async with coord.write_lock:
        if isinstance(stmt, GrantPrivileges):
            return _grant_privileges(catalog, session, stmt)
        if isinstance(stmt, GrantRole):
            return _grant_role(catalog, session, stmt)
        if isinstance(stmt, AlterRoleSet):
            return _alter_role_set(catalog, session, stmt)
        return _alter_owner(catalog, session, stmt)


# Variables a role's default may not set (they describe the server or the session's identity).
_NOT_SETTABLE = {"server_version", "server_version_num", "server_encoding", "integer_datetimes", "is_superuser",
                 "max_identifier_length", "in_hot_standby", "lc_messages", "max_connections",
                 "session_authorization", "database"}


def _alter_role_set(catalog, session: Session, stmt: AlterRoleSet) -> CommandComplete:
    """ALTER ROLE r SET var = value: the role's sessions start with that value (after the
    server's default, before what the client sends at startup), as PostgreSQL's
    pg_db_role_setting. A superuser may set any role's; a role its own."""
    from server import limits
    from server.adapter.vars import canonical
    name = session.user if stmt.special else stmt.role
    if catalog.role(name) is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
    if not Privileges(catalog).superuser(session.user, session) and name != session.user:
        raise SqlError(INSUFFICIENT_PRIVILEGE, "permission denied")
    var = None if stmt.var is None else canonical(stmt.var)
    if var in _NOT_SETTABLE:
        raise SqlError(SqlState.CANT_CHANGE_RUNTIME_PARAM, f'parameter "{var}" cannot be changed')
    if var is not None and stmt.value is not None:
        limits.validate(var, stmt.value)
    catalog.privileges.set_role_setting(name, var, stmt.value)
    return CommandComplete("ALTER ROLE")


def apply_role_settings(catalog, session: Session) -> None:
    """At session start: the role's defaults, unless the client set the variable at startup."""
    store = getattr(catalog, "privileges", None)
    if store is None:
        return
    for name, value in store.role_settings(session.user).items():
        session.vars.setdefault(name, value)


def role_dependencies(catalog, role: str) -> list[str]:
    """What keeps a role from being dropped (PostgreSQL's 2BP01 detail lines)."""
    lines = []
    for item in catalog.items():
        if item.owner == role:
            lines.append(f"owner of {item.kind.value} {item.name}")
    for kind, key in catalog.privileges.referencing(role):
        if kind == "item":
            try:
                item = catalog.get(key)
            except SqlError:
                continue
            lines.append(f"privileges for {item.kind.value} {item.name}")
        elif kind == "schema":
            lines.append(f"privileges for schema {key.split('.', 1)[1]}")
        else:
            lines.append(f"privileges for database {key}")
    return lines


__all__ = ["check", "execute_privilege_statement", "after_create_namespace", "role_dependencies",
           "apply_role_settings", "Privileges"]
