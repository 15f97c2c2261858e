"""Subqueries in expressions, decorrelated into joins so that views keep them up to date.

Every subquery of an expression (scalar `(SELECT …)`, `EXISTS`, `[NOT] IN (SELECT …)`,
`x op ANY/SOME/ALL (SELECT …)`, `ARRAY(SELECT …)`) becomes one or more columns appended to the
relation the expression is evaluated over, computed for all its rows at once:

1. **Which outer columns does it read?** The subquery is planned once with every column of the
   enclosing scope visible as an *outer* column (`Scope` levels; a `Recorder` notes each one a
   name resolves to, also from subqueries nested deeper).
2. **Planned per distinct outer value.** It is planned again with `ctx.outer` holding
   D = DISTINCT(the outer columns it reads); every SELECT of the subquery joins D into its FROM
   like one more table, so a correlated `u.k = t.a` becomes an equi-join key with D, and D's
   columns ride along as extra output columns ("keys"): a Reduce groups by them too, a TopK
   ranks within them, a global aggregate gets its default row per key (the count bug:
   `(SELECT count(*) FROM u WHERE u.k = t.a)` is 0, not NULL, where nothing matches).
3. **Joined back.** The per-key answer is left-joined to the outer rows on the keys (NULL-safe:
   a NULL outer value is a key too), and the missing keys get the subquery's empty answer (NULL,
   false, `{}`).

Uncorrelated subqueries are the same with no keys: a cross join with the one-row answer.

Example: `SELECT t.id, (SELECT max(u.v) FROM u WHERE u.k = t.a) FROM t` over t(id, a), u(k, v):

    D  = Distinct(Project(Get(t), (1,)))                             -- distinct t.a
    Q  = Reduce(Join(D, Get(u), (0,), (0,)), (0,), (max(#2),))       -- (a, max) per a
    V  = Q with n = count(*) per a and the value where n = 1          -- (a, v, n)
    t' = Get(t) LEFT JOIN V ON t.a IS NOT DISTINCT FROM V.a           -- (id, a, v, n)
    SELECT list: id, subquery_one(n, v)   -- subquery_one raises 21000 where n > 1

Expressions are lowered first (`Subqueries.hook`: each subquery is analysed and stands in the
lowered expression as a placeholder column of its type), then `Subqueries.attach` builds the
columns over the actual relation and `substitute` puts them in place of the placeholders.
This order lets a grouped query lower its select list (registering its aggregates) before the
relation its subqueries attach to (the Reduce's output) exists.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from decimal import Decimal

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import AggregateExpr, Call, Cast, ColumnRef, If, Literal, ScalarExpr
from dataflow.plan import (Constant, Distinct, Filter, Join, Map, Negate, Plan, Project, Reduce, TopK,
                           Union_, output_types)
from dataflow.types import BOOL, INT8, TEXT, SqlType, TypeKind, array_of
from planner import equality_keys
from planner.context import PlanContext
from planner.scope import Scope, ScopeColumn

# Placeholder columns (lowered expressions refer to a subquery's value by these until attach).
PLACEHOLDER = 1 << 44  # (window calls use 1 << 40 and up: planner/windows.py)


class Recorder:
    """Which columns of a scope a subquery's names resolved to; marking an outer column of that
    scope also marks it in the scope it was lifted from (a reference two levels out)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.used: set[int] = set()

    def mark(self, position: int) -> None:
        if position not in self.used:
            self.used.add(position)
            self.scope.columns[position].mark_used()


@dataclass
class OuterRelation:
    """What a subquery's SELECTs join with: D, the distinct values of the outer columns it
    reads, and their scope (levels >= 1). `blocked`: inside a derived table or CTE of the
    subquery, where the names are known but reading them is not supported."""

    plan: Plan
    scope: Scope
    blocked: bool = False

    def blocked_view(self) -> "OuterRelation":
        return replace(self, blocked=True)


def _lift(scope: Scope, recorder: Recorder, positions) -> Scope:
    return Scope([ScopeColumn(c.table, c.name, c.type, c.using_hidden, level=c.level + 1, lifted_from=(recorder, j))
                  for j in positions for c in (scope.columns[j],)])


