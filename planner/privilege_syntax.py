"""GRANT / REVOKE (of privileges and of role membership) and ALTER ... OWNER TO, read from the
dialect's tokens. The adapter runs them as parsed (server/adapter/privileges.py).

    GRANT { priv [, ...] | ALL [PRIVILEGES] } ON [TABLE | VIEW | MATERIALIZED VIEW] name [, ...]
        TO grantee [, ...]
    GRANT ... ON ALL TABLES IN SCHEMA schema [, ...] TO ...
    GRANT ... ON { SCHEMA | DATABASE | CLUSTER } name [, ...] TO ...
    REVOKE ... FROM grantee [, ...] [CASCADE | RESTRICT]
    GRANT role [, ...] TO role [, ...]        REVOKE role [, ...] FROM role [, ...]
    ALTER { TABLE | VIEW | MATERIALIZED VIEW | INDEX | SCHEMA | DATABASE } name OWNER TO role

A grantee is a role name, PUBLIC, CURRENT_USER, SESSION_USER or CURRENT_ROLE (the last three
kept as that upper-case word, resolved by the adapter). WITH GRANT OPTION, WITH ADMIN OPTION,
GRANTED BY and column lists are refused with 0A000.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState, unsupported


@dataclass(frozen=True)
class GrantPrivileges:
    revoke: bool
    privileges: tuple[str, ...] | None  # upper-case names; None = ALL [PRIVILEGES]
    kind: str  # 'table' (any relation), 'view', 'materialized view', 'schema', 'database', 'cluster', 'all tables'
    names: tuple[tuple[str, ...], ...]
    grantees: tuple[str, ...]


@dataclass(frozen=True)
class GrantRole:
    revoke: bool
    roles: tuple[str, ...]
    members: tuple[str, ...]


@dataclass(frozen=True)
class AlterOwner:
    kind: str  # 'table', 'view', 'materialized view', 'index', 'schema', 'database'
    name: tuple[str, ...]
    owner: str


@dataclass(frozen=True)
class AlterRoleSet:
    """ALTER ROLE name SET var {TO | =} value | SET var TO DEFAULT | RESET var | RESET ALL: the
    role's default for a session variable (value None = remove; var None = RESET ALL)."""

    role: str  # with `special`: CURRENT_USER / SESSION_USER / CURRENT_ROLE
    var: str | None
    value: str | None
    special: bool = False


PRIVILEGE_STATEMENTS = (GrantPrivileges, GrantRole, AlterOwner, AlterRoleSet)

_SPECIAL = {TokenType.CURRENT_USER: "CURRENT_USER", TokenType.SESSION_USER: "SESSION_USER"}
_KNOWN = {"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "USAGE", "CREATE",
          "CONNECT", "TEMPORARY", "TEMP", "EXECUTE"}


def _syntax(tok):
    from planner.dialect import syntax_error_at
    return syntax_error_at(tok)


def _role(c) -> str:
    t = c.peek()
    if t is None:
        raise _syntax(None)
    special = _SPECIAL.get(t.token_type)
    if special is None and t.token_type != TokenType.IDENTIFIER and t.text.upper() == "CURRENT_ROLE":
        special = "CURRENT_ROLE"
    if special is not None:
        c.pos += 1
        return special
    return c.ident()


def _roles(c) -> tuple[str, ...]:
    c.accept("GROUP")
    out = [_role(c)]
    while c.accept_type(TokenType.COMMA):
        c.accept("GROUP")
        out.append(_role(c))
    return tuple(out)


def _privileges(c) -> tuple[str, ...] | None:
    if c.accept("ALL"):
        c.accept("PRIVILEGES")
        if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
            raise unsupported("column privileges")
        return None
    out = []
    while True:
        t = c.peek()
        if t is None:
            raise _syntax(None)
        word = t.text.upper()
        if t.token_type == TokenType.IDENTIFIER or word not in _KNOWN:
            raise _syntax(t)
        c.pos += 1
        if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
            raise unsupported("column privileges")
        out.append("TEMPORARY" if word == "TEMP" else word)
        if not c.accept_type(TokenType.COMMA):
            return tuple(out)


def _names(c) -> tuple[tuple[str, ...], ...]:
    out = [c.name()]
    while c.accept_type(TokenType.COMMA):
        out.append(c.name())
    return tuple(out)


