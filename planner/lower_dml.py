"""INSERT, UPDATE and DELETE.

Literal VALUES rows are coerced to the table's column types now (PostgreSQL's assignment casts:
'2024-01-01' -> timestamp, 1 -> numeric(10,2)); omitted columns take their DEFAULT or NULL.
A row that is not all constants, or INSERT ... SELECT, becomes a `source` plan of full table width.

>>> # INSERT INTO t (b) VALUES ('7')   over t(a int4 DEFAULT 1, b int8)
>>> # InsertPlan('u1', rows=((1, 7),))
"""

from __future__ import annotations

from sqlglot import exp

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import ColumnRef, Literal, ScalarExpr
from dataflow.plan import Constant, Filter, Get, Map, Plan, Union_
from planner.context import PlanContext
from planner.lower_select import _project_exprs, _split_scalar, plan_query
from planner.scalar import ScalarLowerer, coerce, to_bool
from planner.scope import Scope, ScopeColumn
from planner.statements import DeletePlan, InsertPlan, UpdatePlan


def _table(node: exp.Expression, ctx: PlanContext, verb: str) -> tuple[CatalogItem, str]:
    if not isinstance(node, exp.Table):  # e.g. `DELETE FROM FROM t`, read by sqlglot as FROM-first
        raise SqlError(SqlState.SYNTAX_ERROR, f"syntax error: {verb.split()[0].upper()} needs a table name")
    parts = tuple(p for p in (node.catalog, node.db, node.name) if p)
    item = ctx.catalog.resolve(parts, ctx.search_path, ctx.database)
    if item.kind is not ItemKind.TABLE:
        raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'cannot {verb} {item.kind.value} "{item.name}"')
    alias = node.alias or item.name
    return item, alias


def _check_not_null(item: CatalogItem, i: int, e: ScalarExpr, ctx: PlanContext) -> None:
    if ctx.params.values is None:  # describing: parameter values are not known yet
        return
    if isinstance(e, Literal) and e.value is None and not item.columns[i].nullable:
        raise SqlError(SqlState.NOT_NULL_VIOLATION,
                       f'null value in column "{item.columns[i].name}" of relation "{item.name}" '
                       f'violates not-null constraint')


def _defaults(item: CatalogItem, defaults: tuple[ScalarExpr | None, ...] | None) -> list[ScalarExpr]:
    out = []
    for i, c in enumerate(item.columns):
        d = defaults[i] if defaults is not None and i < len(defaults) else None
        out.append(d if d is not None else Literal(None, c.type))
    return out


