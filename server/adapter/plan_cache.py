"""Plans of prepared point reads and deletes kept across executions, their parameters bound late.

Every execution of a prepared statement is planned from its text with the parameters as
constants, which for a point read is most of environmentd's work. A SELECT or DELETE whose
parameters only pin columns (`... WHERE customer = $1 AND region = $2`, or a list of keys as
`id = ANY($1)`, at the top level of its WHERE) plans to the same plan for every non-NULL value
(every non-empty array of non-NULL integers) but for those constants, so the server keeps the
plan with holes where they were, and later executions (of any session) fill the holes in
instead of parsing and planning. A SELECT or DELETE without parameters is kept the same way,
with no holes (a closed-loop reader's prepared `SELECT * FROM v1`).

Which constants are the parameters is found by planning the statement a second time, with
other values of the parameters, another statement time and another session process id: the
two plans must be equal except
at literals holding the first and the second value of one parameter, and every parameter must
have such a literal. A plan that folds a parameter into something else (`$1 + 1`), reads the
clock, a random number or the session's process id, or reads live system state (a constant
relation) is not kept. The
plan is also only kept for the catalog it was planned against, the session's settings and
role, and the parameter types it was prepared with.

Example: `SELECT n FROM by_cust WHERE customer = $1`, executed first with 7:

    plan(7)     = Project(Filter(Get(u3), (eq(#0, 7),)), (1,))
    plan(probe) = Project(Filter(Get(u3), (eq(#0, 1000000007),)), (1,))
    kept        = Project(Filter(Get(u3), (eq(#0, $1),)), (1,))

and executing it with 42 binds `Project(Filter(Get(u3), (eq(#0, 42),)), (1,))` without planning.
A NULL value is planned as usual (`customer = NULL` folds to false).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import uuid
from collections import OrderedDict
from typing import Any, Callable

from sqlglot import exp

from dataflow.expr import Literal
from dataflow.plan import Constant, any_node
from dataflow.types import SqlType, TypeKind
from planner.context import SessionInfo
from planner.statements import DeletePlan, SelectPlan

# Types whose equality with a column plans the same for every non-NULL value: no special
# values (NaN, -0, infinities), no spans (intervals), no normalisation of the constant.
_BOUND_KINDS = {TypeKind.INT2: 32767, TypeKind.INT4: 2**31 - 1, TypeKind.INT8: 2**63 - 1}
_TEXT_KINDS = (TypeKind.TEXT, TypeKind.VARCHAR)
# An integer array's canonical text, not empty, no NULL (as the planner would write it).
_KEY_LIST = re.compile(r"\{(?:0|-?[1-9][0-9]*)(?:,(?:0|-?[1-9][0-9]*))*\}")


def _eligible(value: Any, t: SqlType | None) -> bool:
    if value is None or t is None:
        return False
    if t.kind is TypeKind.ARRAY:
        # A list of keys (`= ANY($1)`) as a bound parameter arrives: its canonical text (the
        # planner plans a list of Python values otherwise, so only one form may be kept).
        return t.element is not None and t.element.kind in _BOUND_KINDS and type(value) is str \
            and _KEY_LIST.fullmatch(value) is not None
    if t.kind in _BOUND_KINDS:
        return type(value) is int
    if t.kind in _TEXT_KINDS:
        return type(value) is str
    if t.kind is TypeKind.UUID:
        return isinstance(value, uuid.UUID)
    return False


def _probe(values: list[Any], types: list[SqlType]) -> list[Any]:
    """Other values of the same types, distinct from `values` and from each other."""
    out = []
    for i, (v, t) in enumerate(zip(values, types)):
        if t.kind is TypeKind.ARRAY:  # as many other keys
            top = _BOUND_KINDS[t.element.kind] - 7 - i
            p = [top - 2 * k for k in range(v.count(",") + 1)]
            text = "{" + ",".join(map(str, p)) + "}"
            out.append(text if text != v else "{" + ",".join(str(x - 1000) for x in p) + "}")
        elif t.kind in _BOUND_KINDS:
            p = _BOUND_KINDS[t.kind] - 7 - i
            out.append(p if p != v else p - 1000)
        elif t.kind in _TEXT_KINDS:
            out.append(f"slipstream probe {i} {v!r}")
        else:
            p = uuid.UUID(int=(v.int + 1 + i) % 2**128)
            out.append(p)
    return out


def binds_only_columns(ast: Any, nparams: int) -> bool:
    """Whether `ast` is a SELECT or DELETE whose every parameter (if it has any) is compared
    with `=` to a column, or is the array of `column = ANY($n)`, in a conjunct of its own WHERE
    clause (not in a subquery, a select list or a join condition)."""
    if not isinstance(ast, (exp.Select, exp.Delete)):
        return False
    where = ast.args.get("where")
    for param in ast.find_all(exp.Parameter, exp.Placeholder):
        side = param
        if not isinstance(param.parent, exp.EQ):
            side = param.parent
            while isinstance(side, (exp.Cast, exp.Paren)):
                side = side.parent
            if not isinstance(side, exp.Any):
                return False
        eq = side.parent
        if not isinstance(eq, exp.EQ) or not isinstance(eq.left if eq.right is side else eq.right, exp.Column):
            return False
        node = eq.parent
        while isinstance(node, (exp.And, exp.Paren)):
            node = node.parent
        if node is not where or where is None:
            return False
    return True


@dataclasses.dataclass
class _Template:
    plan: SelectPlan | DeletePlan
    reads: list[str]
    holes: dict[int, int]  # id() of a literal in `plan` -> the parameter it holds
    # id() of every node on a path from `plan` to a hole -> its fields (or positions) on such paths
    dirty: dict[int, tuple]

    def bind(self, values: list[Any]) -> SelectPlan | DeletePlan:
        memo: dict[int, Any] = {}
        holes, dirty = self.holes, self.dirty

        def fill(node: Any) -> Any:
            key = id(node)
            out = memo.get(key)
            if out is not None:
                return out
            if key in holes:
                out = Literal(values[holes[key]], node.type)
            elif isinstance(node, (tuple, list)):
                parts = list(node)
                for i in dirty[key]:
                    parts[i] = fill(parts[i])
                out = type(node)(parts)
            else:  # a frozen dataclass: a copy with its dirty fields filled (no __init__ checks)
                out = object.__new__(type(node))
                out.__dict__.update(node.__dict__)
                for name in dirty[key]:
                    object.__setattr__(out, name, fill(getattr(node, name)))
            memo[key] = out
            return out
        if not holes:  # (a statement without parameters: its plan as it is)
            return self.plan
        return fill(self.plan)


class _Mismatch(Exception):
    """The two plans differ other than at a parameter's literals."""


