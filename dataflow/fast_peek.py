"""Fast-path peeks: reads an arrangement answers without a transient dataflow.

A peek whose plan is a chain of Map / Filter / Project over one collection read (`Get`) or one
index lookup (`IndexLookup`) needs no exchange and no operator state: each worker reads its part
of the collection (or looks the keys up in the index's arrangement) at the peek's time and applies
the chain to those rows. A whole-collection read first narrows the collection's raw updates by
the conditions of the chain's first Filter that cannot fail (`customer_id = 42`), so a point read
of an unindexed view consolidates its few matching updates, not the whole view (a condition that
cannot fail gives a row's copies the same answer, so filtering before consolidating is the same
as after; one that can fail must not see an update that consolidation would cancel). Such a
peek skips building, stepping and dropping a dataflow on every worker, and a lookup goes only to the workers that own its keys (an index is partitioned by its
key, with the hash the exchange uses). Concurrent peeks travel to a worker in one message and
come back in one (`FastPeeks` / `PeekResults`).

Example, with `CREATE INDEX by_cust_idx ON by_cust (customer)` (index u9) and 2 workers:

    Project(Filter(IndexLookup("u9", T, (0,), ((42,),)), (customer = 42,)), (1, 2))
      -> FastPeek(source="u9", key=(0,), keys=[42] on worker hash(42) % 2 only,
                  chain=Project(Filter(Get("u9", T), (customer = 42,)), (1, 2)))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from dataflow.batch import hash_columns, partition
from dataflow.expr import ScalarExpr
from dataflow.plan import Filter, Get, IndexLookup, Map, Plan, Project
from dataflow.scalar import may_fail
from dataflow.types import SqlType

_CHAIN = (Map, Filter, Project)


@dataclass(frozen=True)
class FastPeekPlan:
    """A peek split into its one read and the stateless chain over it. `chain` reads the rows as
    `Get(source, types)`; `key` and `keys` are set for an index lookup (else the whole collection
    is read). `prefilter`: conditions on the collection's columns that cannot fail, implied by
    the chain, to apply to its raw updates before consolidating them."""

    source: str
    types: tuple[SqlType, ...]
    chain: Plan
    key: tuple[int, ...] | None = None
    keys: pa.Table | None = None
    prefilter: tuple[ScalarExpr, ...] = ()


def fast_peek_plan(plan: Plan) -> FastPeekPlan | None:
    """`plan` as a fast-path peek, or None if it needs a dataflow (joins, reductions, ...)."""
    nodes: list[Plan] = []
    node = plan
    while isinstance(node, _CHAIN):
        nodes.append(node)
        node = node.input
    if isinstance(node, IndexLookup):
        leaf = Get(node.id, node.types)
        key, keys = node.key, lookup_keys(node)
    elif isinstance(node, Get):
        leaf, key, keys = node, None, None
    else:
        return None
    chain: Plan = leaf
    for n in reversed(nodes):
        chain = replace(n, input=chain)
    first = nodes[-1] if nodes else None
    prefilter = tuple(p for p in first.predicates if not may_fail(p)) if (
        isinstance(first, Filter) and keys is None) else ()
    return FastPeekPlan(leaf.id, leaf.types, chain, key, keys, prefilter)


def lookup_keys(lookup: IndexLookup) -> pa.Table:
    """The lookup's key values as a table (columns k0, k1, ... in the index's key order)."""
    key_types = [lookup.types[k] for k in lookup.key]
    columns = [pa.array([row[i] for row in lookup.keys], t.arrow) for i, t in enumerate(key_types)]
    return pa.Table.from_arrays(columns, names=[f"k{i}" for i in range(len(columns))])


def route(plan: FastPeekPlan, workers: int) -> dict[int, FastPeekPlan]:
    """Which workers must answer, each with its share of the keys: a lookup goes to the owners
    of its keys (the index's exchange put each key's rows on worker hash(key) % workers); a
    whole-collection read goes to every worker."""
    if plan.keys is None:
        return {w: plan for w in range(workers)}
    if workers == 1:
        return {0: plan}
    columns = tuple(range(plan.keys.num_columns))
    owners = np.unique(hash_columns(plan.keys, columns) % np.uint64(workers))
    if len(owners) == 1:  # (a point lookup)
        return {int(owners[0]): plan}
    parts = partition(plan.keys, columns, workers)
    return {w: replace(plan, keys=part) for w, part in enumerate(parts) if part.num_rows}
