"""Rule: prune columns nobody reads (projection pushdown).

Demand flows from the root down. The root demands all of its columns (the plan's output never
changes); every node works out which of its input's columns it needs to produce what is demanded
of it, and the inputs are narrowed to those. Narrowing `Project`s go directly above the leaves
(Get, IndexLookup) and directly below the inputs of Join and Union_, the operators that copy
or keep whole rows; ColumnRefs, join keys and group keys are renumbered.

Example, V1 over orders(id, customer_id, amount, status) and customers(id, region):

    SELECT c.region, count(*), sum(o.amount) FROM orders o JOIN customers c
      ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region

    Reduce(Join(Filter(Get(orders), (#3 = 'captured',)), Get(customers), (1,), (0,)),
           (5,), (count_star, sum(#2)))
becomes
    Reduce(Join(Project(Filter(Project(Get(orders), (1, 2, 3)), (#2 = 'captured',)), (0, 1)),
                Get(customers), (0,), (0,)),
           (3,), (count_star, sum(#1)))

orders.id never leaves the scan, and orders.status stops at the filter: the join and its
arrangements carry (customer_id, amount) and (id, region).

What each node demands of its input, given the set D demanded of it:
  Project    the columns it picks for D
  Filter     D plus the predicates' columns (predicates are never dropped)
  Map        D's input columns plus the columns of the demanded exprs (transitively: an expr may
             read an earlier expr's output); undemanded exprs are dropped
  FlatMap    D's input columns plus its args' columns; it keeps all its output columns (it
             changes multiplicity, so it always stays)
  Join       D split into left and right, plus each side's key
  Reduce     its group key plus the args of the demanded aggregates; undemanded aggregates
             are dropped, group keys always stay (they define the groups)
  Union_     D of every input (each narrowed to exactly D so the inputs line up)
  Negate     D
  Window     everything (ties among peers are broken by the whole row, as in TopK); window
             functions nobody reads are dropped
  Distinct, Threshold, TopK, ArrangeBy and any node not listed: everything (their results
             depend on whole rows: TopK breaks ties between equal sort keys by the whole row; an
             index keeps every column)

Dropping an undemanded Map expr or aggregate also drops the errors it could raise, as
PostgreSQL does for unused subquery outputs.
"""

from __future__ import annotations

from dataclasses import replace

from dataflow.expr import AggregateExpr, Call, Cast, ColumnRef, If, Literal, ScalarExpr
from dataflow.plan import (ArrangeBy, Constant, Distinct, Filter, FlatMap, Get, IndexLookup, Join,
                           Map, Negate, Plan, Project, Reduce, Threshold, TopK, Union_, Window,
                           output_types)


class _CannotPrune(Exception):
    """An expression of a kind this rule does not know: leave the whole plan as it was."""


def prune_columns(plan: Plan) -> Plan:
    """The plan with every column that does not reach its output removed as early as possible.
    The output (count, order and types of columns) is unchanged."""
    width = len(output_types(plan))
    widened: dict[int, frozenset[int]] = {}
    try:
        for _ in range(_MAX_PASSES):
            pruner = _Pruner(widened)
            pruned, kept = pruner.prune(plan, frozenset(range(width)))
            if not pruner.split:
                break
            widened = pruner.unions()
    except _CannotPrune:
        return plan
    assert kept == tuple(range(width)), (kept, width)
    return pruned


# A node read by several parents that demand different columns is pruned once, to the union of
# their demands (each parent narrows what it reads with a Project): pruning it per demand would
# make one copy per parent, and a shared Reduce or Join would keep its state once per copy. The
# union can only be known once every parent has been pruned, so the pass is repeated with the
# unions of the last one until every node sees one demand (the unions only grow, so this ends;
# a plan still split after the last pass is correct, just not shared).
_MAX_PASSES = 8


def remap_expr(expr: ScalarExpr, mapping: dict[int, int]) -> ScalarExpr:
    """`expr` with every ColumnRef's index replaced by `mapping[index]`."""
    if isinstance(expr, ColumnRef):
        return expr if mapping[expr.index] == expr.index else ColumnRef(mapping[expr.index], expr.type)
    if isinstance(expr, Literal):
        return expr
    if isinstance(expr, Call):
        return replace(expr, args=tuple(remap_expr(a, mapping) for a in expr.args))
    if isinstance(expr, If):
        return replace(expr, cond=remap_expr(expr.cond, mapping), then=remap_expr(expr.then, mapping),
                       els=remap_expr(expr.els, mapping))
    if isinstance(expr, Cast):
        return replace(expr, arg=remap_expr(expr.arg, mapping))
    raise _CannotPrune(expr)


