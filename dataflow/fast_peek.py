"""Fast-path peeks: reads an arrangement answers without a transient dataflow.

A peek whose plan is a chain of Map / Filter / Project over one collection read (`Get`) or one
index lookup (`IndexLookup`) needs no exchange and no operator state: each worker reads its part
of the collection (or looks the keys up in the index's arrangement) at the peek's time and applies
the chain to those rows. A whole-collection read first narrows the collection's raw updates by
the conditions of the chain's first Filter that cannot fail (`customer_id = 42`), so a point read
of an unindexed view consolidates its few matching updates, not the whole view (a condition that
cannot fail gives a row's copies the same answer, so filtering before consolidating is the same
as after; one that can fail must not see an update that consolidation would cancel). Such a
peek skips building, stepping and dropping a dataflow on every worker, and a lookup goes only
to the workers that own its keys (an index is partitioned by its key, with the hash the exchange
uses). Concurrent peeks travel to a worker in one message and come back in one (`FastPeeks` /
`PeekResults`); a lookup's keys travel as Python values (an Arrow table per peek costs more to
pickle than the rest of the peek), and a worker answers concurrent point lookups of one index
through one probe and one run of their chain (see Worker._point_lookups).

Example, with `CREATE INDEX by_cust_idx ON by_cust (customer)` (index u9) and 2 workers:

    Project(Filter(IndexLookup("u9", T, (0,), ((42,),)), (customer = 42,)), (1, 2))
      -> FastPeek(source="u9", key=(0,), keys=[42] on worker hash(42) % 2 only,
                  chain=Project(Get("u9", T), (1, 2)))

(the lookup finds only rows whose customer is 42: for exact key types the condition is dropped,
so the worker has no predicate to compile and evaluate).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import chain

import numpy as np
import pyarrow as pa

from dataflow import arrays
from dataflow.batch import hash_columns
from dataflow.expr import Call, ColumnRef, Literal, ScalarExpr
from dataflow.plan import Filter, Get, IndexLookup, Map, Plan, Project
from dataflow.scalar import may_fail
from dataflow.types import SqlType, TypeKind

_CHAIN = (Map, Filter, Project)


@dataclass(frozen=True)
class FastPeekPlan:
    """A peek split into its one read and the stateless chain over it. `chain` reads the rows as
    `Get(source, types)`; `key` and `keys` are set for an index lookup (else the whole collection
    is read): `keys` holds the key values, one tuple per key in the index's key order.
    `prefilter`: conditions on the collection's columns that cannot fail, implied by the chain,
    to apply to its raw updates before consolidating them."""

    source: str
    types: tuple[SqlType, ...]
    chain: Plan
    key: tuple[int, ...] | None = None
    keys: tuple[tuple, ...] | None = None
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
        key, keys = node.key, node.keys
        if nodes and isinstance(nodes[-1], Filter):
            nodes[-1] = _without_looked_up(nodes[-1], node)
            if not nodes[-1].predicates:
                nodes.pop()
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


# Key types whose arrangement lookup finds exactly the rows SQL's `=` does (no NaN or -0, no
# padding, no spans): a condition `key = that value` over the looked-up rows is always true.
_EXACT_KEYS = {TypeKind.INT2, TypeKind.INT4, TypeKind.INT8, TypeKind.TEXT, TypeKind.VARCHAR,
               TypeKind.UUID, TypeKind.DATE, TypeKind.BOOL}


def _without_looked_up(filter: Filter, lookup: IndexLookup) -> Filter:
    """The filter over `lookup` without the conditions `column = constant` (or `column IN
    (constants)`, `column = ANY (constant array)`) that every row the lookup finds meets: its
    key value for that column is one of the constants. The worker then has nothing to compile
    or evaluate for a point read, nor for a DELETE's 5 000 ids."""
    def met(p: ScalarExpr) -> bool:
        if not isinstance(p, Call):
            return False
        if p.func == "eq" and len(p.args) == 2:
            col, lit = p.args if isinstance(p.args[0], ColumnRef) else p.args[::-1]
            if not (isinstance(lit, Literal) and lit.value is not None):
                return False
            values, value_type = [lit.value], lit.type
        elif p.func == "in_list" and len(p.args) > 1 and all(isinstance(a, Literal) for a in p.args[1:]):
            col, types = p.args[0], {a.type for a in p.args[1:]}
            if len(types) != 1:
                return False
            values, value_type = [a.value for a in p.args[1:]], types.pop()
        elif p.func == "in_array" and len(p.args) == 2 and isinstance(p.args[1], Literal) \
                and p.args[1].value is not None:
            col, value_type = p.args[0], p.args[1].type.element
            values = arrays.read(p.args[1].value, value_type)
        else:
            return False
        if not (isinstance(col, ColumnRef) and col.index in lookup.key) or not values or None in values:
            return False
        j = lookup.key.index(col.index)
        t = lookup.types[col.index]
        if not (t.kind in _EXACT_KEYS and col.type == t and value_type == t):
            return False
        # (In C loops: a DELETE's 5,000 keys, one tuple each, took ~0.7 ms in a generator.)
        found = list(chain.from_iterable(lookup.keys)) if len(lookup.key) == 1 else [k[j] for k in lookup.keys]
        return set(map(type, found)) <= set(map(type, values)) and set(values).issuperset(found)
    return replace(filter, predicates=tuple(p for p in filter.predicates if not met(p)))


