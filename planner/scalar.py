"""Lowering sqlglot scalar expressions to `dataflow.expr`, with typing and implicit casts.

Columns resolve through a `Scope`; literals get PostgreSQL's types (`1` int4, `3000000000` int8,
`1.5` numeric, `'x'` unknown until context decides); operators promote their operands.

>>> # over scope (a int4, b int8):  a + b * 2
>>> # Call('add', (Cast(ColumnRef(0, INT4), INT8), Call('mul', (ColumnRef(1, INT8), Literal(2, INT8)), INT8)), INT8)

A `hook` lets the caller replace whole subtrees first (aggregates and GROUP BY expressions
become columns of the Reduce output; see `planner.aggregates`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call, Cast, ColumnRef, If, Literal, ScalarExpr, columns_used
from dataflow.types import (BOOL, FLOAT8, INT4, INT8, INTERVAL, NUMERIC, TEXT, UNKNOWN, SqlType, TypeKind,
                            array_of)
from planner.casts import cast_value, fit_length
from planner.context import ParamSlot, PlanContext
from planner import functions as library
from planner.catalog_casts import reg_to_text, text_to_reg
from planner.functions.aggregates import AGGREGATE_FUNCTIONS
from planner.table_functions import TABLE_FUNCTIONS
from planner.patterns import check_regex, similar_to_regex
from planner.rules.fold_constants import fold_constant, fold_tree, raise_deferred
from planner.scope import Scope
from planner.typing import (assignment_castable, explicitly_castable, implicitly_castable,
                            is_float, is_time, type_from_ast, unify)

Hook = Callable[[exp.Expression], "ScalarExpr | None"]

AGGREGATES = (exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg, exp.Filter, exp.WithinGroup)
# The ordered-set aggregates, which sqlglot parses into nodes of their own; an aggregate call
# only outside WITHIN GROUP (the WithinGroup around one is the call).
ORDERED_SET = (exp.PercentileCont, exp.PercentileDisc, exp.Mode)


def is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call: one of sqlglot's aggregate classes, `agg(...) FILTER (WHERE ...)`, or
    a plain call of an aggregate's name (`planner.functions.aggregates`)."""
    return isinstance(node, AGGREGATES) or (
        isinstance(node, exp.Anonymous) and node.name.lower() in AGGREGATE_FUNCTIONS) or (
        isinstance(node, ORDERED_SET) and not isinstance(node.parent, exp.WithinGroup))


_ARITH = {exp.Add: ("add", "+"), exp.Sub: ("sub", "-"), exp.Mul: ("mul", "*"),
          exp.Div: ("div", "/"), exp.Mod: ("mod", "%")}
# Numeric results PostgreSQL rounds itself (quotients, averages, roots, logarithms, powers).
_ROUNDED_RESULTS = (exp.Div, exp.Avg, exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance,
                    exp.VariancePop, exp.Sqrt, exp.Cbrt, exp.Ln, exp.Log, exp.Exp, exp.Pow)


def rounds_product(left: exp.Expression, right: exp.Expression) -> bool:
    """A numeric product is rounded to unconstrained numeric's 16 fractional digits, instead of
    refused, when a factor is computed from a rounded result: that factor already differs from
    PostgreSQL's exact value by rounding, so one more rounding adds a difference of the same
    size. A product of exact values that needs more digits is still refused (22003).

    >>> rounds_product(exp.maybe_parse("0.2"), exp.maybe_parse("avg(x)"))
    True
    >>> rounds_product(exp.maybe_parse("0.2"), exp.maybe_parse("x + 1"))
    False
    """
    return any(node.find(*_ROUNDED_RESULTS) is not None for node in (left, right))


_CMP = {exp.EQ: ("eq", "="), exp.NEQ: ("neq", "<>"), exp.LT: ("lt", "<"), exp.LTE: ("lte", "<="),
        exp.GT: ("gt", ">"), exp.GTE: ("gte", ">=")}
_INT4_MIN, _INT4_MAX = -(2 ** 31), 2 ** 31 - 1


# ---- coercion ---------------------------------------------------------------------------------

_REG_KINDS = frozenset({TypeKind.REGCLASS, TypeKind.REGTYPE, TypeKind.REGPROC, TypeKind.REGNAMESPACE,
                        TypeKind.REGROLE})


def coerce(e: ScalarExpr, t: SqlType, ctx: PlanContext, mode: str = "implicit",
           column: str | None = None) -> ScalarExpr:
    """Cast `e` to `t`. `mode` is implicit, assignment (storing into a column) or explicit (CAST).
    Literals are cast now, so bad constants fail at plan time with the proper SQLSTATE."""
    if e.type == t:
        return e
    if t.length is not None and mode != "explicit":
        # A length (varchar(n), character(n)) is applied only by explicit casts (which cut)
        # and by storing into a column (which refuses a longer value); elsewhere the value
        # keeps its length, as in PostgreSQL (`c = 'abcd'` is false for c character(3)).
        unlimited = coerce(e, SqlType(t.kind), ctx, mode, column)
        if mode != "assignment":
            return unlimited
        if isinstance(unlimited, Literal):
            v = unlimited.value
            return Literal(None if v is None else fit_length(v, t, assignment=True), t)
        return Cast(Call("check_length", (unlimited, Literal(t.length, INT4), Literal(t.name, TEXT)),
                         unlimited.type), t)
    if t.kind in _REG_KINDS and e.type.is_text:
        return text_to_reg(e, t, ctx)  # a name: looked up in the catalog
    if e.type.kind in _REG_KINDS and t.is_text and mode != "implicit":
        return coerce(reg_to_text(e, ctx), t, ctx, mode, column)
    if isinstance(e, Literal) and e.type.kind is TypeKind.UNKNOWN and not ctx.fold_constants and (
            t.length is not None or (t.kind is TypeKind.NUMERIC and t.scale is not None)):
        # PostgreSQL reads the literal as the plain type, then applies the precision (a
        # function it folds at plan time): where folding is off, only the first part happens.
        return Cast(coerce(e, SqlType(t.kind), ctx), t)
    if isinstance(e, Literal) and e.type.kind is TypeKind.UNKNOWN:
        v = e.value
        if isinstance(v, ParamSlot):
            ctx.params.infer(v.index, t)
            v = v.raw
        return Literal(cast_value(v, TEXT, t), t)
    ok = {"implicit": implicitly_castable, "assignment": assignment_castable,
          "explicit": explicitly_castable}[mode](e.type, t)
    if not ok:
        if mode == "assignment" and column is not None:
            raise SqlError(SqlState.DATATYPE_MISMATCH,
                           f'column "{column}" is of type {t.name} but expression is of type {e.type.name}',
                           hint="You will need to rewrite or cast the expression.")
        if mode == "explicit":
            raise SqlError("42846", f"cannot cast type {e.type.name} to {t.name}")
        raise SqlError(SqlState.DATATYPE_MISMATCH, f"cannot cast type {e.type.name} to {t.name}")
    if isinstance(e, Literal) and ctx.fold_constants:
        try:
            return Literal(cast_value(e.value, e.type, t), t)
        except SqlError as err:
            # Folded by PostgreSQL's planner, not read by its parser (unlike a literal's own
            # input, just above): it fails the statement only if the pruned plan still reads it.
            from planner.rules.fold_constants import deferred_error
            return deferred_error(err, Cast(e, t))
    return Cast(e, t)


def resolve_unknown(e: ScalarExpr, ctx: PlanContext) -> ScalarExpr:
    """An expression whose type is still `unknown` (a bare 'x' or $1) becomes text."""
    return coerce(e, TEXT, ctx) if e.type.kind is TypeKind.UNKNOWN else e


