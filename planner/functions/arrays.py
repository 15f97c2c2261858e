"""Array functions and operators (one-dimensional arrays, `dataflow.arrays`).

PostgreSQL declares these over the polymorphic anyarray/anyelement; here each is a plan-time
builder that checks the argument types the same way (an array argument, an element of its
element type) and builds the engine call.

    SELECT array_length(a, 1)   -> Call('array_length', (a, Literal(1)), INT4)
    SELECT a || 4               -> Call('array_append', (a, Literal(4)), INT4[])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.types import BOOL, INT4, TEXT, SqlType, TypeKind, array_of
from planner.functions.registry import ANY, Overload, no_function, overloads

if TYPE_CHECKING:
    from planner.context import PlanContext


def _coerce(e: ScalarExpr, t: SqlType, ctx: "PlanContext") -> ScalarExpr:
    from planner.scalar import coerce
    return coerce(e, t, ctx)


def _array_arg(name: str, args: list[ScalarExpr], i: int, ctx: "PlanContext") -> ScalarExpr:
    a = args[i]
    if a.type.kind is TypeKind.UNKNOWN:
        raise SqlError("42804", f"could not determine polymorphic type because input has type unknown")
    if a.type.kind is not TypeKind.ARRAY:
        raise no_function(name, args)
    return a


def _element_of(array: ScalarExpr, e: ScalarExpr, name: str, args, ctx: "PlanContext") -> ScalarExpr:
    elem = array.type.element
    if e.type.kind is TypeKind.UNKNOWN or e.type == elem:
        return _coerce(e, elem, ctx)
    from planner.typing import implicitly_castable
    if implicitly_castable(e.type, elem):
        return _coerce(e, elem, ctx)
    raise no_function(name, args)


def _unary(kernel: str, result: SqlType, extra: tuple[SqlType, ...] = ()):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        a = _array_arg(kernel, args, 0, ctx)
        rest = [_coerce(x, t, ctx) for x, t in zip(args[1:], extra)]
        return Call(kernel, (a, *rest), result)
    return build


def _compatible(a: ScalarExpr, e: ScalarExpr, array_first: bool, name: str, args,
                ctx: "PlanContext") -> tuple[ScalarExpr, ScalarExpr]:
    """PostgreSQL's anycompatiblearray/anycompatible: the array and the element meet in the
    common type of the array's element type and the element's, in argument order
    (array_append(ARRAY[1], 2.5) is numeric[]; array_prepend('a'::varchar, text[]) varchar[])."""
    from planner.typing import unify
    elem = a.type.element
    if e.type.kind is TypeKind.UNKNOWN or e.type == elem:
        return a, _coerce(e, elem, ctx)
    common = unify([elem, e.type] if array_first else [e.type, elem], common=True)
    if common is None:
        raise no_function(name, args)
    return _coerce(a, array_of(common), ctx), _coerce(e, common, ctx)


def _with_element(kernel: str, array_first: bool, result_bool: bool = False, result_int: bool = False):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        ai, ei = (0, 1) if array_first else (1, 0)
        a = _array_arg(kernel, args, ai, ctx)
        a, e = _compatible(a, args[ei], array_first, kernel, args, ctx)
        result = BOOL if result_bool else INT4 if result_int else a.type
        return Call(kernel, (a, e) if array_first else (e, a), result)
    return build


def _two_arrays(kernel: str, result: SqlType | None = None):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        from planner.scalar import coerce_all
        a, b = args
        if a.type.kind is TypeKind.UNKNOWN and b.type.kind is TypeKind.ARRAY:
            a = _coerce(a, b.type, ctx)
        if b.type.kind is TypeKind.UNKNOWN and a.type.kind is TypeKind.ARRAY:
            b = _coerce(b, a.type, ctx)
        _array_arg(kernel, [a, b], 0, ctx)
        _array_arg(kernel, [a, b], 1, ctx)
        if a.type != b.type and a.type.element.kind is b.type.element.kind:
            # One array type but for the elements' type modifiers (varchar(5)[] and varchar[]):
            # PostgreSQL's types are the same; compare as the unmodified type.
            plain = array_of(SqlType(a.type.element.kind))
            a, b = _coerce(a, plain, ctx), _coerce(b, plain, ctx)
        if a.type != b.type:
            if result is BOOL:
                # @> <@ && are anyarray operators: one array type on both sides.
                sym = {"array_contains": "@>", "array_contained": "<@", "array_overlap": "&&"}[kernel]
                raise SqlError(SqlState.UNDEFINED_FUNCTION,
                               f"operator does not exist: {a.type.name} {sym} {b.type.name}",
                               hint="No operator matches the given name and argument types. "
                                    "You might need to add explicit type casts.")
            (a, b), _ = coerce_all([a, b], ctx, kernel)
        return Call(kernel, (a, b), result or a.type)
    return build


def _concat(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """`||` with an array: array || array, array || element, element || array."""
    a, b = args
    if a.type.kind is TypeKind.ARRAY and b.type.kind is TypeKind.ARRAY:
        return _two_arrays("array_cat")(args, ctx)
    if TypeKind.UNKNOWN in (a.type.kind, b.type.kind) and TypeKind.ARRAY in (a.type.kind, b.type.kind):
        # PostgreSQL reads an untyped literal (or NULL) next to an array as an array of that
        # type: `ARRAY[1] || NULL` is {1}, `ARRAY['a'] || 'x'` a malformed array literal.
        return _two_arrays("array_cat")(args, ctx)
    if a.type.kind is TypeKind.ARRAY:
        return _with_element("array_append", True)(args, ctx)
    return _with_element("array_prepend", False)(args, ctx)


def _string_to_array(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Call("string_to_array", tuple(_coerce(a, TEXT, ctx) for a in args), array_of(TEXT))


def _polymorphic_unknown() -> SqlError:
    return SqlError("42804", "could not determine polymorphic type because input has type unknown")


def _array_fill(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """array_fill(value anyelement, dims int[] [, lower_bounds int[]]): one dimension (more
    are refused by the kernel) with lower bound 1."""
    from planner.scalar import resolve_unknown
    value = args[0]
    if value.type.kind is TypeKind.UNKNOWN:
        raise _polymorphic_unknown()
    if value.type.kind is TypeKind.ARRAY:
        from dataflow.errors import unsupported
        raise unsupported("array_fill() of an array value (a multidimensional array)")
    ints = array_of(INT4)
    rest = []
    for a in args[1:]:
        if a.type.kind is TypeKind.UNKNOWN or a.type == ints:
            rest.append(_coerce(a, ints, ctx))
        else:
            raise no_function("array_fill", args)
    return Call("array_fill", (resolve_unknown(value, ctx), *rest), array_of(value.type))


def _array_replace(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """array_replace(anycompatiblearray, anycompatible, anycompatible): the three meet in the
    common type of the array's elements and the two values."""
    from planner.typing import unify
    a, old, new = args
    if a.type.kind not in (TypeKind.ARRAY, TypeKind.UNKNOWN):
        raise no_function("array_replace", args)
    types = ([a.type.element] if a.type.kind is TypeKind.ARRAY else []) + [
        t.type for t in (old, new) if t.type.kind is not TypeKind.UNKNOWN]
    if not types:
        raise _polymorphic_unknown()
    common = unify(types, common=True)
    if common is None or common.kind is TypeKind.ARRAY:
        raise no_function("array_replace", args)
    return Call("array_replace", (_coerce(a, array_of(common), ctx), _coerce(old, common, ctx),
                                  _coerce(new, common, ctx)), array_of(common))


