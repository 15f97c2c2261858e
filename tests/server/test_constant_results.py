"""Kept results of plans that read no collection (server/constant_results.py): equal plans share
one evaluation, anything the plan does not determine is evaluated every time, and plans that
differ only where Python's == cannot see it (-0.0, numeric scale, 1 vs 1.0) are kept apart."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pyarrow as pa

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import Constant, Get, LetRec, Map, Project, Union_
from dataflow.render import evaluate_constant
from dataflow.types import FLOAT8, INT8, NUMERIC
from planner.functions import VOLATILE_KERNELS
from server.constant_results import NOT_IN_PLAN, ConstantResults, fingerprint


def _recursive(name: str) -> LetRec:
    """WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE ...) shaped, its binding
    named `name` (the planner names bindings from a counter)."""
    seed = Constant(((1,),), (INT8,))
    step = Map(Get(name, (INT8,)), (Call("add", (ColumnRef(0, INT8), Literal(1, INT8)), INT8),))
    return LetRec((name,), ((INT8,),), (Project(step, (1,)),), Get(name, (INT8,)), limit=3,
                  limit_return=True, seeds=(seed,), names=("r",))


def test_two_plannings_of_a_recursive_query_print_alike():
    assert fingerprint(_recursive("letrec7")) == fingerprint(_recursive("letrec12"))


def test_values_python_calls_equal_print_apart():
    def const(v, t):
        return fingerprint(Constant(((v,),), (t,)))
    assert const(0.0, FLOAT8) != const(-0.0, FLOAT8)
    assert const(Decimal("1.0"), NUMERIC) != const(Decimal("1.00"), NUMERIC)
    assert fingerprint(Constant(((1,),), (INT8,))) != fingerprint(Constant(((1.0,),), (INT8,)))


def test_shared_sub_plans_print_once():
    """Forty nested self-unions: 2^40 paths, forty-one distinct nodes."""
    plan = Constant(((1,),), (INT8,))
    for _ in range(40):
        plan = Union_((plan, plan))
    text = fingerprint(plan)
    assert text is not None and len(text.splitlines()) == 41


def test_equal_plans_are_evaluated_once_and_volatile_ones_every_time():
    calls = []
    results = ConstantResults()  # the planner's list of what a plan does not determine

    async def run(plan, ts):
        async def evaluate():
            calls.append(plan)
            return evaluate_constant(plan, ts)
        return await results.result(plan, ts, evaluate)

    fixed = _recursive("letrec1")
    first = asyncio.run(run(fixed, 10))
    again = asyncio.run(run(_recursive("letrec2"), 20))
    assert len(calls) == 1 and results.hits == 1
    assert sorted(first.column(0).to_pylist()) == sorted(again.column(0).to_pylist()) == [1, 2, 3, 4]
    assert set(again.column("time").to_pylist()) == {20}  # stamped with the later query's time
    rnd = Map(Constant(((1,),), (INT8,)), (Call("math_random", (), FLOAT8),))
    asyncio.run(run(rnd, 30))
    asyncio.run(run(rnd, 31))
    assert len(calls) == 3
    now = Map(Constant(((1,),), (INT8,)), (Call("mz_now", (), INT8),))
    assert "mz_now" in NOT_IN_PLAN and not VOLATILE_KERNELS >= {"mz_now"}
    asyncio.run(run(now, 40))
    asyncio.run(run(now, 41))
    assert len(calls) == 5


def test_large_results_are_not_kept():
    results = ConstantResults(frozenset(), max_result_bytes=64)  # (100 int64s: 800 bytes)
    plan = Constant(tuple((i,) for i in range(100)), (INT8,))
    calls = []

    async def evaluate():
        calls.append(1)
        return pa.table({"c0": list(range(100))})
    for _ in range(2):
        asyncio.run(results.result(plan, 1, evaluate))
    assert len(calls) == 2


def test_kept_results_stay_within_their_bytes():
    results = ConstantResults(frozenset(), max_bytes=20_000, max_result_bytes=10_000)

    async def keep(i):
        plan = Constant(((i,),), (INT8,))
        return await results.result(plan, 1, lambda: _table(i))

    async def _table(i):
        return pa.table({"c0": list(range(500))})  # 4,000 bytes each
    for i in range(20):
        asyncio.run(keep(i))
    assert results._bytes <= 20_000 and 1 <= len(results._results) <= 5
    hits = results.hits
    asyncio.run(keep(19))  # the newest is kept
    assert results.hits == hits + 1
