"""Rule: a constant one side of a join fixes its key to fixes the other side's key too.

Rows of an inner equi-join match only where their keys are equal, so when every row of one input
has key `= c` (a filter says so), only the other input's rows with key `= c` can match: that
filter is added to the other input as far down as it goes (equivalence propagation, as
PostgreSQL's equivalence classes and Materialize's do). The join's answer is the same; the other
input's arrangement holds only the rows that can match instead of the whole relation, and the
filter can reach a further join below it, where it propagates again.

    SELECT * FROM a JOIN b ON a.x = b.x WHERE a.x = 5

    Join(Filter(Get(a), (#0 = 5,)), Get(b), (0,), (0,))
        -> Join(Filter(Get(a), (#0 = 5,)), Filter(Get(b), (#0 = 5,)), (0,), (0,))

A part of the plan read by several parents (an outer join reads its inputs twice) is filtered
where it is read, never rewritten below, so it stays one shared computation. Facts are only
`column = literal` conditions with a non-NULL literal of the column's type; keys of different
types, prepared-statement parameters and everything else are left alone.
"""

from __future__ import annotations

from dataflow.expr import Call, ColumnRef, Literal, ScalarExpr
from dataflow.plan import (ArrangeBy, Distinct, Filter, Join, LetRec, Map, Negate, Plan, Project, Reduce,
                           Threshold, Union_, children, output_types, with_children)
from dataflow.types import BOOL
from planner.context import ParamSlot
from planner.rules.rewrite import parent_counts

Facts = dict[int, Literal]


def propagate_join_constants(plan: Plan) -> Plan:
    return _Propagation(plan).run()


def _fact(p: ScalarExpr) -> tuple[int, Literal] | None:
    """(column, constant) of a `column = constant` condition."""
    if not (isinstance(p, Call) and p.func == "eq" and len(p.args) == 2):
        return None
    a, b = p.args
    if isinstance(b, ColumnRef) and isinstance(a, Literal):
        a, b = b, a
    if isinstance(a, ColumnRef) and isinstance(b, Literal) and b.value is not None and \
            not isinstance(b.value, ParamSlot) and a.type == b.type:
        return a.index, b
    return None


class _Propagation:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.parents = parent_counts(plan)
        self.shared: set[int] = set()     # ids of (rewritten) nodes read by several parents
        self.keep: list[Plan] = []        # keeps every id above alive
        self.facts_of: dict[int, Facts] = {}

    def run(self) -> Plan:
        done: dict[int, Plan] = {}

        def visit(node: Plan) -> Plan:
            key = id(node)
            if key in done:
                return done[key]
            new = node
            if not isinstance(node, LetRec):
                kids = children(node)
                rebuilt = tuple(visit(k) for k in kids)
                if any(a is not b for a, b in zip(kids, rebuilt)):
                    new = with_children(node, rebuilt)
                if isinstance(new, Join):
                    new = self._join(new)
            if self.parents.get(key, 0) > 1:
                self.shared.add(id(new))
            self.keep.append(new)
            done[key] = new
            return new

        return visit(self.plan)

    # -- what is known of a plan's rows --------------------------------------------------------

    def facts(self, node: Plan) -> Facts:
        key = id(node)
        if key not in self.facts_of:
            self.keep.append(node)
            self.facts_of[key] = self._facts(node)
        return self.facts_of[key]

    def _facts(self, node: Plan) -> Facts:
        if isinstance(node, Filter):
            out = dict(self.facts(node.input))
            for p in node.predicates:
                f = _fact(p)
                if f is not None:
                    out[f[0]] = f[1]
            return out
        if isinstance(node, Map):
            out = dict(self.facts(node.input))
            width = len(output_types(node.input))
            for j, e in enumerate(node.exprs):
                if isinstance(e, ColumnRef) and e.index in out:
                    out[width + j] = out[e.index]
            return out
        if isinstance(node, Project):
            inner = self.facts(node.input)
            return {j: inner[c] for j, c in enumerate(node.columns) if c in inner}
        if isinstance(node, Join):
            left, right = self.facts(node.left), self.facts(node.right)
            width = len(output_types(node.left))
            out = dict(left)
            out.update({width + c: v for c, v in right.items()})
            for lk, rk in zip(node.left_key, node.right_key):
                if lk in left and width + rk not in out:
                    out[width + rk] = left[lk]
                if rk in right and lk not in out:
                    out[lk] = right[rk]
            return out
        if isinstance(node, Reduce):
            inner = self.facts(node.input)
            return {j: inner[c] for j, c in enumerate(node.group_key) if c in inner}
        if isinstance(node, (Distinct, Threshold, ArrangeBy)):
            return self.facts(node.input)
        if isinstance(node, Union_) and node.inputs:
            first, *rest = [self.facts(i) for i in node.inputs]
            return {c: v for c, v in first.items() if all(r.get(c) == v for r in rest)}
        return {}

    # -- adding a fact to a join's input -------------------------------------------------------

    def _join(self, join: Join) -> Join:
        left, right = join.left, join.right
        lt, rt = output_types(left), output_types(right)
        for lk, rk in zip(join.left_key, join.right_key):
            if lt[lk] != rt[rk]:
                continue
            lf, rf = self.facts(left), self.facts(right)
            if lk in lf and rk not in rf:
                right = self._push(right, rk, lf[lk])
            elif rk in rf and lk not in lf:
                left = self._push(left, lk, rf[rk])
        if left is join.left and right is join.right:
            return join
        return Join(left, right, join.left_key, join.right_key)

    def _push(self, node: Plan, col: int, value: Literal) -> Plan:
        """`node` with only its rows whose column `col` equals `value`, filtered as deep as
        the filter goes without rewriting a shared part."""
        types = output_types(node)
        if id(node) not in self.shared:
            if isinstance(node, Filter):
                return Filter(self._push(node.input, col, value), node.predicates)
            if isinstance(node, Map):
                width = len(types) - len(node.exprs)
                if col < width:
                    return Map(self._push(node.input, col, value), node.exprs)
                copied = node.exprs[col - width]   # a column copied from the input
                if isinstance(copied, ColumnRef):
                    return Map(self._push(node.input, copied.index, value), node.exprs)
            elif isinstance(node, Project):
                return Project(self._push(node.input, node.columns[col], value), node.columns)
            elif isinstance(node, Join):
                width = len(output_types(node.left))
                # (and on through that join's keys to its other input)
                if col < width:
                    return self._join(Join(self._push(node.left, col, value), node.right, node.left_key, node.right_key))
                return self._join(Join(node.left, self._push(node.right, col - width, value), node.left_key,
                                       node.right_key))
            elif isinstance(node, (Negate, Threshold, Distinct)):
                return type(node)(self._push(node.input, col, value))
            elif isinstance(node, Reduce) and col < len(node.group_key):
                return Reduce(self._push(node.input, node.group_key[col], value), node.group_key, node.aggregates)
            elif isinstance(node, Union_):
                return Union_(tuple(self._push(i, col, value) for i in node.inputs))
        return Filter(node, (Call("eq", (ColumnRef(col, types[col]), value), BOOL),))
