"""The function library as the planner sees it: names, overloads and result types.

One module per family declares `FUNCTIONS: dict[str, list[Overload]]` (`registry.Overload`);
this package merges them and resolves calls. The engine kernels they name live in
`dataflow.functions`, family by family with the same module names.

    resolve_function("sqrt", [Literal(2, INT4)], ctx)
    -> Call('sqrt', (Literal(2.0, FLOAT8),), FLOAT8)       (the literal is cast at plan time)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataflow.errors import SqlError, SqlState
from dataflow.expr import ScalarExpr
from dataflow.types import TypeKind
from planner.functions import arrays, binary, catalog, datetime, json, math, privileges, strings, system
from planner.functions.registry import ANY, Overload, build_call, choose, no_function

if TYPE_CHECKING:
    from planner.context import PlanContext

FUNCTIONS: dict[str, list[Overload]] = {}
for _family in (math, strings, system, catalog, datetime, binary, json, arrays, privileges):
    for _name, _sigs in _family.FUNCTIONS.items():
        FUNCTIONS.setdefault(_name, []).extend(_sigs)


def known(name: str) -> bool:
    return name in FUNCTIONS


# Functions whose ANY parameter is PostgreSQL's anyelement: `to_jsonb('x')` is 42804 there.
_ANYELEMENT = frozenset({"to_jsonb", "to_json"})


def resolve_function(name: str, args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """The expression for `name(args)`: overload chosen, arguments cast, call built. Raises
    42883 (no such function for these types) or 42725 (ambiguous)."""
    from planner.scalar import coerce, resolve_unknown

    cands = FUNCTIONS.get(name)
    if not cands:
        raise no_function(name, args)
    overload, params = choose(name, cands, args)
    if name in _ANYELEMENT and any(a.type.kind is TypeKind.UNKNOWN for a, p in zip(args, params) if p is ANY):
        # PostgreSQL's anyelement (not "any"): an untyped literal gives it no type.
        raise SqlError(SqlState.DATATYPE_MISMATCH,
                       "could not determine polymorphic type because input has type unknown")
    # An "any" argument stays as it is for a plan-time builder (pg_typeof('x') is unknown) and
    # becomes text for a kernel.
    coerced = [(a if overload.build else resolve_unknown(a, ctx)) if p is ANY else coerce(a, p, ctx)
               for a, p in zip(args, params)]
    return build_call(overload, coerced, ctx)


VOLATILE_KERNELS = frozenset(o.kernel for sigs in FUNCTIONS.values() for o in sigs
                             if o.volatile and o.kernel is not None)
# Kernels whose value depends on when the statement runs (now(), current_timestamp, ...).
WALL_CLOCK_KERNELS = frozenset(o.kernel for sigs in FUNCTIONS.values() for o in sigs
                               if o.wall_clock and o.kernel is not None)

# PostgreSQL's functions that are not STRICT (pg_proc.proisstrict false) among those we have:
# they are called with NULL arguments; every other one answers NULL for a NULL argument
# without being called.
_NOT_STRICT = frozenset({
    "array_append", "array_cat", "array_fill", "array_position", "array_positions", "array_prepend",
    "array_remove", "array_replace", "array_to_string", "concat", "concat_ws", "format", "format_type",
    "json_build_array", "json_build_object", "jsonb_build_array", "jsonb_build_object", "jsonb_set_lax",
    "num_nonnulls", "num_nulls", "quote_nullable", "set_config", "string_to_array", "string_to_table",
    "overlaps", "current_query"})

# Kernels of strict library functions: with a constant NULL argument the call is NULL, whatever
# the other arguments (`overlay('a' placing NULL from 0 for 1)` is NULL, not an error).
STRICT_KERNELS = frozenset(o.kernel for name, sigs in FUNCTIONS.items() for o in sigs
                           if o.kernel is not None and name not in _NOT_STRICT and not o.volatile) - frozenset(
    o.kernel for name, sigs in FUNCTIONS.items() for o in sigs if o.kernel is not None and name in _NOT_STRICT)