def analyze(query: exp.Expression, scope: Scope, ctx: PlanContext, top: bool = False):
    """Plan `query` with every column of `scope` visible as an outer column: (the positions of
    `scope` it reads, sorted; its result, for the output columns' names and types)."""
    from planner.lower_select import plan_query
    recorder = Recorder(scope)
    outer = OuterRelation(Constant((), scope.types), _lift(scope, recorder, range(len(scope.columns))))
    q = plan_query(query, replace(ctx, outer=outer), top=top)
    return sorted(recorder.used), q


def build(query: exp.Expression, outer_plan: Plan, scope: Scope, used: list[int], ctx: PlanContext,
          top: bool = False):
    """Plan `query` for each distinct value of the `used` columns of `outer_plan` (whose scope
    is `scope`): its output is its own columns, then those key columns."""
    from planner.lower_select import plan_query
    if not used:
        return plan_query(query, replace(ctx, outer=None), top=top)
    d = Distinct(Project(outer_plan, tuple(used)))
    outer = OuterRelation(d, _lift(scope, Recorder(scope), used))
    q = plan_query(query, replace(ctx, outer=outer), top=top)
    assert q.keys == len(used), (q.keys, used)
    return q


# ---- NULL-safe keys ---------------------------------------------------------------------------

_ZERO_TEXT = {TypeKind.INTERVAL: "0", TypeKind.TIME: "00:00", TypeKind.TIMETZ: "00:00+00", TypeKind.UUID: "00000000-0000-0000-0000-000000000000",
              TypeKind.JSONB: "null", TypeKind.JSON: "null"}


def zero_of(t: SqlType):
    """Some non-NULL value of the type (the NULL flag beside it tells it from NULL)."""
    k = t.kind
    if t.is_integer or k in (TypeKind.OID, TypeKind.REGCLASS, TypeKind.REGTYPE, TypeKind.REGPROC,
                             TypeKind.REGNAMESPACE, TypeKind.REGROLE):
        return 0
    if k in (TypeKind.FLOAT4, TypeKind.FLOAT8):
        return 0.0
    if k is TypeKind.NUMERIC:
        return Decimal(0)
    if k is TypeKind.BOOL:
        return False
    if k is TypeKind.DATE:
        return dt.date(1970, 1, 1)
    if k is TypeKind.TIMESTAMP:
        return dt.datetime(1970, 1, 1)
    if k is TypeKind.TIMESTAMPTZ:
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    if k is TypeKind.BYTEA:
        return b""
    if k is TypeKind.ARRAY:
        return "{}"
    if k in _ZERO_TEXT:
        from planner.casts import cast_value
        return cast_value(_ZERO_TEXT[k], TEXT, t)
    return ""


def _key_exprs(exprs: list[ScalarExpr], null_safe: list[bool]) -> list[ScalarExpr]:
    """Join key columns: a NULL-safe key is the pair (e IS NULL, coalesce(e, zero)), so NULL
    matches NULL; a plain key is e itself (NULL matches nothing)."""
    out: list[ScalarExpr] = []
    for e, safe in zip(exprs, null_safe):
        if safe:
            out.append(Call("is_null", (e,), BOOL))
            out.append(Call("coalesce", (e, Literal(zero_of(e.type), e.type)), e.type))
        else:
            out.append(e)
    return out


def _refs(types: tuple[SqlType, ...], positions) -> list[ScalarExpr]:
    return [ColumnRef(i, types[i]) for i in positions]


def join_on_keys(left: Plan, lkeys: list[int], right: Plan, rkeys: list[int]) -> Plan:
    """Inner join on NULL-safe equality of the key columns; output left ++ right."""
    lt, rt = output_types(left), output_types(right)
    if not lkeys:
        return Join(left, right, (), ())
    safe = [True] * len(lkeys)
    lk, rk = _key_exprs(_refs(lt, lkeys), safe), _key_exprs(_refs(rt, rkeys), safe)
    nl, nr, nk = len(lt), len(rt), len(lk)
    joined = Join(Map(left, tuple(lk)), Map(right, tuple(rk)), tuple(range(nl, nl + nk)), tuple(range(nr, nr + nk)))
    return Project(joined, tuple(range(nl)) + tuple(range(nl + nk, nl + nk + nr)))


