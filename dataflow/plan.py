"""The dataflow plan: a tree of relational operators that the engine instantiates.

The planner lowers SQL to this; the worker runtime turns each node into an operator over
batches of `(row, time, diff)` updates. Rows are positional: node outputs are lists of columns
whose types `output_types(plan)` computes. Every node is a frozen dataclass so plans can be
pickled to workers, compared and printed by EXPLAIN.

Example: `SELECT c.region, count(*) FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region` over orders(id, customer_id, amount, status), customers(id, region):

    Reduce(Join(Get("u1", ORDERS), Get("u2", CUSTOMERS), (1,), (0,)), (5,),
           (AggregateExpr("count_star", None, INT8),))
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Iterator, Sequence, Union

from dataflow.expr import AggregateExpr, ScalarExpr
from dataflow.types import INT8, SqlType


@dataclass(frozen=True)
class Get:
    """Read a collection (a table's or materialized view's shard, or an index) by global id.
    `append_only`: the collection only ever gains rows (a source without deletions), so the
    operators above it may keep less state (planner/rules/append_only.py)."""

    id: str
    types: tuple[SqlType, ...]
    append_only: bool = False


@dataclass(frozen=True)
class Constant:
    """A fixed multiset of rows, all at the dataflow's as_of time with diff +1 each."""

    rows: tuple[tuple[Any, ...], ...]
    types: tuple[SqlType, ...]


@dataclass(frozen=True)
class Map:
    """Append one column per expression to each row."""

    input: "Plan"
    exprs: tuple[ScalarExpr, ...]


@dataclass(frozen=True)
class Filter:
    """Keep rows where every predicate is true (NULL counts as false)."""

    input: "Plan"
    predicates: tuple[ScalarExpr, ...]


@dataclass(frozen=True)
class Project:
    """Reorder / select / duplicate columns by position."""

    input: "Plan"
    columns: tuple[int, ...]


@dataclass(frozen=True)
class FlatMap:
    """A set-returning function (`func`: generate_series, unnest, jsonb_each, ...) evaluated for
    each input row: the row is repeated once per result row of `func(args)`, with the result's
    columns (`types`: one for most functions, two for jsonb_each, one per array for unnest of
    several arrays) appended and then, with `ordinality`, the result row's position among that
    input row's results (bigint, from 1: WITH ORDINALITY)."""

    input: "Plan"
    func: str
    args: tuple[ScalarExpr, ...]
    types: tuple[SqlType, ...]
    ordinality: bool = False

    @property
    def outputs(self) -> tuple[SqlType, ...]:
        """The columns appended to the input's."""
        return self.types + ((INT8,) if self.ordinality else ())


@dataclass(frozen=True)
class Join:
    """Inner equi-join: rows of left and right with equal (non-NULL) keys; output left ++ right."""

    left: "Plan"
    right: "Plan"
    left_key: tuple[int, ...]
    right_key: tuple[int, ...]


@dataclass(frozen=True)
class DeltaStage:
    """One probe of a delta path: the running rows' `stream_key` columns looked up in input
    `input`'s arrangement by its `lookup_key` columns (equal non-NULL values match)."""

    input: int
    stream_key: tuple[int, ...]
    lookup_key: tuple[int, ...]


@dataclass(frozen=True)
class DeltaJoin:
    """Inner equi-join of three or more inputs in one operator that arranges each input (by
    each key it is probed on) and nothing else: no intermediate result is kept, as a chain of
    binary joins keeps every running result (differential dataflow's delta join).

    Input i's changes take path `paths[i]`: its stages probe the other inputs one after
    another, the running rows being the inputs' columns side by side in path order (input i's,
    then each stage's). The output is every input's columns side by side, in input order.

    Example, orders(id, customer) ⋈ customers(id, nation) ⋈ nations(id) on o.customer = c.id
    and c.nation = n.id:

        DeltaJoin((O, C, N), paths=(
            (DeltaStage(1, (1,), (0,)), DeltaStage(2, (3,), (0,))),   # dO: C by id, N by id
            (DeltaStage(0, (0,), (1,)), DeltaStage(2, (1,), (0,))),   # dC: O by customer, N
            (DeltaStage(1, (0,), (1,)), DeltaStage(0, (1,), (1,)))))  # dN: C by nation, O

    arranges O by customer, C by id and by nation, N by id, where the chain
    (O ⋈ C) ⋈ N would keep O by customer, C by id, O ⋈ C by nation and N by id."""

    inputs: tuple["Plan", ...]
    paths: tuple[tuple[DeltaStage, ...], ...]


