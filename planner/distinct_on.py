"""SELECT DISTINCT ON (e1, ..., ek) ... ORDER BY ...: the first row of each group of equal
(e1, ..., ek) in the ORDER BY order, as in PostgreSQL.

It is planned as a TopK with limit 1 per group (`dataflow/operators/topk.py`), over the select
list's output plus hidden columns for DISTINCT ON and ORDER BY expressions not in it; the
query's own ORDER BY / LIMIT then apply to the chosen rows (a Finishing at the top level, a TopK
inside views). In a materialized view the TopK is maintained incrementally: a change recomputes
only the groups it touches.

>>> # SELECT DISTINCT ON (g) g, id FROM t ORDER BY g, ts DESC
>>> # -> TopK(Project(Map(t, ...)), group_key=(g,), order_by=((g, asc), (ts, desc)), limit=1)

The DISTINCT ON expressions are resolved as ORDER BY items are (output names, positions, then
expressions over the FROM items), and must match the leading ORDER BY items in any order
(PostgreSQL's transformDistinctOnClause: 42P10 "SELECT DISTINCT ON expressions must match
initial ORDER BY expressions"). Where the ORDER BY leaves the choice among a group's rows open,
PostgreSQL returns whichever row its sort met first; here ties are broken by the whole row
ascending (NULLs last), so a view's answer is deterministic and stable under unrelated changes.
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from dataflow.errors import SqlError
from dataflow.expr import ColumnRef
from dataflow.plan import Map, Plan, Project, TopK, output_types
from planner import equality_keys


def _position(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Paren):
        return _position(node.this)
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def distinct_on_columns(on: exp.Expression, names: list[str],
                        expression_column: Callable[[exp.Expression, str], int]) -> list[int]:
    """The output columns (visible or hidden) of the DISTINCT ON expressions."""
    nodes = list(on.expressions) if isinstance(on, exp.Tuple) else [on]
    cols: list[int] = []
    for node in nodes:
        pos = _position(node)
        if pos is not None:
            if not 1 <= pos <= len(names):
                raise SqlError("42P10", f"SELECT DISTINCT ON position {pos} is not in select list")
            col = pos - 1
        elif isinstance(node, exp.Column) and not node.table and node.name in names:
            col = names.index(node.name)
        else:
            col = expression_column(node, "DISTINCT ON")
        if col not in cols:
            cols.append(col)
    return cols


def check_order(on_cols: list[int], order_by: tuple[tuple[int, bool, bool], ...]) -> None:
    """ORDER BY must start with the DISTINCT ON columns (in any order) when it is given."""
    if not order_by:
        return
    skipped = False
    matched: set[int] = set()
    for col, _, _ in order_by:
        if col in on_cols:
            if skipped:
                break
            matched.add(col)
        else:
            skipped = True
    else:
        if not skipped or matched == set(on_cols):
            return
    raise SqlError("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")


def distinct_on_plan(plan: Plan, on_cols: list[int], order_by: tuple[tuple[int, bool, bool], ...],
                     key_cols: tuple[int, ...] = (), checked: bool = False) -> Plan:
    """The first row per DISTINCT ON group (and per correlation key, `key_cols`). `checked`:
    the caller checked the ORDER BY (before pointing entries at sort keys, `planner.ordering`)."""
    if not checked:
        check_order(on_cols, order_by)
    types = output_types(plan)
    keyed = [c for c in on_cols if equality_keys.needs_key(types[c])]
    if not keyed:
        return TopK(plan, tuple(on_cols) + key_cols, order_by, 1, 0)
    # Groups by SQL equality (an interval's span): group by the key, computed by a Map.
    width = len(types)
    mapped = Map(plan, tuple(equality_keys.key(ColumnRef(c, types[c])) for c in keyed))
    group = tuple(width + keyed.index(c) if c in keyed else c for c in on_cols) + key_cols
    return Project(TopK(mapped, group, order_by, 1, 0), tuple(range(width)))
