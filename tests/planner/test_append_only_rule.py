"""The append-only rule (planner/rules/append_only.py): which Reduce and TopK nodes it marks
monotonic, and which it must leave alone because their input can retract."""

from __future__ import annotations

from dataflow.expr import AggregateExpr, Call, ColumnRef, Literal
from dataflow.plan import (Constant, Distinct, Filter, Get, Join, Map, Negate, Project, Reduce, TopK,
                           Union_)
from dataflow.types import BOOL, INT8, TIMESTAMPTZ
from planner.rules.append_only import use_monotonic_operators
from tests.planner.plan_equivalence import plan_nodes

SRC = Get("s", (INT8, INT8), append_only=True)
TABLE = Get("t", (INT8, INT8))
MAX = (AggregateExpr("max", ColumnRef(1, INT8), INT8, False, (), ()),)


def _marked(plan) -> list[bool]:
    return [p.monotonic for p in plan_nodes(use_monotonic_operators(plan)) if isinstance(p, (Reduce, TopK))]


def reduce(inp):
    return Reduce(inp, (0,), MAX)


def test_over_an_append_only_source_and_what_keeps_it_so():
    assert _marked(reduce(SRC)) == [True]
    gt = Call("gt", (ColumnRef(1, INT8), Literal(0, INT8)), BOOL)
    assert _marked(reduce(Filter(Map(Project(SRC, (0, 1)), (Literal(1, INT8),)), (gt,)))) == [True]
    assert _marked(reduce(Join(SRC, SRC, (0,), (0,)))) == [True]
    assert _marked(reduce(Union_((SRC, Constant(((1, 2),), (INT8, INT8)))))) == [True]
    assert _marked(TopK(SRC, (0,), ((1, True, False),), limit=3)) == [True]


def test_inputs_that_can_retract_are_left_alone():
    assert _marked(reduce(TABLE)) == [False]
    assert _marked(reduce(Join(SRC, TABLE, (0,), (0,)))) == [False]
    assert _marked(reduce(Union_((SRC, Negate(SRC))))) == [False]            # EXCEPT, outer joins
    assert _marked(reduce(Distinct(SRC))) == [False]
    assert _marked(reduce(reduce(SRC))) == [False, True]                     # a reduce's output changes
    assert _marked(TopK(SRC, (0,), ((1, True, False),), limit=None)) == [False]  # nothing to save
    now = Call("mz_now", (), TIMESTAMPTZ)
    temporal = Call("lte", (now, Call("to_timestamp", (ColumnRef(1, INT8),), TIMESTAMPTZ)), BOOL)
    assert _marked(reduce(Filter(SRC, (temporal,)))) == [False]              # rows expire
