"""GROUP BY and aggregates: lowering a grouped SELECT onto a `Reduce`.

The select list, HAVING and ORDER BY of a grouped query are lowered with a hook that replaces
each aggregate call and each GROUP BY expression by a column of the Reduce's output
(key columns first, then one per distinct aggregate). A bare column that is neither is error 42803.

>>> # SELECT region, count(*) + 1 FROM c GROUP BY region   over c(id int8, region text)
>>> # Reduce(Get(c), (1,), (count_star,)) then Map(Call('add', (ColumnRef(1, INT8), 1::int8)))

Aggregates: count, sum, min, max, avg (sqlglot's classes), and the plain calls of
`planner.functions.aggregates` (bool_and, bool_or, every, variance/var_samp, var_pop,
stddev/stddev_samp, stddev_pop, string_agg), resolved with PostgreSQL's overload rules. Modifiers:

* `DISTINCT`: `AggregateExpr.distinct` (the engine counts each distinct argument tuple once).
* `FILTER (WHERE c)`: every input of the aggregate becomes `If(c, input, NULL)`; all our
  aggregates skip rows whose argument is NULL, so that is exactly FILTER (and a filtered-out
  row's inputs are never evaluated). `count(*) FILTER (WHERE c)` is count(If(c, true, NULL)).
* `ORDER BY` inside the call: kept for string_agg (the only one whose value depends on the
  order), checked and dropped for the others. With DISTINCT, the keys must be arguments (42P10).

A global aggregate (no GROUP BY) must return one row even on empty input:
    Union_(R, Constant(defaults), Negate(Map(Project(R, ()), defaults)))
where defaults are 0 for count and NULL for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import AggregateExpr, Call, Cast, ColumnRef, If, Literal, ScalarExpr
from dataflow.plan import Constant, Map, Negate, Plan, Project, Reduce, Union_, output_types
from dataflow.types import BOOL, BYTEA, FLOAT8, INT4, INT8, JSON, JSONB, NUMERIC, TEXT, SqlType, TypeKind, array_of
from planner import equality_keys
from planner.context import PlanContext
from planner.functions.aggregates import AGGREGATE_FUNCTIONS, REGRESSION
from planner.functions.registry import choose, no_function
from planner.grouping_sets import grouping_value
from planner.ordering import needs_key
from planner.scalar import ORDERED_SET, ScalarLowerer, coerce, expr_name, is_aggregate, resolve_unknown, to_bool
from planner.scope import Scope
from planner.subqueries import contains_subquery
from planner.typing import is_float

_FUNC = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}
# Aggregates whose value depends on the order of their input (ORDER BY inside the call).
_ORDERED = frozenset({"string_agg", "array_agg", "jsonb_agg", "json_agg", "json_object_agg", "jsonb_object_agg"})
_NO_FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."


def aggregate_type(func: str, arg: SqlType | None) -> SqlType:
    """Result types of count, sum, min, max and avg as in PostgreSQL: sum(int4) -> int8,
    sum(int8) -> numeric, avg(int) -> numeric. (The other aggregates take theirs from their
    overload in `planner.functions.aggregates`.)"""
    if func in ("count", "count_star"):
        return INT8
    assert arg is not None
    k = arg.kind
    if func == "sum":
        if k in (TypeKind.INT2, TypeKind.INT4):
            return INT8
        if k in (TypeKind.INT8, TypeKind.NUMERIC):
            return NUMERIC
        if is_float(arg):
            return arg
    elif func == "avg":
        if arg.is_integer or k is TypeKind.NUMERIC:
            return NUMERIC
        if is_float(arg):
            return FLOAT8
    elif func in ("min", "max"):
        # PostgreSQL has min/max of arrays (anyarray) and intervals, none of json or jsonb.
        if k in (TypeKind.JSON, TypeKind.JSONB) or (k is TypeKind.ARRAY and arg.element.kind is TypeKind.JSON):
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}({arg.name}) does not exist",
                           hint=_NO_FUNCTION_HINT)
        return TEXT if k is TypeKind.UNKNOWN else arg
    raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}({arg.name}) does not exist",
                   hint=_NO_FUNCTION_HINT)


def contains_aggregate(node: exp.Expression, grouping: bool = True) -> bool:
    """Whether `node` aggregates at this query level (an aggregate inside a subquery belongs to
    the subquery, so the walk does not descend into one); GROUPING(...) counts unless
    `grouping` is false."""
    def nested(n: exp.Expression) -> bool:
        return n is not node and isinstance(n, (exp.Subquery, exp.Select))

    return any((is_aggregate(n) or (grouping and is_grouping_call(n))) and not nested(n) and not _window_function(n)
               for n in node.walk(prune=nested))


def is_grouping_call(node: exp.Expression) -> bool:
    """`GROUPING(a, ...)`, which makes a query grouped as an aggregate does."""
    return isinstance(node, exp.Anonymous) and node.name.lower() == "grouping"


@dataclass(frozen=True)
class GroupingCall:
    """A GROUPING(...) in a grouped query: the positions of its arguments among the keys. It
    takes a column of the Reduce's output as an aggregate does (a constant per grouping set)."""

    args: tuple[int, ...]
    type: SqlType = INT4


