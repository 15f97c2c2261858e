"""Plan-rewrite rules applied to every relational plan the planner hands out.

Each rule is one module with one job; `optimize` runs them in order. `optimize_statement` is
the single place where statement plans leave the planner through it (`planner.plan_statement`).

    plan = optimize(Reduce(Join(Get(orders), Get(customers), ...), ...))   # narrower inputs, same output
"""

from __future__ import annotations

from dataclasses import replace

from dataflow.plan import Constant, Plan, output_types
from planner.rules.append_only import use_monotonic_operators
from planner.rules.common_subplans import share_common_subplans
from planner.rules.constant_filters import evaluate_constant_filters
from planner.rules.fold_constants import raise_deferred, raise_deferred_planned
from planner.rules.join_constants import propagate_join_constants
from planner.rules.numeric_literals import check_numeric_literals
from planner.rules.prune_columns import prune_columns
from planner.rules.prune_empty import prune_empty
from planner.rules.push_filters import push_filters
from planner.statements import (CopyToPlan, CreateViewPlan, DeclarePlan, DeletePlan, InsertPlan,
                                SelectPlan, StatementPlan, SubscribePlan, UpdatePlan)


def optimize(plan: Plan) -> Plan:
    """Every rule, in order, over one relational plan. The output columns never change. A
    failing constant the pruned plan still reads is raised (`fold_constants`). Equal sub-plans
    are merged last, once pruning has made them as alike as they get."""
    plan = evaluate_constant_filters(prune_columns(propagate_join_constants(push_filters(plan))))
    raise_deferred_planned(plan)
    return share_common_subplans(use_monotonic_operators(prune_empty(plan)))


def optimize_statement(stmt: StatementPlan) -> StatementPlan:
    """The statement with each relational plan it carries optimized. UPDATE/DELETE selections
    keep every table column because a plan's output is never changed, only its insides. Its
    numeric constants are checked first (`numeric_literals`)."""
    check_numeric_literals(stmt)
    if isinstance(stmt, SelectPlan) and stmt.finishing.limit == 0:
        # `SELECT ... LIMIT 0` (BI tools ask it for the column types): nothing to run.
        plan = optimize(stmt.plan)
        return replace(stmt, plan=Constant((), output_types(plan)))
    if isinstance(stmt, (SelectPlan, SubscribePlan, CreateViewPlan)):
        return replace(stmt, plan=optimize(stmt.plan))
    if isinstance(stmt, InsertPlan) and stmt.source is not None:
        return replace(stmt, source=optimize(stmt.source))
    if isinstance(stmt, (UpdatePlan, DeletePlan)):
        return replace(stmt, selection=optimize(stmt.selection))
    if isinstance(stmt, (DeclarePlan, CopyToPlan)):
        return replace(stmt, inner=optimize_statement(stmt.inner))
    raise_deferred(stmt)  # a failing constant outside a relational plan (INSERT's VALUES, ...)
    return stmt


__all__ = ["optimize", "optimize_statement", "prune_columns", "prune_empty"]
