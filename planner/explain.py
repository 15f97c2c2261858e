"""EXPLAIN: an indented text rendering of a dataflow plan, one operator per line, with the state
each stateful operator keeps (`arranges: ...`: what it holds, keyed how).

>>> print(render_plan(Filter(Get("u1", (INT8,)), (Call("gt", (ColumnRef(0, INT8), Literal(5, INT8)), BOOL),))))
Filter (#0 > 5)
  Get u1
"""

from __future__ import annotations

from typing import Mapping

from dataflow.expr import AggregateExpr, Call, Cast, ColumnRef, If, Literal, ScalarExpr
from dataflow.plan import (ArrangeBy, Constant, DeltaJoin, Distinct, Filter, FlatMap, Get, IndexLookup, Join, Map, Plan, Project,
                           Reduce, Threshold, TopK, Window, WindowFrame, children, passthrough_columns,
                           through_stateless)
from planner.statements import Finishing

_INFIX = {"add": "+", "sub": "-", "mul": "*", "mul_rounded": "*", "div": "/", "mod": "%", "eq": "=",
          "neq": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=", "concat": "||", "like": "like",
          "ilike": "ilike", "and": "AND", "or": "OR"}


def render_scalar(e: ScalarExpr) -> str:
    if isinstance(e, ColumnRef):
        return f"#{e.index}"
    if isinstance(e, Literal):
        if e.value is None:
            return "null"
        if isinstance(e.value, str):
            return "'" + e.value.replace("'", "''") + "'"
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        return str(e.value)
    if isinstance(e, Call):
        args = [render_scalar(a) for a in e.args]
        if e.func in _INFIX and len(args) >= 2:
            return "(" + f" {_INFIX[e.func]} ".join(args) + ")"
        if e.func == "not":
            return f"NOT({args[0]})"
        if e.func == "is_null":
            return f"({args[0]}) IS NULL"
        if e.func == "is_not_null":
            return f"({args[0]}) IS NOT NULL"
        if e.func == "in_list":
            return f"({args[0]} IN ({', '.join(args[1:])}))"
        if e.func == "in_array":
            return f"({args[0]} = ANY ({args[1]}))"
        return f"{e.func}({', '.join(args)})"
    if isinstance(e, Cast):
        return f"{render_scalar(e.arg)}::{e.type.name}"
    if isinstance(e, If):
        return (f"case when {render_scalar(e.cond)} then {render_scalar(e.then)} "
                f"else {render_scalar(e.els)} end")
    return repr(e)


def _agg(a: AggregateExpr) -> str:
    if a.func == "count_star":
        return "count(*)"
    args = ", ".join(render_scalar(e) for e in (a.arg,) + a.extra)
    order = ", ".join(f"{render_scalar(k)}{' desc' if d else ''}{' nulls_last' if n else ' nulls_first'}"
                      for k, d, n in a.order_by)
    return f"{a.func}({'distinct ' if a.distinct else ''}{args}{' order by ' + order if order else ''})"


def _cols(cols) -> str:
    return ", ".join(f"#{c}" for c in cols)


def _order(order_by) -> str:
    return ", ".join(f"#{c}{' desc' if d else ' asc'}{' nulls_last' if nl else ' nulls_first'}"
                     for c, d, nl in order_by)


def _frame(frame: WindowFrame) -> str:
    if frame == WindowFrame():
        return ""

    def bound(b: tuple[str, int]) -> str:
        kind, off = b
        return f"{off} {kind}" if kind in ("preceding", "following") else kind.replace("_", " ")
    exclude = "" if frame.exclude == "no_others" else f" exclude {frame.exclude.replace('_', ' ')}"
    return f" {frame.mode} between {bound(frame.start)} and {bound(frame.end)}{exclude}"