def coerce_all(es: list[ScalarExpr], ctx: PlanContext, what: str,
               common: bool = True) -> tuple[list[ScalarExpr], SqlType]:
    """Bring several expressions to their common type (CASE, COALESCE, UNION, VALUES; with
    `common` false, the operator rules of IN and IS DISTINCT FROM: see `typing.unify`)."""
    t = unify([e.type for e in es], common)
    if t is None:
        names = " and ".join(sorted({e.type.name for e in es}))
        raise SqlError(SqlState.DATATYPE_MISMATCH, f"{what} types {names} cannot be matched")
    if t.kind is TypeKind.NUMERIC and len({e.type for e in es if e.type.kind is TypeKind.NUMERIC}) > 1:
        t = NUMERIC
    return [coerce(e, t, ctx) for e in es], t


def to_bool(e: ScalarExpr, ctx: PlanContext, what: str) -> ScalarExpr:
    if e.type.kind is TypeKind.UNKNOWN:
        return coerce(e, BOOL, ctx)
    if e.type != BOOL:
        raise SqlError(SqlState.DATATYPE_MISMATCH, f"argument of {what} must be type boolean, not type {e.type.name}")
    return e


def _bare_number(node: exp.Expression) -> bool:
    """A numeric constant, possibly parenthesised or already signed (`(-(3))`)."""
    while isinstance(node, (exp.Paren, exp.Neg)):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string


def literal_of(node: exp.Literal) -> Literal:
    if node.is_string:
        return Literal(node.this, UNKNOWN)
    return numeric_literal(node.this)


def numeric_literal(text: str) -> Literal:
    """A numeric constant typed by its text, as PostgreSQL does: integer if it fits, else
    bigint, else numeric."""
    if text.lstrip("-").isdigit():
        v = int(text)
        if v < _INT4_MIN:
            return Literal(v, INT8) if v >= -(2 ** 63) else Literal(Decimal(text), NUMERIC)
        if v <= _INT4_MAX:
            return Literal(v, INT4)
        if v < 2 ** 63:
            return Literal(v, INT8)
    # Exact for now: whether numeric's storage can hold it is checked once the literal's final
    # type is known (`planner.rules.numeric_literals`); `1e300` compared with a float is fine.
    return Literal(Decimal(text), NUMERIC)


def _no_op(sym: str, l: SqlType, r: SqlType | None = None) -> SqlError:
    sig = f"{sym} {l.name}" if r is None else f"{l.name} {sym} {r.name}"
    return SqlError(SqlState.UNDEFINED_FUNCTION, f"operator does not exist: {sig}",
                    hint="No operator matches the given name and argument types. "
                         "You might need to add explicit type casts.")


# sqlglot's own nodes for SQL's special-syntax functions (no parentheses) -> the name in the
# function library (`planner.functions`).
_SPECIAL_NAMES = {exp.CurrentUser: "current_user", exp.SessionUser: "session_user",
                  exp.CurrentSchema: "current_schema", exp.CurrentTimestamp: "current_timestamp",
                  exp.CurrentDate: "current_date", exp.CurrentTime: "current_time",
                  exp.Localtimestamp: "localtimestamp", exp.CurrentDatabase: "current_database",
                  exp.CurrentVersion: "version", exp.CurrentCatalog: "current_catalog"}