@dataclass(frozen=True)
class Reduce:
    """GROUP BY `group_key` columns; output = key columns then one column per aggregate.
    With an empty key this is a global aggregate, which the planner wraps so that an empty input
    still yields one row (as SQL requires)."""

    input: "Plan"
    group_key: tuple[int, ...]
    aggregates: tuple[AggregateExpr, ...]
    monotonic: bool = False  # the input never retracts: min/max keep only the current extremum


@dataclass(frozen=True)
class Distinct:
    input: "Plan"


@dataclass(frozen=True)
class Union_:
    """Multiset union (UNION ALL)."""

    inputs: tuple["Plan", ...]


@dataclass(frozen=True)
class Negate:
    input: "Plan"


@dataclass(frozen=True)
class Threshold:
    """Keep only rows whose accumulated multiplicity is positive (for EXCEPT)."""

    input: "Plan"


@dataclass(frozen=True)
class TopK:
    """Per `group_key`, the first `limit` rows (after `offset`) in `order_by` order.
    order_by entries: (column, descending, nulls_last)."""

    input: "Plan"
    group_key: tuple[int, ...]
    order_by: tuple[tuple[int, bool, bool], ...]
    limit: int | None
    offset: int = 0
    monotonic: bool = False  # the input never retracts: only each group's first rows are kept


@dataclass(frozen=True)
class WindowFrame:
    """A window frame: `mode` "rows", "range" or "groups"; each bound a (kind, offset) with kind
    one of "unbounded_preceding", "preceding", "current", "following", "unbounded_following" (an
    offset only for "preceding"/"following": a count of rows or peer groups, or in RANGE mode a
    value of the offset's type, with `key_type` the ORDER BY key's type). `exclude` is the
    EXCLUDE clause: "no_others", "current_row", "group" (the current row's peers) or "ties"
    (its peers but not itself). PostgreSQL's default frame (RANGE UNBOUNDED PRECEDING to
    CURRENT ROW, peers included) is `WindowFrame()`."""

    mode: str = "range"
    start: tuple[str, Any] = ("unbounded_preceding", 0)
    end: tuple[str, Any] = ("current", 0)
    key_type: SqlType | None = None
    exclude: str = "no_others"


@dataclass(frozen=True)
class WindowFunc:
    """One window function of a `Window`: `func` is row_number, rank, dense_rank, percent_rank,
    cume_dist, ntile, lag, lead, first_value, last_value, nth_value, or the aggregate count_star,
    count, sum, avg, min, max. `args` are column positions of the Window's input (lag's value,
    offset and default; ntile's bucket count; nth_value's value and n). `type` is the result
    type; `frame` is used by the aggregates and first/last/nth_value."""

    func: str
    args: tuple[int, ...]
    type: SqlType
    frame: WindowFrame = WindowFrame()


@dataclass(frozen=True)
class Window:
    """Window functions over partitions of the input: output = the input row plus one column per
    function. Rows are partitioned by `partition_key` columns and ordered by `order_by` entries
    (column, descending, nulls_last), as TopK's; rows equal in every order column are *peers*.
    Among peers rows are ordered by the whole row, so row_number is deterministic."""

    input: "Plan"
    partition_key: tuple[int, ...]
    order_by: tuple[tuple[int, bool, bool], ...]
    funcs: tuple[WindowFunc, ...]


