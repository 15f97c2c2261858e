"""Catalog information functions (pg_get_userbyid, pg_table_is_visible, pg_get_indexdef, ...):
answered from the statement's catalog snapshot (`planner.system_catalog`), handed to the engine
as a constant table keyed by oid, so they work on columns of catalog queries:

    pg_get_userbyid(c.relowner)
    -> Call("oid_lookup", (c.relowner, '[[10, "slipstream"]]', missing NULL), name)

Visibility follows the search path (pg_catalog is always visible); an object that does not exist
gives NULL, as in PostgreSQL.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Callable

from catalog.items import ItemKind
from catalog.system import all_relations
from catalog.system.pg_catalog import index_definition, view_definition
from catalog.system.pg_types import type_names
from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, If, Literal, ScalarExpr
from dataflow.types import BOOL, INT4, INT8, NAME, OID, REGCLASS, REGPROC, REGTYPE, TEXT
from planner.functions.registry import Overload, overloads

if TYPE_CHECKING:
    from catalog.system import CatalogSnapshot
    from planner.context import PlanContext


def _snap(ctx: "PlanContext") -> "CatalogSnapshot":
    from planner.system_catalog import snapshot
    return snapshot(ctx)


def _lookup(arg: ScalarExpr, table: dict[int, str], result=TEXT) -> ScalarExpr:
    if isinstance(arg, Literal):
        return Literal(None if arg.value is None else table.get(int(arg.value)), result)
    return Call("oid_lookup", (arg, Literal(json.dumps(sorted(table.items())), TEXT)), result)


def _by_oid(table_of: Callable[["PlanContext"], dict[int, str]], result=TEXT):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return _lookup(args[0], table_of(ctx), result)
    return build


def _visible(objects_of: Callable[["PlanContext"], list[int]]):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        oids = sorted(set(objects_of(ctx)))
        arg = args[0]
        if isinstance(arg, Literal):
            return Literal(None if arg.value is None else int(arg.value) in oids, BOOL)
        return Call("oid_in", (arg, Literal(json.dumps(oids), TEXT)), BOOL)
    return build


def _visible_relations(ctx: "PlanContext") -> list[int]:
    path = set(ctx.search_path) | {"pg_catalog"}
    snap = _snap(ctx)
    return [r.oid for r in all_relations() if r.schema in path] + \
        [i.oid for i in snap.items if i.database == snap.database and i.schema in path]


def _all_types(ctx: "PlanContext") -> list[int]:
    return list(type_names())


def _all_procs(ctx: "PlanContext") -> list[int]:
    return [p.oid for p in _snap(ctx).procs]


def _user_names(ctx: "PlanContext") -> dict[int, str]:
    from catalog.system.pg_catalog import _roles
    return {r.oid: r.name for r in _roles(_snap(ctx))}


def _view_defs(ctx: "PlanContext", pretty: bool = False) -> dict[int, str]:
    snap = _snap(ctx)
    return {i.oid: view_definition(i, pretty) for i in snap.items
            if i.kind in (ItemKind.VIEW, ItemKind.MATERIALIZED_VIEW)}


def _viewdef(oid: ScalarExpr, pretty: ScalarExpr | None, ctx: "PlanContext") -> ScalarExpr:
    """pg_get_viewdef(v [, pretty]): psql asks for the pretty form, pg_views shows the plain."""
    plain = _lookup(oid, _view_defs(ctx))
    if pretty is None:
        return plain
    if isinstance(pretty, Literal):
        return Literal(None, TEXT) if pretty.value is None else (_lookup(oid, _view_defs(ctx, True)) if pretty.value else plain)
    return If(pretty, _lookup(oid, _view_defs(ctx, True)), plain, TEXT)


def _index_defs(ctx: "PlanContext") -> dict[int, str]:
    snap = _snap(ctx)
    by_id = {i.id: i for i in snap.items}
    return {i.oid: index_definition(i, by_id[i.index_on]) for i in snap.items
            if i.kind is ItemKind.INDEX and i.index_on in by_id}


def _index_column(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """pg_get_indexdef(index, column, pretty): column 0 is the whole definition, column k the
    k-th key column's name."""
    snap = _snap(ctx)
    by_id = {i.id: i for i in snap.items}
    table: dict[int, str] = {}
    for i in snap.items:
        if i.kind is not ItemKind.INDEX or i.index_on not in by_id:
            continue
        on = by_id[i.index_on]
        table[i.oid * 1000] = index_definition(i, on)
        for k, col in enumerate(i.index_key, start=1):
            table[i.oid * 1000 + k] = on.columns[col].name
    key = Call("add", (Call("mul", (_int8(args[0]), Literal(1000, INT8)), INT8), _int8(args[1])), INT8)
    return _lookup(key, table)


def _int8(e: ScalarExpr) -> ScalarExpr:
    from dataflow.expr import Cast
    if isinstance(e, Literal):
        return Literal(None if e.value is None else int(e.value), INT8)
    return Cast(e, INT8)


def _function_text(part: str):
    def table(ctx: "PlanContext") -> dict[int, str]:
        names = type_names()
        out = {}
        for p in _snap(ctx).procs:
            if part == "result":
                t = names.get(p.result_oid, "anyelement")
                out[p.oid] = f"SETOF {t}" if p.retset else t
            else:
                out[p.oid] = ", ".join(names.get(a, "anyelement") for a in p.arg_oids)
        return out
    return table