# Operators the function library defines (by their symbol; see `planner.functions.math`).
_LIBRARY_OPERATORS = {exp.BitwiseAnd: "&", exp.BitwiseOr: "|", exp.BitwiseXor: "#",
                      exp.BitwiseNot: "~", exp.BitwiseLeftShift: "<<", exp.BitwiseRightShift: ">>",
                      exp.Pow: "^", exp.JSONExtract: "->", exp.JSONExtractScalar: "->>",
                      exp.JSONBExtract: "#>", exp.JSONBExtractScalar: "#>>", exp.ArrayContainsAll: "@>",
                      exp.ArrayContainedBy: "<@", exp.JSONBContainsTopKey: "?",
                      exp.JSONBDeleteAtPath: "#-", exp.ArrayOverlaps: "&&",
                      exp.JSONBContainsAnyTopKeys: "?|", exp.JSONBContainsAllTopKeys: "?&",
                      exp.StartsWith: "^@"}


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _row_items(node: exp.Expression) -> list[exp.Expression] | None:
    """The fields of a row constructor, `(a, b)` or `ROW(a, b)`; None for anything else."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Tuple):
        return list(node.expressions)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "row":
        return list(node.expressions)
    return None


def _datetime_like(t: SqlType) -> bool:
    """Dates, times, timestamps and intervals: their arithmetic is in the function library."""
    return is_time(t) or t.kind in (TypeKind.INTERVAL, TypeKind.TIME, TypeKind.TIMETZ)


def _quantifier(node: exp.Expression) -> tuple[str, exp.Expression] | None:
    """The ANY/SOME/ALL of `x op ANY (array)`: sqlglot keeps ANY as a node, ALL as a call."""
    if isinstance(node, exp.Any):
        inner = node.this
        return "ANY", inner.this if isinstance(inner, exp.Paren) else inner
    if isinstance(node, exp.All):
        inner = node.this
        return "ALL", inner.this if isinstance(inner, exp.Paren) else inner
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("ALL", "SOME", "ANY") and len(node.expressions) == 1:
        return ("ALL" if node.name.upper() == "ALL" else "ANY"), node.expressions[0]
    return None


# Functions SQL calls without parentheses that sqlglot reads as column names.
_KEYWORD_FUNCTIONS = frozenset({"user", "current_role", "current_catalog"})


# PostgreSQL built-ins not implemented yet: refused as unsupported (0A000), not as unknown.
POSTGRES_FUNCTIONS = _POSTGRES_FUNCTIONS = frozenset("""
    sqrt cbrt power pow exp ln log log10 mod sign trunc pi degrees radians sin cos tan asin acos atan
    atan2 div gcd lcm factorial random width_bucket scale position strpos left right repeat reverse
    initcap lpad rpad split_part concat concat_ws md5 sha256 ascii chr translate octet_length
    bit_length regexp_replace regexp_match regexp_matches regexp_split_to_array starts_with format
    quote_ident quote_literal to_char to_number to_date to_timestamp date_trunc date_part extract
    age now clock_timestamp statement_timestamp transaction_timestamp timeofday make_date
    make_timestamp justify_days array_agg string_agg bool_and bool_or every stddev variance
    stddev_pop stddev_samp var_pop var_samp generate_series unnest array_length cardinality
    version current_database current_schema current_user session_user pg_typeof
    """.split())


def _no_func(name: str, args: list[ScalarExpr]) -> SqlError:
    if name in _POSTGRES_FUNCTIONS:
        return unsupported(f"function {name}")
    sig = ", ".join(a.type.name for a in args)
    return SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name}({sig}) does not exist",
                    hint="No function matches the given name and argument types. "
                         "You might need to add explicit type casts.")


# ---- the lowerer ------------------------------------------------------------------------------

class ScalarLowerer:
    def __init__(self, scope: Scope, ctx: PlanContext, hook: Hook | None = None,
                 clause: str = "WHERE") -> None:
        self.scope = scope
        self.ctx = ctx
        self.hook = hook
        self.clause = clause
        # Off while lowering a part that constant folding already decided away, or one that is
        # analysed but never planned (`PlanContext.fold_constants`).
        self.fold = ctx.fold_constants

    def lower(self, node: exp.Expression) -> ScalarExpr:
        if self.hook is not None:
            hooked = self.hook(node)
            if hooked is not None:
                return hooked
        e = self._lower(node)
        return fold_constant(e) if self.fold else e

    def lower_unused(self, node: exp.Expression) -> ScalarExpr:
        """Lower a part whose value is never needed (`false AND x`, the arms after a constant
        true CASE condition): typed and checked, but not folded, so a failing constant in it
        raises nothing, as in PostgreSQL."""
        saved, self.fold = self.fold, False
        saved_ctx, self.ctx.fold_constants = self.ctx.fold_constants, False  # casts of constants too
        try:
            return self.lower(node)
        finally:
            self.fold, self.ctx.fold_constants = saved, saved_ctx

    # Each branch handles one SQL construct.
    def _lower(self, node: exp.Expression) -> ScalarExpr:
        ctx = self.ctx
        if isinstance(node, exp.Paren):
            return self.lower(node.this)
        if isinstance(node, exp.Alias):
            return self.lower(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise SqlError(SqlState.SYNTAX_ERROR, "* is not allowed in this context")
            if not node.table and not node.this.quoted and node.name.lower() in _KEYWORD_FUNCTIONS:
                # Reserved words in PostgreSQL, never column names unless quoted.
                return library.resolve_function(node.name.lower(), [], ctx)
            i = self._resolve(node)
            self.scope.columns[i].mark_used()  # an outer column: the subquery reads it
            return ColumnRef(i, self.scope.columns[i].type)
        if isinstance(node, exp.Literal):
            return literal_of(node)
        if isinstance(node, exp.ByteString):  # E'a\nb': sqlglot has already read the escapes
            return Literal(node.this, UNKNOWN)
        if isinstance(node, exp.Boolean):
            return Literal(bool(node.this), BOOL)
        if isinstance(node, exp.Null):
            return Literal(None, UNKNOWN)
        if isinstance(node, exp.Parameter):
            return self._param(node)
        if isinstance(node, exp.Neg):
            arg = self.lower(node.this)
            if _bare_number(node.this) and isinstance(arg, Literal) and arg.value is not None:
                # A minus sign belongs to a bare numeric constant in PostgreSQL's grammar: the
                # signed text decides the type (-2147483648 is an integer, -(-2147483648) a bigint).
                v = arg.value  # copy_negate is exact; -Decimal rounds to 28 digits
                return numeric_literal(str(v.copy_negate() if isinstance(v, Decimal) else -v))
            arg = coerce(arg, NUMERIC, ctx) if arg.type.kind is TypeKind.UNKNOWN else arg
            if arg.type.kind is TypeKind.INTERVAL:
                return library.resolve_function("-", [arg], ctx)
            if not arg.type.is_numeric_family:
                raise _no_op("-", arg.type)
            return Call("neg", (arg,), arg.type)
        if isinstance(node, exp.Not):
            inner = node.this.this if isinstance(node.this, exp.Paren) else node.this
            if isinstance(inner, exp.Is) and not (_row_items(inner.this) is not None and isinstance(inner.expression, exp.Null)):
                # NOT (x IS NULL) and friends keep their own negation (not for a row: NOT (row IS
                # NULL) is "some field is not NULL", row IS NOT NULL "every field is not NULL")
                return self._is(inner, not inner.args.get("negate", False))
            return Call("not", (to_bool(self.lower(node.this), ctx, "NOT"),), BOOL)
        if isinstance(node, (exp.And, exp.Or)):
            name = "and" if isinstance(node, exp.And) else "or"
            # `false AND x` is false and `true OR x` true whatever x is: decided now, as
            # PostgreSQL does, so x is never evaluated (nor folded: it cannot raise an error).
            decisive = name == "or"
            left = to_bool(self.lower(node.this), ctx, name.upper())
            if isinstance(left, Literal) and left.value is decisive and self.fold:
                to_bool(self.lower_unused(node.expression), ctx, name.upper())
                return Literal(decisive, BOOL)
            right = to_bool(self.lower(node.expression), ctx, name.upper())
            if any(isinstance(a, Literal) and a.value is decisive for a in (left, right)):
                raise_deferred(left)  # `1 / 0 = 1 AND false`: PostgreSQL folded the left first
                return Literal(decisive, BOOL)
            return Call(name, (left, right), BOOL)
        for cls, (fn, sym) in _ARITH.items():
            if type(node) is cls:
                rounded = fn == "mul" and rounds_product(node.this, node.expression)
                return self.arith(fn, sym, self.lower(node.this), self.lower(node.expression), rounded)
        if isinstance(node, (*_CMP, exp.NullSafeEQ, exp.NullSafeNEQ)) and \
                (_row_items(node.this) is not None or _row_items(node.expression) is not None):
            return self._row_compare(node)
        if isinstance(node, exp.In) and _row_items(node.this) is not None and node.args.get("query") is None:
            # (a, b) IN ((1, 2), (3, 4)): a row equality per item, OR'ed.
            tests = [self._row_compare(exp.EQ(this=node.this.copy(), expression=e.copy())) for e in node.expressions]
            out = tests[0]
            for t in tests[1:]:
                out = Call("or", (out, t), BOOL)
            return out
        for cls, (fn, sym) in _CMP.items():
            if type(node) is cls:
                quantified = _quantifier(node.expression)
                if quantified is not None:
                    return self._quantified(fn, sym, node.this, *quantified)
                return self.compare(fn, sym, self.lower(node.this), self.lower(node.expression))
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            fn = "is_not_distinct_from" if isinstance(node, exp.NullSafeEQ) else "is_distinct_from"
            # (character values compare without their trailing blanks, as in `=`)
            args, _ = coerce_all(self._bpchar_as_text([self.lower(node.this), self.lower(node.expression)]), ctx,
                                 "IS DISTINCT FROM", common=False)
            return Call(fn, tuple(resolve_unknown(a, ctx) for a in args), BOOL)
        if isinstance(node, exp.DPipe):
            return self.concat(self.lower(node.this), self.lower(node.expression))
        if isinstance(node, exp.Is):
            return self._is(node, bool(node.args.get("negate", False)))
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                raise unsupported(f"IN (subquery) in {self.clause}")
            items = [self.lower(node.this)] + [self.lower(e) for e in node.expressions]
            if len(items) > 2 and items[0].type.kind is TypeKind.BPCHAR and all(
                    e.type.kind in _STRING_KINDS and not columns_used(e) for e in items[1:]):
                # PostgreSQL compares `x IN (c1, c2, ...)` of constants as `x = ANY` of an array
                # of their common type, character for a character(n) x: the constants' trailing
                # blanks do not count either (one constant is a plain `=`, of text with text).
                items = items[:1] + [coerce(e, SqlType(TypeKind.BPCHAR), ctx) for e in items[1:]]
            items = self._bpchar_as_text(items)
            items, _ = coerce_all(items, ctx, "IN", common=False)
            items = [resolve_unknown(a, ctx) for a in items]
            if items[0].type.kind in (TypeKind.ARRAY, TypeKind.JSONB):
                from planner.ordering import order_key  # (equal as PostgreSQL compares them)
                items = [order_key(coerce(e, items[0].type, ctx)) for e in items]
            constants = [e for e in items[1:] if not columns_used(e)]
            if len(constants) > 1:
                # PostgreSQL compares with the elements that read no column first (as one
                # `= ANY (ARRAY[...])`), then with the others in order, stopping at a match
                # (dataflow.scalar evaluates later elements only where no earlier one matched).
                items = items[:1] + constants + [e for e in items[1:] if columns_used(e)]
            return Call("in_list", tuple(items), BOOL)
        if isinstance(node, exp.Between):
            return self._between(node)
        if isinstance(node, (exp.Like, exp.ILike)):
            fn = "like" if isinstance(node, exp.Like) else "ilike"
            if isinstance(node.expression, (exp.Any, exp.All)):
                return self._like_quantified(node, fn)
            return _like_call(fn, self._like_subject(node, fn), self.text_arg(node.expression, fn),
                              bool(node.args.get("negate")))
        if isinstance(node, (exp.RegexpLike, exp.RegexpILike)):
            if node.args.get("flag") is not None:
                raise unsupported("regular expression flags")
            return self._regex(node.this, node.expression, isinstance(node, exp.RegexpILike), "~")
        if isinstance(node, exp.SimilarTo):
            return self._regex(node.this, node.expression, False, "SIMILAR TO")
        if isinstance(node, exp.Escape):
            if not isinstance(node.this, (exp.Like, exp.ILike)):
                raise unsupported("SIMILAR TO ... ESCAPE")
            return self._like_escape(node.this, node.expression)
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If):
            cond = to_bool(self.lower(node.this), ctx, "CASE/WHEN")
            branches = [self.lower(node.args["true"]),
                        self.lower(node.args["false"]) if node.args.get("false") else Literal(None, UNKNOWN)]
            (t, f), typ = coerce_all(branches, ctx, "CASE")
            return If(cond, resolve_unknown(t, ctx), resolve_unknown(f, ctx), typ if typ.kind is not TypeKind.UNKNOWN else TEXT)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            target = type_from_ast(node.to)
            if isinstance(node.this, exp.Array) and not node.this.expressions and target.kind is TypeKind.ARRAY:
                return Literal("{}", target)  # ARRAY[]::integer[]
            return coerce(self.lower(node.this), target, ctx, mode="explicit")
        if is_aggregate(node):
            raise SqlError(SqlState.GROUPING_ERROR, f"aggregate functions are not allowed in {self.clause}")
        if isinstance(node, exp.Window):
            raise window_not_allowed(self.clause)
        if isinstance(node, (exp.Subquery, exp.Exists, exp.Select)) or (
                isinstance(node, exp.Array) and node.expressions and isinstance(node.expressions[0], exp.Select)):
            raise unsupported(f"subqueries in {self.clause}")
        if isinstance(node, exp.AtTimeZone):  # ts AT TIME ZONE zone is timezone(zone, ts)
            return library.resolve_function("timezone", [self.lower(node.args["zone"]), self.lower(node.this)], ctx)
        if isinstance(node, exp.Interval):
            # INTERVAL '1 day' (sqlglot splits a trailing unit off: '1' DAY) is a typed constant.
            if not (isinstance(node.this, exp.Literal) and node.this.is_string):
                raise SqlError(SqlState.SYNTAX_ERROR, "syntax error at or near \"INTERVAL\"")
            unit = node.args.get("unit")
            text = node.this.this + (f" {unit.name}" if unit is not None else "")
            return Literal(cast_value(text, TEXT, INTERVAL), INTERVAL)
        if type(node) in _LIBRARY_OPERATORS:
            operands = [self._operand(a) for a in (node.this, node.args.get("expression")) if a is not None]
            sym = _LIBRARY_OPERATORS[type(node)]
            if sym in ("@>", "<@", "&&") and (any(o.type.kind is TypeKind.ARRAY for o in operands) or sym == "&&"):
                sym = "array" + sym  # the array operators (planner.functions.arrays)
            return library.resolve_function(sym, operands, ctx)
        if isinstance(node, exp.Array):
            return self._array(node)
        if isinstance(node, exp.Bracket):
            return self._subscript(node)
        if isinstance(node, (exp.Sqrt, exp.Cbrt)):
            # sqlglot reads the prefix operators |/ and ||/ binding tighter than PostgreSQL does
            # (`|/ 2 + 1` is |/ 3 there): refused rather than answered differently.
            raise unsupported("the prefix operators |/ and ||/ (write sqrt() or cbrt())")
        if isinstance(node, exp.Func):
            return self._function(node)
        raise unsupported(f"expression {node.sql(dialect='postgres')!r}")

    def _resolve(self, node: exp.Column) -> int:
        """The scope position of a column name. Inside a derived table or CTE of a correlated
        subquery, a name of the outer query is refused (0A000) rather than unknown."""
        try:
            return self.scope.resolve(node.name, node.table or None)
        except SqlError as e:
            outer = self.ctx.outer
            if outer is None or not outer.blocked or e.sqlstate not in (SqlState.UNDEFINED_COLUMN,
                                                                         SqlState.UNDEFINED_TABLE):
                raise
            try:
                outer.scope.resolve(node.name, node.table or None)
            except SqlError:
                raise e from None
            raise unsupported("a derived table, CTE or VALUES reading the outer query's columns as "
                              "the right side of a JOIN inside a subquery (list it after a comma)") from None

    def _row_compare(self, node: exp.Expression) -> ScalarExpr:
        """Row comparisons, element by element as PostgreSQL defines them: `=` is every pair
        equal, `<>` any pair unequal, `<` `<=` `>` `>=` compare the first unequal pair (NULL if
        a pair on the way is NULL), IS [NOT] DISTINCT FROM any pair distinct."""
        left, right = _row_items(node.this), _row_items(node.expression)
        other = node.expression if left is not None else node.this
        if (left is None) != (right is None) and isinstance(_unparen(other), exp.Null):
            # `(a, b) = NULL`: the NULL is a record and the comparison strict: NULL, nothing
            # evaluated. A row is never the null record: IS DISTINCT FROM NULL is true.
            for item in (left or right):
                self.lower_unused(item)  # (still typed and checked)
            if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
                return Literal(isinstance(node, exp.NullSafeNEQ), BOOL)
            return Literal(None, BOOL)
        if left is None or right is None:
            sym = _CMP.get(type(node), (None, "IS DISTINCT FROM"))[1]
            single = self.lower(other).type
            single = TEXT if single.kind is TypeKind.UNKNOWN else single
            pair = f"record {sym} {single.name}" if left is not None else f"{single.name} {sym} record"
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"operator does not exist: {pair}",
                           hint="A row compares with a row of as many values: (a, b) = (1, 2).")
        if len(left) != len(right):
            raise SqlError(SqlState.SYNTAX_ERROR, "unequal number of entries in row expressions")
        if not left:
            raise unsupported("comparison of empty rows")
        pairs = [(self.lower(a), self.lower(b)) for a, b in zip(left, right)]

        def join(op: str, items: list[ScalarExpr]) -> ScalarExpr:
            out = items[0]
            for x in items[1:]:
                out = Call(op, (out, x), BOOL)
            return out

        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            tests = []
            for a, b in pairs:
                (a, b), _ = coerce_all(self._bpchar_as_text([a, b]), self.ctx, "IS DISTINCT FROM", common=False)
                tests.append(Call("is_distinct_from", (resolve_unknown(a, self.ctx), resolve_unknown(b, self.ctx)), BOOL))
            distinct = join("or", tests)
            return distinct if isinstance(node, exp.NullSafeNEQ) else Call("not", (distinct,), BOOL)
        fn, sym = _CMP[type(node)]
        if fn in ("eq", "neq"):
            return join("and" if fn == "eq" else "or", [self.compare(fn, sym, a, b) for a, b in pairs])
        strict = {"lte": "lt", "gte": "gt"}.get(fn, fn)
        strict_sym = sym.rstrip("=")
        out = self.compare(fn, sym, *pairs[-1])
        for a, b in reversed(pairs[:-1]):
            out = Call("or", (self.compare(strict, strict_sym, a, b),
                              Call("and", (self.compare("eq", "=", a, b), out), BOOL)), BOOL)
        return out

    def _array(self, node: exp.Array) -> ScalarExpr:
        """ARRAY[a, b, ...]: the elements' common type; an empty ARRAY[] needs a cast."""
        if not node.expressions:
            raise SqlError("42P18", "cannot determine type of empty array",
                           hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].")
        elems, t = coerce_all([self.lower(e) for e in node.expressions], self.ctx, "ARRAY")
        elems = [resolve_unknown(e, self.ctx) for e in elems]
        if elems[0].type.kind is TypeKind.ARRAY:
            raise unsupported("multidimensional arrays")
        return Call("array_build", tuple(elems), array_of(elems[0].type))

    def _subscript(self, node: exp.Bracket) -> ScalarExpr:
        """a[i] (1-based; NULL outside the array)."""
        arr = self.lower(node.this)
        if arr.type.kind is not TypeKind.ARRAY:
            raise SqlError(SqlState.DATATYPE_MISMATCH,
                           f"cannot subscript type {resolve_unknown(arr, self.ctx).type.name} because it does not support subscripting")
        if len(node.expressions) != 1 or isinstance(node.expressions[0], exp.Slice):
            raise unsupported("array slices and multidimensional subscripts")
        idx = self.lower(node.expressions[0])  # as written: the dialect keeps subscripts 1-based
        if not (idx.type.is_integer or idx.type.kind is TypeKind.UNKNOWN):
            raise SqlError(SqlState.DATATYPE_MISMATCH, "array subscript must have type integer")
        return Call("array_get", (arr, coerce(idx, INT4, self.ctx)), arr.type.element)

    def _quantified(self, fn: str, sym: str, left: exp.Expression, kind: str, right: exp.Expression) -> ScalarExpr:
        """x op ANY (array) / x op ALL (array): three-valued, as PostgreSQL: ANY is true if some
        element compares true, NULL if none does but one compares NULL, else false."""
        if isinstance(right, (exp.Select, exp.Subquery)):
            raise unsupported(f"{kind} (subquery) in {self.clause}")
        x = self.lower(left)
        arr = self.lower(right)
        if arr.type.kind is TypeKind.UNKNOWN:
            arr = coerce(arr, array_of(resolve_unknown(x, self.ctx).type), self.ctx)
        if arr.type.kind is not TypeKind.ARRAY:
            raise SqlError(SqlState.DATATYPE_MISMATCH, f"op {kind} requires array on right side")
        # The comparison an element gets: typed as x op element (numbers widen as usual).
        probe = self.compare(fn, sym, x, Literal(None, arr.type.element))
        lx, le = probe.args
        if le.type != arr.type.element:
            arr = coerce(arr, array_of(le.type), self.ctx, mode="implicit")
        listed = _as_in_array(lx, arr, fn, kind)
        if listed is not None:
            return listed
        return Call("array_any" if kind == "ANY" else "array_all", (lx, arr, Literal(fn, TEXT)), BOOL)

    def _operand(self, node: exp.Expression) -> ScalarExpr:
        """An operand of a library operator; sqlglot turns the key of `->`/`->>` into a JSON path
        (`doc -> 'a'` holds JSONPath($.a)): back to the key or index the user wrote."""
        if isinstance(node, exp.JSONPath):
            parts = [p for p in node.expressions if not isinstance(p, exp.JSONPathRoot)]
            if len(parts) == 1 and isinstance(parts[0], exp.JSONPathKey) and isinstance(parts[0].this, str):
                return Literal(parts[0].this, UNKNOWN)
            if len(parts) == 1 and isinstance(parts[0], exp.JSONPathSubscript) and isinstance(parts[0].this, int):
                return Literal(parts[0].this, INT4)
            raise unsupported(f"JSON path {node.sql(dialect='postgres')}")
        return self.lower(node)

    def _like_subject(self, node: exp.Expression, fn: str) -> ScalarExpr:
        subject = self.lower(node.this)
        # LIKE sees character(n)'s padding; other operands are read as text.
        return subject if subject.type.kind is TypeKind.BPCHAR else self.text_arg(node.this, fn)

    def _like_quantified(self, node: exp.Expression, fn: str) -> ScalarExpr:
        """`s [NOT] LIKE ANY (array)` / `LIKE ALL`, and ILIKE, over a constant array: the
        element patterns' LIKEs joined by OR (ANY) or AND (ALL), which are PostgreSQL's
        three-valued answers (true if some LIKE is, NULL if none is but one is NULL, else false;
        ANY of no pattern is false, ALL true; a NULL array gives NULL)."""
        kind = "ANY" if isinstance(node.expression, exp.Any) else "ALL"
        subject = self._like_subject(node, fn)
        arr = self.lower(node.expression.this)
        if arr.type.kind is TypeKind.UNKNOWN:
            arr = coerce(arr, array_of(TEXT), self.ctx)
        if arr.type.kind is not TypeKind.ARRAY:
            raise SqlError(SqlState.DATATYPE_MISMATCH, f"op {kind} requires array on right side")
        if arr.type.element.kind not in (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.UNKNOWN):
            raise SqlError(SqlState.UNDEFINED_FUNCTION,
                           f"operator does not exist: text {'~~' if fn == 'like' else '~~*'} {arr.type.element.name}",
                           hint="No operator matches the given name and argument types. "
                                "You might need to add explicit type casts.")
        folded = fold_constant(arr)
        if not isinstance(folded, Literal):
            raise unsupported(f"{fn.upper()} {kind} with an array that is not a constant")
        if folded.value is None:
            return Literal(None, BOOL)
        from dataflow import arrays
        negate = bool(node.args.get("negate"))
        calls = [_like_call(fn, subject, Literal(pattern, TEXT), negate)
                 for pattern in (arrays.read(folded.value, TEXT) if isinstance(folded.value, str) else folded.value)]
        if not calls:
            return Literal(kind == "ALL", BOOL)
        out = calls[0]
        for call in calls[1:]:
            out = Call("or" if kind == "ANY" else "and", (out, call), BOOL)
        return out

    def _like_escape(self, like: exp.Expression, escape: exp.Expression) -> ScalarExpr:
        """`s LIKE p ESCAPE e` with constant p and e: p rewritten with backslash as its escape
        character (the engine's), then planned as a plain LIKE. `ESCAPE ''` turns escaping off."""
        esc = self.text_arg(escape, "like_escape")
        pat = self.text_arg(like.expression, "like_escape")
        if not (isinstance(esc, Literal) and isinstance(pat, Literal)):
            raise unsupported("LIKE ... ESCAPE with a pattern or escape that is not a constant")
        if esc.value is None or pat.value is None:
            return Literal(None, BOOL)
        e, p = esc.value, pat.value
        if len(e) > 1:
            raise SqlError("22019", "invalid escape string", hint="Escape string must be empty or one character.")
        out, i = [], 0
        while i < len(p):
            c = p[i]
            if e and c == e:
                if i + 1 == len(p):
                    raise SqlError("22025", "LIKE pattern must not end with escape character")
                out.append("\\" + p[i + 1])
                i += 2
                continue
            out.append("\\\\" if c == "\\" else c)
            i += 1
        rewritten = like.copy()
        rewritten.set("expression", exp.Literal.string("".join(out)))
        return self.lower(rewritten)

    def _param(self, node: exp.Parameter) -> ScalarExpr:
        text = str(node.this.this if isinstance(node.this, exp.Literal) else node.name)
        if not text.isdigit():
            # sqlglot reads PostgreSQL's prefix operator `@` (absolute value) before a name as a
            # named parameter: `@a` is abs(a).
            if isinstance(node.this, exp.Var) and text:
                return self.lower(exp.Abs(this=exp.column(text)))
            raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "@{text}"')
        n = int(text)
        if n < 1:
            raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "${n}"')
        params = self.ctx.params
        params.ensure(n - 1)
        t = params.types[n - 1]
        raw = params.values[n - 1] if params.values is not None else None
        if t is None or t.kind is TypeKind.UNKNOWN:
            return Literal(ParamSlot(n - 1, raw), UNKNOWN)
        return Literal(raw, t)

    def _is(self, node: exp.Is, negate: bool) -> ScalarExpr:
        rhs = node.expression
        items = _row_items(node.this)
        if items is not None and isinstance(rhs, exp.Null):
            # A row IS NULL when every field is, IS NOT NULL when none is (so (1, NULL) is
            # neither), as PostgreSQL defines it.
            fn = "is_not_null" if negate else "is_null"
            tests = [Call(fn, (resolve_unknown(self.lower(i), self.ctx),), BOOL) for i in items]
            out = tests[0]
            for t in tests[1:]:
                out = Call("and", (out, t), BOOL)
            return out
        arg = self.lower(node.this)
        if isinstance(rhs, exp.Null):
            return Call("is_not_null" if negate else "is_null", (resolve_unknown(arg, self.ctx),), BOOL)
        if isinstance(rhs, exp.Boolean):
            arg = to_bool(arg, self.ctx, "IS TRUE")
            fn = "is_true" if rhs.this else "is_false"
            call = Call(fn, (arg,), BOOL)
            return Call("not", (call,), BOOL) if negate else call
        raise unsupported(f"IS {rhs.sql()}")

    def _between(self, node: exp.Between) -> ScalarExpr:
        """`x BETWEEN a AND b` is `x >= a AND x <= b`; SYMMETRIC also accepts the bounds swapped."""
        x, low = self.lower(node.this), self.lower(node.args["low"])
        if not node.args.get("symmetric") and self.fold:
            # PostgreSQL folds `x >= a` first: constantly false, `x <= b` is never evaluated
            # (nor a failing constant in b).
            first = fold_constant(self.compare("gte", ">=", x, low))
            if isinstance(first, Literal) and first.value is False:
                self.lower_unused(node.args["high"])
                return Literal(False, BOOL)
        high = self.lower(node.args["high"])

        def within(lo: ScalarExpr, hi: ScalarExpr) -> ScalarExpr:
            return Call("and", (self.compare("gte", ">=", x, lo), self.compare("lte", "<=", x, hi)), BOOL)

        if node.args.get("symmetric"):
            return Call("or", (within(low, high), within(high, low)), BOOL)
        return within(low, high)

    def _regex(self, subject: exp.Expression, pattern: exp.Expression, ignore_case: bool,
               op: str) -> ScalarExpr:
        """`~`, `~*` and SIMILAR TO against a constant pattern, checked and translated now
        (`planner.patterns`); the engine matches with one vectorised regex kernel. As in
        PostgreSQL (bpcharregexeq), character(n) is matched with its padding."""
        s = self.lower(subject)
        if s.type.kind is not TypeKind.BPCHAR:
            s = self.text_arg(subject, op)
        p = self.text_arg(pattern, op)
        if not isinstance(p, Literal):
            raise unsupported(f"{op} with a pattern that is not a constant")
        if p.value is None:
            return Literal(None, BOOL)
        text = similar_to_regex(p.value) if op == "SIMILAR TO" else p.value
        return Call("regex_match", (s, Literal(check_regex(text, ignore_case), TEXT)), BOOL)

    def _case(self, node: exp.Case) -> ScalarExpr:
        ctx = self.ctx
        operand = self.lower(node.this) if node.this is not None else None
        conds, results = [], []
        decided = False  # a constant-true condition was met: later arms are never reached
        for branch in node.args["ifs"]:
            lower = self.lower_unused if decided else self.lower
            if operand is not None:
                cond = fold_constant(self.compare("eq", "=", operand, lower(branch.this))) if not decided \
                    else self.compare("eq", "=", operand, lower(branch.this))
            else:
                cond = to_bool(lower(branch.this), ctx, "CASE/WHEN")
                if self.fold and not decided:
                    cond = fold_tree(cond)
            # An arm whose condition is constantly false or NULL is never taken (PostgreSQL
            # drops it before folding its result).
            dead = decided or (isinstance(cond, Literal) and cond.value is not True and self.fold)
            conds.append(cond)
            results.append((self.lower_unused if dead else self.lower)(branch.args["true"]))
            decided = decided or (isinstance(cond, Literal) and cond.value is True and self.fold)
        default = node.args.get("default")
        lower = self.lower_unused if decided else self.lower
        results.append(lower(default) if default is not None else Literal(None, UNKNOWN))
        # PostgreSQL resolves a CASE's type with the ELSE first.
        else_first, t = coerce_all(results[-1:] + results[:-1], ctx, "CASE")
        results = [resolve_unknown(r, ctx) for r in else_first[1:] + else_first[:1]]
        t = results[0].type
        out = results[-1]
        for cond, res in zip(reversed(conds), reversed(results[:-1])):
            out = If(cond, res, out, t)
        return out

    def arith(self, fn: str, sym: str, l: ScalarExpr, r: ScalarExpr, rounded: bool = False) -> ScalarExpr:
        """`rounded`: a numeric product may round (`rounds_product`)."""
        ctx = self.ctx
        lu, ru = l.type.kind is TypeKind.UNKNOWN, r.type.kind is TypeKind.UNKNOWN
        if (lu and _datetime_like(r.type)) or (ru and _datetime_like(l.type)) or \
                TypeKind.JSONB in (l.type.kind, r.type.kind):
            return library.resolve_function(sym, [l, r], ctx)
        if lu and ru:
            l, r = coerce(l, TEXT, ctx), coerce(r, TEXT, ctx)
        elif lu and r.type.is_numeric_family:
            l = coerce(l, r.type, ctx)
        elif ru and l.type.is_numeric_family:
            r = coerce(r, l.type, ctx)
        if not (l.type.is_numeric_family and r.type.is_numeric_family):
            if any(_datetime_like(x.type) for x in (l, r)):
                # Dates, timestamps and intervals: operators of the function library.
                return library.resolve_function(sym, [l, r], ctx)
            raise _no_op(sym, resolve_unknown(l, ctx).type, resolve_unknown(r, ctx).type)
        t = unify([l.type, r.type])
        if fn == "mod" and is_float(t):
            raise _no_op(sym, l.type, r.type)  # PostgreSQL has no % for floating point
        if t.kind is TypeKind.NUMERIC:
            t = NUMERIC  # numeric arithmetic yields unconstrained numeric, as in PostgreSQL
            if rounded:
                fn = "mul_rounded"
        return Call(fn, (coerce(l, t, ctx), coerce(r, t, ctx)), t)

    def _bpchar_as_text(self, items: list[ScalarExpr]) -> list[ScalarExpr]:
        return bpchar_as_text(items, self.ctx)

    def compare(self, fn: str, sym: str, l: ScalarExpr, r: ScalarExpr) -> ScalarExpr:
        ctx = self.ctx
        l, r = self._bpchar_as_text([l, r])
        if l.type.kind is TypeKind.UNKNOWN and r.type.kind is not TypeKind.UNKNOWN:
            l = coerce(l, r.type, ctx)
        elif r.type.kind is TypeKind.UNKNOWN and l.type.kind is not TypeKind.UNKNOWN:
            r = coerce(r, l.type, ctx)
        t = unify([l.type, r.type])
        if t is None:
            raise _no_op(sym, l.type, r.type)
        if t.kind is TypeKind.NUMERIC and l.type != r.type:
            t = NUMERIC
        if t.kind in (TypeKind.ARRAY, TypeKind.JSONB):
            # Kept as text, whose order (and equality: jsonb 1.0 = 1, float8[] {-0} = {0}) is
            # not PostgreSQL's: compare their sort keys.
            from planner.ordering import order_key
            return Call(fn, (order_key(coerce(l, t, ctx)), order_key(coerce(r, t, ctx))), BOOL)
        if t.kind is TypeKind.JSON and fn not in ("eq", "neq"):
            raise _no_op(sym, l.type, r.type)
        return Call(fn, (coerce(l, t, ctx), coerce(r, t, ctx)), BOOL)

    def concat(self, l: ScalarExpr, r: ScalarExpr) -> ScalarExpr:
        ctx = self.ctx
        kinds = {l.type.kind, r.type.kind}
        if TypeKind.JSONB in kinds or (TypeKind.BYTEA in kinds and kinds <= {TypeKind.BYTEA, TypeKind.UNKNOWN}):
            return library.resolve_function("||", [l, r], ctx)
        if TypeKind.ARRAY in (l.type.kind, r.type.kind):
            return library.resolve_function("array||", [l, r], ctx)
        if not (l.type.is_text or r.type.is_text):
            raise _no_op("||", l.type, r.type)
        l = coerce(l, TEXT, ctx) if l.type.is_text else Cast(l, TEXT)
        r = coerce(r, TEXT, ctx) if r.type.is_text else Cast(r, TEXT)
        return Call("concat", (l, r), TEXT)

    def text_arg(self, node: exp.Expression, fn: str) -> ScalarExpr:
        e = self.lower(node)
        if not e.type.is_text:
            raise _no_func(fn, [e])
        return coerce(e, TEXT, self.ctx)

    def _named_arguments(self, nodes: list[exp.Expression]) -> list[tuple[str | None, ScalarExpr]]:
        """`f(a, name => b, name := c)`: (parameter name or None, lowered value) in order; a
        positional argument after a named one is PostgreSQL's 42601."""
        out: list[tuple[str | None, ScalarExpr]] = []
        for a in nodes:
            if isinstance(a, (exp.Kwarg, exp.PropertyEQ)):
                ident = a.this
                quoted = isinstance(ident, exp.Identifier) and ident.args.get("quoted")
                out.append((ident.name if quoted else ident.name.lower(), self.lower(a.expression)))
            elif any(n is not None for n, _ in out):
                raise SqlError(SqlState.SYNTAX_ERROR, "positional argument cannot follow named argument")
            else:
                out.append((None, self.lower(a)))
        return out

    def _function(self, node: exp.Func) -> ScalarExpr:
        ctx = self.ctx
        name = node.name.lower() if isinstance(node, exp.Anonymous) else node.key.lower()
        if isinstance(node, exp.Anonymous):
            arg_nodes = list(node.expressions)
            if any(isinstance(a, (exp.Kwarg, exp.PropertyEQ)) for a in arg_nodes) and name not in TABLE_FUNCTIONS:
                return library.resolve_named(name, self._named_arguments(arg_nodes), ctx)
            if arg_nodes and isinstance(arg_nodes[-1], exp.Variadic) and name not in TABLE_FUNCTIONS:
                args = [self.lower(a) for a in arg_nodes[:-1]] + [self.lower(arg_nodes[-1].this)]
                return library.resolve_variadic(name, args, ctx)
        elif isinstance(node, exp.Trim):
            name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(str(node.args.get("position") or "").upper(), "btrim")
            arg_nodes = [node.this] + ([node.expression] if node.expression is not None else [])
        elif isinstance(node, exp.Extract):
            # EXTRACT(field FROM x): the field is a word, passed on as its name.
            field = node.this.name if isinstance(node.this, (exp.Var, exp.Column, exp.Identifier)) else None
            if field is None:
                raise unsupported(f"EXTRACT field {node.this.sql(dialect='postgres')}")
            name = "extract"
            arg_nodes = [exp.Literal.string(field.lower()), node.expression]
        elif isinstance(node, exp.Substring):
            name = "substr"
            arg_nodes = [a for a in (node.this, node.args.get("start"), node.args.get("length")) if a is not None]
        else:
            arg_nodes = []
            for key in node.arg_types:
                v = node.args.get(key)
                if isinstance(v, list):
                    arg_nodes.extend(v)
                elif isinstance(v, exp.Expression):
                    arg_nodes.append(v)
        name = {"char_length": "length", "character_length": "length", "ceiling": "ceil",
                "substring": "substr", "trim": "btrim", "strposition": "strpos"}.get(name, name)
        name = _SPECIAL_NAMES.get(type(node), name)
        if name == "coalesce":
            # Arguments after a non-NULL constant are never evaluated (nor folded).
            args = []
            for a in arg_nodes:
                known = any(isinstance(x, Literal) and x.value is not None for x in args) and self.fold
                args.append(self.lower_unused(a) if known else self.lower(a))
        else:
            args = [self.lower(a) for a in arg_nodes]
        if name in ("lower", "upper", "btrim", "ltrim", "rtrim", "replace", "length"):
            want = {"replace": 3, "length": 1, "lower": 1, "upper": 1}.get(name)
            if (want is not None and len(args) != want) or not all(a.type.is_text for a in args) or not args:
                if library.known(name):  # other overloads (length(bytea))
                    return library.resolve_function(name, args, ctx)
                raise _no_func(name, args)
            args = [coerce(a, TEXT, ctx) for a in args]
            return Call(name, tuple(args), INT4 if name == "length" else TEXT)
        if name == "substr":
            if len(args) not in (2, 3) or not args[0].type.is_text:
                raise _no_func(name, args)
            rest = [coerce(a, INT4, ctx) if a.type.kind in (TypeKind.UNKNOWN, TypeKind.INT2, TypeKind.INT4)
                    else a for a in args[1:]]
            if any(a.type != INT4 for a in rest):
                raise _no_func(name, [args[0]] + rest)
            return Call("substr", (coerce(args[0], TEXT, ctx), *rest), TEXT)
        if name in ("abs", "floor", "ceil", "round"):
            if not args or len(args) > (2 if name == "round" else 1):
                raise _no_func(name, args)
            x = coerce(args[0], NUMERIC, ctx) if args[0].type.kind is TypeKind.UNKNOWN else args[0]
            if not x.type.is_numeric_family:
                raise _no_func(name, [x] + args[1:])
            if name != "abs" and x.type.is_integer:
                # PostgreSQL picks the double precision variant for an integer (round(1) is 1.0).
                x = coerce(x, NUMERIC if name == "round" and len(args) == 2 else FLOAT8, ctx)
            if name == "round" and len(args) == 2:
                if is_float(x.type):
                    raise _no_func(name, [x, args[1]])
                x = coerce(x, NUMERIC, ctx)
                return Call("round", (x, coerce(args[1], INT4, ctx)), NUMERIC)
            t = x.type if x.type.kind is not TypeKind.NUMERIC or name == "abs" else NUMERIC
            if x.type.kind is TypeKind.FLOAT4 and name != "abs":
                x, t = coerce(x, FLOAT8, ctx), FLOAT8
            return Call(name, (coerce(x, t, ctx),), t)
        if name in ("coalesce", "greatest", "least"):
            if not args:
                raise _no_func(name, args)
            args, t = coerce_all(args, ctx, name.upper())
            args = [resolve_unknown(a, ctx) for a in args]
            return Call(name, tuple(args), args[0].type)
        if name == "nullif":
            if len(args) != 2:
                raise _no_func(name, args)
            first = resolve_unknown(args[0], ctx) if args[1].type.kind is TypeKind.UNKNOWN else args[0]
            cmp = self.compare("eq", "=", first, args[1])
            l, r = cmp.args
            own = resolve_unknown(first, ctx)
            # The result has the type of the left input of the `=` chosen: the first argument's
            # own type where a cross-type `=` exists (integers among themselves, real with double),
            # the common type otherwise (nullif(1, 1.5) is numeric).
            same_family = (own.type.is_integer and l.type.is_integer) or (is_float(own.type) and is_float(l.type))
            # character(n) with text compares (and returns) as text, without the padding; with
            # an untyped literal, character or varchar it compares as character and returns itself
            padded = own.type.kind is TypeKind.BPCHAR and args[1].type.kind is not TypeKind.TEXT
            if isinstance(l, Literal) and l.value is None:
                # nullif(NULL, x) is NULL without evaluating x (PostgreSQL folds it so)
                return Literal(None, own.type if same_family or padded else l.type)
            if isinstance(l, Call) and l.func == "sort_key":
                # Arrays and jsonb compare by their sort keys; the value returned is the array.
                value = l.args[0]
                return If(cmp, Literal(None, value.type), value, value.type)
            if padded and l.type.kind is TypeKind.TEXT:
                # Compared without the padding, returned with it: character(n) stays itself.
                return If(cmp, Literal(None, own.type), own, own.type)
            call = Call("nullif", (l, r), l.type)
            return Cast(call, own.type) if l.type != own.type and same_family else call
        if name == "mz_now":
            if args:
                raise _no_func(name, args)
            return Call("mz_now", (), INT8)
        if name == "row":
            raise unsupported("row constructors")
        if name in TABLE_FUNCTIONS:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"set-returning functions are not allowed in {self.clause}")
        if library.known(name):
            return library.resolve_function(name, args, ctx)
        if not isinstance(node, exp.Anonymous):
            # A function sqlglot knows by another name (StrPosition, ...): name it as written.
            raise unsupported(f"function {node.sql(dialect='postgres').split('(')[0].strip().lower()}")
        raise _no_func(name, args)  # untyped literals print as unknown, as in PostgreSQL


