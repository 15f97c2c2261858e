"""Function overloads and PostgreSQL's rules for choosing one of them.

Each family module (`planner.functions.math`, `.strings`, `.system`, ...) declares its
functions as `Overload`s: the argument types, the result type and either the engine kernel
that computes it (`dataflow.functions`) or a plan-time builder (for values fixed per statement,
like `current_user` or `now()`). `resolve` picks the overload for a call the way PostgreSQL's
`func_select_candidate` does, simplified to the types we have:

1. keep the overloads whose arity fits and whose every argument type the actual argument
   reaches by an implicit cast (an untyped literal or NULL reaches any type);
2. prefer the most exact matches; then the most arguments whose cast goes to the preferred
   type of its category (double precision for numbers, text for strings, timestamptz for
   times); then, for untyped arguments, overloads taking text there;
3. one left: cast the arguments and build the call; none: 42883 with PostgreSQL's hint;
   several: 42725, not unique.

Worked example: `sqrt(2)` has the candidates sqrt(double precision) and sqrt(numeric); the
integer reaches both implicitly, neither exactly, and double precision is the preferred number
type, so it is `Call('sqrt', (Cast(Literal(2, INT4), FLOAT8),), FLOAT8)` - as in PostgreSQL,
where `sqrt(2)` is a double and `sqrt(2.0)` (numeric, an exact match) a numeric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Union

from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, ScalarExpr
from dataflow.types import (FLOAT8, TEXT, TIMESTAMPTZ, SqlType, TypeKind)
from planner.typing import implicitly_castable, is_time

if TYPE_CHECKING:
    from planner.context import PlanContext


class AnyType:
    """An argument of PostgreSQL's pseudo-type "any": taken as it is (an untyped literal as text)."""

    name = '"any"'

    def __repr__(self) -> str:
        return "ANY"


ANY = AnyType()
ArgType = Union[SqlType, AnyType]
# Result: a type, or a function of the (coerced) argument types.
ResultType = Union[SqlType, Callable[[list[SqlType]], SqlType]]
# A plan-time builder: gets the coerced arguments and the context, returns the expression.
Builder = Callable[[list[ScalarExpr], "PlanContext"], ScalarExpr]


@dataclass(frozen=True)
class Overload:
    """One signature of a function. Exactly one of `kernel` (an engine function name, see
    `dataflow.functions`) and `build` is set. `variadic`: the last argument type repeats (zero
    or more times after the fixed ones). `wall_clock`: the value depends on when the statement
    runs (refused where a result is maintained over time); `volatile`: differs per call
    (random(): never folded, refused in maintained results)."""

    name: str  # a function name, or an operator's symbol ("&", "^")
    args: tuple[ArgType, ...]
    result: ResultType
    kernel: str | None = None
    build: Builder | None = None
    variadic: bool = False
    wall_clock: bool = False
    volatile: bool = False

    def arg_types(self, n: int) -> tuple[ArgType, ...] | None:
        """The parameter types for `n` arguments, or None if `n` does not fit."""
        if self.variadic:
            fixed = len(self.args) - 1
            if n < fixed:
                return None
            return self.args[:fixed] + (self.args[-1],) * (n - fixed)
        return self.args if n == len(self.args) else None

    def result_type(self, types: list[SqlType]) -> SqlType:
        return self.result(types) if callable(self.result) else self.result


def overloads(*sigs: Overload) -> dict[str, list[Overload]]:
    out: dict[str, list[Overload]] = {}
    for s in sigs:
        out.setdefault(s.name, []).append(s)
    return out


def no_function(name: str, args: list[ScalarExpr]) -> SqlError:
    if not (name[-1].isalnum() or name[-1] == "_"):  # an operator: `integer & text`, `~ text`
        name = name.removeprefix("array")  # array operators are registered as "array@>" etc.
        sig = f"{args[0].type.name} {name} {args[1].type.name}" if len(args) == 2 else f"{name} {args[0].type.name}"
        return SqlError(SqlState.UNDEFINED_FUNCTION, f"operator does not exist: {sig}",
                        hint="No operator matches the given name and argument types. "
                             "You might need to add explicit type casts.")
    sig = ", ".join(a.type.name for a in args)
    return SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name}({sig}) does not exist",
                    hint="No function matches the given name and argument types. "
                         "You might need to add explicit type casts.")


