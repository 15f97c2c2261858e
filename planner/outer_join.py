"""LEFT / RIGHT / FULL JOIN ... ON <any condition>, lowered to inner joins, semijoins and NULL
padding (the engine has only inner equi-joins):

    L LEFT JOIN R ON c  =  (L JOIN R ON c)  UNION ALL  pad(L − L ⋉ matched)

The ON condition is split into conjuncts: conditions on one side only filter that side before
the join (a row failing them is still kept, padded); equalities between an expression of each
side become join keys (an expression key is computed by a Map first); everything else is a
residual filter on the joined pairs. Which left rows matched:

* without a residual, a left row matched iff it passed its own conditions and its key is among
  the right side's keys: `L − (Lm ⋉ DISTINCT keys(Rm))`;
* with a residual, only the joined pairs know: `matched = DISTINCT left columns of the pairs`,
  and `L − (L ⋉ matched)` where ⋉ compares whole rows NULL-safely (each column becomes the key
  pair `(col IS NULL, coalesce(col, zero))`), so a left row keeps its own multiplicity.

Example: `a LEFT JOIN b ON a.k + 1 = b.k AND a.x < b.y` maps `a.k + 1` onto a, joins on it and
b.k, filters the pairs by `a.x < b.y`, and pads the rows of a that no pair kept.
"""

from __future__ import annotations


from dataflow.expr import Call, ColumnRef, Literal, ScalarExpr, columns_used
from dataflow.plan import Distinct, Filter, Join, Map, Negate, Plan, Project, Union_
from dataflow.types import BOOL, SqlType
from planner import equality_keys


def _zero(t: SqlType):
    """Any non-NULL value of the type (the NULL flag beside it tells a real zero from NULL)."""
    from planner.subqueries import zero_of
    return zero_of(t)


def row_keys(types: tuple[SqlType, ...]) -> tuple[ScalarExpr, ...]:
    """NULL-safe key columns for whole-row equality: (col IS NULL, coalesce(col, zero)) each."""
    out: list[ScalarExpr] = []
    for i, t in enumerate(types):
        col = ColumnRef(i, t)
        out.append(Call("is_null", (col,), BOOL))
        out.append(Call("coalesce", (col, Literal(_zero(t), t)), t))
    return tuple(out)


def semijoin_rows(rows: Plan, distinct_rows: Plan, types: tuple[SqlType, ...]) -> Plan:
    """The rows of `rows` equal (NULL-safely, whole row) to some row of `distinct_rows`, each with
    its own multiplicity."""
    n = len(types)
    keys = row_keys(types)
    kpos = tuple(range(n, n + len(keys)))
    left = Map(rows, keys)
    right = Map(distinct_rows, keys)
    return Project(Join(left, right, kpos, kpos), tuple(range(n)))


def _shift(e: ScalarExpr, delta: int) -> ScalarExpr:
    from planner.lower_select import shift
    return shift(e, delta)


def lower_outer_join(left_plan: Plan, left_types: tuple[SqlType, ...], right_plan: Plan,
                     right_types: tuple[SqlType, ...], side: str, preds: list[ScalarExpr],
                     filter_pairs=None) -> Plan:
    """`left <side> JOIN right ON AND(preds)`; `preds` are over the joined scope (left columns,
    then right columns). The output is left columns ++ right columns. `filter_pairs`, if given,
    is one more residual condition as a function from the joined pairs to those it keeps (ON
    conditions with subqueries: `planner.subqueries` attaches their values to the pairs)."""
    n_left, n_right = len(left_types), len(right_types)
    lkeys: list[int] = []
    rkeys: list[int] = []
    lexprs: list[ScalarExpr] = []
    rexprs: list[ScalarExpr] = []
    lconds: list[ScalarExpr] = []
    rconds: list[ScalarExpr] = []
    residual: list[ScalarExpr] = []
    for p in preds:
        cols = columns_used(p)
        if all(c < n_left for c in cols):  # left-only, or constant (`ON false` empties the join)
            lconds.append(p)
            continue
        if cols and all(c >= n_left for c in cols):
            rconds.append(_shift(p, -n_left))
            continue
        if isinstance(p, Call) and p.func == "eq" and p.args[0].type == p.args[1].type:
            a, b = p.args
            ca, cb = columns_used(a), columns_used(b)
            if ca and cb and all(c >= n_left for c in ca) and all(c < n_left for c in cb):
                a, b, ca, cb = b, a, cb, ca
            if ca and cb and all(c < n_left for c in ca) and all(c >= n_left for c in cb):
                if isinstance(a, ColumnRef) and isinstance(b, ColumnRef) and not equality_keys.needs_key(a.type):
                    lkeys.append(a.index)
                    rkeys.append(b.index - n_left)
                else:  # an expression of each side (or a key by SQL equality): computed by a Map, then a key
                    lkeys.append(n_left + len(lexprs))
                    rkeys.append(n_right + len(rexprs))
                    lexprs.append(equality_keys.key(a))
                    rexprs.append(_shift(equality_keys.key(b), -n_left))
                continue
        residual.append(p)
    # Each side, extended by its key expressions (positions n.. of that side).
    l_ext = Map(left_plan, tuple(lexprs)) if lexprs else left_plan
    r_ext = Map(right_plan, tuple(rexprs)) if rexprs else right_plan
    lm = Filter(l_ext, tuple(lconds)) if lconds else l_ext
    rm = Filter(r_ext, tuple(rconds)) if rconds else r_ext
    lw = n_left + len(lexprs)
    lk, rk = tuple(lkeys), tuple(rkeys)
    pairs: Plan = Join(lm, rm, lk, rk)
    if lexprs or rexprs:
        pairs = Project(pairs, tuple(range(n_left)) + tuple(range(lw, lw + n_right)))
    if residual:
        pairs = Filter(pairs, tuple(residual))
    if filter_pairs is not None:
        pairs = filter_pairs(pairs)
        residual.append(Literal(True, BOOL))  # matched rows are known from the pairs only

    def unmatched_left() -> Plan:
        if residual:
            matched = Distinct(Project(pairs, tuple(range(n_left))))
            return Union_((left_plan, Negate(semijoin_rows(left_plan, matched, left_types))))
        keys = Distinct(Project(rm, rk))
        hit = Project(Join(lm, keys, lk, tuple(range(len(rk)))), tuple(range(n_left)))
        return Union_((left_plan, Negate(hit)))

    def unmatched_right() -> Plan:
        if residual:
            matched = Distinct(Project(pairs, tuple(range(n_left, n_left + n_right))))
            return Union_((right_plan, Negate(semijoin_rows(right_plan, matched, right_types))))
        keys = Distinct(Project(lm, lk))
        hit = Project(Join(rm, keys, rk, tuple(range(len(lk)))), tuple(range(n_right)))
        return Union_((right_plan, Negate(hit)))

    parts: list[Plan] = [pairs]
    if side in ("LEFT", "FULL"):
        parts.append(Map(unmatched_left(), tuple(Literal(None, t) for t in right_types)))
    if side in ("RIGHT", "FULL"):
        padded = Map(unmatched_right(), tuple(Literal(None, t) for t in left_types))
        parts.append(Project(padded, tuple(range(n_right, n_right + n_left)) + tuple(range(n_right))))
    return Union_(tuple(parts))