FUNCTIONS = overloads(
    Overload("array_length", (ANY, ANY), INT4, build=_unary("array_length", INT4, (INT4,))),
    Overload("array_upper", (ANY, ANY), INT4, build=_unary("array_upper", INT4, (INT4,))),
    Overload("array_lower", (ANY, ANY), INT4, build=_unary("array_lower", INT4, (INT4,))),
    Overload("array_ndims", (ANY,), INT4, build=_unary("array_ndims", INT4)),
    Overload("cardinality", (ANY,), INT4, build=_unary("cardinality", INT4)),
    Overload("array_to_string", (ANY, ANY), TEXT, build=_unary("array_to_string", TEXT, (TEXT,))),
    Overload("array_to_string", (ANY, ANY, ANY), TEXT, build=_unary("array_to_string", TEXT, (TEXT, TEXT))),
    Overload("array_append", (ANY, ANY), TEXT, build=_with_element("array_append", True)),
    Overload("array_prepend", (ANY, ANY), TEXT, build=_with_element("array_prepend", False)),
    Overload("array_remove", (ANY, ANY), TEXT, build=_with_element("array_remove", True)),
    Overload("array_position", (ANY, ANY), INT4, build=_with_element("array_position", True, result_int=True)),
    Overload("array_cat", (ANY, ANY), TEXT, build=_two_arrays("array_cat")),
    Overload("array_fill", (ANY, ANY), TEXT, build=_array_fill),
    Overload("array_fill", (ANY, ANY, ANY), TEXT, build=_array_fill),
    Overload("array_replace", (ANY, ANY, ANY), TEXT, build=_array_replace),
    Overload("string_to_array", (ANY, ANY), TEXT, build=_string_to_array),
    Overload("string_to_array", (ANY, ANY, ANY), TEXT, build=_string_to_array),
    # Operators with an array operand (planner.scalar picks these names then; the jsonb
    # namesakes are in planner.functions.json).
    Overload("array@>", (ANY, ANY), BOOL, build=_two_arrays("array_contains", BOOL)),
    Overload("array<@", (ANY, ANY), BOOL, build=_two_arrays("array_contained", BOOL)),
    Overload("array&&", (ANY, ANY), BOOL, build=_two_arrays("array_overlap", BOOL)),
    Overload("array||", (ANY, ANY), TEXT, build=_concat),
)
