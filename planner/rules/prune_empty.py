"""Rule: a part of the plan that can have no rows is not run.

A filter that is constantly false (`WHERE false`, `HAVING false`, a NULL condition), a `LIMIT
0`, and everything that only transforms, joins or aggregates such a part has no rows; it becomes
an empty Constant, so nothing under it is evaluated. PostgreSQL's executor does the same (a
`One-Time Filter: false` never runs its subtree), so an expression that would fail on a row
there fails neither here nor there, and a BI tool's `SELECT * FROM (query) q LIMIT 0` (asked
for the column types only) costs nothing. Failing constants under such a part were raised
before this rule runs (`planner.rules.fold_constants.raise_deferred_planned`), as PostgreSQL
raises them at plan time, except inside a subquery it never plans.

    Filter(Reduce(Get(t), (0,), (sum(#1),)), (Literal(False),))    -> Constant((), types)
    Union_((Get(t), Filter(Get(u), (Literal(None),))))              -> Union_((Get(t),))
    Join(Get(t), TopK(Get(u), (), (), limit=0), ...)                -> Constant((), types)

A global aggregate over no rows still has its row: the planner builds it as a union with a
default row, which stays (only the Reduce, which has no rows for an empty input, goes).
"""

from __future__ import annotations

from dataflow.expr import Literal
from dataflow.plan import (ArrangeBy, Constant, Distinct, Filter, FlatMap, Join, Map, Negate, Plan, Project,
                           Reduce, Threshold, TopK, Union_, Window, output_types)
from planner.rules.rewrite import rewrite_up

# Nodes with no rows when their (only) input has none.
_ROW_WISE = (Map, Filter, Project, FlatMap, Reduce, Distinct, Negate, Threshold, TopK, Window)


def _empty(plan: Plan) -> bool:
    return isinstance(plan, Constant) and not plan.rows


def _never_true(plan: Plan) -> bool:
    return isinstance(plan, Filter) and any(isinstance(p, Literal) and p.value is not True for p in plan.predicates)


def prune_empty(plan: Plan) -> Plan:
    """`plan` with every part that can have no rows replaced by an empty Constant (a loop's
    bindings are not empty just because they start empty: LetRec is left alone)."""
    return rewrite_up(plan, _rewrite)


def _rewrite(node: Plan) -> Plan:
    if isinstance(node, ArrangeBy):
        return node  # an index keeps its arrangement, empty or not
    if _never_true(node) or (isinstance(node, TopK) and node.limit == 0) or \
            (isinstance(node, _ROW_WISE) and _empty(node.input)) or \
            (isinstance(node, Join) and (_empty(node.left) or _empty(node.right))):
        return Constant((), output_types(node))
    if isinstance(node, Union_):
        kept = tuple(i for i in node.inputs if not _empty(i))
        if not kept:
            return Constant((), output_types(node))
        if len(kept) != len(node.inputs):
            return Union_(kept)
    return node
