"""has_table_privilege, has_schema_privilege, has_database_privilege: answered at plan time from
the durable catalog's privileges (catalog/privileges.py), as PostgreSQL answers them:

    has_table_privilege([user,] table, privileges)     user: name or oid; table: name or oid
    has_schema_privilege([user,] schema, privileges)
    has_database_privilege([user,] database, privileges)

`privileges` is a comma-separated list (case-insensitive, `WITH GRANT OPTION` allowed) and the
answer is true when any of them is held. A constant object gives a constant; an object column
(`has_table_privilege(c.oid, 'SELECT')` over pg_class) becomes a set lookup of the OIDs on which
the privilege is held, so catalog queries work. System catalogs are readable by everyone
(PostgreSQL grants SELECT on them to PUBLIC). With a catalog that keeps no privileges (unit
tests), every privilege is held.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from catalog.privileges import PRIVILEGE_LETTERS, VALID, PrivilegeChecker, item_key, schema_key, valid_privileges
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.types import BOOL, TEXT, TypeKind
from planner.functions.registry import ANY, Overload, overloads

if TYPE_CHECKING:
    from planner.context import PlanContext

_TEXT_KINDS = (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.NAME, TypeKind.UNKNOWN)
_ALIASES = {"TEMP": "TEMPORARY"}


def _letters(text: str, kind: str) -> str:
    out = ""
    for part in text.split(","):
        word = " ".join(part.upper().split())
        if word.endswith(" WITH GRANT OPTION"):
            word = word[: -len(" WITH GRANT OPTION")]
        word = _ALIASES.get(word, word)
        letter = PRIVILEGE_LETTERS.get(word)
        if letter is None or letter not in VALID[kind]:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'unrecognized privilege type: "{part.strip()}"')
        out += letter
    return out


def _is_text(e: ScalarExpr) -> bool:
    return e.type.kind in _TEXT_KINDS


def _role(arg: ScalarExpr, ctx: "PlanContext") -> str:
    if not isinstance(arg, Literal):
        raise unsupported("privilege functions with a role that is not a constant")
    catalog = ctx.catalog
    if _is_text(arg):
        name = str(arg.value)
        if name.lower() == "public":
            return "public"
        if catalog.role(name) is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'role "{name}" does not exist')
        return name
    for r in catalog.roles():
        if r.oid == int(arg.value):
            return r.name
    raise SqlError(SqlState.UNDEFINED_OBJECT, f"role with OID {arg.value} does not exist")


def _make(what: str):
    kind = {"table": "table", "schema": "schema", "database": "database"}[what]

    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        catalog = ctx.catalog
        if len(args) == 3:
            user_arg, obj, priv = args
        else:
            user_arg, (obj, priv) = None, args
        if any(isinstance(a, Literal) and a.value is None for a in args):
            return Literal(None, BOOL)
        if not isinstance(priv, Literal):
            raise unsupported("privilege functions with privileges that are not a constant")
        letters = _letters(str(priv.value), kind)
        if getattr(catalog, "privileges", None) is None:
            return Literal(True, BOOL)
        user = ctx.session.user if user_arg is None else _role(user_arg, ctx)
        check = PrivilegeChecker(catalog)
        superuser = user != "public" and check.superuser(user)

        def holds(key, obj_kind: str) -> bool:
            wanted = [c for c in letters if c in valid_privileges(obj_kind)]
            if superuser:
                return True
            return any(check.has(user, key, c) for c in wanted)

        # every object of the kind, by oid -> held?
        def table() -> dict[int, bool]:
            out = {}
            for item in catalog.items():
                if item.kind.value != "index":
                    out[item.oid] = holds(item_key(item), item.kind.value)
            from catalog.system import all_relations
            for r in all_relations():
                out[r.oid] = superuser or "r" in letters
            return out

        if what == "table":
            if isinstance(obj, Literal) and _is_text(obj):
                parts = tuple(p.strip('"') for p in str(obj.value).split("."))
                item = catalog.try_resolve(parts, ctx.search_path, ctx.database)
                if item is None:
                    from planner.system_catalog import resolve_system
                    if resolve_system(parts, ctx) is not None:
                        return Literal(superuser or "r" in letters, BOOL)
                    raise SqlError(SqlState.UNDEFINED_TABLE, f'relation "{obj.value}" does not exist')
                return Literal(holds(item_key(item), item.kind.value), BOOL)
            held = table()
        elif what == "schema":
            schemas = {name: oid for db, name, oid in catalog.schemas(ctx.database)}
            if isinstance(obj, Literal) and _is_text(obj):
                if str(obj.value) in ("pg_catalog", "information_schema", "mz_catalog", "mz_internal"):
                    return Literal(superuser or "U" in letters, BOOL)
                if str(obj.value) not in schemas:
                    raise SqlError("3F000", f'schema "{obj.value}" does not exist')
                return Literal(holds(schema_key(ctx.database, str(obj.value)), "schema"), BOOL)
            held = {oid: holds(schema_key(ctx.database, name), "schema") for name, oid in schemas.items()}
        else:
            dbs = dict(catalog.databases())
            if isinstance(obj, Literal) and _is_text(obj):
                if str(obj.value) not in dbs:
                    raise SqlError("3D000", f'database "{obj.value}" does not exist')
                return Literal(holds(("database", str(obj.value)), "database"), BOOL)
            held = {oid: holds(("database", name), "database") for name, oid in dbs.items()}
        if isinstance(obj, Literal):
            found = held.get(int(obj.value))
            return Literal(found, BOOL)
        if _is_text(obj):
            raise unsupported(f"has_{what}_privilege of a {what} name that is not a constant")
        return Call("oid_in", (obj, Literal(json.dumps(sorted(o for o, ok in held.items() if ok)), TEXT)), BOOL)

    return build


FUNCTIONS = overloads(
    *(Overload(f"has_{what}_privilege", args, BOOL, build=_make(what))
      for what in ("table", "schema", "database")
      for args in ((ANY, TEXT), (ANY, ANY, TEXT))),
)
