"""What the plan rules' tests share: the check that a query's plan as lowering produced it and
as the rules left it give the same updates, at every time, through the real engine over random
update streams with retractions (orders and customers, several times per step); and a walk over
a plan's nodes."""

from __future__ import annotations

import random

import pyarrow as pa

from dataflow.batch import batch_from_rows, consolidate, rows_of
from dataflow.exchange import LocalExchange
from dataflow.plan import nodes, output_types
from dataflow.render import Dataflow
from dataflow.types import INT4, INT8, TEXT
from planner import parse, plan_statement
from planner.context import Params, PlanContext
from planner.planning import plan_in_context

ORDERS = (INT8, INT8, INT8, TEXT)          # id, customer_id, amount, status
CUSTOMERS = (INT8, TEXT, INT4)             # id, region, score


def ids(cat) -> tuple[str, str]:
    return cat.resolve(("orders",)).id, cat.resolve(("customers",)).id


def unpruned(cat, sql: str):
    """The statement plan exactly as lowering produced it, before any rule."""
    return plan_in_context(parse(sql)[0], PlanContext(cat, Params([], []), ("public",), "slipstream"))


def pruned(cat, sql: str):
    """The statement plan with every rule applied."""
    return plan_statement(cat, parse(sql)[0])


def _order_row(rng: random.Random) -> tuple:
    return (rng.randrange(20), rng.choice([None, 0, 1, 2, 3, 4, 5]), rng.randrange(100),
            rng.choice(["captured", "pending", None]))


def _customer_row(rng: random.Random) -> tuple:
    return (rng.randrange(7), rng.choice(["eu", "us", None]), rng.choice([None, rng.randrange(100)]))


def stream(seed: int, oid: str, cid: str) -> list[tuple[int, dict[str, pa.Table]]]:
    """Steps of (upper, inputs): a snapshot at time 1, then inserts and retractions of live rows
    at several distinct times per step."""
    rng = random.Random(seed)
    live = {oid: [], cid: []}
    gens = {oid: (_order_row, ORDERS), cid: (_customer_row, CUSTOMERS)}
    steps, time = [], 1
    for step in range(5):
        upper = time + (1 if step == 0 else rng.randint(1, 3))
        inputs = {}
        for id, (gen, types) in gens.items():
            parts = []
            for t in range(time, upper):
                new = [gen(rng) for _ in range(rng.randint(0 if step else 15, 8 if step else 30))]
                gone = [live[id].pop(rng.randrange(len(live[id])))
                        for _ in range(min(len(live[id]), rng.randint(0, 4)))] if step else []
                live[id] += new
                if new:
                    parts.append(batch_from_rows(new, types, t, 1))
                if gone:
                    parts.append(batch_from_rows(gone, types, t, -1))
            if parts:
                inputs[id] = pa.concat_tables(parts)
        steps.append((upper, inputs))
        time = upper
    return steps


def _key(row: tuple) -> tuple:
    return tuple((v is None, str(type(v)), v if v is not None else 0) for v in row)


def _rows_with_time(batch: pa.Table) -> list[tuple]:
    return [r + (t, d) for r, t, d in zip(rows_of(batch), batch["time"].to_pylist(), batch["diff"].to_pylist())]


def assert_same_updates(cat, sql: str) -> None:
    """`sql`'s plan before and after the rules: the same columns, the same updates at every time
    over three random streams, no errors, and some output (the streams exercise the query)."""
    assert_plans_agree(cat, unpruned(cat, sql).plan, pruned(cat, sql).plan, sql)


def assert_plans_agree(cat, before, after, sql: str) -> None:
    """Two plans of `sql` over orders and customers give the same updates (as above)."""
    oid, cid = ids(cat)
    assert output_types(before) == output_types(after)
    produced = 0
    for seed in range(3):
        a = Dataflow(before, 1, LocalExchange())
        b = Dataflow(after, 1, LocalExchange())
        for upper, inputs in stream(seed, oid, cid):
            oa = consolidate(a.step({k: v for k, v in inputs.items() if k in a.inputs}, upper))
            ob = consolidate(b.step({k: v for k, v in inputs.items() if k in b.inputs}, upper))
            assert sorted(_rows_with_time(oa), key=_key) == sorted(_rows_with_time(ob), key=_key), (sql, seed)
            produced += oa.num_rows
        assert not a.errors and not b.errors
    assert produced > 0


def plan_nodes(plan) -> list:
    """Every node object of a plan once (plans are DAGs: a shared node is listed once)."""
    return list(nodes(plan))