def _used(expr: ScalarExpr) -> set[int]:
    """columns_used, but unknown expression kinds stop the rule instead of failing planning."""
    if isinstance(expr, ColumnRef):
        return {expr.index}
    if isinstance(expr, Literal):
        return set()
    if isinstance(expr, Call):
        return set().union(*(_used(a) for a in expr.args))
    if isinstance(expr, If):
        return _used(expr.cond) | _used(expr.then) | _used(expr.els)
    if isinstance(expr, Cast):
        return _used(expr.arg)
    raise _CannotPrune(expr)


def _positions(kept: tuple[int, ...]) -> dict[int, int]:
    """Old column position -> its position in a pruned output that keeps `kept` (in order)."""
    return {old: new for new, old in enumerate(kept)}


def _narrow(plan: Plan, kept: tuple[int, ...], wanted: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
    """Cut a pruned plan (outputting `kept`) down to exactly the `wanted` columns, in order."""
    target = tuple(sorted(wanted))
    if target == kept:
        return plan, kept
    pos = _positions(kept)
    return Project(plan, tuple(pos[c] for c in target)), target


class _Pruner:
    """One pass over a plan. `prune(node, demanded)` returns the rewritten node and `kept`: the
    original output positions the new node outputs, ascending, a superset of `demanded`.

    Plans may share subtrees (a global aggregate reads its Reduce twice), so results are
    memoised per (node, demand) to keep the pass linear. `widened` holds, per node, the union of
    the demands an earlier pass saw it get; `split` says whether some node got two different
    demands in this one."""

    def __init__(self, widened: dict[int, frozenset[int]]) -> None:
        self._memo: dict[tuple[int, frozenset[int]], tuple[Plan, Plan, tuple[int, ...]]] = {}
        self._widened = widened
        self._demands: dict[int, set[frozenset[int]]] = {}
        self.split = False

    def unions(self) -> dict[int, frozenset[int]]:
        return {k: frozenset().union(*v) for k, v in self._demands.items()}

    def prune(self, plan: Plan, demanded: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
        demanded = demanded | self._widened.get(id(plan), frozenset())
        seen = self._demands.setdefault(id(plan), set())
        seen.add(demanded)
        self.split = self.split or len(seen) > 1
        key = (id(plan), demanded)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is plan:
            return hit[1], hit[2]
        new, kept = self._prune(plan, demanded)
        self._memo[key] = (plan, new, kept)  # holds `plan` so its id is not reused
        return new, kept

    def _prune(self, plan: Plan, demanded: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
        width = len(output_types(plan))
        everything = tuple(range(width))

        if isinstance(plan, (Get, IndexLookup)):
            return _narrow(plan, everything, demanded)

        if isinstance(plan, Constant):
            cols = tuple(sorted(demanded))
            if cols == everything:
                return plan, everything
            rows = tuple(tuple(row[c] for c in cols) for row in plan.rows)
            return Constant(rows, tuple(plan.types[c] for c in cols)), cols

        if isinstance(plan, Project):
            inner, kept = self.prune(plan.input, frozenset(plan.columns[d] for d in demanded))
            pos = _positions(kept)
            out = tuple(sorted(demanded))
            columns = tuple(pos[plan.columns[d]] for d in out)
            if columns == tuple(range(len(kept))):
                return inner, out  # the Project became the identity
            return Project(inner, columns), out

        if isinstance(plan, Filter):
            need = set(demanded)
            for p in plan.predicates:
                need |= _used(p)
            inner, kept = self.prune(plan.input, frozenset(need))
            pos = _positions(kept)
            return Filter(inner, tuple(remap_expr(p, pos) for p in plan.predicates)), kept

        if isinstance(plan, Map):
            return self._map(plan, demanded)

        if isinstance(plan, FlatMap):
            n_in = width - len(plan.outputs)
            need = {d for d in demanded if d < n_in}
            for a in plan.args:
                need |= _used(a)
            inner, kept = self.prune(plan.input, frozenset(need))
            pos = _positions(kept)
            new = replace(plan, input=inner, args=tuple(remap_expr(a, pos) for a in plan.args))
            return new, kept + tuple(range(n_in, width))

        if isinstance(plan, Join):
            n_left = len(output_types(plan.left))
            left, lkept = self._side(plan.left, {d for d in demanded if d < n_left} | set(plan.left_key))
            right, rkept = self._side(plan.right, {d - n_left for d in demanded if d >= n_left}
                                      | set(plan.right_key))
            lpos, rpos = _positions(lkept), _positions(rkept)
            new = Join(left, right, tuple(lpos[k] for k in plan.left_key),
                       tuple(rpos[k] for k in plan.right_key))
            return new, lkept + tuple(n_left + r for r in rkept)

        if isinstance(plan, Reduce):
            return self._reduce(plan, demanded)

        if isinstance(plan, Union_):
            sides = [self._side(i, set(demanded)) for i in plan.inputs]
            return Union_(tuple(p for p, _ in sides)), tuple(sorted(demanded))

        if isinstance(plan, Negate):
            inner, kept = self.prune(plan.input, demanded)
            return Negate(inner), kept

        if isinstance(plan, Window):
            return self._window(plan, demanded)

        if isinstance(plan, (Distinct, Threshold, ArrangeBy, TopK)):
            # Multiplicities (and an index's rows) depend on every column. TopK breaks ties in
            # its order by the whole row, so narrowing its input would change which of equal
            # rows a LIMIT keeps, and two uses of one subquery (a CTE joined with itself) pruned
            # differently would disagree about which rows it holds.
            inner, _ = self._side(plan.input, set(range(width)))
            return replace(plan, input=inner), everything

        return plan, everything  # a node this rule does not know: leave it and what is under it

    def _window(self, plan: Window, demanded: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
        """The input keeps every column (ties between peers are broken by the whole row, as in
        TopK); window functions nobody reads are dropped."""
        n_in = len(output_types(plan.input))
        inner, _ = self._side(plan.input, set(range(n_in)))
        funcs = [j for j in range(len(plan.funcs)) if n_in + j in demanded]
        if not funcs:
            return inner, tuple(range(n_in))
        new = Window(inner, plan.partition_key, plan.order_by, tuple(plan.funcs[j] for j in funcs))
        return new, tuple(range(n_in)) + tuple(n_in + j for j in funcs)

    def _side(self, plan: Plan, wanted: set[int]) -> tuple[Plan, tuple[int, ...]]:
        """Prune an input that copies or keeps whole rows, cut to exactly `wanted`."""
        inner, kept = self.prune(plan, frozenset(wanted))
        return _narrow(inner, kept, frozenset(wanted))

    def _map(self, plan: Map, demanded: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
        n_in = len(output_types(plan.input))
        need = {d for d in demanded if d < n_in}
        keep_expr = [False] * len(plan.exprs)
        # Later exprs may read earlier exprs' outputs, so walk from the last one back.
        wanted = {d - n_in for d in demanded if d >= n_in}
        for j in range(len(plan.exprs) - 1, -1, -1):
            if j in wanted:
                keep_expr[j] = True
                for c in _used(plan.exprs[j]):
                    (need.add(c) if c < n_in else wanted.add(c - n_in))
        inner, kept = self.prune(plan.input, frozenset(need))
        if not any(keep_expr):
            return inner, kept
        pos = _positions(kept)
        exprs = []
        for j, e in enumerate(plan.exprs):
            if keep_expr[j]:
                exprs.append(remap_expr(e, pos))
                pos[n_in + j] = len(kept) + len(exprs) - 1
        out = kept + tuple(n_in + j for j in range(len(plan.exprs)) if keep_expr[j])
        return Map(inner, tuple(exprs)), out

    def _reduce(self, plan: Reduce, demanded: frozenset[int]) -> tuple[Plan, tuple[int, ...]]:
        n_key = len(plan.group_key)
        aggs = [j for j in range(len(plan.aggregates)) if n_key + j in demanded]
        need = set(plan.group_key)
        for j in aggs:
            for e in plan.aggregates[j].inputs():
                need |= _used(e)
        inner, kept = self.prune(plan.input, frozenset(need))
        pos = _positions(kept)
        new_aggs: list[AggregateExpr] = []
        for j in aggs:
            a = plan.aggregates[j]
            new_aggs.append(a.with_inputs(tuple(remap_expr(e, pos) for e in a.inputs())))
        new = Reduce(inner, tuple(pos[k] for k in plan.group_key), tuple(new_aggs))
        return new, tuple(range(n_key)) + tuple(n_key + j for j in aggs)
