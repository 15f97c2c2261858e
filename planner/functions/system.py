"""Session and system information functions: values fixed for one statement, computed at plan
time from the session (`PlanContext.session`), never by the engine.

    SELECT current_user, current_database(), version()
    -> Literal('alice', TEXT), Literal('slipstream', TEXT), Literal('PostgreSQL 15.0 ...', TEXT)

`current_user` and friends are of type name in PostgreSQL; we answer text (name's output is the
same string). `pg_typeof` answers the type's name as text (PostgreSQL's regtype prints the same).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.types import BOOL, FLOAT8, INT4, INT8, OID, TEXT, VOID, SqlType, array_of
from planner.functions.registry import ANY, Overload, overloads

if TYPE_CHECKING:
    from planner.context import PlanContext

# What version() says: PostgreSQL's form first (drivers parse the number after "PostgreSQL").
VERSION = "PostgreSQL 15.0 on x86_64-pc-linux-gnu (Slipstream, a streaming SQL database)"


def _constant(value_of) -> "callable":
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return Literal(value_of(ctx), TEXT)
    return build


_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "mz_catalog")


def _existing_schemas(ctx: "PlanContext") -> set[str]:
    schemas_of = getattr(ctx.catalog, "schemas", None)
    user = {n for _, n, _ in schemas_of(ctx.database)} if schemas_of else {"public"}
    return user | set(_SYSTEM_SCHEMAS)


def _current_schema(ctx: "PlanContext") -> str | None:
    """The first schema of the search path that exists in the session's database."""
    existing = _existing_schemas(ctx)
    for s in ctx.search_path:
        if s in existing:
            return s
    return None


def _setting(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    name = args[0]
    missing_ok = len(args) > 1 and isinstance(args[1], Literal) and args[1].value is True
    if not isinstance(name, Literal):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "current_setting() of a name that is not a constant")
    if name.value is None:
        return Literal(None, TEXT)
    key = str(name.value).lower().strip()
    key = {"time zone": "timezone"}.get(key, key)
    value = ctx.session.settings.get(key)
    if value is None and not missing_ok:
        raise SqlError("42704", f'unrecognized configuration parameter "{name.value}"')
    return Literal(value, TEXT)


def _typeof(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    t = args[0].type
    # regtype names the type without its modifiers (numeric, not numeric(5,2)).
    if t.kind.value == "unknown":
        return Literal("unknown", TEXT)
    if t.element is not None:
        return Literal(SqlType(t.element.kind).name + "[]", TEXT)
    return Literal(SqlType(t.kind).name, TEXT)


def _pid(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Literal(ctx.session.pid, INT4)


_user = _constant(lambda ctx: ctx.session.user)

# The one role every session runs as, by PostgreSQL's bootstrap superuser OID.
SUPERUSER_OID = 10


def _current_schemas(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    include_implicit = isinstance(args[0], Literal) and args[0].value is True
    existing = _existing_schemas(ctx)
    path = [s for s in ctx.search_path if s in existing and s != "pg_catalog"]
    schemas = (["pg_catalog"] if include_implicit or "pg_catalog" in ctx.search_path else []) + path
    return Literal("{" + ",".join(schemas) + "}", array_of(TEXT))


def _always(value: bool):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return Literal(value, BOOL)
    return build


def _null_text(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Literal(None, TEXT)


def _set_config(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """set_config(name, value, is_local): the statement sets the variable when it succeeds (the
    adapter applies `ctx.session_changes` as it would SET) and answers the value."""
    if ctx.maintained is not None:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"set_config() in {ctx.maintained}")
    if not all(isinstance(a, Literal) for a in args):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "set_config() of values that are not constants",
                       hint="Use SET name = value (or SET LOCAL) instead.")
    name, value, local = (a.value for a in args)
    if name is None:
        raise SqlError("22004", "SET requires parameter name")
    ctx.session_changes.append((str(name), None if value is None else str(value), bool(local)))
    return Literal(value, TEXT)

def _count_nulls(kernel: str):
    """num_nulls / num_nonnulls(VARIADIC "any"): not strict; an untyped NULL is a NULL."""
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        from planner.scalar import resolve_unknown
        return Call(kernel, tuple(resolve_unknown(a, ctx) for a in args), INT4)
    return build


FUNCTIONS = overloads(
    Overload("version", (), TEXT, build=_constant(lambda ctx: VERSION)),
    Overload("current_database", (), TEXT, build=_constant(lambda ctx: ctx.database)),
    Overload("current_catalog", (), TEXT, build=_constant(lambda ctx: ctx.database)),
    Overload("current_schema", (), TEXT, build=_constant(_current_schema)),
    Overload("current_user", (), TEXT, build=_user),
    Overload("current_role", (), TEXT, build=_user),
    Overload("session_user", (), TEXT, build=_user),
    Overload("user", (), TEXT, build=_user),
    Overload("current_setting", (TEXT,), TEXT, build=_setting),
    Overload("current_setting", (TEXT, BOOL), TEXT, build=_setting),
    Overload("pg_backend_pid", (), INT4, build=_pid),
    # Sleeps where it is evaluated (volatile: never folded at plan time, refused in views).
    Overload("pg_sleep", (FLOAT8,), VOID, kernel="pg_sleep", volatile=True),
    Overload("pg_typeof", (ANY,), TEXT, build=_typeof),
    Overload("current_schemas", (BOOL,), array_of(TEXT), build=_current_schemas),
    Overload("format_type", (OID, INT4), TEXT, kernel="format_type"),
    # Column, function and sequence privileges are not kept: every one is held.
    *(Overload(f"has_{what}_privilege", args, BOOL, build=_always(True))
      for what in ("column", "function", "sequence", "any_column")
      for args in ((ANY, TEXT), (ANY, ANY, TEXT), (ANY, ANY, ANY, TEXT))),
    # has_table/schema/database_privilege answer from real privileges: planner/functions/privileges.py
    Overload("set_config", (TEXT, TEXT, BOOL), TEXT, build=_set_config),
    # At least one argument; `VARIADIC array` counts the array's elements (planner.functions).
    Overload("num_nulls", (ANY, ANY), INT4, build=_count_nulls("num_nulls"), variadic=True),
    Overload("num_nonnulls", (ANY, ANY), INT4, build=_count_nulls("num_nonnulls"), variadic=True),
)