def _target(c) -> str:
    if c.accept("ALL"):
        for word in ("TABLES", "VIEWS", "MATERIALIZED"):
            if c.is_word(word):
                break
        else:
            raise _syntax(c.peek())
        if c.accept("TABLES"):
            c.expect("IN", "SCHEMA")
            return "all tables"
        raise unsupported(f"GRANT ON ALL {c.peek().text.upper()}")
    if c.accept("MATERIALIZED", "VIEW"):
        return "materialized view"
    for word in ("TABLE", "VIEW", "SCHEMA", "DATABASE", "CLUSTER"):
        if c.accept(word):
            return word.lower()
    t = c.peek()
    if t is not None and t.text.upper() in ("SEQUENCE", "FUNCTION", "PROCEDURE", "ROUTINE", "TYPE", "DOMAIN",
                                            "LANGUAGE", "LARGE", "FOREIGN", "TABLESPACE", "PARAMETER",
                                            "SECRET", "CONNECTION", "SYSTEM"):
        raise unsupported(f"privileges on {t.text.upper()}")
    return "table"


def parse_grant(c, revoke: bool):
    """After GRANT or REVOKE."""
    if revoke and (c.accept("GRANT", "OPTION", "FOR") or c.accept("ADMIN", "OPTION", "FOR")):
        raise unsupported("REVOKE ... OPTION FOR")
    # Role membership has no ON: look ahead for it before TO / FROM.
    k = 0
    while c.peek(k) is not None and not c.is_word("ON", k) and not c.is_word("TO" if not revoke else "FROM", k):
        k += 1
    if not c.is_word("ON", k):
        roles = _roles(c)
        c.expect("FROM" if revoke else "TO")
        members = _roles(c)
        if c.accept("WITH"):
            raise unsupported("GRANT ... WITH ADMIN OPTION")
        if c.accept("GRANTED", "BY"):
            raise unsupported("GRANTED BY")
        c.accept("CASCADE") or c.accept("RESTRICT")
        c.expect_end()
        return GrantRole(revoke, roles, members)
    privileges = _privileges(c)
    c.expect("ON")
    kind = _target(c)
    names = _names(c)
    c.expect("FROM" if revoke else "TO")
    grantees = _roles(c)
    if c.accept("WITH", "GRANT", "OPTION"):
        raise unsupported("WITH GRANT OPTION")
    if c.accept("GRANTED", "BY"):
        raise unsupported("GRANTED BY")
    if revoke:
        c.accept("CASCADE") or c.accept("RESTRICT")
    c.expect_end()
    return GrantPrivileges(revoke, privileges, kind, names, grantees)


def parse_alter_owner(c):
    """After ALTER, at TABLE / VIEW / MATERIALIZED VIEW / INDEX / SCHEMA / DATABASE. Returns None
    (cursor unmoved) when the statement is not an OWNER TO."""
    start = c.pos
    kind = None
    if c.accept("MATERIALIZED", "VIEW"):
        kind = "materialized view"
    else:
        for word in ("TABLE", "VIEW", "INDEX", "SCHEMA", "DATABASE"):
            if c.accept(word):
                kind = word.lower()
                break
    if kind is None:
        return None
    c.accept("IF", "EXISTS")
    name = c.name()
    if not c.accept("OWNER", "TO"):
        c.pos = start
        return None
    owner = _role(c)
    c.expect_end()
    if owner == "public" or owner == "none":
        raise SqlError("42704" if owner == "public" else "42939", f'role "{owner}" does not exist'
                       if owner == "public" else f'role name "{owner}" is reserved')
    return AlterOwner(kind, name, owner)


def parse_role_setting(c, role: str, special: bool) -> AlterRoleSet:
    """After ALTER ROLE name, at SET or RESET."""
    if c.accept("RESET"):
        if c.accept("ALL"):
            c.expect_end()
            return AlterRoleSet(role, None, None, special)
        var = c.ident()
        c.expect_end()
        return AlterRoleSet(role, var.lower(), None, special)
    c.expect("SET")
    var = c.ident()
    if not (c.accept("TO") or c.accept_type(TokenType.EQ)):
        raise _syntax(c.peek())
    if c.accept("DEFAULT"):
        c.expect_end()
        return AlterRoleSet(role, var.lower(), None, special)
    value = c.value()
    c.expect_end()
    return AlterRoleSet(role, var.lower(), value, special)


__all__ = ["AlterRoleSet", "parse_role_setting", "GrantPrivileges", "GrantRole", "AlterOwner", "PRIVILEGE_STATEMENTS", "parse_grant",
           "parse_alter_owner", "SqlState"]