def left_attach(outer: Plan, keys: list[ScalarExpr], null_safe: list[bool], values: Plan,
                value_keys: list[int], value_cols: list[int], pads: list[Literal]) -> Plan:
    """`outer` with the `value_cols` of the row of `values` (at most one per key) whose
    `value_keys` equal the outer row's `keys`, or `pads` where there is none: a left join.
    With no keys, `values` has at most one row, joined to every outer row."""
    width = len(output_types(outer))
    vt = output_types(values)
    lk = _key_exprs(keys, null_safe)
    rk = _key_exprs(_refs(vt, value_keys), null_safe)
    nk = len(lk)
    left = Map(outer, tuple(lk)) if nk else outer
    right = Project(Map(values, tuple(rk)) if nk else values,
                    tuple(range(len(vt), len(vt) + nk)) + tuple(value_cols))
    joined = Join(left, right, tuple(range(width, width + nk)), tuple(range(nk)))
    matched = Project(joined, tuple(range(width)) + tuple(range(width + 2 * nk, width + 2 * nk + len(value_cols))))
    missing = Union_((outer, Negate(Project(joined, tuple(range(width))))))
    return Union_((matched, Map(missing, tuple(pads))))


# ---- the subquery forms -----------------------------------------------------------------------

def _quantified(node: exp.Expression):
    """(kind ANY/ALL, query) of `op ANY/SOME/ALL (SELECT …)`'s right side, else None."""
    from planner.scalar import _quantifier
    q = _quantifier(node)
    if q is None:
        return None
    kind, inner = q
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, (exp.Select, exp.Subquery, exp.SetOperation)):
        return kind, inner
    return None


def is_subquery(node: exp.Expression) -> bool:
    """Whether `node` is one of the subquery forms an expression can hold."""
    from planner.scalar import _CMP
    if isinstance(node, (exp.Subquery, exp.Exists)):
        return True
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        return True
    if type(node) in _CMP and _quantified(node.expression) is not None:
        return True
    return isinstance(node, exp.Array) and len(node.expressions) == 1 and \
        isinstance(node.expressions[0], (exp.Select, exp.SetOperation, exp.Subquery))


def contains_subquery(node: exp.Expression) -> bool:
    return any(is_subquery(n) for n in node.walk())


@dataclass
class _Spec:
    kind: str  # scalar, exists, array, any, all
    query: exp.Expression
    used: list[int]
    type: SqlType  # the placeholder's type: the value the expression sees
    x: ScalarExpr | None = None  # ANY/ALL: the left operand, over the outer row
    cmp: ScalarExpr | None = None  # ANY/ALL: x op v, v as column PLACEHOLDER - 1