_WINDOW_NAMES = {exp.RowNumber: "row_number", exp.DenseRank: "dense_rank", exp.PercentRank: "percent_rank",
                 exp.CumeDist: "cume_dist", exp.FirstValue: "first_value", exp.LastValue: "last_value",
                 exp.NthValue: "nth_value"}


def window_not_allowed(clause: str) -> SqlError:
    """PostgreSQL's error for a window function where none may be (window functions are only
    planned in a select list and ORDER BY: planner.windows)."""
    if clause == "aggregate function arguments":
        return SqlError(SqlState.GROUPING_ERROR, "aggregate function calls cannot contain window function calls")
    where = {"JOIN/ON": "JOIN conditions"}.get(clause, clause)
    return SqlError("42P20", f"window functions are not allowed in {where}")


def expr_name(node: exp.Expression) -> str:
    """The column name PostgreSQL gives an unaliased select-list expression."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Paren):
        return expr_name(node.this)
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Cast):
        inner = expr_name(node.this)
        if inner != "?column?":
            return inner
        try:
            t = type_from_ast(node.to)
        except SqlError:
            return "?column?"
        return {TypeKind.INT2: "int2", TypeKind.INT4: "int4", TypeKind.INT8: "int8",
                TypeKind.FLOAT4: "float4", TypeKind.FLOAT8: "float8", TypeKind.BOOL: "bool",
                TypeKind.VARCHAR: "varchar"}.get(t.kind, t.kind.value)
    if isinstance(node, exp.Case):
        return "case"
    if isinstance(node, exp.Subquery):
        # A scalar subquery is named after its (first) column: (SELECT max(k) FROM u) is max.
        query = node.this
        while isinstance(query, (exp.Subquery, exp.SetOperation)):
            query = query.this
        if isinstance(query, exp.Select) and query.expressions and not isinstance(query.expressions[0], exp.Star):
            return expr_name(query.expressions[0])
        return "?column?"
    if isinstance(node, (exp.Filter, exp.WithinGroup)):  # count(*) FILTER (WHERE ...) is named count
        return expr_name(node.this)
    if isinstance(node, exp.Window):  # row_number() OVER (...) is named row_number
        f = node.this.this if isinstance(node.this, exp.Filter) else node.this
        return _WINDOW_NAMES.get(type(f)) or expr_name(node.this)
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if type(node) in _SPECIAL_NAMES:
        return _SPECIAL_NAMES[type(node)]
    if isinstance(node, exp.Substring):
        return "substring"
    if isinstance(node, exp.Boolean):
        return "bool"
    if isinstance(node, exp.StartsWith):  # the operator ^@
        return "?column?"
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Connector)):
        key = node.key.lower()
        return {"ceil": "ceil", "trim": "btrim", "strposition": "position", "percentilecont": "percentile_cont",
                "percentiledisc": "percentile_disc"}.get(key, key)
    return "?column?"


_STRING_KINDS = (TypeKind.UNKNOWN, TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR)


def bpchar_as_text(items: list[ScalarExpr], ctx) -> list[ScalarExpr]:
    """Operands of `=`, `<`, ..., `IN` or an IN-subquery key with a character(n) among them.
    Trailing blanks of character(n) are insignificant: compare the values as text (the cast
    drops the padding). Operands all of one character(n) type are padded alike and compare
    directly (so they stay usable as join keys)."""
    if not any(e.type.kind is TypeKind.BPCHAR for e in items) or (
            items[0].type.length and all(e.type == items[0].type for e in items)):
        return items

    def as_text(e: ScalarExpr) -> ScalarExpr:
        # A literal or varchar compared with a character(n) is compared as one (its trailing
        # blanks do not count either: 'ab ' = 'ab'); text is compared as text.
        if e.type.kind in (TypeKind.UNKNOWN, TypeKind.VARCHAR):
            e = coerce(e, SqlType(TypeKind.BPCHAR), ctx)
        return coerce(e, TEXT, ctx)
    return [as_text(e) for e in items]


def _like_call(fn: str, subject: ScalarExpr, pattern: ScalarExpr, negate: bool) -> ScalarExpr:
    """`subject [NOT] LIKE|ILIKE pattern`; a constant pattern ending in its escape character is
    22025, as in PostgreSQL. (sqlglot marks `NOT LIKE`, `!~~` and `!~~*` with a flag instead of
    wrapping them in NOT.)"""
    if isinstance(pattern, Literal) and isinstance(pattern.value, str) and \
            (len(pattern.value) - len(pattern.value.rstrip("\\"))) % 2:
        raise SqlError("22025", "LIKE pattern must not end with escape character")
    call = Call(fn, (subject, pattern), BOOL)
    return Call("not", (call,), BOOL) if negate else call


def _as_in_array(x: ScalarExpr, arr: ScalarExpr, fn: str, kind: str) -> ScalarExpr | None:
    """`x = ANY (constant array)` as `in_array(x, array)`, and `x <> ALL (constant array)` as
    `NOT in_array(...)`: the same three-valued answers (PostgreSQL defines IN by = ANY), but one
    hash-set test per row instead of one comparison per row and element, and a lookup when x
    is an indexed key (`DELETE ... WHERE id = ANY($1)` with thousands of ids). The array stays
    one literal: a plan holding thousands of element nodes costs every rule a walk over them."""
    if not (isinstance(arr, Literal) and isinstance(arr.value, str)):
        return None
    if (kind, fn) not in (("ANY", "eq"), ("ALL", "neq")):
        return None
    from dataflow import arrays
    if not arrays.split(arr.value):  # = ANY ('{}') is false and <> ALL ('{}') true, whatever x is
        return Literal(kind == "ALL", BOOL)
    listed = Call("in_array", (x, arr), BOOL)
    return listed if kind == "ANY" else Call("not", (listed,), BOOL)