def lookup_keys(lookup: IndexLookup) -> pa.Table:
    """The lookup's key values as a table (columns k0, k1, ... in the index's key order)."""
    return keys_table(lookup.types, lookup.key, lookup.keys)


def keys_table(types: tuple[SqlType, ...], key: tuple[int, ...], rows) -> pa.Table:
    """Key values (tuples in the order of `key`, columns of a relation of `types`) as a table
    with columns k0, k1, ...: what an index's arrangement is probed with."""
    columns = [pa.array([row[i] for row in rows], types[k].arrow) for i, k in enumerate(key)]
    return pa.Table.from_arrays(columns, names=[f"k{i}" for i in range(len(columns))])


# How many point lookups' owners `route` remembers (the caller's dict), before starting over.
OWNERS_KEPT = 100_000


def route(plan: FastPeekPlan, workers: int, owners: dict | None = None) -> dict[int, FastPeekPlan]:
    """Which workers must answer, each with its share of the keys: a lookup goes to the owners
    of its keys (the index's exchange put each key's rows on worker hash(key) % workers); a
    whole-collection read goes to every worker. `owners`: where to remember the owner of a
    point lookup's key (hashing one key costs more than finding it again)."""
    if plan.keys is None:
        return {w: plan for w in range(workers)}
    if workers == 1:
        return {0: plan}
    values = plan.keys[0] if owners is not None and len(plan.keys) == 1 else ()
    if values and all(type(v) in (int, str) for v in values):
        # (An index id is never reused, so it fixes the key's types. Only values whose Python
        # equality is the hash's: -0.0 equals 0.0 in a dict but hashes apart here.)
        key = (plan.source, workers, values)
        owner = owners.get(key)
        if owner is None:
            if len(owners) >= OWNERS_KEPT:
                owners.clear()
            owner = owners[key] = next(iter(route(plan, workers)))
        return {owner: plan}
    table = keys_table(plan.types, plan.key, plan.keys)
    by_key = hash_columns(table, tuple(range(table.num_columns))) % np.uint64(workers)
    parts: dict[int, list[tuple]] = {}
    for owner, values in zip(by_key.tolist(), plan.keys):
        parts.setdefault(owner, []).append(values)
    if len(parts) == 1:  # (a point lookup)
        return {next(iter(parts)): plan}
    return {w: replace(plan, keys=tuple(part)) for w, part in sorted(parts.items())}