class Subqueries:
    """The subqueries of the expressions lowered over one relation (whose scope is `scope`)."""

    def __init__(self, scope: Scope, ctx: PlanContext) -> None:
        self.scope = scope
        self.ctx = ctx
        self.specs: list[_Spec] = []
        self.values: dict[int, ScalarExpr] = {}

    def __bool__(self) -> bool:
        return bool(self.specs)

    def install(self, lowerer) -> None:
        """Make `lowerer` hand the subqueries it meets to this collection (before its own hook)."""
        own = lowerer.hook

        def hook(node: exp.Expression):
            if is_subquery(node):
                return self._register(node, lowerer)
            return own(node) if own is not None else None

        lowerer.hook = hook

    def _register(self, node: exp.Expression, lowerer) -> ScalarExpr:
        ctx = self.ctx
        if isinstance(node, exp.Exists):
            used, _ = analyze(node.this, self.scope, ctx)
            return self._add(_Spec("exists", node.this, used, BOOL))
        if isinstance(node, exp.Array):
            query = node.expressions[0]
            used, q = analyze(query, self.scope, ctx, top=True)
            if len(q.columns) != 1:
                raise SqlError(SqlState.SYNTAX_ERROR, "subquery must return only one column")
            t = q.columns[0].type
            if t.kind is TypeKind.ARRAY:
                raise unsupported("ARRAY(SELECT …) of arrays (multidimensional arrays)")
            return self._add(_Spec("array", query, used, array_of(t)))
        if isinstance(node, exp.Subquery):
            used, q = analyze(node, self.scope, ctx)
            if len(q.columns) != 1:
                raise SqlError(SqlState.SYNTAX_ERROR, "subquery must return only one column")
            return self._add(_Spec("scalar", node, used, q.columns[0].type))
        # x IN (SELECT …), x op ANY/ALL (SELECT …)
        from planner.scalar import _CMP, _row_items
        if isinstance(node, exp.In):
            kind, query, fn, sym = "any", node.args["query"], "eq", "="
        else:
            kind, query = _quantified(node.expression)
            fn, sym = _CMP[type(node)]
            kind = kind.lower()
        if _row_items(node.this) is not None:
            raise unsupported("row constructors with IN, ANY or ALL (subquery)")
        x = lowerer.lower(node.this)
        used, q = analyze(query, self.scope, ctx)
        if len(q.columns) != 1:
            raise SqlError(SqlState.SYNTAX_ERROR, "subquery has too many columns")
        cmp = lowerer.compare(fn, sym, x, ColumnRef(PLACEHOLDER - 1, q.columns[0].type))
        return self._add(_Spec(kind, query, used, BOOL, cmp.args[0], cmp))

    def _add(self, spec: _Spec) -> ScalarExpr:
        self.specs.append(spec)
        return ColumnRef(PLACEHOLDER + len(self.specs) - 1, spec.type)

    # -- phase B --

    def attach(self, plan: Plan) -> Plan:
        """`plan` (whose columns start with the scope's) with every subquery's columns appended;
        afterwards `substitute` turns lowered expressions into expressions over the result."""
        base = plan
        for k, spec in enumerate(self.specs):
            if k in self.values:
                continue
            build_fn = {"scalar": self._scalar, "exists": self._exists, "array": self._array}.get(
                spec.kind, self._quantified)
            plan, value = build_fn(spec, base, plan)
            self.values[k] = value
        return plan

    def substitute(self, e: ScalarExpr) -> ScalarExpr:
        def fn(ref: ColumnRef) -> ScalarExpr:
            if PLACEHOLDER <= ref.index < PLACEHOLDER + len(self.specs):
                return self.values[ref.index - PLACEHOLDER]
            return ref
        return replace_refs(e, fn)

    def _keys(self, spec: _Spec) -> list[ScalarExpr]:
        return [ColumnRef(j, self.scope.columns[j].type) for j in spec.used]

    def _scalar(self, spec: _Spec, base: Plan, plan: Plan):
        q = build(spec.query, base, self.scope, spec.used, self.ctx)
        k = len(spec.used)
        t = q.types[0]
        keys = list(range(1, 1 + k))
        width = len(output_types(plan))
        if _at_most_one_row(spec.query):
            # A global aggregate or LIMIT 1: one row per key by construction, no count needed.
            out = left_attach(plan, self._keys(spec), [True] * k, q.plan, keys, [0], [Literal(None, t)])
            return out, ColumnRef(width, t)
        counts = Reduce(q.plan, tuple(keys), (AggregateExpr("count_star", None, INT8),))  # (K, n)
        n = ColumnRef(k, INT8)
        many = Project(Map(Filter(counts, (Call("gt", (n, Literal(1, INT8)), BOOL),)), (Literal(None, t),)),
                       tuple(range(k)) + (k + 1, k))
        joined = join_on_keys(q.plan, keys, counts, list(range(k)))  # (v, K, K, n)
        n_joined = ColumnRef(1 + 2 * k, INT8)
        one = Project(Filter(joined, (Call("eq", (n_joined, Literal(1, INT8)), BOOL),)),
                      tuple(keys) + (0, 1 + 2 * k))
        values = Union_((one, many))  # (K, v, n): one row per key
        out = left_attach(plan, self._keys(spec), [True] * k, values, list(range(k)), [k, k + 1],
                          [Literal(None, t), Literal(None, INT8)])
        return out, Call("subquery_one", (ColumnRef(width + 1, INT8), ColumnRef(width, t)), t)

    def _exists(self, spec: _Spec, base: Plan, plan: Plan):
        q = build(spec.query, base, self.scope, spec.used, self.ctx)
        k = len(spec.used)
        n = len(q.columns)
        keys = Map(Distinct(Project(q.plan, tuple(range(n, n + k)))), (Literal(True, BOOL),))
        width = len(output_types(plan))
        out = left_attach(plan, self._keys(spec), [True] * k, keys, list(range(k)), [k],
                          [Literal(False, BOOL)])
        return out, ColumnRef(width, BOOL)

    def _array(self, spec: _Spec, base: Plan, plan: Plan):
        from planner.typing import is_float
        q = build(spec.query, base, self.scope, spec.used, self.ctx, top=True)
        k = len(spec.used)
        keys = tuple(range(1, 1 + k))
        f = q.finishing
        rows = q.plan
        if f.limit is not None or f.offset:
            rows = TopK(rows, keys, f.order_by, f.limit, f.offset)
        qt = output_types(rows)
        order = []
        for col, desc, nulls_last in f.order_by:
            key: ScalarExpr = ColumnRef(col, qt[col])
            if is_float(qt[col]):
                key = Call("float_order_key", (key,), INT8)
            order.append((key, desc, nulls_last))
        piece = Call("array_element_text", (ColumnRef(0, qt[0]),), TEXT)
        agg = AggregateExpr("string_agg", piece, TEXT, False, (Literal(",", TEXT),), tuple(order))
        collected = Map(Reduce(rows, keys, (agg,)),
                        (Call("collect_wrap", (ColumnRef(k, TEXT), Literal("{}", TEXT)), spec.type),))
        width = len(output_types(plan))
        out = left_attach(plan, self._keys(spec), [True] * k, collected, list(range(k)), [k + 1],
                          [Literal("{}", spec.type)])
        return out, ColumnRef(width, spec.type)

    def _quantified(self, spec: _Spec, base: Plan, plan: Plan):
        q = build(spec.query, base, self.scope, spec.used, self.ctx)
        x = self.substitute(spec.x)
        cmp = spec.cmp
        fn = cmp.func
        if (fn == "eq" and spec.kind == "any") or (fn == "neq" and spec.kind == "all"):
            out, value = self._equality(spec, q, x, plan)
            return out, value if fn == "eq" else Call("not", (value,), BOOL)
        return self._general(spec, q, x, plan)

    def _v(self, spec: _Spec, column: int) -> ScalarExpr:
        """The subquery side of the comparison, over a relation holding v at `column`."""
        return replace_refs(spec.cmp.args[1], lambda r: ColumnRef(column, r.type) if r.index == PLACEHOLDER - 1 else r)

    def _equality(self, spec: _Spec, q, x: ScalarExpr, plan: Plan):
        """x = ANY (SELECT v): true where some v equals x (a join on x = v), else NULL where x
        is NULL or some v is NULL (and the subquery is not empty), else false."""
        k = len(spec.used)
        qn = len(output_types(q.plan))
        # (intervals are equal by span: both sides compare as their spans)
        x = equality_keys.key(x)
        with_v = Map(q.plan, (equality_keys.key(self._v(spec, 0)),))  # (v, K, v')
        keys = tuple(range(1, 1 + k))
        values = Map(Distinct(Project(with_v, keys + (qn,))), (Literal(True, BOOL),))  # (K, v', true)
        width = len(output_types(plan))
        out = left_attach(plan, self._keys(spec) + [x], [True] * k + [False], values, list(range(k + 1)),
                          [k + 1], [Literal(False, BOOL)])
        counts = Reduce(with_v, keys, (AggregateExpr("count_star", None, INT8),
                                       AggregateExpr("count", ColumnRef(qn, output_types(with_v)[qn]), INT8)))
        out = left_attach(out, self._keys(spec), [True] * k, counts, list(range(k)), [k, k + 1],
                          [Literal(0, INT8), Literal(0, INT8)])
        matched, n, n_values = ColumnRef(width, BOOL), ColumnRef(width + 1, INT8), ColumnRef(width + 2, INT8)
        unknown = Call("or", (Call("is_null", (x,), BOOL), Call("gt", (n, n_values), BOOL)), BOOL)
        value = If(matched, Literal(True, BOOL),
                   If(Call("eq", (n, Literal(0, INT8)), BOOL), Literal(False, BOOL),
                      If(unknown, Literal(None, BOOL), Literal(False, BOOL), BOOL), BOOL), BOOL)
        return out, value

    def _general(self, spec: _Spec, q, x: ScalarExpr, plan: Plan):
        """x op ANY/ALL (SELECT v) for any op: each distinct (outer key, x) compared with every
        v of its key; per pair 2 (true), 1 (NULL) or 0 (false), and ANY takes the max, ALL the
        min; no pairs (empty subquery) is false for ANY and true for ALL."""
        k = len(spec.used)
        width = len(output_types(plan))
        extended = Map(plan, (x,))
        xs = Distinct(Project(extended, tuple(spec.used) + (width,)))  # (K, x)
        pairs = join_on_keys(xs, list(range(k)), q.plan, list(range(1, 1 + k)))  # (K, x, v, K)
        cmp = Call(spec.cmp.func, (ColumnRef(k, x.type), self._v(spec, k + 1)), BOOL)
        two, one, zero = Literal(2, INT8), Literal(1, INT8), Literal(0, INT8)
        enc = If(cmp, two, If(Call("not", (cmp,), BOOL), zero, one, INT8), INT8)
        pw = len(output_types(pairs))
        agg = AggregateExpr("max" if spec.kind == "any" else "min", ColumnRef(pw, INT8), INT8)
        graded = Reduce(Map(pairs, (enc,)), tuple(range(k + 1)), (agg,))  # (K, x, grade)
        out = left_attach(plan, self._keys(spec) + [x], [True] * (k + 1), graded, list(range(k + 1)),
                          [k + 1], [Literal(None, INT8)])
        g = ColumnRef(width, INT8)
        t, f, null = Literal(True, BOOL), Literal(False, BOOL), Literal(None, BOOL)
        if spec.kind == "any":
            value = If(Call("eq", (g, two), BOOL), t, If(Call("eq", (g, one), BOOL), null, f, BOOL), BOOL)
        else:
            value = If(Call("eq", (g, zero), BOOL), f, If(Call("eq", (g, one), BOOL), null, t, BOOL), BOOL)
        return out, value