@dataclass(frozen=True)
class ArrangeBy:
    """Maintain an arrangement of the input keyed by `key` (an index). Passes rows through."""

    input: "Plan"
    key: tuple[int, ...]


@dataclass(frozen=True)
class IndexLookup:
    """The rows of index `id` (an arrangement keyed by `key`, as column positions of its rows)
    whose key equals one of `keys`: a point lookup that touches only the matching rows. Only
    peeks use it; the worker answers it from the index's arrangement."""

    id: str
    types: tuple[SqlType, ...]
    key: tuple[int, ...]
    keys: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class LetRec:
    """Recursive bindings (WITH RECURSIVE, WITH MUTUALLY RECURSIVE) and the query over them.

    Binding j is read inside `values` and `body` as `Get(ids[j], types[j])`. Without `seeds`
    (fixpoint form, Materialize's semantics): every binding starts empty and each iteration
    recomputes all of them from the previous iteration's values, until none changes; `body` reads
    the final values. With `seeds` (PostgreSQL's UNION ALL working table, one binding): W_0 =
    seeds[0], W_{i+1} = values[0] with the binding read as W_i, until W_i is empty; the binding's
    value is the sum of every W_i. `limit`: at most this many iterations, then the current values
    (`limit_return`) or an error. See dataflow/operators/iterate.py."""

    ids: tuple[str, ...]
    types: tuple[tuple[SqlType, ...], ...]
    values: tuple["Plan", ...]
    body: "Plan"
    limit: int | None = None
    limit_return: bool = False
    seeds: tuple["Plan", ...] | None = None
    names: tuple[str, ...] = ()  # the SQL names, for errors


Plan = Union[Get, Constant, Map, Filter, Project, FlatMap, Join, DeltaJoin, Reduce, Distinct, Union_, Negate,
             Threshold, TopK, ArrangeBy, IndexLookup, Window, LetRec]


def output_types(plan: Plan) -> tuple[SqlType, ...]:
    """The column types of a node's output."""
    if isinstance(plan, (Get, Constant, IndexLookup)):
        return plan.types
    if isinstance(plan, Map):
        return output_types(plan.input) + tuple(e.type for e in plan.exprs)
    if isinstance(plan, (Filter, Distinct, Negate, Threshold, TopK, ArrangeBy)):
        return output_types(plan.input)
    if isinstance(plan, Project):
        inner = output_types(plan.input)
        return tuple(inner[i] for i in plan.columns)
    if isinstance(plan, FlatMap):
        return output_types(plan.input) + plan.outputs
    if isinstance(plan, Join):
        return output_types(plan.left) + output_types(plan.right)
    if isinstance(plan, DeltaJoin):
        return tuple(t for p in plan.inputs for t in output_types(p))
    if isinstance(plan, Reduce):
        inner = output_types(plan.input)
        return tuple(inner[i] for i in plan.group_key) + tuple(a.type for a in plan.aggregates)
    if isinstance(plan, Union_):
        return output_types(plan.inputs[0])
    if isinstance(plan, Window):
        return output_types(plan.input) + tuple(f.type for f in plan.funcs)
    if isinstance(plan, LetRec):
        return output_types(plan.body)
    raise TypeError(plan)


def children(plan: Plan) -> tuple[Plan, ...]:
    if isinstance(plan, (Get, Constant, IndexLookup)):
        return ()
    if isinstance(plan, Join):
        return (plan.left, plan.right)
    if isinstance(plan, (Union_, DeltaJoin)):
        return plan.inputs
    if isinstance(plan, LetRec):
        return tuple(plan.seeds or ()) + plan.values + (plan.body,)
    return (plan.input,)