def _template(first: SelectPlan | DeletePlan, second: SelectPlan | DeletePlan, values: list[Any], probe: list[Any],
              types: list[SqlType], reads: list[str]) -> _Template | None:
    """`first` with holes where it and `second` hold a parameter's two values, or None when
    they differ anywhere else or some parameter has no literal."""
    holes: dict[int, int] = {}
    plain: set[int] = set()  # literals of `first` that are not holes
    dirty: dict[int, tuple] = {}
    seen: dict[tuple[int, int], bool] = {}  # plans share sub-plans: compare each pair once

    def walk(a: Any, b: Any) -> bool:
        """Compare; True when `a` holds a hole."""
        pair = (id(a), id(b))
        if pair in seen:
            return seen[pair]
        if isinstance(a, Literal) and isinstance(b, Literal) and type(a.value) is type(b.value) \
                and a.type == b.type and a.value != b.value:
            hole = next((i for i, (v, p) in enumerate(zip(values, probe))
                         if a.value == v and b.value == p and a.type == types[i]), None)
            if hole is None or id(a) in plain or holes.get(id(a), hole) != hole:
                raise _Mismatch
            holes[id(a)] = hole
            out = True
        elif type(a) is not type(b):
            raise _Mismatch
        elif isinstance(a, (tuple, list)):
            if len(a) != len(b):
                raise _Mismatch
            on_path = tuple(i for i, (x, y) in enumerate(zip(a, b)) if walk(x, y))
            out = bool(on_path)
        elif isinstance(a, dict):
            if a.keys() != b.keys() or any([walk(a[k], b[k]) for k in a]):
                raise _Mismatch  # (plans hold no dicts on a parameter's path)
            out = False
        elif dataclasses.is_dataclass(a):
            if isinstance(a, Literal):
                if id(a) in holes:
                    raise _Mismatch
                plain.add(id(a))
            on_path = tuple(f.name for f in dataclasses.fields(a) if walk(getattr(a, f.name), getattr(b, f.name)))
            if on_path and not hasattr(a, "__dict__"):
                raise _Mismatch  # (bind copies a node through its __dict__)
            out = bool(on_path)
        else:
            if not (a == b or (a != a and b != b)):  # NaN equals itself here
                raise _Mismatch
            out = False
        if out and id(a) not in holes:
            dirty[id(a)] = on_path
        seen[pair] = out
        return out

    try:
        walk(first, second)
    except Exception:  # _Mismatch, or values that do not compare (arrays): not kept
        return None
    if set(holes.values()) != set(range(len(values))):
        return None
    return _Template(first, list(reads), holes, dirty)


