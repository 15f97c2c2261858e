"""Keys by SQL equality: values that are equal in SQL but kept differently are one key.

The engine's keys (GROUP BY, DISTINCT, set operations, join keys) compare representations.
Several types have values SQL calls equal that look different:

* intervals compare by *span* (`'1 mon' = '30 days' = '720:00:00'`; `dataflow.interval`),
* jsonb and arrays are kept as their text (`'1.0'::jsonb = '1'`, `'{-0}'::float8[] = '{0}'`),
* `bpchar` without a length ignores trailing blanks (`'a'::bpchar = 'a '::bpchar`; a
  `character(n)` column pads every value alike, so its values need no key).

So wherever SQL equality of user values decides (GROUP BY, DISTINCT, DISTINCT ON,
UNION/INTERSECT/EXCEPT, equi-joins, IN, count(DISTINCT), window partitions) the planner keys on
`key(e)`: the value's sort key (`dataflow.sort_keys`: equal keys are exactly equal values in
PostgreSQL's order), or for bpchar the text without the padding. A row that shows a key shows
one member of its group, the one whose key-with-value (`sort_key_with_value`) is least, so a
maintained answer is deterministic (PostgreSQL shows whichever member it met first).

Plans that need identity (a subquery's distinct outer values joined back to the outer rows,
an outer join's matched rows) keep comparing representations: they go on building
Distinct/Join directly.

>>> # SELECT DISTINCT i FROM t          (t.i: '1 mon', '30 days', '1 day')
>>> # -> Project(Map(Reduce(Map(Get(t), (sort_key(#0),)), key=(1,),
>>> #                      aggs=(min(sort_key_with_value(#0)),)),
>>> #                (value_of_sort_key(#1),)), (2,))
>>> # -> one of '1 mon' / '30 days', and '1 day'
"""

from __future__ import annotations

from typing import Sequence

from dataflow.errors import unsupported
from dataflow.expr import AggregateExpr, Call, Cast, ColumnRef, ScalarExpr
from dataflow.plan import Distinct, Join, Map, Negate, Plan, Project, Reduce, Threshold, Union_, output_types
from dataflow.types import BYTEA, TEXT, SqlType, TypeKind

_SORT_KEYED = (TypeKind.INTERVAL, TypeKind.ARRAY, TypeKind.JSONB)


def needs_key(t: SqlType) -> bool:
    """Whether values of `t` equal in SQL can differ in representation."""
    return t.kind in _SORT_KEYED or (t.kind is TypeKind.BPCHAR and t.precision is None)


def key(e: ScalarExpr) -> ScalarExpr:
    """What SQL equality of `e` compares: its sort key (intervals, arrays, jsonb), a bpchar
    without its trailing blanks, else the value itself."""
    if e.type.kind in _SORT_KEYED:
        return Call("sort_key", (e,), BYTEA)
    if needs_key(e.type):
        return Cast(e, TEXT)  # (the cast drops the padding)
    return e


def keyed_column(e: ScalarExpr) -> ColumnRef | None:
    """The column `e` is, or whose key `e` is (`key(col)`: an equality of keys is a join key
    on the column), else None."""
    if isinstance(e, ColumnRef):
        return e
    inner = e.arg if isinstance(e, Cast) else e.args[0] if isinstance(e, Call) and e.args else None
    return inner if isinstance(inner, ColumnRef) and key(inner) == e else None


def _member(col: int, t: SqlType) -> AggregateExpr:
    """An aggregate choosing one member of a group of equal values."""
    if t.kind in _SORT_KEYED:
        return AggregateExpr("min", Call("sort_key_with_value", (ColumnRef(col, t),), BYTEA), BYTEA)
    return AggregateExpr("min", ColumnRef(col, t), t)


def _shown(col: int, t: SqlType) -> ScalarExpr:
    """The member chosen by `_member`, as a value of `t`."""
    if t.kind in _SORT_KEYED:
        return Call("value_of_sort_key", (ColumnRef(col, BYTEA),), t)
    return ColumnRef(col, t)


