"""CREATE / ALTER / DROP ROLE (and their USER and GROUP spellings), read from the dialect's tokens.

    CREATE ROLE name [WITH] [LOGIN | NOLOGIN] [SUPERUSER | NOSUPERUSER] [[ENCRYPTED] PASSWORD 'pw' | PASSWORD NULL]
    CREATE USER name ...            -- LOGIN by default
    ALTER ROLE name [WITH] option ...
    DROP ROLE [IF EXISTS] name [, ...]

Options whose value is what Slipstream does anyway (INHERIT, NOCREATEDB, NOCREATEROLE,
NOREPLICATION, NOBYPASSRLS, CONNECTION LIMIT -1), which tools such as pgAdmin write out, are
accepted; every other PostgreSQL option is refused with 0A000 naming it.

>>> from planner.dialect import parse_one_statement
>>> parse_one_statement("CREATE USER bob WITH PASSWORD 'x'")
CreateRole(name='bob', options=(('login', True), ('password', '********')))
"""

from __future__ import annotations

from typing import Any

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState, unsupported
from planner import mz_ast as m

_FLAGS = {"LOGIN": ("login", True), "NOLOGIN": ("login", False),
          "SUPERUSER": ("superuser", True), "NOSUPERUSER": ("superuser", False)}
# Accepted and ignored: the value is what every Slipstream role has.
_NO_OPS = {"INHERIT": "inherit", "NOCREATEDB": "createdb", "NOCREATEROLE": "createrole",
           "NOREPLICATION": "replication", "NOBYPASSRLS": "bypassrls"}
_REFUSED = {"NOINHERIT", "CREATEDB", "CREATEROLE", "REPLICATION", "BYPASSRLS", "VALID", "IN", "ROLE",
            "ADMIN", "USER", "SYSID", "CONNECTION"}
_SPECIAL = {TokenType.CURRENT_USER: "CURRENT_USER", TokenType.SESSION_USER: "SESSION_USER"}
_STRINGS = (TokenType.STRING, TokenType.BYTE_STRING)


def _errors():
    from planner.dialect import syntax_error_at
    return syntax_error_at


def _role_name(c, *, context: str) -> str:
    """A role name. `context` is 'create', 'alter' or 'drop': CURRENT_USER / SESSION_USER /
    CURRENT_ROLE are allowed (returned as that upper-case keyword, resolved by the adapter) only
    in ALTER; the names public and none are reserved, as in PostgreSQL."""
    t = c.peek()
    if t is None:
        raise _errors()(None)
    special = _SPECIAL.get(t.token_type) or (
        t.text.upper() if t.token_type != TokenType.IDENTIFIER and t.text.upper() == "CURRENT_ROLE" else None)
    name = special or c.ident()
    if special is not None:
        c.pos += 1
    if context == "drop" and (special is not None or name == "public"):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot use special role specifier in DROP ROLE")
    if special is not None:
        if context == "create":
            raise SqlError("42939", f"{special} cannot be used as a role name here")
        return special
    if name == "none" or (name == "public" and context == "create"):
        raise SqlError("42939", f'role name "{name}" is reserved')
    return name


def _options(c, statement: str) -> tuple[tuple[str, Any], ...]:
    c.accept("WITH")
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in out:
            raise SqlError(SqlState.SYNTAX_ERROR, "conflicting or redundant options")
        out[key] = value

    while not c.at_end():
        t = c.peek()
        word = t.text.upper() if t.token_type not in (*_STRINGS, TokenType.IDENTIFIER) else ""
        if word in _FLAGS:
            c.pos += 1
            put(*_FLAGS[word])
        elif word in _NO_OPS:
            c.pos += 1
            put(_NO_OPS[word], None)
        elif word == "UNENCRYPTED" and c.is_word("PASSWORD", 1):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "UNENCRYPTED PASSWORD is no longer supported",
                           hint="Remove UNENCRYPTED to store the password in encrypted form instead.")
        elif c.accept("ENCRYPTED", "PASSWORD") or c.accept("PASSWORD"):
            v = c.peek()
            if v is not None and v.token_type in _STRINGS:
                c.pos += 1
                put("password", v.text)
            elif v is not None and v.token_type == TokenType.NULL:
                c.pos += 1
                put("password", None)
            else:
                raise _errors()(v)
        elif word == "CONNECTION" and c.is_word("LIMIT", 1):
            start = c.pos
            c.pos += 2
            neg = c.peek() is not None and c.peek().text == "-"
            if neg:
                c.pos += 1
            n = c.accept_type(TokenType.NUMBER)
            if n is None:
                raise _errors()(c.peek())
            if not (neg and n.text == "1"):
                c.pos = start
                raise unsupported(f"{statement} option CONNECTION LIMIT")
            put("connlimit", None)
        elif word in _REFUSED:
            shown = {"VALID": "VALID UNTIL", "IN": "IN ROLE"}.get(word, word)
            if word == "IN" and c.is_word("GROUP", 1):
                shown = "IN GROUP"
            raise unsupported(f"{statement} option {shown}")
        else:
            raise _errors()(t)
    return tuple((k, v) for k, v in out.items() if k in ("login", "superuser", "password"))


def parse_create_role(c, kind: str) -> m.CreateRole:
    """After CREATE; `kind` is the word that follows (ROLE, USER or GROUP), not yet consumed."""
    c.pos += 1
    if kind == "USER" and c.is_word("MAPPING"):
        raise unsupported("CREATE USER MAPPING")
    name = _role_name(c, context="create")
    if name.startswith("pg_"):
        raise SqlError("42939", f'role name "{name}" is reserved',
                       detail='Role names starting with "pg_" are reserved.')
    options = _options(c, f"CREATE {kind}")
    if kind == "USER" and not any(k == "login" for k, _ in options):
        options = (("login", True),) + options
    return m.CreateRole(name, options)


def parse_alter_role(c, kind: str) -> m.AlterRole:
    """After ALTER; `kind` (ROLE, USER or GROUP) not yet consumed."""
    c.pos += 1
    if kind == "USER" and c.is_word("MAPPING"):
        raise unsupported("ALTER USER MAPPING")
    if c.accept("ALL"):
        raise unsupported(f"ALTER {kind} ALL")
    special = c.peek() is not None and c.peek().token_type != TokenType.IDENTIFIER and (
        c.peek().token_type in _SPECIAL or c.peek().text.upper() == "CURRENT_ROLE")
    name = _role_name(c, context="alter")
    if kind != "GROUP" and (c.is_word("SET") or c.is_word("RESET")):
        from planner.privilege_syntax import parse_role_setting
        return parse_role_setting(c, name, special)
    if kind == "GROUP" or c.is_word("RENAME") or c.is_word("SET") or c.is_word("RESET") or (
            c.is_word("IN") and c.is_word("DATABASE", 1)):
        what = c.peek().text.upper() if c.peek() is not None else ""
        raise unsupported(f"ALTER {kind} {what}".rstrip())
    return m.AlterRole(name, _options(c, f"ALTER {kind}"), special)


def parse_drop_role(c, kind: str) -> m.DropRole:
    """After DROP; `kind` (ROLE, USER or GROUP) not yet consumed."""
    c.pos += 1
    if kind == "USER" and c.is_word("MAPPING"):
        raise unsupported("DROP USER MAPPING")
    if_exists = c.accept("IF", "EXISTS")
    names = [_role_name(c, context="drop")]
    while c.accept_type(TokenType.COMMA):
        names.append(_role_name(c, context="drop"))
    c.expect_end()
    return m.DropRole(tuple(names), bool(if_exists))
