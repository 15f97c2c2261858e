"""Rule: plan a chain of three or more inner joins as one delta join where that keeps fewer
arrangements than the chain of binary joins.

A chain of binary joins arranges both inputs of every join: the relations, and every running
result (`(A ⋈ B)` arranged by C's key), which holds as many rows as the join so far. A delta
join (`dataflow.operators.delta_join`) arranges the relations only, each by every key it is
probed on, and none at all where a relation reads an index on that key (the workers hold that
arrangement already, `shared_arrangements`). This rule counts the arrangements each would build
(an index read in place counts none) and takes the delta join when it builds fewer.

Example, TPC-H's customer ⋈ orders ⋈ lineitem (c_custkey = o_custkey, o_orderkey = l_orderkey)
with indexes on customer (c_custkey), orders (o_orderkey) and lineitem (l_orderkey):

    (lineitem ⋈ orders) ⋈ customer: lineitem by l_orderkey (orders' index read in place),
        then lineitem ⋈ orders by o_custkey (customer's index read in place): 2 arrangements,
        one of them as large as lineitem joined with orders
  ->  DeltaJoin(customer, orders, lineitem): orders by o_custkey; customer's, orders' and
        lineitem's indexes read in place: 1 arrangement

Each relation's changes take their own path: to the connected relations one after another,
preferring one probed on a key an index or an earlier path already arranges (so paths share
arrangements), in written order otherwise. Each probe's key is every equality between the
relations joined so far and the next one, in the order of the index that serves it if any
(else by the next relation's columns, so that paths probing it on the same columns share one
arrangement). The chain's other conditions filter the delta join's output; a chain with a
cross product (a relation no equality connects) stays as it is, as do sub-plans several
parents read and recursive bindings.
"""

from __future__ import annotations

from typing import Callable

from dataflow.plan import DeltaJoin, DeltaStage, Filter, Plan, Project
from planner.index_join_order import IndexKeys, JoinChain, chain_at, key_pairs, rewrite_chains, served_pairs


def plan_delta_joins(plan: Plan, index_keys: IndexKeys) -> Plan:
    """`plan` with each join chain that a delta join surely holds less for planned as one."""
    return rewrite_chains(plan, lambda node, parents, visit: _delta_join(node, parents, index_keys, visit))


def _delta_join(node: Plan, parents: dict[int, int], index_keys: IndexKeys,
                visit: Callable[[Plan], Plan]) -> Plan | None:
    found = chain_at(node, parents)
    if found is None:
        return None
    chain, output = found
    servable = [index_keys(r) for r in chain.relations]
    paths = _paths(chain, servable)
    if paths is None:
        return None
    # Taken only where it surely holds less: every arrangement it builds (not an index's) is one
    # the chain builds too, and the chain also arranges running results. (Fewer arrangements is
    # not enough: a chain's running results are often far smaller than an input, when a
    # filtered relation joins early, and a delta join arranges whole inputs by several keys.)
    chain_base: set[tuple[int, tuple[int, ...]]] = set()
    running = _chain_arrangements(chain, index_keys, chain_base)
    own = {(id(chain.relations[s.input]), tuple(sorted(s.lookup_key)))
           for path in paths for s in path if s.lookup_key not in servable[s.input]}
    if not running or not own <= chain_base:
        return None
    join: Plan = DeltaJoin(tuple(visit(r) for r in chain.relations), paths)
    if chain.conditions:  # (over global column ids: the delta join's output columns)
        join = Filter(join, tuple(chain.conditions))
    return Project(join, tuple(output))


def _paths(chain: JoinChain, servable: list[list[tuple[int, ...]]]) -> tuple[tuple[DeltaStage, ...], ...] | None:
    """Each relation's path, or None when some relation cannot reach every other one through
    equalities (a cross product)."""
    arranged: set[tuple[int, tuple[int, ...]]] = set()
    paths = []
    for source in range(len(chain.relations)):
        joined, running, stages = {source}, chain.columns(source), []
        while len(joined) < len(chain.relations):
            options = []
            for r in range(len(chain.relations)):
                pairs = key_pairs(chain, joined, r) if r not in joined else []
                if pairs:
                    lookup, stream = _keys(pairs, servable[r], chain, running, r)
                    free = lookup in servable[r] or (r, lookup) in arranged
                    options.append((not free, r, lookup, stream))
            if not options:
                return None
            _, r, lookup, stream = min(options)
            stages.append(DeltaStage(r, stream, lookup))
            arranged.add((r, lookup))
            joined.add(r)
            running = running + chain.columns(r)
        paths.append(tuple(stages))
    return tuple(paths)


def _keys(pairs: list[tuple[int, int]], servable: list[tuple[int, ...]], chain: JoinChain,
          running: list[int], r: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(lookup key in relation r's columns, stream key in the running rows' columns) of the
    equalities `pairs`: in the order of an index that serves them, else by r's columns."""
    pairs = served_pairs(pairs, servable) or sorted(pairs, key=lambda p: p[1])
    position = {g: i for i, g in enumerate(running)}
    return tuple(b for _, b in pairs), tuple(position[a] for a, _ in pairs)


def _chain_arrangements(chain: JoinChain, index_keys: IndexKeys, base: set[tuple[int, tuple[int, ...]]]) -> int:
    """The arrangements the chain of binary joins builds: the relations' ones (added to `base`
    as (relation object, key columns sorted)) and the number of running results it arranges. A
    join reads at most one side's index in place, as `dataflow.render` picks it: the right
    side's first."""
    running = 0
    for join in chain.joins:
        served = False
        for side, key in ((join.right, join.right_key), (join.left, join.left_key)):
            if id(side) in chain.interior:
                running += 1
            elif not served and key in index_keys(side):
                served = True
            else:
                base.add((id(side), tuple(sorted(key))))
    return running
