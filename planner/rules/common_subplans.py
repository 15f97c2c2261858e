"""Rule: a sub-plan written twice is computed once.

Two parts of a plan that compute the same thing from the same inputs (the same subquery
written in two places, the two copies of a correlated subquery's outer relation that
decorrelation makes, a CTE read twice) become one node object; the render turns a node read
by several parents into one operator whose output each parent reads (`SharedOp`), so its
state (a join's arrangements, a reduce's groups) is kept once instead of once per copy.

    SELECT x.a, x.n, y.n FROM (SELECT a, count(*) n FROM t GROUP BY a) x
      JOIN (SELECT a, count(*) n FROM t GROUP BY a) y ON x.a = y.a

    Join(Reduce(Get(t), (0,), (count,)), Reduce(Get(t), (0,), (count,)), (0,), (0,))
      -> r = Reduce(Get(t), (0,), (count,));  Join(r, r, (0,), (0,))

Equality is structural and strict: node type, every field and every constant with its Python
type (so `0.0` and `-0.0`, which print differently, or `1` and `True` stay apart), children by
identity after they were themselves merged (bottom-up, each node visited once, so the walk is
linear in the plan, not in its paths). Not merged: a node with a volatile function (two
`random()` calls must differ), and anything inside a recursive binding (LetRec is left as it is,
as every rule here leaves it).
"""

from __future__ import annotations

import datetime
import enum
from dataclasses import fields, is_dataclass
from decimal import Decimal
from typing import Any

from dataflow.expr import Call
from dataflow.plan import LetRec, Plan, children, with_children
from planner.rules.fold_constants import _VOLATILE


class _Unkeyable(Exception):
    """A field this rule cannot compare strictly: the node is never merged."""


def share_common_subplans(plan: Plan) -> Plan:
    """`plan` with structurally equal sub-plans made one node object."""
    done: dict[int, Plan] = {}      # id(original node) -> its canonical node
    canonical: dict[tuple, Plan] = {}
    keep_alive: list[Plan] = []     # originals whose ids key `done`

    def visit(node: Plan) -> Plan:
        key = id(node)
        if key in done:
            return done[key]
        keep_alive.append(node)
        if isinstance(node, LetRec):
            done[key] = node
            return node
        kids = children(node)
        new = tuple(visit(k) for k in kids)
        if any(a is not b for a, b in zip(kids, new)):
            node = with_children(node, new)
        try:
            shape = (type(node).__name__, _own_fields(node), tuple(id(k) for k in new))
            hash(shape)
        except (_Unkeyable, TypeError):
            done[key] = node
            return node
        done[key] = canonical.setdefault(shape, node)
        return done[key]

    return visit(plan)


def _own_fields(node: Plan) -> tuple:
    """The node's fields other than its children, as a strict key."""
    kids = {"input", "left", "right", "inputs"}
    return tuple(_strict(getattr(node, f.name)) for f in fields(node) if f.name not in kids)


def _strict(value: Any) -> Any:
    """A hashable key equal only for values that behave alike everywhere: Python's `==` makes
    0.0 == -0.0, 1 == True == 1.0 and Decimal('1.0') == Decimal('1'), which print differently."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or isinstance(value, int):
        return (type(value).__name__, value)
    if isinstance(value, (float, Decimal)):
        return (type(value).__name__, repr(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_strict(v) for v in value)
    if isinstance(value, Call) and value.func in _VOLATILE:
        raise _Unkeyable
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__,) + tuple(_strict(getattr(value, f.name)) for f in fields(value))
    if isinstance(value, bytes):
        return ("bytes", value)
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta, enum.Enum)):
        return (type(value).__name__, repr(value))  # repr keeps the time zone `==` looks through
    raise _Unkeyable
