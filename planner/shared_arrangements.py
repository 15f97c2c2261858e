"""Rule: a one-off join reads an existing index in place instead of arranging its input again.

A join keeps an arrangement (an index by the join key) of each input. When an input is a
relation that already has an index on exactly that key, in the cluster that runs the read, the
workers hold that arrangement already, partitioned by that key: the join can probe it where it
is (`dataflow.operators.join.SharedJoinOp`), with no copy of the relation and no exchange of
it. This rule points such an input at the index; the workers then share it.

Example, with `CREATE INDEX customers_id ON customers (id)` (index u9 on u2, key (0,)):

    Join(Get("u1", ...), Project(Get("u2", ...), (0, 2)), (1,), (0,))
      ->  Join(Get("u1", ...), Project(Get("u9", ...), (0, 2)), (1,), (0,))

The index holds the relation's rows, so the plan's answer is the same. The side may also filter
and compute (`Filter(Get("u2"), (region = 'EU',))`, as TPC-H's dimension tables are): the join
probes the whole index and applies the side's filters and maps to the rows it matched.

Applied to peeks (`Coordinator.peek`), materialized views (`Coordinator._start_materialized_view`)
and indexes of views (`Coordinator._index_plan`), after `index_join_order` has put joins in an
order that lets more of them read an index: dropping an index re-plans what reads it, and an
index rebuilt after an error has its readers rebuilt with it. SUBSCRIBE keeps arrangements of
its own.
"""

from __future__ import annotations

from dataclasses import replace

from catalog.items import CatalogReader, ItemKind
from dataflow.plan import (DeltaJoin, Filter, Get, Join, LetRec, Map, Plan, Project, any_node, children, passthrough_columns,
                           through_stateless, with_children)
from planner.delta_joins import plan_delta_joins
from planner.index_join_order import order_joins_for_indexes
from planner.index_lookup import indexes_in_cluster


def _with_get(plan: Plan, get: Get) -> Plan:
    if isinstance(plan, (Project, Filter, Map)):
        return replace(plan, input=_with_get(plan.input, get))
    return get


def _readable_indexes(side: Plan, catalog: CatalogReader, cluster: str | None,
                      allowed: set[str] | None) -> tuple[Get | None, tuple, list]:
    """The relation read under `side`'s projections, filters and maps, that chain (top first),
    and the indexes a join may read in its place: the relation's own in `cluster` (`allowed`:
    the ones it may read, if not all), or the index itself when the side reads one."""
    node, chain = through_stateless(side)
    if not isinstance(node, Get):
        return None, chain, []
    try:
        item = catalog.get(node.id)
    except Exception:  # noqa: BLE001 - not a catalog item (a CTE binding of a loop): nothing to share
        return None, chain, []
    if item.kind is ItemKind.INDEX:
        return node, chain, [item]
    return node, chain, [i for i in indexes_in_cluster(catalog, catalog.indexes_on(item.id), cluster)
                         if allowed is None or i.id in allowed]


def _shared_side(side: Plan, key: tuple[int, ...], catalog: CatalogReader, cluster: str | None,
                 allowed: set[str] | None = None) -> Plan | None:
    """`side` reading an index on `key` instead of its relation, or None when there is none.
    The side may filter, project and compute on the relation's rows, as long as its join key
    is columns of the relation unchanged."""
    node, chain, indexes = _readable_indexes(side, catalog, cluster, allowed)
    if node is None or not key:
        return None
    columns = passthrough_columns(chain, len(node.types))
    wanted = tuple(columns[k] for k in key)
    for index in indexes:
        if tuple(index.index_key) == wanted:
            return side if index.id == node.id else _with_get(side, Get(index.id, node.types))
    return None


def _servable_keys(side: Plan, catalog: CatalogReader, cluster: str | None,
                   allowed: set[str] | None) -> list[tuple[int, ...]]:
    """The join keys (in `side`'s columns) an index can serve `side` on."""
    node, chain, indexes = _readable_indexes(side, catalog, cluster, allowed)
    if node is None:
        return []
    carried: dict[int, int] = {}  # relation column -> the first side column carrying it
    for side_col, col in enumerate(passthrough_columns(chain, len(node.types))):
        if col is not None:
            carried.setdefault(col, side_col)
    return [tuple(carried[k] for k in index.index_key) for index in indexes
            if index.index_key and all(k in carried for k in index.index_key)]


def use_shared_arrangements(plan: Plan, catalog: CatalogReader, cluster: str | None = None,
                            reader: str | None = None) -> Plan:
    """The plan with each join input that has an index on its join key (in `cluster`) read
    from that index. Each node object is rewritten once, so shared sub-plans stay shared.
    `reader`: the materialized view the plan maintains; it reads only indexes created before
    it, so that it is planned alike when created, after a restart and by EXPLAIN."""
    if not any_node(plan, lambda n: isinstance(n, Join)):
        return plan  # (point reads: nothing to share, and they are hot)
    done: dict[int, Plan] = {}
    allowed = None
    if reader is not None:
        allowed = set()
        for item in catalog.items():
            if item.id == reader:
                break
            allowed.add(item.id)

    def visit(node: Plan) -> Plan:
        if id(node) not in done:
            done[id(node)] = rewrite(node)
        return done[id(node)]

    # Joins first put in an order that lets more of them read an index, then chains that a
    # delta join arranges less for made one.
    servable = lambda side: _servable_keys(side, catalog, cluster, allowed)  # noqa: E731
    plan = plan_delta_joins(order_joins_for_indexes(plan, servable), servable)

    def rewrite(node: Plan) -> Plan:
        if isinstance(node, LetRec):
            return node  # (a loop's joins read its bindings, step by step)
        kids = children(node)
        new = tuple(visit(k) for k in kids)
        if any(a is not b for a, b in zip(new, kids)):
            node = with_children(node, new)
        if isinstance(node, Join):
            right = _shared_side(node.right, node.right_key, catalog, cluster, allowed)
            if right is not None:
                return node if right is node.right else replace(node, right=right)
            left = _shared_side(node.left, node.left_key, catalog, cluster, allowed)
            if left is not None and left is not node.left:
                return replace(node, left=left)
        if isinstance(node, DeltaJoin):
            inputs = list(node.inputs)
            for stages in node.paths:
                for stage in stages:
                    shared = _shared_side(node.inputs[stage.input], stage.lookup_key, catalog, cluster, allowed)
                    if shared is not None and inputs[stage.input] is node.inputs[stage.input]:
                        inputs[stage.input] = shared
            if any(a is not b for a, b in zip(inputs, node.inputs)):
                return replace(node, inputs=tuple(inputs))
        return node

    return visit(plan)