def _line(p: Plan, indexes: Mapping[str, tuple[int, ...]] = {}) -> str:
    if isinstance(p, Get):
        return f"Get {p.id}"
    if isinstance(p, IndexLookup):
        return f"IndexLookup {p.id} key=[{_cols(p.key)}] ({len(p.keys)} keys)"
    if isinstance(p, Constant):
        if len(p.rows) == 1:
            return f"Constant ({', '.join(render_scalar(Literal(v, t)) for v, t in zip(p.rows[0], p.types))})"
        return f"Constant ({len(p.rows)} rows)"
    if isinstance(p, Map):
        return f"Map ({', '.join(render_scalar(e) for e in p.exprs)})"
    if isinstance(p, Filter):
        return f"Filter {' AND '.join(render_scalar(e) for e in p.predicates)}"
    if isinstance(p, Project):
        return f"Project ({_cols(p.columns)})"
    if isinstance(p, FlatMap):
        return f"FlatMap {p.func}({', '.join(render_scalar(a) for a in p.args)})" + \
            (" WITH ORDINALITY" if p.ordinality else "")
    if isinstance(p, Join):
        keys = " AND ".join(f"l#{a} = r#{b}" for a, b in zip(p.left_key, p.right_key))
        # (each input arranged by its key: a change on one side is matched against the other's;
        # an input read from an index on that key probes the index's arrangement in place)
        def side(name: str, input: Plan, key: tuple[int, ...]) -> str:
            node, _ = through_stateless(input)
            if isinstance(node, Get) and node.id in indexes:
                return f"{name}: index {node.id}'s arrangement, shared"
            return f"{name} by [{_cols(key)}]"
        arranged = f"  arranges: {side('left', p.left, p.left_key)}, {side('right', p.right, p.right_key)}"
        return (f"Join on=({keys})" if keys else "CrossJoin") + arranged
    if isinstance(p, DeltaJoin):
        return _delta_join(p, indexes)
    if isinstance(p, Reduce):
        extremum_kept = p.monotonic and any(a.func in ("min", "max") for a in p.aggregates)
        keeps = "the group's count and accumulators" if not any(
            (a.func in ("min", "max") and not p.monotonic) or a.distinct or a.order_by for a in p.aggregates) else \
            "the group's values (min/max, DISTINCT or ordered aggregates)"
        if extremum_kept:
            keeps += " (append-only input: min/max keep their current value only)"
        return (f"Reduce group_by=[{_cols(p.group_key)}] aggregates=[{', '.join(_agg(a) for a in p.aggregates)}]"
                f"  arranges: by [{_cols(p.group_key)}], {keeps}")
    if isinstance(p, TopK):
        kept = ("each group's first offset+limit rows (append-only input)" if p.monotonic
                else f"input by [{_cols(p.group_key)}]")
        return (f"TopK group_by=[{_cols(p.group_key)}] order_by=[{_order(p.order_by)}] "
                f"limit={p.limit} offset={p.offset}  arranges: {kept}")
    if isinstance(p, Window):
        funcs = ", ".join(f"{f.func}({_cols(f.args)}){_frame(f.frame)}" for f in p.funcs)
        return (f"Window partition_by=[{_cols(p.partition_key)}] order_by=[{_order(p.order_by)}] "
                f"functions=[{funcs}]  arranges: input by [{_cols(p.partition_key)}]")
    if isinstance(p, (Distinct, Threshold)):
        return f"{type(p).__name__}  arranges: by the whole row"
    if isinstance(p, ArrangeBy):
        return f"ArrangeBy keys=[{_cols(p.key)}]"
    return type(p).__name__.rstrip("_")


def _delta_join(p: DeltaJoin, indexes: Mapping[str, tuple[int, ...]]) -> str:
    """One path per input (`%i` is input i; `%j[#c]` probes input j by its columns c) and
    each (input, key) arrangement once: the join's own, or an index's, probed in place."""
    paths = "; ".join(f"%{source} " + " ".join(f"» %{s.input}[{_cols(s.lookup_key)}]" for s in stages)
                      for source, stages in enumerate(p.paths))
    arranged: list[str] = []
    for stages in p.paths:
        for s in stages:
            node, chain = through_stateless(p.inputs[s.input])
            shared = isinstance(node, Get) and node.id in indexes and \
                tuple(passthrough_columns(chain, len(node.types))[k] for k in s.lookup_key) == indexes[node.id]
            what = f"%{s.input}: index {node.id}'s arrangement, shared" if shared \
                else f"%{s.input} by [{_cols(s.lookup_key)}]"
            if what not in arranged:
                arranged.append(what)
    return f"DeltaJoin paths=({paths})  arranges: {', '.join(arranged)}"


def render_plan(plan: Plan, indent: int = 0, indexes: Mapping[str, tuple[int, ...]] = {}) -> str:
    """The plan as an indented tree. A sub-plan read by several nodes (an outer join reads its
    inputs twice; the dataflow builds it once) is printed in full where it first appears,
    marked `[shared lN]`, and as `Shared lN` where it appears again: nested outer joins share
    sub-plans at every level, and printing each path would take exponential space. `indexes`:
    the indexes (by id, with their keys), whose arrangements a join probes in place."""
    counts: dict[int, int] = {}

    def count(p: Plan) -> None:
        counts[id(p)] = counts.get(id(p), 0) + 1
        if counts[id(p)] == 1:
            for c in children(p):
                count(c)

    count(plan)
    labels: dict[int, str] = {}
    lines: list[str] = []

    def walk(p: Plan, depth: int) -> None:
        pad = "  " * depth
        if id(p) in labels:
            lines.append(f"{pad}Shared {labels[id(p)]}")
            return
        line = _line(p, indexes)
        if counts[id(p)] > 1:
            labels[id(p)] = f"l{len(labels)}"
            line += f"  [shared {labels[id(p)]}]"
        lines.append(pad + line)
        for c in children(p):
            walk(c, depth + 1)

    walk(plan, indent)
    return "\n".join(lines)


def render_select(plan: Plan, finishing: Finishing, indexes: Mapping[str, tuple[int, ...]] = {}) -> str:
    text = render_plan(plan, indexes=indexes)
    if finishing != Finishing():
        parts = []
        if finishing.order_by:
            parts.append(f"order_by=[{_order(finishing.order_by)}]")
        if finishing.limit is not None:
            parts.append(f"limit={finishing.limit}")
        if finishing.offset:
            parts.append(f"offset={finishing.offset}")
        if finishing.project is not None:
            parts.append(f"output=[{_cols(finishing.project)}]")
        text = "Finish " + " ".join(parts) + "\n" + "\n".join("  " + l for l in text.split("\n"))
    return text
