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


# Parameter names (pg_proc.proargnames) of the functions that take named arguments here
# (`make_interval(days => 3)`), and the defaults of their trailing parameters (proargdefaults).
def _defaults():
    from dataflow.expr import Literal
    from dataflow.types import BOOL, FLOAT8, INT4, TEXT
    zero = Literal(0, INT4)
    return {
        "make_interval": (("years", "months", "weeks", "days", "hours", "mins", "secs"),
                          (zero,) * 6 + (Literal(0.0, FLOAT8),)),
        "make_date": (("year", "month", "day"), ()),
        "make_time": (("hour", "min", "sec"), ()),
        "make_timestamp": (("year", "month", "mday", "hour", "min", "sec"), ()),
        "make_timestamptz": (("year", "month", "mday", "hour", "min", "sec", "timezone"), ()),
        "jsonb_set": (("jsonb_in", "path", "replacement", "create_if_missing"), (Literal(True, BOOL),)),
        "jsonb_insert": (("jsonb_in", "path", "replacement", "insert_after"), (Literal(False, BOOL),)),
        "jsonb_set_lax": (("jsonb_in", "path", "replacement", "create_if_missing", "null_value_treatment"),
                          (Literal(True, BOOL), Literal("use_json_null", TEXT))),
    }


def resolve_named(name: str, args: list[tuple[str | None, ScalarExpr]], ctx: "PlanContext") -> ScalarExpr:
    """`name(a, b => x, ...)`: positional arguments first, then named ones, as PostgreSQL binds
    them to the parameters by name; parameters left out take their defaults. A name the
    function does not have, a parameter given twice or one without a default left out is
    42883 with PostgreSQL's signature (`make_interval(foo => integer)`)."""
    def missing() -> SqlError:
        sig = ", ".join((f"{n} => " if n else "") + a.type.name for n, a in args)
        return SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name}({sig}) does not exist",
                        hint="No function matches the given name and argument types. "
                             "You might need to add explicit type casts.")
    seen: set[str] = set()
    for n, _ in args:
        if n is not None and n in seen:
            raise SqlError(SqlState.SYNTAX_ERROR, f'argument name "{n}" used more than once')
        seen.add(n)
    params, defaults = _defaults().get(name, ((), ()))
    positional = [a for n, a in args if n is None]
    named = {n: a for n, a in args if n is not None}
    if any(n not in params[len(positional):] for n in named):
        raise missing()
    values: list[ScalarExpr | None] = positional + [named.get(p) for p in params[len(positional):]]
    while values and values[-1] is None:
        values.pop()
    first_default = len(params) - len(defaults)
    for i, v in enumerate(values):
        if v is None:
            if i < first_default:
                raise missing()
            values[i] = defaults[i - first_default]
    try:
        return resolve_function(name, values, ctx)
    except SqlError as e:
        if e.sqlstate == SqlState.UNDEFINED_FUNCTION:
            raise missing() from None
        raise


def resolve_variadic(name: str, args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """`name(..., VARIADIC array)`: num_nulls and num_nonnulls count the array's elements."""
    from dataflow.expr import Call
    from dataflow.errors import unsupported
    from dataflow.types import INT4
    if name in ("num_nulls", "num_nonnulls") and len(args) == 1:
        a = args[0]
        if a.type.kind is not TypeKind.ARRAY:
            if a.type.kind is TypeKind.UNKNOWN:
                from planner.scalar import resolve_unknown
                a = resolve_unknown(a, ctx)
            if a.type.kind is not TypeKind.ARRAY:
                raise SqlError(SqlState.DATATYPE_MISMATCH, "VARIADIC argument must be an array")
        return Call(f"array_{name}", (a,), INT4)
    if name not in FUNCTIONS:
        raise no_function(name, args)
    raise unsupported(f"VARIADIC arguments of {name}()")


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
