"""Rule: evaluate constant expressions at plan time, as PostgreSQL does.

An operator or function whose arguments are all constants is computed once, by the engine's own
kernels on a one-row batch, and replaced by its value; a CASE with a constant condition keeps
only the branch taken. Besides saving work per row, this gives PostgreSQL's errors: a failing
constant (`1 / 0`, `'abc'::int` inside an expression) fails the statement even where no row
would ever reach it (an empty table, `LIMIT 0`), exactly when PostgreSQL's planner fails it.

    Call('add', (Literal(1, INT4), Literal(2, INT4)), INT4)       -> Literal(3, INT4)
    If(Literal(False, BOOL), Call('div', (1, 0)), Literal(0))      -> Literal(0)   (no error)
    Call('mz_now', (), INT8)                                       -> unchanged (not constant)

A constant that fails is not raised at once: it becomes a *deferred error* (`deferred_error`),
raised when the finished plan still holds it after column pruning, outside any subquery
PostgreSQL would never plan (`raise_deferred_planned`). PostgreSQL removes the columns of a derived table or CTE nobody reads before
it folds constants, so `SELECT a FROM (SELECT a, 1 / 0 AS x FROM t) s` answers there:

    Call('div', (Literal(1, INT4), Literal(0, INT4)), INT4)
        -> Call('deferred_error', ('22012', 'division by zero', NULL, NULL), INT4)
"""

from __future__ import annotations

import pyarrow as pa

from dataflow.expr import Call, Cast, If, Literal, ScalarExpr
from dataflow.types import TypeKind
from planner.context import ParamSlot
from planner.functions import STRICT_KERNELS, VOLATILE_KERNELS

DEFERRED_ERROR = "deferred_error"

# Not constant even with constant arguments.
_VOLATILE = frozenset({"mz_now", DEFERRED_ERROR}) | VOLATILE_KERNELS

# PostgreSQL's STABLE functions (pg_proc.provolatile 's') among our kernels: its planner does not
# fold them, so with constant arguments they still run per row, and an error they raise (or
# that a function of their result raises) appears only if a row reaches them:
# `SELECT jsonb_array_length(jsonb_build_object('a', 1)) FROM empty_table` answers no rows.
_STABLE = frozenset({"to_char", "to_timestamp_fmt", "to_date_fmt", "to_jsonb", "to_json",
                     "jsonb_build_object", "jsonb_build_array", "json_build_object", "json_build_array",
                     "format", "concat_any", "concat_ws", "array_to_string"})
# ... and those that are STABLE only for a timestamptz argument (the session's time zone).
_STABLE_WITH_TIMESTAMPTZ = frozenset({"date_trunc", "extract", "date_part"})


# Operators (all STRICT in PostgreSQL): with a NULL constant operand the result is NULL, whatever
# the other operand, and PostgreSQL's planner folds it so without evaluating that operand:
# `WHERE 1.5 / c < NULL` is never true and never divides.
_STRICT_OPERATORS = frozenset({"eq", "neq", "lt", "lte", "gt", "gte", "add", "sub", "mul", "mul_rounded",
                               "div", "mod", "neg", "concat", "like", "ilike", "not_like", "not_ilike",
                               "regex_match",
                               # x = ANY (a constant array that is not empty)
                               "in_array",
                               # the array functions and operators PostgreSQL declares STRICT
                               # (array_cat, array_append, array_position, ... are not)
                               "array_length", "array_upper", "array_lower", "array_ndims", "cardinality",
                               "array_contains", "array_contained", "array_overlap",
                               # an array or row comparison's order-preserving key: NULL for NULL
                               "sort_key"})


def _stable(e: Call) -> bool:
    return e.func in _STABLE or (e.func in _STABLE_WITH_TIMESTAMPTZ and
                                 any(a.type.kind is TypeKind.TIMESTAMPTZ for a in e.args))
_ONE_ROW = pa.table({"_": pa.array([0], pa.int8())})


def _constant(e: ScalarExpr) -> bool:
    return isinstance(e, Literal) and not isinstance(e.value, ParamSlot) and e.type.kind is not TypeKind.UNKNOWN


def _null_constant(e: ScalarExpr) -> bool:
    """A constant NULL, also under the comparison key an array comparison wraps it in."""
    if isinstance(e, Call) and e.func == "sort_key" and len(e.args) == 1:
        return _null_constant(e.args[0])
    return _constant(e) and e.value is None


def fold_constant(e: ScalarExpr) -> ScalarExpr:
    """`e` with its top node evaluated if all of its inputs are constants (inputs are folded
    first by the caller, bottom-up)."""
    if isinstance(e, If) and _constant(e.cond):
        return e.then if e.cond.value is True else e.els
    if isinstance(e, Call) and (e.func in _STRICT_OPERATORS or e.func in STRICT_KERNELS) and \
            any(_null_constant(a) for a in e.args):
        # A strict function with a NULL argument is NULL: PostgreSQL never calls it.
        return Literal(None, e.type)
    if isinstance(e, Call) and e.func not in _VOLATILE and e.args and all(_constant(a) for a in e.args):
        return e if _stable(e) else evaluate(e)
    if isinstance(e, Cast) and _constant(e.arg):
        return evaluate(e)
    if isinstance(e, Cast) and isinstance(e.arg, Literal) and e.arg.value is None:
        return Literal(None, e.type)  # NULL of any type (an untyped NULL cast to an array type)
    return e