def _window_function(n: exp.Expression) -> bool:
    """The function of a window call (`sum(x)` in `sum(x) OVER (...)`, also under FILTER) is
    no aggregate of the query level; its arguments may hold some (`sum(sum(x)) OVER ()`)."""
    while n.parent is not None and isinstance(n.parent, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)) \
            and n.arg_key == "this":
        n = n.parent
    return isinstance(n.parent, exp.Window) and n.arg_key == "this"


def _call_parts(node: exp.Expression) -> tuple[str, list[exp.Expression], bool, list[exp.Ordered]]:
    """(name, argument nodes, DISTINCT, ORDER BY items) of an aggregate call as sqlglot parses
    it: `f(DISTINCT a, b ORDER BY k)` is f(Order(Distinct(a, b), [k])) for its own classes and
    Anonymous(f, [Order(Distinct(a, b), [k])]) or Anonymous(f, [Distinct(a), Order(b, [k])])."""
    if isinstance(node, exp.Anonymous):
        name, items = node.name.lower(), list(node.expressions)
    else:
        name = _FUNC[type(node)]
        items = ([node.this] if node.this is not None else []) + list(node.expressions)
    order: list[exp.Ordered] = []
    if items and isinstance(items[-1], exp.Order):
        order = list(items[-1].expressions)
        if items[-1].this is None:
            items.pop()
        else:
            items[-1] = items[-1].this
    distinct = False
    if items and isinstance(items[0], exp.Distinct):
        distinct = True
        items = list(items[0].expressions) + items[1:]
    return name, items, distinct, order


def _nulls_last(o: exp.Ordered) -> bool:
    """PostgreSQL's default: NULLs sort as larger than every value (last ascending, first
    descending) unless NULLS FIRST/LAST says otherwise."""
    desc = bool(o.args.get("desc"))
    sql = o.sql(dialect="postgres").upper()
    if "NULLS FIRST" in sql:
        return False
    if "NULLS LAST" in sql:
        return True
    return not desc


