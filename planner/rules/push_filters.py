"""Rule: a condition is checked as early as the columns it reads allow (predicate pushdown).

A Filter moves below the operators that do not change the columns it reads: a Map whose new
columns it does not read, a FlatMap (a set-returning function in FROM) when it reads only the
input's columns, a Project, each input of a Union, Negate, Distinct and Threshold, the side of a
Join whose columns it reads, and a Reduce or TopK when it reads only their group key. The rows
it removes then cost nothing above it, and a condition is evaluated before, not after, what
PostgreSQL evaluates after it: PostgreSQL checks a relation's conditions when it scans it, so

    SELECT * FROM t CROSS JOIN generate_series(0, t.n) g WHERE date '2020-01-01' + t.d IS NOT NULL

fails on a row whose date is out of range even when generate_series gives that row nothing,
and `SELECT * FROM (SELECT x, 1 / x AS y FROM t) s WHERE x <> 0` never divides by zero:

    Filter(Map(Get(t), (1 / #0,)), (#0 <> 0,))   ->   Map(Filter(Get(t), (#0 <> 0,)), (1 / #0,))

Not into a Union with a negated input (an outer join's unmatched rows, a global aggregate's
default row, EXCEPT): rows that cancel out there would be checked, and a condition that fails
on one (`1 % count(*)` on the empty input's default row 0) would fail the query.

Conditions that stay: those with a volatile function (`random() < 0.5` above a FlatMap keeps
or drops each output row on its own), temporal filters (`mz_now()`), and any condition above a
node that another parent also reads (pushing into it would make two copies of it).
"""

from __future__ import annotations

from dataclasses import replace

from dataflow.expr import Call, ScalarExpr
from dataflow.plan import (Distinct, Filter, FlatMap, Join, LetRec, Map, Negate, Plan, Project, Reduce, Threshold,
                           TopK, Union_, children, output_types, with_children)
from planner.rules.fold_constants import _VOLATILE
from planner.rules.prune_columns import _CannotPrune, _used, remap_expr
from planner.rules.rewrite import parent_counts


def push_filters(plan: Plan) -> Plan:
    """`plan` with every Filter's conditions moved as far down as they may go."""
    parents = parent_counts(plan)
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        if id(node) in done:
            return done[id(node)]
        if isinstance(node, LetRec):
            done[id(node)] = node
            return node
        kids = children(node)
        new = tuple(visit(k) for k in kids)
        for a, b in zip(kids, new):  # a rewritten child has its original's parents
            parents[id(b)] = parents.get(id(a), 0)
        out = with_children(node, new) if any(a is not b for a, b in zip(kids, new)) else node
        if isinstance(out, Filter):
            try:
                out = _push(out.input, list(out.predicates), parents, id(out.input))
            except _CannotPrune:
                pass
        done[id(node)] = out
        return out

    return visit(plan)


def _movable(p: ScalarExpr) -> bool:
    todo = [p]
    while todo:
        e = todo.pop()
        if isinstance(e, Call):
            if e.func in _VOLATILE:
                return False
            todo.extend(e.args)
        else:
            todo.extend(getattr(e, name) for name in ("arg", "cond", "then", "els") if hasattr(e, name))
    return True


def _filter(plan: Plan, preds: list[ScalarExpr]) -> Plan:
    return Filter(plan, tuple(preds)) if preds else plan


def _push(below: Plan, preds: list[ScalarExpr], parents: dict[int, int], original: int) -> Plan:
    """`Filter(below, preds)` with as many conditions as possible moved into `below`, whose
    parents are counted under `original` (its id)."""
    # A condition that reads no column is PostgreSQL's one-time filter: it gates the whole
    # subtree where it is written (`prune_empty` removes what a false one guards).
    go = [p for p in preds if _movable(p) and _used(p)]
    stay = [p for p in preds if p not in go]
    if not go or parents.get(original, 0) > 1:
        return _filter(below, preds)
    width = len(output_types(below))

    if isinstance(below, (Map, FlatMap)):  # (conditions on the input's columns only)
        n_in = width - (len(below.exprs) if isinstance(below, Map) else len(below.outputs))
        down = [p for p in go if all(c < n_in for c in _used(p))]
        up = [p for p in go if p not in down]
        if not down:
            return _filter(below, preds)
        inner = _push(below.input, down, parents, id(below.input))
        return _filter(replace(below, input=inner), stay + up)

    if isinstance(below, Project):
        mapping = {i: c for i, c in enumerate(below.columns)}
        down = [remap_expr(p, mapping) for p in go]
        return _filter(replace(below, input=_push(below.input, down, parents, id(below.input))), stay)

    if isinstance(below, (Negate, Distinct, Threshold)):
        return _filter(replace(below, input=_push(below.input, go, parents, id(below.input))), stay)

    if isinstance(below, Union_) and not any(isinstance(i, Negate) for i in below.inputs):
        inputs = tuple(_push(i, list(go), parents, id(i)) for i in below.inputs)
        return _filter(Union_(inputs), stay)

    if isinstance(below, Join):
        n_left = len(output_types(below.left))
        left = [p for p in go if all(c < n_left for c in _used(p))]
        right = [p for p in go if _used(p) and all(c >= n_left for c in _used(p))]
        up = [p for p in go if p not in left and p not in right]
        if not left and not right:
            return _filter(below, preds)
        shift = {c: c - n_left for c in range(n_left, width)}
        new = replace(below,
                      left=_push(below.left, left, parents, id(below.left)) if left else below.left,
                      right=_push(below.right, [remap_expr(p, shift) for p in right], parents, id(below.right))
                      if right else below.right)
        return _filter(new, stay + up)

    if isinstance(below, (Reduce, TopK)):
        key = below.group_key
        if isinstance(below, Reduce):
            mapping = {i: k for i, k in enumerate(key)}  # output column i is input column key[i]
            down = [p for p in go if _used(p) and all(c < len(key) for c in _used(p))]
        else:
            mapping = {c: c for c in range(width)}
            down = [p for p in go if _used(p) and all(c in key for c in _used(p))]
        up = [p for p in go if p not in down]
        if not down:
            return _filter(below, preds)
        inner = _push(below.input, [remap_expr(p, mapping) for p in down], parents, id(below.input))
        return _filter(replace(below, input=inner), stay + up)

    return _filter(below, preds)
