"""GROUP BY and aggregates: lowering a grouped SELECT onto a `Reduce`.

The select list, HAVING and ORDER BY of a grouped query are lowered with a hook that replaces
each aggregate call and each GROUP BY expression by a column of the Reduce's output
(key columns first, then one per distinct aggregate). A bare column that is neither is error 42803.

>>> # SELECT region, count(*) + 1 FROM c GROUP BY region   over c(id int8, region text)
>>> # Reduce(Get(c), (1,), (count_star,)) then Map(Call('add', (ColumnRef(1, INT8), 1::int8)))

A global aggregate (no GROUP BY) must return one row even on empty input:
    Union_(R, Constant(defaults), Negate(Map(Project(R, ()), defaults)))
where defaults are 0 for count and NULL for the rest.
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import SqlError, SqlState
from dataflow.expr import AggregateExpr, Call, ColumnRef, Literal, ScalarExpr
from dataflow.plan import Constant, Map, Negate, Plan, Project, Reduce, Union_
from dataflow.types import INT8, TypeKind
from planner.context import PlanContext
from planner.scalar import AGGREGATES, ScalarLowerer, coerce, resolve_unknown
from planner.scope import Scope
from planner.typing import aggregate_type

_FUNC = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}


def contains_aggregate(node: exp.Expression) -> bool:
    """Whether `node` aggregates at this query level (an aggregate inside a subquery belongs to
    the subquery, so the walk does not descend into one)."""
    def nested(n: exp.Expression) -> bool:
        return n is not node and isinstance(n, (exp.Subquery, exp.Select))

    return any(isinstance(n, AGGREGATES) and not nested(n) for n in node.walk(prune=nested))


class Grouping:
    """Collects group keys and aggregates for one SELECT and builds its Reduce."""

    def __init__(self, input_plan: Plan, scope: Scope, ctx: PlanContext,
                 keys: list[ScalarExpr]) -> None:
        self.input_plan = input_plan
        self.scope = scope
        self.ctx = ctx
        self.keys = keys
        self.aggs: list[AggregateExpr] = []
        self.input_lowerer = ScalarLowerer(scope, ctx, clause="aggregate function arguments")

    def lowerer(self, clause: str) -> ScalarLowerer:
        return ScalarLowerer(self.scope, self.ctx, hook=self._hook, clause=clause)

    def _hook(self, node: exp.Expression) -> ScalarExpr | None:
        if isinstance(node, AGGREGATES):
            return self._aggregate(node)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null, exp.Parameter, exp.Star)):
            return None
        if contains_aggregate(node):
            return None
        e = self.input_lowerer.lower(node)
        if e in self.keys:
            return ColumnRef(self.keys.index(e), e.type)
        if isinstance(node, exp.Column):
            col = f"{node.table}.{node.name}" if node.table else node.name
            raise SqlError(SqlState.GROUPING_ERROR,
                           f'column "{col}" must appear in the GROUP BY clause or be used in an aggregate function')
        return None

    def _aggregate(self, node: exp.Expression) -> ScalarExpr:
        func = _FUNC[type(node)]
        arg_node = node.this
        distinct = False
        if isinstance(arg_node, exp.Distinct):
            distinct = True
            if len(arg_node.expressions) != 1:
                raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func} with several arguments does not exist")
            arg_node = arg_node.expressions[0]
        if node.expressions and func != "count":
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func} with several arguments does not exist")
        if arg_node is not None and contains_aggregate(arg_node):
            raise SqlError(SqlState.GROUPING_ERROR, "aggregate function calls cannot be nested")
        if func == "count" and (arg_node is None or isinstance(arg_node, exp.Star)):
            agg = AggregateExpr("count_star", None, aggregate_type("count_star", None))
        else:
            arg = self.input_lowerer.lower(arg_node)
            if func in ("sum", "avg") and arg.type.kind is TypeKind.UNKNOWN:
                # PostgreSQL reads sum('1') as sum of numeric? No: it is ambiguous; pick numeric.
                from dataflow.types import NUMERIC
                arg = coerce(arg, NUMERIC, self.ctx)
            arg = resolve_unknown(arg, self.ctx)
            if func in ("sum", "avg") and not arg.type.is_numeric_family:
                raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}({arg.type.name}) does not exist",
                               hint="No function matches the given name and argument types. "
                                    "You might need to add explicit type casts.")
            if func in ("min", "max") and arg.type.kind is TypeKind.BOOL:
                raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {func}(boolean) does not exist",
                               hint="No function matches the given name and argument types. "
                                    "You might need to add explicit type casts.")
            if func in ("min", "max") and arg.type.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8):
                # SQL orders NaN above every float; the engine's min/max follow IEEE. Aggregate an
                # integer key with SQL's float order instead, and turn the result back.
                key = AggregateExpr(func, Call("float_order_key", (arg,), INT8), INT8, distinct)
                return Call("float_from_order_key", (self._column_of(key),), arg.type)
            agg = AggregateExpr(func, arg, aggregate_type(func, arg.type), distinct)
        return self._column_of(agg)

    def _column_of(self, agg: AggregateExpr) -> ColumnRef:
        if agg not in self.aggs:
            self.aggs.append(agg)
        return ColumnRef(len(self.keys) + self.aggs.index(agg), agg.type)

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
        reduce = Reduce(plan, tuple(key_cols), tuple(self.aggs))
        if self.keys:
            return reduce
        return global_aggregate(reduce)


def global_aggregate(reduce: Reduce) -> Plan:
    defaults = tuple(0 if a.func in ("count", "count_star") else None for a in reduce.aggregates)
    types = tuple(a.type for a in reduce.aggregates)
    default_row = Constant((defaults,), types)
    lits = tuple(Literal(v, t) for v, t in zip(defaults, types))
    return Union_((reduce, default_row, Negate(Map(Project(reduce, ()), lits))))
