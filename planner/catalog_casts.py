"""Casts between names and object identifiers: `'pg_class'::regclass`, `atttypid::regtype::text`.

regclass, regtype and regproc values are oids that print as names. The planner turns a constant
name into its oid now (`'t'::regclass` is 20001, or 42P01 if there is no `t`); a column of names
or oids is mapped by the engine with the statement's name table, handed over as a constant:

    c.oid::regclass::text  ->  Call("oid_to_name", (c.oid, '[[1259, "pg_class"], ...]'), text)

Names print as PostgreSQL prints them: a relation visible on the search path by its bare name
(quoted where needed), others schema-qualified; a type by format_type's name (`integer`,
`character varying`, `text[]`); a function by its name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from catalog.items import CatalogItem
from catalog.system import all_relations
from catalog.system.pg_types import all_types, type_names
from dataflow.errors import SqlError
from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.oid_names import missing_error
from dataflow.types import BOOL, TEXT, SqlType, TypeKind

if TYPE_CHECKING:
    from planner.context import PlanContext


@dataclass(frozen=True)
class NameMaps:
    """For one kind of object: oid -> printed name, and every accepted spelling -> oid."""

    names: dict[int, str]
    oids: dict[str, int]

    def names_json(self) -> str:
        return json.dumps(sorted(self.names.items()))

    def oids_json(self) -> str:
        return json.dumps(sorted(self.oids.items()))


def quote_ident(name: str) -> str:
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def relation_maps(items: Iterable[CatalogItem], database: str, search_path: tuple[str, ...]) -> NameMaps:
    names: dict[int, str] = {}
    oids: dict[str, int] = {}
    visible = set(search_path) | {"pg_catalog"}
    entries = [(r.oid, r.schema, r.name) for r in all_relations()]
    entries += [(i.oid, i.schema, i.name) for i in items if i.database == database]
    for oid, schema, name in entries:
        qualified = f"{quote_ident(schema)}.{quote_ident(name)}"
        names[oid] = quote_ident(name) if schema in visible else qualified
        oids.setdefault(f"{schema}.{name}", oid)
        oids.setdefault(qualified, oid)
        if schema in visible:
            oids.setdefault(name, oid)
            oids.setdefault(quote_ident(name), oid)
    return NameMaps(names, oids)


_TYPE_ALIASES = {"int": 23, "integer": 23, "smallint": 21, "bigint": 20, "real": 700, "float": 701,
                 "double precision": 701, "boolean": 16, "decimal": 1700, "character varying": 1043,
                 "character": 1042, "char": 1042, "timestamp without time zone": 1114,
                 "timestamp with time zone": 1184, "time without time zone": 1083, "\"char\"": 18}


def type_maps() -> NameMaps:
    names = type_names()
    oids: dict[str, int] = {}
    for t in all_types():
        oids.setdefault(t.name, t.oid)
        oids.setdefault(names[t.oid], t.oid)
    for alias, oid in _TYPE_ALIASES.items():
        oids.setdefault(alias, oid)
    for spelling, oid in list(oids.items()):
        if not spelling.endswith("[]"):
            arr = next((t.array_oid for t in all_types() if t.oid == oid and t.array_oid), None)
            if arr:
                oids.setdefault(spelling + "[]", arr)
    for spelling, oid in list(oids.items()):
        oids.setdefault("pg_catalog." + spelling, oid)
    return NameMaps(names, oids)


def proc_maps() -> NameMaps:
    from planner.system_catalog import procs
    names: dict[int, str] = {}
    oids: dict[str, int] = {}
    for p in procs():
        names[p.oid] = p.name
        oids.setdefault(p.name, p.oid)
        oids.setdefault("pg_catalog." + p.name, p.oid)
    return NameMaps(names, oids)


def namespace_maps(ctx: "PlanContext") -> NameMaps:
    from planner.system_catalog import snapshot
    from catalog.system.pg_catalog import _namespaces
    pairs = _namespaces(snapshot(ctx))
    return NameMaps({o: quote_ident(n) for n, o in pairs}, {n: o for n, o in pairs})


def role_maps(ctx: "PlanContext") -> NameMaps:
    from planner.system_catalog import snapshot
    from catalog.system.pg_catalog import _roles
    roles = _roles(snapshot(ctx))
    return NameMaps({r.oid: quote_ident(r.name) for r in roles}, {r.name: r.oid for r in roles})


def maps_for(kind: TypeKind, ctx: "PlanContext") -> NameMaps:
    key = ("reg_maps", kind)
    found = ctx.caches.get(key)
    if found is None:
        if kind is TypeKind.REGCLASS:
            found = relation_maps(ctx.catalog.items(), ctx.database, tuple(ctx.search_path))
        elif kind is TypeKind.REGTYPE:
            found = type_maps()
        elif kind is TypeKind.REGNAMESPACE:
            found = namespace_maps(ctx)
        elif kind is TypeKind.REGROLE:
            found = role_maps(ctx)
        else:
            found = proc_maps()
        # PostgreSQL prints the invalid oid 0 as `-` in every reg* type and reads `-` back as 0.
        found.names[0] = "-"
        found.oids["-"] = 0
        ctx.caches[key] = found
    return found


def _normalize(name: str, kind: TypeKind) -> str:
    """Unquoted identifiers fold to lower case; a type name's spelling keeps its words."""
    s = name.strip()
    if kind is TypeKind.REGTYPE:
        return s if s.startswith('"') else s.lower()
    parts = re.findall(r'"((?:[^"]|"")*)"|([^."]+)', s)
    return ".".join(q.replace('""', '"') if q else u.lower() for q, u in parts)


def text_to_reg(e: ScalarExpr, t: SqlType, ctx: "PlanContext", missing_ok: bool = False) -> ScalarExpr:
    """A name (or an oid's digits) as an object identifier of reg type `t`."""
    maps = maps_for(t.kind, ctx)
    if isinstance(e, Literal):
        v = e.value.raw if hasattr(e.value, "raw") else e.value
        if v is None:
            return Literal(None, t)
        s = str(v).strip()
        if s.isdigit():
            return Literal(int(s), t)
        oid = maps.oids.get(_normalize(s, t.kind))
        if oid is None:
            if missing_ok:
                return Literal(None, t)
            err = missing_error(t.kind.value)
            raise SqlError(err.sqlstate, err.message.replace("{}", s))
        return Literal(oid, t)
    return Call("name_to_oid", (e, Literal(maps.oids_json(), TEXT),
                                Literal(t.kind.value, TEXT), Literal(missing_ok, BOOL)), t)


def reg_to_text(e: ScalarExpr, ctx: "PlanContext") -> ScalarExpr:
    maps = maps_for(e.type.kind, ctx)
    if isinstance(e, Literal):
        return Literal(None if e.value is None else maps.names.get(e.value, str(e.value)), TEXT)
    return Call("oid_to_name", (e, Literal(maps.names_json(), TEXT)), TEXT)
