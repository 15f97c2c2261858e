"""The walk the plan rules share: bottom-up, each node rewritten once.

Plans are DAGs (an outer join reads its inputs several times; nested ones share them again):
a rewritten node is remembered by identity, so a shared sub-plan stays one shared node and the
walk is linear in the plan, not in its paths. Recursive bindings (LetRec) are left as they are.

    rewrite_up(Filter(Get(t), (Literal(False),)), lambda n: n)   -> the same plan, same objects
"""

from __future__ import annotations

from typing import Callable

from dataflow.plan import LetRec, Plan, children, nodes, with_children


def rewrite_up(plan: Plan, rule: Callable[[Plan], Plan]) -> Plan:
    """`rule` applied to every node after its children, outside recursive bindings."""
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        key = id(node)
        if key not in done:
            if isinstance(node, LetRec):
                done[key] = node
            else:
                kids = children(node)
                new = tuple(visit(k) for k in kids)
                if any(a is not b for a, b in zip(kids, new)):
                    node = with_children(node, new)
                done[key] = rule(node)
        return done[key]

    return visit(plan)


def parent_counts(plan: Plan) -> dict[int, int]:
    """id(node) -> how many parents read it (each node visited once): a node with more than one
    is shared, and a rule that rewrites it for one parent would make a copy of it."""
    parents: dict[int, int] = {}
    for node in nodes(plan):
        for k in children(node):
            parents[id(k)] = parents.get(id(k), 0) + 1
    return parents