def fold_tree(e: ScalarExpr) -> ScalarExpr:
    """`e` folded bottom-up (`fold_constant` at every node), for an expression built without
    folding on the way (a CASE condition: `'abc' NOT LIKE '%'` is a constant false arm)."""
    if isinstance(e, Call):
        args = tuple(fold_tree(a) for a in e.args)
        return fold_constant(Call(e.func, args, e.type) if args != e.args else e)
    if isinstance(e, Cast):
        arg = fold_tree(e.arg)
        return fold_constant(Cast(arg, e.type) if arg is not e.arg else e)
    if isinstance(e, If):
        cond, then, els = fold_tree(e.cond), fold_tree(e.then), fold_tree(e.els)
        return fold_constant(If(cond, then, els, e.type))
    return e


def evaluate(e: ScalarExpr) -> ScalarExpr:
    """`e` (which reads no column) evaluated now: its value, or a deferred error."""
    from dataflow.errors import SqlError
    from dataflow.scalar import compile_expr
    try:
        value = compile_expr(e)(_ONE_ROW)
        v = value[0].as_py() if len(value) else None
    except SqlError as err:
        return deferred_error(err, e)  # PostgreSQL fails the statement at plan time too, if it is read
    except Exception:  # noqa: BLE001 - a constant the kernels cannot build (or Python cannot
        return e       # hold, like a date before year 1): leave it to run time
    return Literal(v, e.type)


def deferred_error(err, e: ScalarExpr) -> Call:
    """The failing constant `e` as an expression that raises `err` (at plan time if the plan
    still holds it once pruned; at run time, for each batch it meets, otherwise)."""
    from dataflow.types import TEXT
    return Call(DEFERRED_ERROR, tuple(Literal(v, TEXT) for v in (err.sqlstate, err.message, err.detail, err.hint)),
                e.type)


def set_operation_errors(plan, branch_errors: list[Call]):
    """A set operation's plan carrying its branches' failing constants (PostgreSQL folds every
    column of a set operation's branches when it plans it): a filter of the first one, marked
    as a set operation's, so `raise_deferred_planned` raises it unless PostgreSQL would never
    plan the set operation (under a constantly false condition). It never runs: raised at plan
    time, or removed with the empty part of the plan it sits in."""
    from dataflow.plan import Filter
    from dataflow.types import BOOL, TEXT
    if not branch_errors:
        return plan
    marker = Call(DEFERRED_ERROR, branch_errors[0].args[:4] + (Literal(_SET_OPERATION, TEXT),), BOOL)
    return Filter(plan, (marker,))


_SET_OPERATION = "set operation"


def first_deferred(node, planned: bool = False) -> Call | None:
    """The first deferred error in `node` (of a relational plan, with `planned`, only one
    `raise_deferred_planned` would raise), or None."""
    from dataflow.errors import SqlError
    from dataflow.types import BOOL
    try:
        raise_deferred_planned(node) if planned else raise_deferred(node)
    except SqlError as err:
        return deferred_error(err, Literal(None, BOOL))
    return None


def _is_set_operation_marker(node) -> bool:
    from dataflow.plan import Filter
    return isinstance(node, Filter) and any(
        isinstance(p, Call) and p.func == DEFERRED_ERROR and len(p.args) > 4 and p.args[4].value == _SET_OPERATION
        for p in node.predicates)


def raise_deferred(node) -> None:
    """Raise the first deferred error in `node` (an expression, a plan or a statement plan)."""
    from dataflow.errors import SqlError
    from dataflow.nodes import field_values
    seen: set[int] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen or isinstance(n, (str, int, float, bool, type(None))):
            continue
        seen.add(id(n))
        if isinstance(n, Call) and n.func == DEFERRED_ERROR:
            state, message, detail, hint = (a.value for a in n.args[:4])
            raise SqlError(state, message, detail=detail, hint=hint)
        if isinstance(n, (tuple, list)):
            todo.extend(reversed(n))
        elif isinstance(n, dict):
            todo.extend(n.values())
        else:
            values = field_values(n)
            if values is not None:
                todo.extend(reversed(values))


def raise_deferred_planned(plan) -> None:
    """Raise the first deferred error in a relational plan that PostgreSQL's planner would
    fold, which is every one except those inside a subquery it never plans: one it cannot pull
    up into its parent (DISTINCT, GROUP BY or aggregates, LIMIT, window functions) under a
    condition that is constantly false or NULL. PostgreSQL proves that relation empty before
    planning it, so `SELECT 1 FROM (SELECT DISTINCT decode('0', 'hex') FROM t) s WHERE false`
    answers no rows, while `SELECT 1 / 0 FROM t WHERE false` fails."""
    from dataflow.nodes import field_values
    from dataflow.plan import Distinct, Filter, FlatMap, LetRec, Map, Project, Reduce, Threshold, TopK, Window, children

    barriers = (Distinct, Reduce, TopK, Window, Threshold)

    def in_subquery(node) -> bool:
        # A barrier, or row-wise nodes over one (that subquery's select list or HAVING).
        while isinstance(node, (Map, Filter, Project, FlatMap)):
            node = node.input
        return isinstance(node, barriers)

    seen: set[tuple[int, bool]] = set()
    todo = [(plan, False)]
    while todo:
        node, under_false = todo.pop()
        if (id(node), under_false) in seen:
            continue
        seen.add((id(node), under_false))
        if under_false and (in_subquery(node) or _is_set_operation_marker(node)):
            continue    # a subquery PostgreSQL does not plan
        if isinstance(node, LetRec):
            raise_deferred(node)
            continue
        kids = children(node)
        for v in field_values(node):
            if any(v is k for k in kids) or (isinstance(v, tuple) and v and all(any(x is k for k in kids) for x in v)):
                continue
            raise_deferred(v)
        never = isinstance(node, Filter) and any(
            isinstance(p, Literal) and p.value is not True for p in node.predicates)
        todo.extend((k, under_false or never) for k in reversed(kids))