class Grouping:
    """Collects group keys and aggregates for one SELECT and builds its Reduce."""

    def __init__(self, input_plan: Plan, scope: Scope, ctx: PlanContext,
                 keys: list[ScalarExpr], sets: list[tuple[int, ...]] | None = None) -> None:
        self.input_plan = input_plan
        self.scope = scope
        self.ctx = ctx
        self.keys = keys
        # GROUPING SETS / ROLLUP / CUBE (`planner.grouping_sets`): each set as positions in
        # `keys`; None: one set of every key (a plain GROUP BY).
        self.sets = sets
        self.aggs: list[AggregateExpr | GroupingCall] = []
        self.input_lowerer = ScalarLowerer(scope, ctx, clause="aggregate function arguments")

    def lowerer(self, clause: str) -> ScalarLowerer:
        return ScalarLowerer(self.scope, self.ctx, hook=self._hook, clause=clause)

    def _hook(self, node: exp.Expression) -> ScalarExpr | None:
        if is_grouping_call(node):
            return self._grouping(node)
        if is_aggregate(node):
            return self._aggregate(node)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null, exp.Parameter, exp.Star)):
            return None
        if contains_aggregate(node) or node.find(exp.Window) is not None or contains_subquery(node):
            # (a window call here is an error the clause's lowerer reports; a subquery's value
            # is a column after the Reduce: lowered part by part)
            return None
        # Inside a part whose value is never needed (`false AND x` in HAVING) nothing is folded:
        # the outer lowerer has switched folding off in the context, for us too.
        saved = self.input_lowerer.fold
        self.input_lowerer.fold = saved and self.ctx.fold_constants
        try:
            e = self.input_lowerer.lower(node)
        finally:
            self.input_lowerer.fold = saved
        if e in self.keys:
            return ColumnRef(self.keys.index(e), e.type)
        if not (saved and self.ctx.fold_constants) and saved:
            # Unfolded, a grouped expression may not look like its (folded) GROUP BY key:
            # `GROUP BY CASE 'a' WHEN 'b' THEN x ELSE y END HAVING false AND CASE ... END`, or
            # `GROUP BY -3 | c` (a bigint c: the cast of -3 is folded) in a CASE arm never taken.
            # Folded here only to compare with the keys (the folded form is not used otherwise).
            saved_ctx, self.ctx.fold_constants = self.ctx.fold_constants, True
            try:
                folded = self.input_lowerer.lower(node)
            except SqlError:
                folded = None
            finally:
                self.ctx.fold_constants = saved_ctx
            if folded is not None and folded in self.keys:
                return ColumnRef(self.keys.index(folded), folded.type)
        if isinstance(node, exp.Column):
            # PostgreSQL names the column with its relation (`t.b`) however it was written.
            table = self.scope.columns[e.index].table if isinstance(e, ColumnRef) and e.index < len(self.scope.columns) else None
            col = f"{table or node.table}.{node.name}" if (table or node.table) else node.name
            raise SqlError(SqlState.GROUPING_ERROR,
                           f'column "{col}" must appear in the GROUP BY clause or be used in an aggregate function')
        return None

    def _grouping(self, node: exp.Anonymous) -> ScalarExpr:
        args = []
        for a in node.expressions:
            if contains_aggregate(a):
                raise SqlError(SqlState.GROUPING_ERROR, "aggregate function calls cannot be nested")
            e = self.input_lowerer.lower(a)
            if e not in self.keys:
                raise SqlError(SqlState.GROUPING_ERROR,
                               "arguments to GROUPING must be grouping expressions of the associated query level")
            args.append(self.keys.index(e))
        if not args or len(args) > 31:
            raise SqlError("54011", "GROUPING must have fewer than 32 arguments")
        return self._column_of(GroupingCall(tuple(args)))

    def _filter(self, node: exp.Filter) -> tuple[exp.Expression, ScalarExpr]:
        """The aggregate call under `agg(...) FILTER (WHERE cond)` and the lowered condition."""
        inner = node.this
        if not is_aggregate(inner) or isinstance(inner, exp.Filter):
            raise SqlError(SqlState.WRONG_OBJECT_TYPE,
                           f"FILTER specified, but {expr_name(inner)} is not an aggregate function")
        where = node.expression
        cond_node = where.this if isinstance(where, exp.Where) else where
        if contains_aggregate(cond_node):
            raise SqlError(SqlState.GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
        cond = ScalarLowerer(self.scope, self.ctx, clause="FILTER").lower(cond_node)
        return inner, to_bool(cond, self.ctx, "FILTER")

    def _aggregate(self, node: exp.Expression) -> ScalarExpr:
        cond = None
        if isinstance(node, exp.Filter):
            node, cond = self._filter(node)

        def guard(e: ScalarExpr) -> ScalarExpr:
            # FILTER: the input is NULL (ignored by every aggregate) where cond is not true.
            return e if cond is None else If(cond, e, Literal(None, e.type), e.type)

        if isinstance(node, (exp.WithinGroup,) + ORDERED_SET):
            return self._ordered_set(node, guard)
        name, items, distinct, order = _call_parts(node)
        if any(contains_aggregate(n) for n in items + [o.this for o in order]):
            raise SqlError(SqlState.GROUPING_ERROR, "aggregate function calls cannot be nested")

        if name == "count" and (not items or (len(items) == 1 and isinstance(items[0], exp.Star))):
            if order:  # PostgreSQL's grammar has no ORDER BY after count(*
                raise SqlError(SqlState.SYNTAX_ERROR, 'syntax error at or near "ORDER"')
            if cond is None:
                agg = AggregateExpr("count_star", None, aggregate_type("count_star", None))
            else:
                agg = AggregateExpr("count", guard(Literal(True, BOOL)), INT8)
            return self._column_of(agg)
        if any(isinstance(n, exp.Star) for n in items):
            items = [n for n in items if not isinstance(n, exp.Star)]  # stddev(*) is stddev()
            raise no_function(name, [self.input_lowerer.lower(n) for n in items])
        raw = [self.input_lowerer.lower(n) for n in items]
        _refuse_outer_aggregate(raw, self.scope)
        keys = self._order_keys(order, raw, distinct, typed_args=name != "count")
        if name in _FUNC.values():
            return self._classic(name, raw, distinct, guard)
        if name in ("array_agg", "jsonb_agg", "json_agg"):
            return self._collect(name, raw, distinct, keys, guard)
        if name in ("json_object_agg", "jsonb_object_agg"):
            return self._collect_object(name, raw, distinct, keys, guard)
        # numeric(12,3) is an exact match for numeric and keeps its modifier: its scale is the
        # display scale PostgreSQL's variance goes by.
        overload, params = choose(name, AGGREGATE_FUNCTIONS[name], raw)
        args = [a if a.type.kind is p.kind else resolve_unknown(coerce(a, p, self.ctx), self.ctx)
                for a, p in zip(raw, params)]
        func = overload.kernel
        assert func is not None
        result = overload.result_type([a.type for a in args])
        if func in ("bool_and", "bool_or", "bit_and", "bit_or"):
            distinct = False  # the same answer either way
        if func == "regr_count" or func in REGRESSION:
            if distinct:  # (DISTINCT would count each distinct (y, x) pair once)
                raise unsupported(f"{name}(DISTINCT ...)")
            if func == "regr_count":
                # The rows where neither argument is NULL (PostgreSQL's strict transition).
                both = If(Call("is_null", (args[0],), BOOL), Literal(None, BOOL),
                          If(Call("is_null", (args[1],), BOOL), Literal(None, BOOL), Literal(True, BOOL), BOOL), BOOL)
                return self._column_of(AggregateExpr("count", guard(both), INT8))
        order_by = tuple((guard(k), d, n) for k, d, n in keys) if func in _ORDERED else ()
        # A row FILTER drops has a NULL argument and is skipped, so constant delimiters need
        # no guard (they cannot fail either).
        agg = AggregateExpr(func, guard(args[0]), result, distinct,
                            tuple(a if isinstance(a, Literal) else guard(a) for a in args[1:]), order_by)
        return self._column_of(agg)

    def _ordered_set(self, node: exp.Expression, guard) -> ScalarExpr:
        """percentile_cont(f), percentile_disc(f) and mode() WITHIN GROUP (ORDER BY x): one
        aggregate over x with its sort key as the ORDER BY key and the fraction (a constant) as
        its extra argument (`reduce_aggs._OrderedSet` keeps each group's multiset)."""
        if not isinstance(node, exp.WithinGroup):
            name = expr_name(node)
            if isinstance(node, exp.Mode):
                raise SqlError(SqlState.WRONG_OBJECT_TYPE, f"WITHIN GROUP is required for ordered-set aggregate {name}")
            raise no_function(name, [self.input_lowerer.lower(a) for a in node.iter_expressions()])
        inner, order = node.this, node.expression
        if not isinstance(inner, ORDERED_SET):
            name = inner.name.lower() if isinstance(inner, exp.Anonymous) else expr_name(inner)
            if name in ("rank", "dense_rank", "percent_rank", "cume_dist"):
                raise unsupported(f"hypothetical-set aggregate {name}")
            items = list(order.expressions) if isinstance(order, exp.Order) else []
            raise no_function(name, [self.input_lowerer.lower(a) for a in inner.iter_expressions()]
                              + [self.input_lowerer.lower(o.this) for o in items])
        name = expr_name(inner)
        direct = [a for a in inner.iter_expressions()]
        items = list(order.expressions) if isinstance(order, exp.Order) else []
        if any(contains_aggregate(n) for n in direct + [o.this for o in items]):
            raise SqlError(SqlState.GROUPING_ERROR, "aggregate function calls cannot be nested")
        if any(isinstance(d, exp.Array) for d in direct):
            raise unsupported(f"{name} of an array of fractions")
        d_args = [self.input_lowerer.lower(d) for d in direct]
        vals = [self.input_lowerer.lower(o.this) for o in items]
        if len(vals) != 1 or len(d_args) != (0 if isinstance(inner, exp.Mode) else 1):
            raise no_function(name, d_args + vals)
        _refuse_outer_aggregate(vals, self.scope)
        x = vals[0]
        fraction: tuple[ScalarExpr, ...] = ()
        if d_args and d_args[0].type.kind is TypeKind.UNKNOWN and isinstance(inner, exp.PercentileDisc) and \
                x.type.kind in (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR):
            # PostgreSQL's candidates (float8 | float8[], anyelement): a string argument makes it
            # prefer the string category for the untyped fraction, which neither has.
            raise SqlError("42725", f"function {name}(unknown, {x.type.name}) is not unique",
                           hint="Could not choose a best candidate function. You might need to add explicit type casts.")
        if d_args:
            try:
                f = coerce(d_args[0], FLOAT8, self.ctx)
            except SqlError:
                raise no_function(name, [resolve_unknown(d_args[0], self.ctx), x]) from None
            if not isinstance(f, Literal):
                raise unsupported(f"{name} of a fraction that is not a constant")
            if f.value is not None and not 0 <= f.value <= 1 and not self.keys and self.sets is None:
                raise percentile_out_of_range(f.value)  # (the final function runs on empty input too)
            fraction = (f,)
        if isinstance(inner, exp.PercentileCont):
            if x.type.kind is not TypeKind.INTERVAL:
                try:
                    x = coerce(x, FLOAT8, self.ctx)
                except SqlError:
                    raise no_function(name, [d_args[0], x]) from None
            result = x.type
        else:
            if x.type.kind is TypeKind.UNKNOWN:
                raise SqlError(SqlState.DATATYPE_MISMATCH,
                               "could not determine polymorphic type because input has type unknown")
            if x.type.kind is TypeKind.JSON or (x.type.kind is TypeKind.ARRAY and x.type.element.kind is TypeKind.JSON):
                raise SqlError(SqlState.UNDEFINED_FUNCTION,
                               f"could not identify an ordering operator for type {x.type.name}",
                               hint="Use an explicit ordering operator or modify the query.")
            result = x.type
        (key, desc, _), = self._order_keys([items[0]], [x], False)
        func = {exp.PercentileCont: "percentile_cont", exp.PercentileDisc: "percentile_disc", exp.Mode: "mode"}[type(inner)]
        # NULL inputs are ignored: the key of a NULL is NULL, so FILTER need guard only the value.
        return self._column_of(AggregateExpr(func, guard(x), result, False, fraction, ((guard(key), desc, True),)))

    def _collect(self, name: str, raw: list[ScalarExpr], distinct: bool, keys, guard) -> ScalarExpr:
        """array_agg(x) and jsonb_agg(x) as a string_agg of each value's text inside the result
        (`1`, `"a b"`, `NULL`; jsonb text, `null`), wrapped in braces or brackets: the same
        incremental state, ORDER BY, DISTINCT and FILTER as string_agg."""
        if len(raw) != 1:
            raise no_function(name, raw)
        if raw[0].type.kind is TypeKind.UNKNOWN:
            # An untyped literal (or NULL) gives PostgreSQL's polymorphic signatures no type.
            if name == "array_agg":
                raise SqlError("42725", "function array_agg(unknown) is not unique",
                               hint="Could not choose a best candidate function. "
                                    "You might need to add explicit type casts.")
            raise SqlError(SqlState.DATATYPE_MISMATCH,
                           "could not determine polymorphic type because input has type unknown")
        x = resolve_unknown(raw[0], self.ctx)
        if distinct and equality_keys.needs_key(x.type):
            # (DISTINCT would compare the values' text: '1 mon' and '30 days', jsonb 1 and 1.0
            # are equal values)
            raise unsupported(f"{name}(DISTINCT {x.type.name})")
        if name == "array_agg":
            if x.type.kind is TypeKind.ARRAY:
                raise unsupported("array_agg of arrays (multidimensional arrays)")
            joined = self._joined(Call("array_element_text", (x,), TEXT), ",", distinct, keys, guard)
            return Call("collect_wrap", (joined, Literal("{}", TEXT)), array_of(x.type))
        if name == "json_agg":
            joined = self._joined(Call("json_agg_piece", (x,), TEXT), ", ", distinct, keys, guard)
            return Call("json_agg_wrap", (joined,), JSON)
        as_json = x if x.type.kind is TypeKind.JSONB else Call("to_jsonb", (x,), JSONB)
        piece = Call("coalesce", (Cast(as_json, TEXT), Literal("null", TEXT)), TEXT)
        return Call("collect_wrap", (self._joined(piece, ", ", distinct, keys, guard), Literal("[]", TEXT)), JSONB)

    def _collect_object(self, name: str, raw: list[ScalarExpr], distinct: bool, keys, guard) -> ScalarExpr:
        """json_object_agg(k, v) and jsonb_object_agg(k, v) as a string_agg of `"k" : v` members,
        wrapped in braces (jsonb: parsed, keys sorted, the last of duplicates kept)."""
        if len(raw) != 2:
            raise no_function(name, raw)
        k, v = (resolve_unknown(a, self.ctx) for a in raw)
        # A NULL key is an error, so the piece never is NULL for a row that FILTER keeps.
        joined = self._joined(Call("json_object_agg_piece", (k, v), TEXT), ", ", distinct, keys, guard)
        if name == "json_object_agg":
            return Call("json_object_wrap", (joined,), JSON)
        return Call("jsonb_object_wrap", (joined,), JSONB)

    def _joined(self, piece: ScalarExpr, sep: str, distinct: bool, keys, guard) -> ColumnRef:
        """The string_agg of `piece` (the state every collecting aggregate keeps), with the
        call's DISTINCT, ORDER BY and FILTER."""
        order_by = tuple((guard(k), d, n) for k, d, n in keys)
        return self._column_of(AggregateExpr("string_agg", guard(piece), TEXT, distinct, (Literal(sep, TEXT),), order_by))

    def _order_keys(self, order: list[exp.Ordered], args: list[ScalarExpr],
                    distinct: bool, typed_args: bool = True) -> list[tuple[ScalarExpr, bool, bool]]:
        """ORDER BY inside an aggregate call: (key, descending, nulls_last), each key lowered
        over the input rows. Floats sort by their SQL order key (NaN greatest). With DISTINCT
        each key must be an argument as the function takes it (`typed_args`: an untyped literal
        argument becomes a typed one, which a bare literal key is not, as in PostgreSQL)."""
        out = []
        if typed_args:
            args = [resolve_unknown(a, self.ctx) for a in args]
        for o in order:
            key = self.input_lowerer.lower(o.this)
            if distinct and key not in args:
                raise SqlError("42P10",
                               "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
            key = equality_keys.key(resolve_unknown(key, self.ctx))  # (intervals order by span)
            if needs_key(key.type):  # arrays, jsonb: by their sort key (`planner.ordering`)
                key = Call("sort_key", (key,), BYTEA)
            if is_float(key.type):
                key = Call("float_order_key", (key,), INT8)
            out.append((key, bool(o.args.get("desc")), _nulls_last(o)))
        return out

    def _classic(self, func: str, raw: list[ScalarExpr], distinct: bool, guard) -> ScalarExpr:
        """count(x), sum, min, max, avg."""
        if len(raw) != 1:
            raise no_function(func, [resolve_unknown(a, self.ctx) for a in raw])
        arg = raw[0]
        if func in ("sum", "avg") and arg.type.kind is TypeKind.UNKNOWN:
            # PostgreSQL finds sum('1') ambiguous; it is read as numeric here.
            arg = coerce(arg, NUMERIC, self.ctx)
        arg = resolve_unknown(arg, self.ctx)
        if func in ("sum", "avg") and arg.type.kind is TypeKind.INTERVAL:
            raise unsupported(f"{func}(interval)")  # PostgreSQL has it
        if func in ("sum", "avg") and not arg.type.is_numeric_family:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}({arg.type.name}) does not exist",
                           hint=_NO_FUNCTION_HINT)
        if func in ("min", "max") and arg.type.kind is TypeKind.BOOL:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}(boolean) does not exist",
                           hint=_NO_FUNCTION_HINT)
        result = aggregate_type(func, arg.type)
        arg = guard(arg)
        if func in ("min", "max") and arg.type.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8):
            # SQL orders NaN above every float; the engine's min/max follow IEEE. Aggregate an
            # integer key with SQL's float order instead, and turn the result back.
            key = AggregateExpr(func, Call("float_order_key", (arg,), INT8), INT8, distinct)
            return Call("float_from_order_key", (self._column_of(key),), arg.type)
        if func in ("min", "max") and arg.type.kind is TypeKind.TIMETZ:
            # Arrow has no min/max of the duration its keys are kept in: aggregate the int64 keys,
            # which order as timetz does (dataflow/timetz.py), and turn the result back.
            key = AggregateExpr(func, Call("timetz_key", (arg,), INT8), INT8, distinct)
            return Call("timetz_from_key", (self._column_of(key),), arg.type)
        if func in ("min", "max") and needs_key(arg.type):
            # Arrays, jsonb, intervals: the extremum of key ++ value (`dataflow.sort_keys`),
            # whose value is then cut out again.
            key = AggregateExpr(func, Call("sort_key_with_value", (arg,), BYTEA), BYTEA, distinct)
            return Call("value_of_sort_key", (self._column_of(key),), arg.type)
        return self._column_of(AggregateExpr(func, arg, result, distinct))

    def _column_of(self, agg: AggregateExpr | GroupingCall) -> ColumnRef:
        if isinstance(agg, AggregateExpr):
            agg = equality_keys.distinct_aggregate(agg)
        if agg not in self.aggs:
            self.aggs.append(agg)
        return ColumnRef(len(self.keys) + self.aggs.index(agg), agg.type)

    def _outer_key_columns(self, key_cols: list[int]) -> tuple[int, ...]:
        """The input columns of keys that are a correlated subquery's outer values."""
        return tuple(c for k, c in zip(self.keys, key_cols)
                     if isinstance(k, ColumnRef) and k.index < len(self.scope.columns)
                     and self.scope.columns[k.index].level > 0)

    def _outer_key_positions(self) -> list[int]:
        """Positions in `keys` of a correlated subquery's outer values (D's columns, in D's order)."""
        outer = [ColumnRef(i, c.type) for i, c in enumerate(self.scope.columns) if c.level > 0]
        return [self.keys.index(k) for k in outer if k in self.keys]

    def _one_row_per_outer_value(self, branch: Plan, key_types: list[SqlType], aggs: tuple[AggregateExpr, ...],
                                 outer: list[int]) -> Plan:
        """A grouping set of no user key in a correlated subquery: one row per outer value
        (D's rows), the aggregates' empty values where it has no input rows, as the global
        aggregate of `planner.subqueries.global_aggregate_per_key` (here with the other keys
        NULL)."""
        d = self.ctx.outer.plan
        d_width = len(output_types(d))
        defaults = [Literal(0 if a.func in ("count", "count_star") else None, a.type) for a in aggs]
        null_keys = [Literal(None, t) for t in key_types]

        def padded(rows: Plan, width: int, where: list[int]) -> Plan:
            # keys (outer ones from `where` columns of rows, others NULL) ++ default aggregates
            exprs = [ColumnRef(where[outer.index(k)], key_types[k]) if k in outer else null_keys[k]
                     for k in range(len(key_types))] + defaults
            return Project(Map(rows, tuple(exprs)), tuple(range(width, width + len(exprs))))
        present = Project(branch, tuple(outer))  # (one row per outer value: a Reduce by them)
        return Union_((branch, padded(d, d_width, list(range(d_width))),
                       Negate(padded(present, len(outer), list(range(len(outer)))))))

    def build(self) -> Plan:
        """The Reduce (wrapped for global aggregates), output = keys ++ aggregates."""
        width = len(self.scope.columns)
        extra = [k for k in self.keys if not isinstance(k, ColumnRef)]
        plan = Map(self.input_plan, tuple(extra)) if extra else self.input_plan
        key_cols, n_extra = [], 0
        for k in self.keys:
            if isinstance(k, ColumnRef):
                key_cols.append(k.index)
            else:
                key_cols.append(width + n_extra)
                n_extra += 1
        aggs = tuple(a for a in self.aggs if isinstance(a, AggregateExpr))
        if self.sets is None and len(aggs) == len(self.aggs):
            if not self.keys:
                return global_aggregate(Reduce(plan, (), aggs))
            return equality_keys.reduce(plan, tuple(key_cols), aggs, self._outer_key_columns(key_cols))
        # One Reduce per grouping set over the same input, each grouping by every key with the
        # keys its set lacks replaced by NULL (so its output is already keys ++ aggregates), in
        # a union; GROUPING(...) values are constants per set.
        base_width = len(output_types(plan))
        key_types = [k.type for k in self.keys]
        # In a correlated subquery every set also groups by the outer values (`planner.subqueries`).
        outer = self._outer_key_positions()
        branches = []
        for s in self.sets if self.sets is not None else [tuple(range(len(self.keys)))]:
            if self.sets is not None:
                s = tuple(s) + tuple(k for k in outer if k not in s)
            absent = [k for k in range(len(self.keys)) if k not in s]
            branch_in = plan
            if absent:
                branch_in = Map(plan, tuple(_reading(ColumnRef(key_cols[k], key_types[k]), Literal(None, key_types[k]))
                                            for k in absent))
            group_key = tuple(key_cols[k] if k in s else base_width + absent.index(k) for k in range(len(self.keys)))
            branch: Plan = equality_keys.reduce(branch_in, group_key, aggs, self._outer_key_columns(key_cols)) if s else \
                _one_row(Reduce(branch_in, group_key, aggs), key_types)
            if outer and self.sets is not None and set(s) <= set(outer):
                branch = self._one_row_per_outer_value(branch, key_types, aggs, outer)
            markers = [a for a in self.aggs if isinstance(a, GroupingCall)]
            if markers:
                width = len(self.keys) + len(aggs)
                exprs: list[ScalarExpr] = [ColumnRef(k, t) for k, t in enumerate(key_types)]
                exprs += [ColumnRef(len(self.keys) + aggs.index(a), a.type) if isinstance(a, AggregateExpr)
                          else Literal(grouping_value(list(a.args), s), INT4) for a in self.aggs]
                branch = Project(Map(branch, tuple(exprs)), tuple(range(width, width + len(exprs))))
            branches.append(branch)
        return branches[0] if len(branches) == 1 else Union_(tuple(branches))