def _first(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return args[0]  # pg_get_expr: defaults are stored as their expression's text


def _null(t):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return Literal(None, t)
    return build


def _const(value, t):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return Literal(value, t)
    return build


def _to_reg(t):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        from planner.catalog_casts import text_to_reg
        return text_to_reg(args[0], t, ctx, missing_ok=True)
    return build


def _encoding(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return _lookup(args[0], {6: "UTF8", 0: "SQL_ASCII"}, NAME)


def _viewdef_by_name(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    from planner.catalog_casts import text_to_reg
    oid = text_to_reg(args[0], REGCLASS, ctx)
    return _viewdef(oid, args[1] if len(args) > 1 else None, ctx)


def _size_pretty(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    arg = args[0]
    if not isinstance(arg, Literal):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "pg_size_pretty() of a value that is not a constant")
    if arg.value is None:
        return Literal(None, TEXT)
    v = int(arg.value)
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if abs(v) < 10 * 1024 or unit == "TB":
            return Literal(f"{v} {unit}", TEXT)
        v = (v + 512) // 1024 if v >= 0 else -((-v + 512) // 1024)
    return Literal(f"{v} PB", TEXT)


FUNCTIONS = overloads(
    Overload("pg_get_userbyid", (OID,), NAME, build=_by_oid(_user_names, NAME)),
    Overload("pg_table_is_visible", (OID,), BOOL, build=_visible(_visible_relations)),
    Overload("pg_type_is_visible", (OID,), BOOL, build=_visible(_all_types)),
    Overload("pg_function_is_visible", (OID,), BOOL, build=_visible(_all_procs)),
    Overload("pg_collation_is_visible", (OID,), BOOL, build=_visible(lambda ctx: [100, 950, 951])),
    Overload("pg_get_expr", (TEXT, OID), TEXT, build=_first),
    Overload("pg_get_expr", (TEXT, OID, BOOL), TEXT, build=_first),
    Overload("pg_get_viewdef", (OID,), TEXT, build=lambda args, ctx: _viewdef(args[0], None, ctx)),
    Overload("pg_get_viewdef", (OID, BOOL), TEXT, build=lambda args, ctx: _viewdef(args[0], args[1], ctx)),
    Overload("pg_get_viewdef", (TEXT,), TEXT, build=_viewdef_by_name),
    Overload("pg_get_viewdef", (TEXT, BOOL), TEXT, build=_viewdef_by_name),
    Overload("pg_get_indexdef", (OID,), TEXT, build=_by_oid(_index_defs)),
    Overload("pg_get_indexdef", (OID, INT4, BOOL), TEXT, build=_index_column),
    # No constraints, rules, triggers or statistics objects exist: nothing to describe.
    Overload("pg_get_constraintdef", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_get_constraintdef", (OID, BOOL), TEXT, build=_null(TEXT)),
    Overload("pg_get_ruledef", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_get_ruledef", (OID, BOOL), TEXT, build=_null(TEXT)),
    Overload("pg_get_triggerdef", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_get_triggerdef", (OID, BOOL), TEXT, build=_null(TEXT)),
    Overload("pg_get_statisticsobjdef_columns", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_get_partkeydef", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_get_serial_sequence", (TEXT, TEXT), TEXT, build=_null(TEXT)),
    Overload("pg_relation_is_publishable", (REGCLASS,), BOOL, build=_const(False, BOOL)),
    Overload("pg_get_function_arguments", (OID,), TEXT, build=_by_oid(_function_text("arguments"))),
    Overload("pg_get_function_identity_arguments", (OID,), TEXT, build=_by_oid(_function_text("arguments"))),
    Overload("pg_get_function_result", (OID,), TEXT, build=_by_oid(_function_text("result"))),
    # Only functions with a SQL-standard body (CREATE FUNCTION ... BEGIN ATOMIC) have one: none
    # here. psql's `\df+` reads it.
    Overload("pg_get_function_sqlbody", (OID,), TEXT, build=_null(TEXT)),
    Overload("pg_encoding_to_char", (INT4,), NAME, build=_encoding),
    Overload("to_regclass", (TEXT,), REGCLASS, build=_to_reg(REGCLASS)),
    Overload("to_regtype", (TEXT,), REGTYPE, build=_to_reg(REGTYPE)),
    Overload("to_regproc", (TEXT,), REGPROC, build=_to_reg(REGPROC)),
    # Objects carry no comments.
    Overload("obj_description", (OID, NAME), TEXT, build=_null(TEXT)),
    Overload("obj_description", (OID,), TEXT, build=_null(TEXT)),
    Overload("col_description", (OID, INT4), TEXT, build=_null(TEXT)),
    Overload("shobj_description", (OID, NAME), TEXT, build=_null(TEXT)),
    # Sizes of what persist and the workers hold are not tracked per relation yet.
    Overload("pg_relation_size", (REGCLASS,), INT8, build=_const(0, INT8)),
    Overload("pg_total_relation_size", (REGCLASS,), INT8, build=_const(0, INT8)),
    Overload("pg_table_size", (REGCLASS,), INT8, build=_const(0, INT8)),
    Overload("pg_indexes_size", (REGCLASS,), INT8, build=_const(0, INT8)),
    Overload("pg_database_size", (NAME,), INT8, build=_const(0, INT8)),
    Overload("pg_size_pretty", (INT8,), TEXT, build=_size_pretty),
    Overload("pg_is_in_recovery", (), BOOL, build=_const(False, BOOL)),
    Overload("pg_get_keywords", (), TEXT, build=_null(TEXT)),
    Overload("pg_tablespace_location", (OID,), TEXT, build=_const("", TEXT)),
)
