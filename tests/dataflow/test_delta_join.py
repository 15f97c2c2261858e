"""Delta joins (`DeltaJoin`, `operators.delta_join.DeltaJoinOp`): at every time of every step
their output equals recomputation from scratch (df_reference) over random inserts and
retractions, several times per step, NULL keys included, with 1 and 3 workers; shapes: a chain
whose middle input is arranged by two keys, a star, a cycle (a stage keyed on two columns),
an input joined to itself, and a path whose first probe has no arrangement of its source by
that key. The dataflow arranges the inputs only. On two real workers, an input read from an
index (plain, or filtered and computed on) is probed in place, for views and one-off reads."""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataflow.exchange import LocalExchange
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.operators.delta_join import ArrangedSide, DeltaJoinOp, IndexSide
from dataflow.operators.join import JoinOp, SharedInputJoinOp
from dataflow.plan import DeltaJoin, DeltaStage as S, Filter, Get, Project
from dataflow.protocol import CreateDataflow, DataflowOutput
from dataflow.render import Dataflow
from dataflow.types import BOOL, INT8, TEXT
from tests.dataflow.df_reference import check_plan, draw_stream, operators_of
from tests.dataflow.test_shared_arrangements import (FILTERED_SIDE, L, R, _peek, _random_steps, _view_contents,
                                                     _with_index)
from tests.dataflow.test_worker_failure import _on_all

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

A_T, B_T, C_T = (INT8, INT8), (INT8, INT8, TEXT), (INT8, TEXT)
key = st.one_of(st.none(), st.integers(0, 3))
ROWS = {"a": st.tuples(key, st.integers(-2, 2)),
        "b": st.tuples(key, key, st.sampled_from(["x", "y"])),
        "c": st.tuples(key, st.sampled_from(["x", "y"]))}
TYPES = {"a": A_T, "b": B_T, "c": C_T}
A, B, C = Get("a", A_T), Get("b", B_T), Get("c", C_T)

# a.0 = b.0 and b.1 = c.0: b is probed by its column 0 (from a) and by its column 1 (from c).
CHAIN = DeltaJoin((A, B, C), (
    (S(1, (0,), (0,)), S(2, (3,), (0,))),
    (S(0, (0,), (0,)), S(2, (1,), (0,))),
    (S(1, (0,), (1,)), S(0, (2,), (0,)))))
# a.0 = b.0 = c.0: every input by its column 0.
STAR = DeltaJoin((A, B, C), (
    (S(1, (0,), (0,)), S(2, (0,), (0,))),
    (S(0, (0,), (0,)), S(2, (0,), (0,))),
    (S(0, (0,), (0,)), S(1, (0,), (0,)))))
# a.0 = b.0, b.1 = c.0 and c.1 = b.2: the last input of each path is keyed on two columns.
CYCLE = DeltaJoin((A, B, C), (
    (S(1, (0,), (0,)), S(2, (3, 4), (0, 1))),
    (S(0, (0,), (0,)), S(2, (1, 2), (0, 1))),
    (S(1, (0, 1), (1, 2)), S(0, (2,), (0,)))))
# a filtered a, joined to itself through b: the same input twice.
X = Filter(A, (Call("gte", (ColumnRef(1, INT8), Literal(-1, INT8)), BOOL),))
SELF = Project(DeltaJoin((X, B, X), (
    (S(1, (0,), (0,)), S(2, (3,), (0,))),
    (S(0, (0,), (0,)), S(2, (1,), (0,))),
    (S(1, (0,), (1,)), S(0, (2,), (0,))))), (0, 1, 3, 5, 6))
# a.1 = b.0 and b.1 = c.0, a's path starting on its column 1 (nobody arranges a by it).
UNARRANGED_SOURCE = DeltaJoin((A, B, C), (
    (S(1, (1,), (0,)), S(2, (3,), (0,))),
    (S(0, (0,), (1,)), S(2, (1,), (0,))),
    (S(1, (0,), (1,)), S(0, (2,), (1,)))))


@WORKERS
@SETTINGS
@given(data=st.data())
def test_delta_join_equals_recomputation(workers, data):
    steps = draw_stream(data, ROWS, max_steps=4, max_ops=6)
    for plan in (CHAIN, STAR, CYCLE, SELF, UNARRANGED_SOURCE):
        check_plan(plan, TYPES, steps, workers)


@pytest.mark.parametrize("plan, arrangements", [(CHAIN, 4), (STAR, 3), (CYCLE, 4), (SELF, 3)])
def test_arranges_inputs_only(plan, arrangements):
    df = Dataflow(plan, 0, LocalExchange())
    joins = operators_of(df.root, DeltaJoinOp)
    assert len(joins) == 1 and not operators_of(df.root, (JoinOp, SharedInputJoinOp))
    assert all(isinstance(side, ArrangedSide) for side in joins[0].sides.values())
    # (SELF: one arrangement for both X)
    assert len({id(side.arranged) for side in joins[0].sides.values()}) == arrangements


# l ⋈ r ⋈ l on k, r read through its index "ri" on k (plain, or filtered and computed on).
def _star(r_side, r_width: int):
    stages = lambda first, second: (S(first, (0,), (0,)), S(second, (0,), (0,)))  # noqa: E731
    return DeltaJoin((Get("l", L), r_side, Get("l", L)), (stages(1, 2), stages(0, 2), stages(0, 1)))


def _expected_star(plan, l_rows, r_rows) -> Counter:
    filtered = plan.inputs[1] is not RI
    sides = [(k, n) if not filtered else (k, k + 1, n) for k, n in r_rows if not filtered or n != "b"]
    return Counter(a + b + c for a in l_rows for b in sides for c in l_rows if a[0] == b[0] == c[0])


RI = Get("ri", R)
STAR_INDEX = _star(RI, 2)
STAR_FILTERED_INDEX = _star(FILTERED_SIDE, 3)


@pytest.mark.parametrize("plan", [STAR_INDEX, STAR_FILTERED_INDEX], ids=["plain", "filtered-side"])
def test_a_delta_join_probes_an_index_in_place(tmp_path, plan):
    """On two real workers: a view's delta join reads r's index where it is (no arrangement of
    r of its own) and equals recomputation after every step; one-off reads at the current time
    and a few steps back (the index has moved past that time since) equal it too."""
    workers, sent = _with_index(tmp_path)
    _on_all(workers, CreateDataflow("mv", plan, 1, "persist"))
    join = workers[0].dataflows["mv"].dataflow.root
    assert isinstance(join, DeltaJoinOp)
    assert isinstance(join.sides[(1, (0,))], IndexSide) and isinstance(join.sides[(0, (0,))], ArrangedSide)
    history = {}
    for t, l_rows, r_rows in _random_steps(workers, random.Random(21), 40):
        history[t] = (list(l_rows), list(r_rows))
        assert _view_contents(sent, "mv") == +_expected_star(plan, l_rows, r_rows), t
        for as_of in {t, max(1, t - 3)}:
            got, errors = _peek(workers, sent, f"p{t}_{as_of}", as_of, plan=plan)
            assert not errors and got == +_expected_star(plan, *history[as_of]), (t, as_of)
    assert not [m for s in sent for m in s if isinstance(m, DataflowOutput) and m.id == "mv" and m.errors]