def plan_insert(node: exp.Insert, ctx: PlanContext,
                defaults: tuple[ScalarExpr | None, ...] | None = None) -> InsertPlan:
    """`defaults`: the table's DEFAULT expressions per column, if the caller knows them."""
    if node.args.get("returning"):
        raise unsupported("INSERT ... RETURNING")
    if node.args.get("conflict"):
        raise unsupported("INSERT ... ON CONFLICT")
    target = node.this
    names = None
    if isinstance(target, exp.Schema):
        names = [e.name for e in target.expressions]
        target = target.this
    item, _ = _table(target, ctx, "insert into")
    col_names = [c.name for c in item.columns]
    if names is None:
        positions = list(range(len(col_names)))
    else:
        positions = []
        for n in names:
            if n not in col_names:
                raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{n}" of relation "{item.name}" does not exist')
            p = col_names.index(n)
            if p in positions:
                raise SqlError(SqlState.DUPLICATE_COLUMN, f'column "{n}" specified more than once')
            positions.append(p)
    base = _defaults(item, defaults)
    src = node.expression
    if isinstance(src, exp.Values):
        lowerer = ScalarLowerer(Scope(), ctx, clause="VALUES")
        rows: list[list[ScalarExpr]] = []
        widths = {len(t.expressions) if isinstance(t, exp.Tuple) else 1 for t in src.expressions}
        if len(widths) > 1:
            raise SqlError(SqlState.SYNTAX_ERROR, "VALUES lists must all be the same length")
        for tup in src.expressions:
            vals = tup.expressions if isinstance(tup, exp.Tuple) else [tup]
            if len(vals) > len(positions):
                raise SqlError(SqlState.SYNTAX_ERROR, "INSERT has more expressions than target columns")
            row = list(base)
            for p, v in zip(positions, vals):
                if isinstance(v, exp.Var) and v.name.upper() == "DEFAULT":
                    continue
                c = item.columns[p]
                row[p] = coerce(lowerer.lower(v), c.type, ctx, mode="assignment", column=c.name)
            for i, e in enumerate(row):
                _check_not_null(item, i, e, ctx)
            rows.append(row)
        if all(isinstance(e, Literal) for r in rows for e in r):
            return InsertPlan(item.id, tuple(tuple(e.value for e in r) for r in rows))
        unit = Constant(((),), ())
        parts = tuple(Map(unit, tuple(r)) for r in rows)
        return InsertPlan(item.id, None, parts[0] if len(parts) == 1 else Union_(parts))
    if isinstance(src, exp.Query):
        q = plan_query(src, ctx, top=False)
        if len(q.columns) > len(positions):
            raise SqlError(SqlState.SYNTAX_ERROR, "INSERT has more expressions than target columns")
        width = len(q.columns)
        row = list(base)
        for k, p in enumerate(positions[:width]):
            c = item.columns[p]
            row[p] = coerce(ColumnRef(k, q.columns[k].type), c.type, ctx, mode="assignment", column=c.name)
        for i, e in enumerate(row):
            _check_not_null(item, i, e, ctx)
        return InsertPlan(item.id, None, _project_exprs(q.plan, width, row))
    raise unsupported("this form of INSERT")


def _selection(node: exp.Expression, item: CatalogItem, alias: str, ctx: PlanContext) -> tuple[Plan, Scope]:
    scope = Scope([ScopeColumn(alias, c.name, c.type) for c in item.columns])
    plan: Plan = Get(item.id, scope.types)
    ctx.depends_on.append(item.id)
    where = node.args.get("where")
    if where is not None:
        pred = to_bool(ScalarLowerer(scope, ctx, clause="WHERE").lower(where.this), ctx, "WHERE")
        plan = Filter(plan, tuple(_split_scalar(pred)))
    return plan, scope


def plan_update(node: exp.Update, ctx: PlanContext) -> UpdatePlan:
    if node.args.get("from_") or node.args.get("from"):
        raise unsupported("UPDATE ... FROM")
    if node.args.get("returning"):
        raise unsupported("UPDATE ... RETURNING")
    item, alias = _table(node.this, ctx, "update")
    selection, scope = _selection(node, item, alias, ctx)
    lowerer = ScalarLowerer(scope, ctx, clause="UPDATE")
    assignments: list[ScalarExpr] = [ColumnRef(i, c.type) for i, c in enumerate(item.columns)]
    seen = set()
    for a in node.expressions:
        col = a.this
        name = col.name
        idx = [i for i, c in enumerate(item.columns) if c.name == name]
        if not idx:
            raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{name}" of relation "{item.name}" does not exist')
        i = idx[0]
        if i in seen:
            raise SqlError(SqlState.SYNTAX_ERROR, f'multiple assignments to same column "{name}"')
        seen.add(i)
        c = item.columns[i]
        e = coerce(lowerer.lower(a.expression), c.type, ctx, mode="assignment", column=c.name)
        _check_not_null(item, i, e, ctx)
        assignments[i] = e
    return UpdatePlan(item.id, selection, tuple(assignments))


def plan_delete(node: exp.Delete, ctx: PlanContext) -> DeletePlan:
    if node.args.get("using"):
        raise unsupported("DELETE ... USING")
    if node.args.get("returning"):
        raise unsupported("DELETE ... RETURNING")
    item, alias = _table(node.this, ctx, "delete from")
    selection, _ = _selection(node, item, alias, ctx)
    return DeletePlan(item.id, selection)
