"""GROUP BY with GROUPING SETS, ROLLUP and CUBE, and GROUPING(...), as in PostgreSQL.

A GROUP BY list is expanded into its grouping sets the way PostgreSQL's
`expand_grouping_sets` does: each item of the list gives a list of sets (a plain expression
one set of one key; `()` the empty set; `(a, b)` one set of two keys; `ROLLUP(e1, ..., en)` the
n + 1 prefixes; `CUBE(e1, ..., en)` all 2^n subsets; `GROUPING SETS (...)` the concatenation of
its items' lists, nested to any depth), and the list's items are combined by cross product.
Duplicate sets are kept (each gives its own rows) unless `GROUP BY DISTINCT`.

>>> # GROUP BY a, ROLLUP(b, c)  ->  keys [a, b, c], sets [(0, 1, 2), (0, 1), (0,)]

A query with more than one set is planned as a union of one Reduce per set over the same input
(one operator, shared by the Reduces), each Reduce's output laid out as keys ++ aggregates with
NULL for the keys its set lacks (`Grouping.build`). The Reduce of the empty set is a global
aggregate: one row even over empty input, as in PostgreSQL. Each Reduce is maintained
incrementally on its own, so the union is too.

`GROUPING(e1, ..., en)` is an integer whose bit n-1-i is set when ei is not in the row's set:
a constant per Reduce, added to its output as a column like an aggregate's.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

from sqlglot import exp

from dataflow.errors import SqlError
from dataflow.expr import ScalarExpr

MAX_SETS = 4096  # PostgreSQL's limit on the expanded list


def has_grouping_sets(group: exp.Group) -> bool:
    """Whether a GROUP BY list uses ROLLUP, CUBE, GROUPING SETS, `()` or `(a, b)` at its top
    level, or GROUP BY DISTINCT."""
    return group.args.get("all") is False or any(
        isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets, exp.Tuple)) for g in _items(group))


def _items(group: exp.Group) -> list[exp.Expression]:
    # Older sqlglot versions keep the constructs apart from the plain expressions.
    out = list(group.expressions)
    for k in ("grouping_sets", "rollup", "cube"):
        v = group.args.get(k)
        if v:
            out.extend(v if isinstance(v, list) else [v])
    return out


def expand(group: exp.Group, lower_key: Callable[[exp.Expression], ScalarExpr]
           ) -> tuple[list[ScalarExpr], list[tuple[int, ...]]]:
    """(keys, sets): the distinct key expressions in order of first appearance, and each grouping
    set as the sorted positions of its keys in `keys`."""
    keys: list[ScalarExpr] = []

    def key(node: exp.Expression) -> int:
        e = lower_key(node)
        if e not in keys:
            keys.append(e)
        return keys.index(e)

    def element(node: exp.Expression) -> tuple[int, ...]:
        """An element of ROLLUP/CUBE: an expression or a parenthesised list of them."""
        if isinstance(node, exp.Tuple):
            return tuple(key(e) for e in node.expressions)
        return (key(node),)

    def sets_of(node: exp.Expression) -> list[tuple[int, ...]]:
        if isinstance(node, exp.Rollup):
            elems = [element(e) for e in node.expressions]
            return [tuple(k for el in elems[:n] for k in el) for n in range(len(elems), -1, -1)]
        if isinstance(node, exp.Cube):
            elems = [element(e) for e in node.expressions]
            if len(elems) > 12:
                raise SqlError("54001", "CUBE is limited to 12 elements")
            out = []
            for mask in product((True, False), repeat=len(elems)):
                out.append(tuple(k for el, m in zip(elems, mask) if m for k in el))
            return out
        if isinstance(node, exp.GroupingSets):
            return [s for e in node.expressions for s in sets_of(e)]
        if isinstance(node, exp.Tuple):
            return [tuple(key(e) for e in node.expressions)]
        return [(key(node),)]

    combined: list[tuple[int, ...]] = [()]
    for item in _items(group):
        item_sets = sets_of(item)
        if len(combined) * len(item_sets) > MAX_SETS:
            raise SqlError("54001", f"too many grouping sets present (maximum {MAX_SETS})")
        combined = [a + b for a in combined for b in item_sets]
    sets = [tuple(sorted(set(s))) for s in combined]
    if group.args.get("all") is False:  # GROUP BY DISTINCT: each set once
        seen: list[tuple[int, ...]] = []
        for s in sets:
            if s not in seen:
                seen.append(s)
        sets = seen
    return keys, sets


def grouping_value(args: list[int], grouping_set: tuple[int, ...]) -> int:
    """GROUPING(args) for the rows of one set: bit n-1-i for each argument not in the set."""
    v = 0
    for k in args:
        v = (v << 1) | (0 if k in grouping_set else 1)
    return v