def _at_most_one_row(query: exp.Expression) -> bool:
    """Whether a scalar subquery yields at most one row (per outer value) whatever the data: a
    SELECT with aggregates and no GROUP BY, or LIMIT 0/1, and no set-returning function."""
    from planner.aggregates import contains_aggregate
    from planner.table_functions import find_table_functions
    while isinstance(query, exp.Subquery) and not query.args.get("limit"):
        query = query.this
    limit = query.args.get("limit")
    if limit is not None:
        n = limit.expression if isinstance(limit, exp.Limit) else None
        if isinstance(n, exp.Literal) and not n.is_string and n.this in ("0", "1"):
            return True
    if not isinstance(query, exp.Select) or query.args.get("group") or query.args.get("distinct"):
        return False
    items = query.expressions
    return bool(items) and all(contains_aggregate(e) for e in items) and \
        not any(find_table_functions(e) for e in items)


def replace_refs(e: ScalarExpr, fn) -> ScalarExpr:
    """`e` with every column reference replaced by `fn(ref)`."""
    if isinstance(e, ColumnRef):
        return fn(e)
    if isinstance(e, Literal):
        return e
    if isinstance(e, Call):
        return Call(e.func, tuple(replace_refs(a, fn) for a in e.args), e.type)
    if isinstance(e, If):
        return If(replace_refs(e.cond, fn), replace_refs(e.then, fn), replace_refs(e.els, fn), e.type)
    if isinstance(e, Cast):
        return Cast(replace_refs(e.arg, fn), e.type)
    raise TypeError(e)


def global_aggregate_per_key(reduce: Reduce, keys: Plan) -> Plan:
    """A global aggregate (no GROUP BY) of a correlated subquery: one row per outer key, the
    aggregates' empty values (count 0, others NULL) for keys with no input rows. `reduce` is
    grouped by exactly the key columns, `keys` (D) holds every key once."""
    n = len(reduce.group_key)
    defaults = tuple(Literal(0 if a.func in ("count", "count_star") else None, a.type) for a in reduce.aggregates)
    present = Project(reduce, tuple(range(n)))
    return Union_((reduce, Map(keys, defaults), Negate(Map(present, defaults))))
