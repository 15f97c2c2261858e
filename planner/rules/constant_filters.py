"""Rule: a condition that reads no column is evaluated once, before the rows.

PostgreSQL runs such a condition ("pseudo-constant": no column, nothing volatile) as a one-time
filter ahead of the part of the plan it guards, so when it is false that part never runs, even
when the condition calls a STABLE function the constant folding leaves alone
(`planner.rules.fold_constants`). Evaluated here at plan time, the filter becomes a literal and
`prune_empty` removes what it guards; if it fails, it fails as a folded constant does.

    Filter(Get(t), (Call('jsonb_contains', (jsonb_build_object(), '"x"')),))
        -> Filter(Get(t), (Literal(False),))
"""

from __future__ import annotations

from dataclasses import replace

from dataflow.expr import Call, ColumnRef, Literal, ScalarExpr
from dataflow.nodes import field_values
from dataflow.plan import Filter, Plan
from planner.context import ParamSlot
from planner.functions import WALL_CLOCK_KERNELS
from planner.rules.fold_constants import _VOLATILE, evaluate
from planner.rules.rewrite import rewrite_up


def _pseudo_constant(e: ScalarExpr) -> bool:
    todo = [e]
    while todo:
        n = todo.pop()
        if isinstance(n, ColumnRef) or (isinstance(n, Literal) and isinstance(n.value, ParamSlot)):
            return False
        if isinstance(n, Call) and (n.func in _VOLATILE or n.func in WALL_CLOCK_KERNELS):
            return False
        if isinstance(n, (tuple, list)):
            todo.extend(n)
        else:
            todo.extend(field_values(n) or ())
    return True


def _has_no_rows(plan: Plan) -> bool:
    """Whether `plan` is a part `prune_empty` removes as having no rows: a condition over it is
    never evaluated (PostgreSQL's `WHERE false ... HAVING <constant>`: the HAVING joins the
    false WHERE and is never run)."""
    from dataflow.plan import Constant
    from planner.rules.prune_empty import prune_empty
    pruned = prune_empty(plan)
    return isinstance(pruned, Constant) and not pruned.rows


def evaluate_constant_filters(plan: Plan) -> Plan:
    """`plan` with every filter condition that reads no column replaced by its value."""
    return rewrite_up(plan, _rewrite)


def _rewrite(node: Plan) -> Plan:
    if isinstance(node, Filter):
        constant = [not isinstance(p, Literal) and _pseudo_constant(p) for p in node.predicates]
        if any(constant) and not _has_no_rows(node.input):
            preds = tuple(evaluate(p) if c else p for p, c in zip(node.predicates, constant))
            node = replace(node, predicates=preds)
    return node