def _reading(col: ColumnRef, value: Literal) -> ScalarExpr:
    """`value`, written as an expression that reads `col`. Column pruning
    (`planner.rules.prune_columns`) copies a shared sub-plan for each distinct set of columns
    its readers demand; the grouping sets' Reduces all demand every key column this way, so
    they share one input (one join, one scan) instead of one copy each."""
    return If(Literal(False, BOOL), col, value, value.type)


def _one_row(reduce: Reduce, key_types: list[SqlType]) -> Plan:
    """The empty grouping set: its Reduce (by keys that are all NULL) has at most one row; over
    empty input the default row (NULL keys, count 0, other aggregates NULL) takes its place."""
    types = tuple(key_types) + tuple(a.type for a in reduce.aggregates)
    defaults = tuple([None] * len(key_types)) + tuple(
        0 if a.func in ("count", "count_star") else None for a in reduce.aggregates)
    # The retraction reads every column of the Reduce, as the union does, so both read one Reduce.
    retract = Map(reduce, tuple(_reading(ColumnRef(i, t), Literal(d, t)) for i, (d, t) in enumerate(zip(defaults, types))))
    return Union_((reduce, Constant((defaults,), types), Negate(Project(retract, tuple(range(len(types), 2 * len(types)))))))


def percentile_out_of_range(p: float) -> SqlError:
    """PostgreSQL's error for a fraction outside [0, 1] (its %g, with NaN and Infinity spelled
    as its snprintf does)."""
    text = "NaN" if p != p else ("Infinity" if p == float("inf") else "-Infinity" if p == float("-inf") else f"{p:g}")
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f"percentile value {text} is not between 0 and 1")


def _refuse_outer_aggregate(args: list[ScalarExpr], scope: Scope) -> None:
    """An aggregate whose arguments read only an outer query's columns belongs to that outer
    query in PostgreSQL (`SELECT (SELECT max(t.a)) FROM t`): not supported."""
    from dataflow.expr import columns_used
    cols = set().union(*(columns_used(a) for a in args)) if args else set()
    if cols and all(scope.columns[c].level > 0 for c in cols):
        raise unsupported("aggregates of an outer query's columns inside a subquery")


def global_aggregate(reduce: Reduce) -> Plan:
    defaults = tuple(0 if a.func in ("count", "count_star") else None for a in reduce.aggregates)
    types = tuple(a.type for a in reduce.aggregates)
    default_row = Constant((defaults,), types)
    lits = tuple(Literal(v, t) for v, t in zip(defaults, types))
    return Union_((reduce, default_row, Negate(Map(Project(reduce, ()), lits))))
