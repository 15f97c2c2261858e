"""Rule: answer equality lookups on an indexed relation from the index, not by a scan.

A peek whose relational input is `Filter(Get(x), preds)`, where an index on `x` (or `x` itself,
an index read in place of a view) is keyed on columns that `preds` pin to literals, reads only
the matching rows: the Get becomes an `IndexLookup` with the literal keys. The filter stays, so
the result is the same; the work is proportional to the matches instead of to `x`.

Example, with `CREATE INDEX orders_id ON orders (id)` (index u9 on u1, key (0,)):

    Filter(Get("u1", T), (id = 42,))  ->  Filter(IndexLookup("u9", T, (0,), ((42,),)), (id = 42,))

A narrowing `Project` between the filter and the Get (column pruning puts one there) is looked
through: `Filter(Project(Get))` becomes `Filter(Project(IndexLookup))`.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

from catalog.items import CatalogItem, CatalogReader, ItemKind
from dataflow import arrays
from dataflow.expr import Call, ColumnRef, Literal, ScalarExpr
from dataflow.plan import Filter, Get, IndexLookup, Map, Plan, Project
from dataflow.types import TypeKind

# Beyond this many key combinations a scan is no worse than the lookups.
MAX_LOOKUP_KEYS = 100_000


def _pinned_values(preds: tuple[ScalarExpr, ...]) -> dict[int, list]:
    """Column -> the literal values an equality or IN predicate restricts it to."""
    pinned: dict[int, list] = {}
    for p in preds:
        if not isinstance(p, Call):
            continue
        if p.func == "eq" and len(p.args) == 2:
            a, b = p.args
            if isinstance(b, ColumnRef):
                a, b = b, a
            # (an interval equals every interval of its span, which an index keyed on the
            # fields cannot find)
            if isinstance(a, ColumnRef) and isinstance(b, Literal) and b.value is not None \
                    and a.type.kind is not TypeKind.INTERVAL:
                pinned[a.index] = [b.value]
        elif p.func == "in_list" and isinstance(p.args[0], ColumnRef) \
                and p.args[0].type.kind is not TypeKind.INTERVAL \
                and all(isinstance(v, Literal) and v.value is not None for v in p.args[1:]):
            pinned[p.args[0].index] = list(dict.fromkeys(v.value for v in p.args[1:]))
        elif p.func == "in_array" and isinstance(p.args[0], ColumnRef) \
                and p.args[0].type.kind is not TypeKind.INTERVAL:
            values = arrays.read(p.args[1].value, p.args[1].type.element)
            if None not in values:
                pinned[p.args[0].index] = list(dict.fromkeys(values))
    return pinned


def indexes_in_cluster(catalog: CatalogReader, indexes: list[CatalogItem], cluster: str | None) -> list[CatalogItem]:
    """The ones of `indexes` that cluster `cluster` (a name) maintains: a plan that runs there can
    read only those (an index is an arrangement in its own cluster's replicas). A catalog
    without clusters (the planner's unit tests) has one, and every index is in it."""
    clusters = getattr(catalog, "clusters", None)
    if clusters is None or cluster is None:
        return indexes
    spec = clusters().by_name(cluster)
    return [i for i in indexes if spec is not None and i.cluster_id == spec.id]


def _index_for(catalog: CatalogReader, id: str, cluster: str | None) -> list[CatalogItem]:
    item = catalog.get(id)
    if item.kind is ItemKind.INDEX:
        return indexes_in_cluster(catalog, [item], cluster)
    return indexes_in_cluster(catalog, catalog.indexes_on(id), cluster)


def _lookup(get: Get, pinned: dict[int, list], catalog: CatalogReader, cluster: str | None) -> IndexLookup | None:
    """An IndexLookup for `get` when an index's key columns are all pinned, else None."""
    for index in _index_for(catalog, get.id, cluster):
        key = index.index_key
        if not key or any(k not in pinned for k in key):
            continue
        combos = 1
        for k in key:
            combos *= len(pinned[k])
        if combos > MAX_LOOKUP_KEYS:
            continue
        keys = tuple(product(*(pinned[k] for k in key)))
        return IndexLookup(index.id, get.types, key, keys)
    return None


def _rewrite(plan: Plan, catalog: CatalogReader, cluster: str | None) -> Plan:
    if isinstance(plan, Filter) and isinstance(plan.input, Get):
        lookup = _lookup(plan.input, _pinned_values(plan.predicates), catalog, cluster)
        return plan if lookup is None else replace(plan, input=lookup)
    if isinstance(plan, Filter) and isinstance(plan.input, Project) and isinstance(plan.input.input, Get):
        # Column pruning (planner.rules.prune_columns) narrows the scan below the filter:
        # `Filter(Project(Get))`; pinned positions are the Project's, so map them to the Get's.
        cols = plan.input.columns
        pinned = {cols[c]: v for c, v in _pinned_values(plan.predicates).items()}
        lookup = _lookup(plan.input.input, pinned, catalog, cluster)
        return plan if lookup is None else replace(plan, input=replace(plan.input, input=lookup))
    if isinstance(plan, (Map, Project, Filter)):
        return replace(plan, input=_rewrite(plan.input, catalog, cluster))
    return plan


def use_index_lookups(plan: Plan, catalog: CatalogReader, cluster: str | None = None) -> Plan:
    """The plan with equality filters over indexed relations answered by lookups (peeks only),
    from indexes of `cluster` (the name of the cluster that runs the peek; None: any)."""
    return _rewrite(plan, catalog, cluster)
