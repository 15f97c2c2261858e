"""Intervals in keys compare by span, as in PostgreSQL: `'1 mon'`, `'30 days'` and
`'720:00:00'` are one group, one DISTINCT value, and they join.

The engine's keys compare values by representation, and an interval keeps its three fields
(months, days, microseconds; `dataflow.interval`). So wherever SQL equality of user values
decides (GROUP BY, DISTINCT, DISTINCT ON, UNION/INTERSECT/EXCEPT, equi-joins, IN, count(DISTINCT),
window partitions) the planner keys on `interval_span(i)` instead, and a row that shows a key
shows one member of its group: the least by fields, `min(interval_member_key(i))` decoded, so a
maintained answer is deterministic (PostgreSQL shows whichever member it met first).

Plans that need identity (a subquery's distinct outer values joined back to the outer rows,
an outer join's matched rows) keep comparing representations: they go on building
Distinct/Join directly.

>>> # SELECT DISTINCT i FROM t          (t.i: '1 mon', '30 days', '1 day')
>>> # -> Project(Map(Reduce(Map(Get(t), (interval_span(#0),)), key=(1,),
>>> #                      aggs=(min(interval_member_key(#0)),)),
>>> #                (interval_from_member_key(#1),)), (2,))
>>> # -> '30 days', '1 day'    ((0, 30, 0) is less than (1, 0, 0) by fields)
"""

from __future__ import annotations

from typing import Sequence

from dataflow.errors import unsupported
from dataflow.expr import AggregateExpr, Call, ColumnRef, ScalarExpr
from dataflow.plan import Distinct, Join, Map, Negate, Plan, Project, Reduce, Threshold, Union_, output_types
from dataflow.types import BYTEA, INTERVAL, SqlType, TypeKind

SPAN = SqlType(TypeKind.NUMERIC, 38, 0)


def is_interval(t: SqlType) -> bool:
    return t.kind is TypeKind.INTERVAL


def span(e: ScalarExpr) -> ScalarExpr:
    return Call("interval_span", (e,), SPAN)


def key(e: ScalarExpr) -> ScalarExpr:
    """What SQL equality of `e` compares: its span for an interval, else itself."""
    return span(e) if is_interval(e.type) else e


def _member(col: int) -> AggregateExpr:
    return AggregateExpr("min", Call("interval_member_key", (ColumnRef(col, INTERVAL),), BYTEA), BYTEA)


def _shown(col: int) -> ScalarExpr:
    return Call("interval_from_member_key", (ColumnRef(col, BYTEA),), INTERVAL)


def reduce(plan: Plan, group_key: Sequence[int], aggregates: Sequence[AggregateExpr],
           identity: Sequence[int] = ()) -> Plan:
    """`Reduce(plan, group_key, aggregates)` (output: keys ++ aggregates) with interval keys
    grouped by span, each shown as a member of its group. Columns in `identity` (a correlated
    subquery's outer values, joined back to the outer rows by representation) stay as they are."""
    types = output_types(plan)
    spans = [k for k, c in enumerate(group_key) if is_interval(types[c]) and c not in identity]
    if not spans:
        return Reduce(plan, tuple(group_key), tuple(aggregates))
    width = len(types)
    mapped = Map(plan, tuple(span(ColumnRef(group_key[k], INTERVAL)) for k in spans))
    keys = list(group_key)
    for n, k in enumerate(spans):
        keys[k] = width + n
    members = tuple(_member(group_key[k]) for k in spans)
    grouped = Reduce(mapped, tuple(keys), tuple(aggregates) + members)
    nk, na = len(group_key), len(aggregates)
    out: list[ScalarExpr] = [_shown(nk + na + spans.index(k)) if k in spans else ColumnRef(k, types[c])
                             for k, c in enumerate(group_key)]
    out += [ColumnRef(nk + a, agg.type) for a, agg in enumerate(aggregates)]
    inner = nk + na + len(spans)
    return Project(Map(grouped, tuple(out)), tuple(range(inner, inner + len(out))))


def distinct(plan: Plan, identity: Sequence[int] = ()) -> Plan:
    """Distinct rows, intervals (other than `identity` columns) compared by span."""
    types = output_types(plan)
    if not any(is_interval(t) and c not in identity for c, t in enumerate(types)):
        return Distinct(plan)
    return reduce(plan, range(len(types)), (), identity)


def set_operation(op: str, left: Plan, right: Plan, all_rows: bool, identity: Sequence[int] = ()) -> Plan:
    """EXCEPT / INTERSECT [ALL] of two plans of the same types, intervals compared by span.
    Over rows whose intervals are replaced by their spans the usual multiset plan gives each
    result row with its multiplicity; a NULL-safe join with the left side's members per such
    row puts the intervals back (PostgreSQL shows a value of the left input)."""
    from planner.outer_join import row_keys
    types = output_types(left)
    ivals = [c for c, t in enumerate(types) if is_interval(t) and c not in identity]
    if not ivals:
        return _multiset(op, left, right, all_rows)
    n, k = len(types), len(ivals)
    spans = tuple(span(ColumnRef(c, INTERVAL)) for c in ivals)
    normal_cols = tuple(n + ivals.index(c) if c in ivals else c for c in range(n))
    normal_types = tuple(SPAN if c in ivals else t for c, t in enumerate(types))

    def normal(p: Plan) -> Plan:
        return Project(Map(p, spans), normal_cols)

    rows = _multiset(op, normal(left), normal(right), all_rows)
    # One member per span row of the left side: its normal columns, then its members.
    members = Project(Map(distinct(left, identity), spans), normal_cols + tuple(ivals))
    keys = row_keys(normal_types)
    joined = Join(Map(rows, keys), Map(members, keys), tuple(range(n, n + len(keys))),
                  tuple(range(n + k, n + k + len(keys))))
    right_at = n + len(keys)
    return Project(joined, tuple(right_at + n + ivals.index(c) if c in ivals else c for c in range(n)))


def _multiset(op: str, left: Plan, right: Plan, all_rows: bool) -> Plan:
    if not all_rows:
        left, right = Distinct(left), Distinct(right)
    if op == "EXCEPT":
        return Threshold(Union_((left, Negate(right))))
    # INTERSECT: l - (l - r), with multiplicities min(l, r)
    return Union_((left, Negate(Threshold(Union_((left, Negate(right)))))))


def distinct_aggregate(agg: AggregateExpr) -> AggregateExpr:
    """An aggregate with DISTINCT over an interval argument: count(DISTINCT i) counts spans;
    min/max are the same without DISTINCT; others are refused (their result would show every
    member of a span)."""
    if not agg.distinct or agg.arg is None or not is_interval(agg.arg.type):
        return agg
    if agg.func == "count":
        return AggregateExpr("count", span(agg.arg), agg.type, True, agg.extra, agg.order_by)
    if agg.func in ("min", "max"):
        return AggregateExpr(agg.func, agg.arg, agg.type, False, agg.extra, agg.order_by)
    raise unsupported(f"{agg.func}(DISTINCT interval)")
