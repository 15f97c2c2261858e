"""Joins of one dataflow that arrange the same input by the same key share one arrangement
(`ArrangedInput`, `SharedInputJoinOp`): at every time of every step their output equals
recomputation from scratch (df_reference) over random inserts and retractions, several times
per step, NULL keys included, with 1 and 3 workers; the self-join reads one arrangement for both
sides; and the dataflow keeps one arrangement where it kept two."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataflow.exchange import LocalExchange
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.operators.join import JoinOp, SharedInputJoinOp
from dataflow.plan import Filter, Get, Join, Project, Union_
from dataflow.render import Dataflow
from dataflow.types import BOOL, INT8, TEXT
from tests.dataflow.df_reference import check_plan, draw_stream, operators_of

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

T = (INT8, INT8)
U = (INT8, TEXT)
rows_t = st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.integers(-2, 2))
rows_u = st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.sampled_from(["a", "b"]))

X = Filter(Get("t", T), (Call("gte", (ColumnRef(1, INT8), Literal(-1, INT8)), BOOL),))
U_ = Get("u", U)
CHAIN = Join(Join(X, U_, (0,), (0,)), X, (0,), (0,))          # X arranged by #0 twice
TWO = Union_((Project(Join(X, U_, (0,), (0,)), (0, 1, 3)),
              Project(Join(U_, X, (0,), (0,)), (2, 3, 1))))   # the same, on either side
SELF = Join(X, X, (0,), (0,))                                  # one arrangement, both sides


@WORKERS
@SETTINGS
@given(data=st.data())
def test_shared_join_inputs_equal_recomputation(workers, data):
    steps = draw_stream(data, {"t": rows_t, "u": rows_u}, max_steps=4, max_ops=6)
    for plan in (CHAIN, TWO, SELF):
        check_plan(plan, {"t": T, "u": U}, steps, workers)


@pytest.mark.parametrize("plan, arrangements", [(CHAIN, 3), (TWO, 2), (SELF, 1)])
def test_one_arrangement_per_input_and_key(plan, arrangements):
    df = Dataflow(plan, 0, LocalExchange())
    joins = operators_of(df.root, SharedInputJoinOp)
    assert joins and not operators_of(df.root, JoinOp)
    inputs = {id(a) for j in joins for a in (j.left, j.right)}
    assert len(inputs) == arrangements