PlanKey = tuple


def plan_key(sql: str, types: list[SqlType], catalog_version: int, info: SessionInfo) -> PlanKey:
    """What a kept plan was planned for: the text, the parameter types, the catalog's state,
    and everything of the session the planner reads but the statement time and the session's
    process id (a plan that reads either is not kept: see `PreparedPlans.learn`)."""
    return (sql, tuple(types), catalog_version, info.user, info.database, info.search_path,
            tuple(sorted(info.settings.items())))


Planner = Callable[[list[Any], SessionInfo, list[str]], Any]


class PreparedPlans:
    """Kept plans (the most recently used `capacity`), by `plan_key`, shared by the sessions
    (a client that reconnects, or a pool of them, plans a statement once). A key that cannot be
    kept is remembered as such, so it is not tried again."""

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[PlanKey, _Template | None] = OrderedDict()

    def bind(self, key: PlanKey, values: list[Any]) -> tuple[SelectPlan | DeletePlan, list[str]] | None:
        """The kept plan of `key` with `values` bound, and what it reads; None if there is none
        for these values."""
        template = self._entries.get(key)
        if template is None or not all(_eligible(v, t) for v, t in zip(values, key[1])):
            return None
        self._entries.move_to_end(key)
        return template.bind(values), template.reads

    def knows(self, key: PlanKey) -> bool:
        return key in self._entries

    def learn(self, key: PlanKey, values: list[Any], plan: Any, reads: list[str], info: SessionInfo,
              replan: Planner) -> None:
        """Keep `plan` (planned from `values`) for `key` if it qualifies; `replan(values, info,
        reads)` plans the same statement again."""
        types = list(key[1])
        template = None
        if isinstance(plan, SelectPlan) and not plan.set_vars and plan.as_of is None:
            tree = plan.plan
        elif isinstance(plan, DeletePlan):
            tree = plan.selection
        else:
            tree = None
        if tree is not None and len(values) == len(types) and all(_eligible(v, t) for v, t in zip(values, types)) \
                and not any_node(tree, lambda n: isinstance(n, Constant)):
            probe = _probe(values, types)
            later = dataclasses.replace(info, statement_time=info.statement_time + dt.timedelta(days=1, seconds=1),
                                        pid=info.pid + 1)
            again_reads: list[str] = []
            try:
                again = replan(probe, later, again_reads)
            except Exception:  # the probe values fail where the real ones did not: not kept
                again = None
            if again is not None and again_reads == reads:
                template = _template(plan, again, values, probe, types, reads)
        self._entries[key] = template
        if len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
