"""Rule: factor the conditions every branch of a disjunction shares out of it.

    (p.partkey = l.partkey AND p.brand = 'b12' AND l.qty < 10)
 OR (p.partkey = l.partkey AND p.brand = 'b23' AND l.qty < 20)
becomes
    p.partkey = l.partkey
AND ((p.brand = 'b12' AND l.qty < 10) OR (p.brand = 'b23' AND l.qty < 20))

so the shared equality becomes a join key instead of the join running as a cross product with
the OR as a filter (TPC-H Q19's shape). PostgreSQL and Materialize both do this. It is exact in
SQL's three-valued logic, which is a distributive lattice: `(a AND b) OR (a AND c)` equals
`a AND (b OR c)` for every combination of TRUE, FALSE and NULL, and when one branch is
entirely shared, `(a) OR (a AND c)` is just `a` (absorption).

Works on lowered predicates (`dataflow.expr`), whose equality is structural.
"""

from __future__ import annotations

from dataflow.expr import Call, ScalarExpr
from dataflow.types import BOOL


def _flatten(e: ScalarExpr, func: str) -> list[ScalarExpr]:
    if isinstance(e, Call) and e.func == func:
        return [p for a in e.args for p in _flatten(a, func)]
    return [e]


_SYMMETRIC = frozenset({"eq", "neq", "is_distinct_from", "is_not_distinct_from"})


def _key(e: ScalarExpr) -> ScalarExpr:
    """`a = b` and `b = a` are the same condition."""
    if isinstance(e, Call) and e.func in _SYMMETRIC:
        return Call(e.func, tuple(sorted(e.args, key=repr)), e.type)
    return e


def _join(parts: list[ScalarExpr], func: str) -> ScalarExpr:
    return parts[0] if len(parts) == 1 else Call(func, tuple(parts), BOOL)


def factor_disjunction(pred: ScalarExpr) -> list[ScalarExpr]:
    """The conjuncts equivalent to `pred`: the ones shared by all of its OR branches, then the
    OR of what remains of each branch (omitted when some branch had nothing else)."""
    if not (isinstance(pred, Call) and pred.func == "or"):
        return [pred]
    branches = [_flatten(b, "and") for b in _flatten(pred, "or")]
    keys = [{_key(c) for c in b} for b in branches]
    common: list[ScalarExpr] = []
    for c in branches[0]:
        if all(_key(c) in k for k in keys[1:]) and _key(c) not in {_key(x) for x in common}:
            common.append(c)
    if not common:
        return [pred]
    shared = {_key(c) for c in common}
    rest = [[c for c in b if _key(c) not in shared] for b in branches]
    if any(not r for r in rest):
        return common
    return common + [_join([_join(r, "and") for r in rest], "or")]


def factor_disjunctions(preds: list[ScalarExpr]) -> list[ScalarExpr]:
    return [p for pred in preds for p in factor_disjunction(pred)]