def _preferred(t: SqlType) -> bool:
    return t in (FLOAT8, TEXT, TIMESTAMPTZ)


def _same_type(a: SqlType, p: SqlType) -> bool:
    """One PostgreSQL type whatever its modifier: numeric(10,2) matches numeric exactly."""
    if a.kind is not p.kind:
        return False
    return a.kind is not TypeKind.ARRAY or a == p or (a.element is not None and p.element is not None
                                                     and a.element.kind is p.element.kind)


def _category(t: SqlType) -> str:
    if t.is_numeric_family:
        return "N"
    if t.is_text or t.kind is TypeKind.UNKNOWN:
        return "S"
    if is_time(t):
        return "D"
    return t.kind.value


def choose(name: str, cands: list[Overload], args: list[ScalarExpr]) -> tuple[Overload, tuple[ArgType, ...]]:
    """The overload a call resolves to, with its parameter types for these arguments."""
    viable = []
    for o in cands:
        params = o.arg_types(len(args))
        if params is None:
            continue
        if all(p is ANY or a.type.kind is TypeKind.UNKNOWN or implicitly_castable(a.type, p)
               for a, p in zip(args, params)):
            viable.append((o, params))
    if not viable:
        raise no_function(name, args)
    if len(viable) > 1:
        def exact(params) -> int:
            return sum(p is ANY or _same_type(a.type, p) for a, p in zip(args, params))

        def preferred(params) -> int:
            return sum(isinstance(p, SqlType) and not _same_type(a.type, p) and _preferred(p)
                       for a, p in zip(args, params))

        def unknown_as_text(params) -> int:
            return sum(a.type.kind is TypeKind.UNKNOWN and isinstance(p, SqlType) and _category(p) == "S"
                       for a, p in zip(args, params))

        def unknown_as_other(params) -> int:
            # PostgreSQL: an unknown operand of a binary operator is first assumed to have the
            # other operand's type (`ts - '2024-01-01'` is timestamp - timestamp).
            if len(args) != 2 or name[-1].isalnum() or name[-1] == "_":
                return 0
            return sum(a.type.kind is TypeKind.UNKNOWN and p == other.type
                       for a, p, other in zip(args, params, reversed(args)))

        for score in (unknown_as_other, exact, preferred, unknown_as_text):
            best = max(score(p) for _, p in viable)
            viable = [(o, p) for o, p in viable if score(p) == best]
            if len(viable) == 1:
                break
    if len(viable) > 1:
        if not (name[-1].isalnum() or name[-1] == "_"):  # an operator: `~ unknown`, `unknown & unknown`
            sym = name.removeprefix("array")
            sig = " ".join([args[0].type.name, sym, args[1].type.name] if len(args) == 2
                           else [sym, args[0].type.name])
            raise SqlError("42725", f"operator is not unique: {sig}",
                           hint="Could not choose a best candidate operator. "
                                "You might need to add explicit type casts.")
        sig = ", ".join(a.type.name for a in args)
        raise SqlError("42725", f"function {name}({sig}) is not unique",
                       hint="Could not choose a best candidate function. "
                            "You might need to add explicit type casts.")
    return viable[0]


def build_call(o: Overload, args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """The expression for a chosen overload over already coerced arguments."""
    if (o.wall_clock or o.volatile) and ctx.maintained is not None:
        hint = "mz_now() gives the logical time of each change." if o.wall_clock else None
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                       f"{o.name}() is not allowed in {ctx.maintained}: its value changes with "
                       f"{'the wall clock' if o.wall_clock else 'every call'}", hint=hint)
    if o.build is not None:
        return o.build(args, ctx)
    assert o.kernel is not None
    return Call(o.kernel, tuple(args), o.result_type([a.type for a in args]))
