"""Operators whose input collections changed on no worker skip the step and its exchanges
(`StepContext.quiet`, `Runtime.shuffle_input`): a change to one side of a join exchanges that
side only, and the outputs stay those of recomputation (the property tests of df_reference
name quiet inputs in every step, with 1 and 3 workers). Plans whose output changes as time
passes or that recurse never skip."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from dataflow.expr import AggregateExpr, Call, ColumnRef, Literal
from dataflow.exchange import ThreadExchange
from dataflow.plan import Filter, Get, Join, Project, Reduce, Union_, Negate
from dataflow.render import Dataflow
from dataflow.types import BOOL, INT8, TEXT
from tests.dataflow.df_reference import AS_OF, to_batch

ORDERS = (INT8, INT8)      # (customer, amount)
CUSTOMERS = (INT8, TEXT)   # (id, region)
JOINED = Join(Get("o", ORDERS), Get("c", CUSTOMERS), (0,), (0,))
BY_REGION = Reduce(Project(JOINED, (3, 1)), (0,), (AggregateExpr("sum", ColumnRef(1, INT8), INT8, False),))


class CountingExchange:
    """A ThreadExchange that records the channels it was asked to shuffle."""

    def __init__(self, inner: ThreadExchange) -> None:
        self.inner, self.channels = inner, []
        self.worker_index, self.worker_count = inner.worker_index, inner.worker_count

    def shuffle(self, channel: str, batch: pa.Table, key) -> pa.Table:
        self.channels.append(channel)
        return self.inner.shuffle(channel, batch, key)


def _run(plan, steps, workers=2):
    """Step the plan on `workers` threads; per step, the channels worker 0 shuffled and the
    output updates of all workers."""
    from concurrent.futures import ThreadPoolExecutor
    exchanges = [CountingExchange(e) for e in ThreadExchange.create(workers, timeout=20)]
    dfs = [Dataflow(plan, AS_OF, ex) for ex in exchanges]
    channels, outputs = [], []
    with ThreadPoolExecutor(workers) as pool:
        for upper, ups, quiet in steps:
            exchanges[0].channels.clear()
            per_worker = [{i: to_batch(u[w::workers], {"o": ORDERS, "c": CUSTOMERS}[i]) for i, u in ups.items()}
                          for w in range(workers)]
            outs = [f.result() for f in [pool.submit(df.step, per_worker[w], upper, quiet) for w, df in enumerate(dfs)]]
            channels.append(list(exchanges[0].channels))
            got = Counter()
            for b in outs:
                for row in zip(*(b.column(i).to_pylist() for i in range(b.num_columns - 2)), b["diff"].to_pylist()):
                    got[row[:-1]] += row[-1]
            outputs.append({k: v for k, v in got.items() if v})
    return channels, outputs


def test_a_change_to_one_side_of_a_join_exchanges_that_side_only():
    base = {"o": [((1, 10), AS_OF, 1), ((2, 5), AS_OF, 1)], "c": [((1, "east"), AS_OF, 1), ((2, "west"), AS_OF, 1)]}
    change = {"o": [((2, 7), AS_OF + 1, 1)], "c": []}
    customers = {"o": [], "c": [((3, "north"), AS_OF + 2, 1)]}
    channels, outputs = _run(BY_REGION, [(AS_OF + 1, base, frozenset()),
                                         (AS_OF + 2, change, frozenset({"c"})),
                                         (AS_OF + 3, customers, frozenset({"o"}))])
    assert [len(c) for c in channels] == [3, 2, 2]
    assert not any("join-right" in c for c in channels[1])   # customers unchanged: not exchanged
    assert any("join-left" in c for c in channels[1]) and any("reduce" in c for c in channels[1])
    assert not any("join-left" in c for c in channels[2])    # orders unchanged
    assert outputs == [{("east", 10): 1, ("west", 5): 1}, {("west", 5): -1, ("west", 12): 1}, {}]


def test_not_told_quiet_every_operator_steps():
    change = {"o": [((2, 7), AS_OF + 1, 1)], "c": []}
    channels, _ = _run(BY_REGION, [(AS_OF + 1, change, frozenset()), (AS_OF + 2, change | {"o": []}, frozenset())])
    assert [len(c) for c in channels] == [3, 3]


def test_a_union_that_cancels_skips_its_exchange_when_quiet():
    plan = Union_((Get("o", ORDERS), Negate(Filter(Get("o", ORDERS), (Call("gt", (ColumnRef(1, INT8), Literal(6, INT8)), BOOL),)))))
    wide = Union_((plan, Project(Get("c", CUSTOMERS), (0, 0))))
    channels, outputs = _run(wide, [(AS_OF + 1, {"o": [((1, 10), AS_OF, 1), ((1, 3), AS_OF, 1)], "c": []}, frozenset()),
                                    (AS_OF + 2, {"o": [], "c": [((4, "x"), AS_OF + 1, 1)]}, frozenset({"o"}))])
    assert len(channels[0]) == 1 and channels[1] == []
    assert outputs == [{(1, 3): 1}, {(4, 4): 1}]


def test_plans_that_change_with_time_never_skip():
    from dataflow.render import _skips_quiet_inputs
    from dataflow.plan import LetRec
    temporal = Filter(Get("o", ORDERS), (Call("lte", (Call("mz_now", (), INT8), ColumnRef(1, INT8)), BOOL),))
    assert not _skips_quiet_inputs(temporal)
    assert _skips_quiet_inputs(BY_REGION)
    df = Dataflow(temporal, AS_OF, ThreadExchange.create(1)[0])
    assert df.root.reads is None
    assert LetRec  # (recursive plans: covered by test_df_iterate_properties with quiet inputs)


def test_deciding_is_linear_in_a_plan_that_shares_sub_plans():
    # Each level reads the one below twice (as nested outer joins do): printed whole, the plan
    # would be 2**40 copies of its leaf; walked node by node it is 41 nodes.
    from dataflow.plan import any_node, mentions_mz_now
    from dataflow.render import _skips_quiet_inputs
    plan = Get("o", ORDERS)
    for _ in range(40):
        plan = Union_((plan, plan))
    assert _skips_quiet_inputs(plan)
    temporal = Filter(plan, (Call("lte", (Call("mz_now", (), INT8), ColumnRef(1, INT8)), BOOL),))
    assert any_node(temporal, mentions_mz_now) and not _skips_quiet_inputs(temporal)