def with_children(plan: Plan, kids: Sequence[Plan]) -> Plan:
    """`plan` with its children (in `children`' order) replaced by `kids`."""
    if isinstance(plan, Join):
        return replace(plan, left=kids[0], right=kids[1])
    if isinstance(plan, (Union_, DeltaJoin)):
        return replace(plan, inputs=tuple(kids))
    if isinstance(plan, LetRec):
        n = len(plan.seeds or ())
        seeds = tuple(kids[:n]) if plan.seeds is not None else None
        return replace(plan, seeds=seeds, values=tuple(kids[n:n + len(plan.values)]), body=kids[-1])
    return replace(plan, input=kids[0])


def nodes(plan: Plan, enter: Callable[[Plan], bool] | None = None) -> Iterator[Plan]:
    """Every node object of the plan, once each: plans are DAGs (an outer join reads its inputs
    several times, nested ones share them again), and walking every path would take time
    exponential in the nesting. `enter`: whether to walk into a node's inputs (default: all)."""
    seen: set[int] = set()
    todo = [plan]
    while todo:
        p = todo.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        yield p
        if enter is None or enter(p):
            todo.extend(children(p))


def any_node(plan: Plan, test: Callable[[Plan], bool]) -> bool:
    """Whether `test` holds for some node of the plan."""
    return any(test(p) for p in nodes(plan))


def mentions_mz_now(node: Plan) -> bool:
    """Whether the node's own expressions (not its inputs') call mz_now(). (A repr of a whole
    plan prints a shared sub-plan once per path: exponential in nested outer joins.)"""
    kids = {id(k) for k in children(node)}
    for f in fields(node):
        value = getattr(node, f.name)
        if id(value) in kids or (isinstance(value, tuple) and value and all(id(v) in kids for v in value)):
            continue
        if "mz_now" in repr(value):
            return True
    return False


def through_stateless(plan: Plan) -> tuple[Plan, tuple[Plan, ...]]:
    """The node under a chain of Project, Filter and Map nodes (none reading mz_now(), whose
    filters change with time), and that chain, top first: what a join may compute on an
    index's rows after matching them, instead of arranging the filtered rows again.

    >>> leaf, chain = through_stateless(Project(Get("u1", (INT8, INT8)), (1,)))
    >>> leaf.id, [type(n).__name__ for n in chain]
    ('u1', ['Project'])
    """
    chain: list[Plan] = []
    while _is_stateless_step(plan):
        chain.append(plan)
        plan = plan.input  # type: ignore[union-attr]
    return plan, tuple(chain)


def _is_stateless_step(node: Plan) -> bool:
    """A Project, or a Filter or Map not reading mz_now()."""
    return isinstance(node, Project) or (isinstance(node, (Filter, Map)) and not mentions_mz_now(node))


def passthrough_columns(chain: Sequence[Plan], width: int) -> tuple[int | None, ...]:
    """For each output column of `chain` (top first, over an input of `width` columns), the
    input column it carries unchanged, or None for a column a Map computes."""
    cols: list[int | None] = list(range(width))
    for node in reversed(chain):
        if isinstance(node, Project):
            cols = [cols[c] for c in node.columns]
        elif isinstance(node, Map):
            cols = cols + [None] * len(node.exprs)
    return tuple(cols)


def collections_read(plan: Plan) -> set[str]:
    """Ids of every collection the plan reads (each node visited once, `nodes`)."""
    out: set[str] = set()
    bound: set[str] = set()  # ids of recursive bindings: read inside their LetRec, not collections
    for p in nodes(plan):
        if isinstance(p, (Get, IndexLookup)):
            out.add(p.id)
        if isinstance(p, LetRec):
            bound.update(p.ids)
    out -= bound
    return out


__all__ = ["Get", "Constant", "Map", "Filter", "Project", "FlatMap", "Join", "DeltaJoin", "DeltaStage", "Reduce", "Distinct",
           "Union_", "Negate", "Threshold", "TopK", "ArrangeBy", "IndexLookup", "Window", "WindowFunc", "WindowFrame", "LetRec", "Plan", "output_types", "children",
           "collections_read", "nodes", "INT8"]
