"""CREATE / ALTER / DROP ROLE, against the durable role store (catalog/roles.py).

Privileges follow PostgreSQL where Slipstream has the concept: only a superuser creates, drops
or alters roles, except that any role may change its own password. A session whose user is not
a role at all (possible only with `--auth trust`, which admits any user name as Slipstream
always has) counts as a superuser. The default role cannot lose SUPERUSER (PostgreSQL 16's rule,
so that some role can always administer the others) and cannot be dropped.

Passwords are hashed before they reach the store, by the session's `password_encryption`
(scram-sha-256 unless set to md5); a password given already as a PostgreSQL secret is stored
as given, which is what psql's \\password sends.
"""

from __future__ import annotations

from catalog.roles import DEFAULT_ROLE, PASSWORD_ENCRYPTIONS, encrypt_password
from dataflow.errors import SqlError, SqlState
from planner import mz_ast as m
from server.api import CommandComplete, Session

_INSUFFICIENT_PRIVILEGE = "42501"
_OBJECT_IN_USE = "55006"
_EMPTY_PASSWORD = "empty string is not a valid password, clearing password"


def _is_superuser(catalog, session: Session) -> bool:
    role = catalog.role(session.user)
    if role is None:  # no such role: a trust login (superuser), or a role dropped since login
        return session.vars.get("is_superuser", "on") == "on"
    return role.superuser


def _secret(session: Session, role_name: str, password: str | None) -> str | None:
    if password is None:
        return None
    if password == "":
        session.pending_notices.append(("00000", _EMPTY_PASSWORD))
        return None
    method = session.vars.get("password_encryption", "scram-sha-256")
    if method not in PASSWORD_ENCRYPTIONS:
        method = "scram-sha-256"
    return encrypt_password(password, role_name, method)


async def execute_role_statement(coord, session: Session, stmt) -> CommandComplete:
    catalog = coord.catalog
    async with coord.write_lock:
        if isinstance(stmt, m.CreateRole):
            return _create(catalog, session, stmt)
        if isinstance(stmt, m.AlterRole):
            return _alter(catalog, session, stmt)
        return _drop(catalog, session, stmt)


def _create(catalog, session: Session, stmt: m.CreateRole) -> CommandComplete:
    if not _is_superuser(catalog, session):
        raise SqlError(_INSUFFICIENT_PRIVILEGE, "permission denied to create role")
    opts = dict(stmt.options)
    if catalog.role(stmt.name) is not None:
        raise SqlError(SqlState.DUPLICATE_OBJECT, f'role "{stmt.name}" already exists')
    catalog.role_store.create(stmt.name, login=bool(opts.get("login", False)),
                              superuser=bool(opts.get("superuser", False)),
                              secret=_secret(session, stmt.name, opts.get("password")))
    return CommandComplete("CREATE ROLE")


def _alter(catalog, session: Session, stmt: m.AlterRole) -> CommandComplete:
    name = session.user if stmt.special else stmt.name
    role = catalog.role(name)
    if role is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
    opts = dict(stmt.options)
    if not _is_superuser(catalog, session) and not (name == session.user and set(opts) <= {"password"}):
        raise SqlError(_INSUFFICIENT_PRIVILEGE, "permission denied")
    if name == DEFAULT_ROLE and opts.get("superuser") is False:
        raise SqlError(_INSUFFICIENT_PRIVILEGE, "permission denied to alter role",
                       detail="The bootstrap user must have the SUPERUSER attribute.")
    kwargs = {k: opts[k] for k in ("login", "superuser") if k in opts}
    if "password" in opts:
        kwargs["secret"] = _secret(session, name, opts["password"])
    if kwargs:
        catalog.role_store.alter(name, **kwargs)
    return CommandComplete("ALTER ROLE")


def _drop(catalog, session: Session, stmt: m.DropRole) -> CommandComplete:
    if not _is_superuser(catalog, session):
        raise SqlError(_INSUFFICIENT_PRIVILEGE, "permission denied to drop role")
    doomed: list[str] = []
    for name in stmt.names:
        if catalog.role(name) is None:
            if stmt.if_exists:
                session.pending_notices.append(("00000", f'role "{name}" does not exist, skipping'))
                continue
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
        if name == session.user:
            # PostgreSQL distinguishes the current user (after SET ROLE) from the session user;
            # Slipstream has no SET ROLE, so they are the same.
            raise SqlError(_OBJECT_IN_USE, "current user cannot be dropped")
        if name == DEFAULT_ROLE:
            raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                           f"cannot drop role {name} because it is required by the database system")
        if name not in doomed:
            from server.adapter.privileges import role_dependencies
            depends = role_dependencies(catalog, name)
            if depends:
                raise SqlError("2BP01", f'role "{name}" cannot be dropped because some objects depend on it',
                               detail="\n".join(depends))
            doomed.append(name)
    if doomed:
        catalog.role_store.drop(doomed)
        for name in doomed:
            catalog.privileges.forget_role(name)
    return CommandComplete("DROP ROLE")
