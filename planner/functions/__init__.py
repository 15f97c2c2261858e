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
from planner.functions import arrays, binary, catalog, datetime, json, math, strings, system
from planner.functions.registry import ANY, Overload, build_call, choose, no_function

if TYPE_CHECKING:
    from planner.context import PlanContext

FUNCTIONS: dict[str, list[Overload]] = {}
for _family in (math, strings, system, catalog, datetime, binary, json, arrays):
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