def reduce(plan: Plan, group_key: Sequence[int], aggregates: Sequence[AggregateExpr],
           identity: Sequence[int] = ()) -> Plan:
    """`Reduce(plan, group_key, aggregates)` (output: keys ++ aggregates) with keys grouped by
    SQL equality, each shown as a member of its group. Columns in `identity` (a correlated
    subquery's outer values, joined back to the outer rows by representation) stay as they are."""
    types = output_types(plan)
    keyed = [k for k, c in enumerate(group_key) if needs_key(types[c]) and c not in identity]
    if not keyed:
        return Reduce(plan, tuple(group_key), tuple(aggregates))
    width = len(types)
    mapped = Map(plan, tuple(key(ColumnRef(group_key[k], types[group_key[k]])) for k in keyed))
    keys = list(group_key)
    for n, k in enumerate(keyed):
        keys[k] = width + n
    members = tuple(_member(group_key[k], types[group_key[k]]) for k in keyed)
    grouped = Reduce(mapped, tuple(keys), tuple(aggregates) + members)
    nk, na = len(group_key), len(aggregates)
    out: list[ScalarExpr] = [_shown(nk + na + keyed.index(k), types[c]) if k in keyed else ColumnRef(k, types[c])
                             for k, c in enumerate(group_key)]
    out += [ColumnRef(nk + a, agg.type) for a, agg in enumerate(aggregates)]
    inner = nk + na + len(keyed)
    return Project(Map(grouped, tuple(out)), tuple(range(inner, inner + len(out))))


def distinct(plan: Plan, identity: Sequence[int] = ()) -> Plan:
    """Distinct rows by SQL equality (`identity` columns by representation)."""
    types = output_types(plan)
    if not any(needs_key(t) and c not in identity for c, t in enumerate(types)):
        return Distinct(plan)
    return reduce(plan, range(len(types)), (), identity)


def set_operation(op: str, left: Plan, right: Plan, all_rows: bool, identity: Sequence[int] = ()) -> Plan:
    """EXCEPT / INTERSECT [ALL] of two plans of the same types by SQL equality. Over rows whose
    values are replaced by their keys the usual multiset plan gives each result row with its
    multiplicity; a NULL-safe join with the left side's members per such row puts the values
    back (PostgreSQL shows a value of the left input)."""
    from planner.outer_join import row_keys
    types = output_types(left)
    keyed = [c for c, t in enumerate(types) if needs_key(t) and c not in identity]
    if not keyed:
        return _multiset(op, left, right, all_rows)
    n, k = len(types), len(keyed)
    keys = tuple(key(ColumnRef(c, types[c])) for c in keyed)
    normal_cols = tuple(n + keyed.index(c) if c in keyed else c for c in range(n))
    normal_types = tuple(keys[keyed.index(c)].type if c in keyed else t for c, t in enumerate(types))

    def normal(p: Plan) -> Plan:
        return Project(Map(p, keys), normal_cols)

    rows = _multiset(op, normal(left), normal(right), all_rows)
    # One member per key row of the left side: its normal columns, then its members.
    members = Project(Map(distinct(left, identity), keys), normal_cols + tuple(keyed))
    whole = row_keys(normal_types)
    joined = Join(Map(rows, whole), Map(members, whole), tuple(range(n, n + len(whole))),
                  tuple(range(n + k, n + k + len(whole))))
    right_at = n + len(whole)
    return Project(joined, tuple(right_at + n + keyed.index(c) if c in keyed else c for c in range(n)))


def _multiset(op: str, left: Plan, right: Plan, all_rows: bool) -> Plan:
    if not all_rows:
        left, right = Distinct(left), Distinct(right)
    if op == "EXCEPT":
        return Threshold(Union_((left, Negate(right))))
    # INTERSECT: l - (l - r), with multiplicities min(l, r)
    return Union_((left, Negate(Threshold(Union_((left, Negate(right)))))))


def distinct_aggregate(agg: AggregateExpr) -> AggregateExpr:
    """An aggregate with DISTINCT over an argument that needs a key: count(DISTINCT i) counts
    keys; min/max are the same without DISTINCT; others are refused (their result would show
    every member of a group)."""
    if not agg.distinct or agg.arg is None or not needs_key(agg.arg.type):
        return agg
    if agg.func == "count":
        return AggregateExpr("count", key(agg.arg), agg.type, True, agg.extra, agg.order_by)
    if agg.func in ("min", "max"):
        return AggregateExpr(agg.func, agg.arg, agg.type, False, agg.extra, agg.order_by)
    raise unsupported(f"{agg.func}(DISTINCT {agg.arg.type.name})")
