"""Lowering queries (SELECT, set operations, VALUES) to dataflow plans.

A SELECT becomes, bottom-up: the FROM items joined left-deep (equalities between the next item and
what is already joined become `Join` keys; every other predicate is a `Filter` placed as low as its
columns allow), then the Reduce of a grouped query, HAVING, the select list (`Map` + `Project`),
DISTINCT, and ORDER BY/LIMIT/OFFSET: a `Finishing` at the top level, a `TopK` inside subqueries
and views (where ORDER BY without LIMIT is ignored, as in Materialize).

>>> # SELECT o.id FROM orders o, customers c WHERE o.cid = c.id AND c.region = 'eu'
>>> # Project(Join(Get(orders), Filter(Get(customers), region = 'eu'), (1,), (0,)), (0,))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call, Cast, ColumnRef, If, Literal, ScalarExpr, columns_used
from dataflow.plan import (Constant, Distinct, Filter, Get, Join, Map, Negate, Plan, Project, Reduce,
                           Threshold, TopK, Union_, Window, WindowFunc, output_types)
from dataflow.types import BOOL, BYTEA, INT8, TEXT, UNKNOWN, Column, SqlType, TypeKind
from planner import equality_keys, recursive
from planner.aggregates import Grouping, contains_aggregate
from planner.context import PlanContext
from planner.distinct_on import check_order, distinct_on_columns, distinct_on_plan
from planner.grouping_sets import expand as expand_grouping, has_grouping_sets
from planner.index_lookup import indexes_in_cluster
from planner.ordering import needs_key
from planner.outer_join import lower_outer_join, semijoin_rows
from planner.rules.factor_disjunctions import factor_disjunctions
from planner.rules.fold_constants import fold_constant, first_deferred, raise_deferred, set_operation_errors
from planner.rules.prune_columns import prune_columns
from planner.rules.rewrite import rewrite_up
from planner.scalar import (ScalarLowerer, bpchar_as_text, coerce, coerce_all, expr_name, resolve_unknown, to_bool,
                            window_not_allowed)
from planner.system_catalog import plan_system_relation, resolve_system
from planner.scope import Scope, ScopeColumn
from planner.subqueries import (Subqueries, analyze, build, contains_subquery, global_aggregate_per_key, is_subquery,
                                join_on_keys)
from planner.statements import Finishing
from planner.windows import SelectWindows, window_calls
from planner.table_functions import (column_names, find_table_functions, flat_map, is_table_function,
                                     select_list_flat_map)
from planner.typing import is_float


@dataclass
class QueryResult:
    plan: Plan
    columns: tuple[Column, ...]
    finishing: Finishing = field(default_factory=Finishing)
    # Inside a correlated subquery (`ctx.outer`): how many key columns (the outer values the
    # result is for, `planner.subqueries`) follow the visible columns in the plan's output.
    keys: int = 0

    @property
    def types(self) -> tuple[SqlType, ...]:
        return tuple(c.type for c in self.columns)


# ---- entry point ------------------------------------------------------------------------------

def plan_query(node: exp.Expression, ctx: PlanContext, top: bool = True) -> QueryResult:
    """Plan any query. `top`: ORDER BY/LIMIT become a Finishing (else a TopK / ignored)."""
    with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
    if with_ is not None:
        if with_.args.get(recursive.WMR_MARK):
            return recursive.plan_mutually_recursive(node, with_, ctx, top)
        if with_.args.get("recursive"):
            recursive.register_recursive(with_)
        ctx = ctx.with_ctes(dict(ctx.ctes))
        for cte in with_.expressions:
            ctx.ctes[cte.alias_or_name] = cte
        # A CTE nothing reads is still analysed, as PostgreSQL does: its analysis errors (an
        # unknown column, a string literal that is no valid value of its type) fail the
        # statement; its expressions are not evaluated (PostgreSQL never plans it).
        read = {t.name for t in node.find_all(exp.Table) if not t.db}
        for cte in with_.expressions:
            if cte.alias_or_name not in read:
                unused_ctx = ctx.with_ctes({k: v for k, v in ctx.ctes.items() if k != cte.alias_or_name},
                                           depends_on=[], fold_constants=False)
                if cte.args.get(recursive.RECURSIVE_MARK):
                    recursive.plan_recursive_cte(cte, unused_ctx)
                else:
                    plan_query(cte.this, unused_ctx, top=False)
    if isinstance(node, exp.Subquery):
        inner_node = node.this
        while isinstance(inner_node, exp.Subquery) and not inner_node.args.get("alias"):
            inner_node = inner_node.this
        for k, what in (("order", "ORDER BY"), ("limit", "LIMIT"), ("offset", "OFFSET")):
            if node.args.get(k) and isinstance(inner_node, exp.Query) and inner_node.args.get(k):
                raise SqlError(SqlState.SYNTAX_ERROR, f"multiple {what} clauses not allowed")
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and \
            not any(node.this.args.get(k) for k in ("order", "limit", "offset")) and \
            any(node.args.get(k) for k in ("order", "limit", "offset")):
        # `(SELECT ...) ORDER BY e LIMIT n`: the clauses belong to the SELECT, as PostgreSQL's
        # grammar attaches them, so ORDER BY may use any expression over its FROM items.
        inner_sel = node.this.copy()
        for k in ("order", "limit", "offset"):
            inner_sel.set(k, node.args.get(k))
        return _plan_select(inner_sel, ctx, top)
    if isinstance(node, exp.Subquery):
        inner = plan_query(node.this, ctx, top=False)
        return _order_limit(inner, node, ctx, top, None)
    if isinstance(node, exp.Select):
        return _plan_select(node, ctx, top)
    if isinstance(node, exp.SetOperation):
        return _order_limit(_plan_setop(node, ctx), node, ctx, top, None)
    if isinstance(node, exp.Values):
        return _plan_values(node, ctx, None)
    raise unsupported(f"query {node.key}")


def _conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _split_scalar(e: ScalarExpr) -> list[ScalarExpr]:
    if isinstance(e, Call) and e.func == "and":
        return [p for a in e.args for p in _split_scalar(a)]
    return [e]


# ---- FROM -------------------------------------------------------------------------------------

@dataclass
class _Item:
    plan: Plan
    scope: Scope


def _alias_columns(node: exp.Expression) -> tuple[str | None, list[str]]:
    alias = node.args.get("alias")
    if alias is None:
        return None, []
    return (alias.name or None), [c.name for c in alias.columns]


def _rename(names: list[str], aliases: list[str], what: str) -> list[str]:
    if len(aliases) > len(names):
        raise SqlError("42P10", f'table "{what}" has {len(names)} columns available but {len(aliases)} columns specified')
    return aliases + names[len(aliases):]


def plan_catalog_item(item: CatalogItem, ctx: PlanContext) -> Plan:
    """A relation read: Get for tables/materialized views/indexed views, else the inlined view."""
    ctx.depends_on.append(item.id)
    types = tuple(c.type for c in item.columns)
    if item.kind in (ItemKind.SOURCE, ItemKind.SUBSOURCE) and item.is_input:
        from storage.sources.growth import append_only
        return Get(item.id, types, append_only=append_only(item, ctx.catalog))
    if item.kind in (ItemKind.TABLE, ItemKind.MATERIALIZED_VIEW) or item.is_input:
        return Get(item.id, types)
    if item.kind is ItemKind.SOURCE:
        raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'source "{item.name}" has no data of its own',
                       hint="Read its subsources (SHOW SOURCES lists them).")
    if item.kind is ItemKind.VIEW:
        indexes = indexes_in_cluster(ctx.catalog, ctx.catalog.indexes_on(item.id), ctx.cluster_name)
        if indexes:
            return Get(indexes[0].id, types)
        from planner.dialect import parse_query
        inner = plan_query(parse_query(item.definition), ctx.child(), top=False)
        if inner.types != types:
            plan = inner.plan
            exprs = [coerce(ColumnRef(i, t), want, ctx, mode="assignment")
                     for i, (t, want) in enumerate(zip(inner.types, types))]
            return _project_exprs(plan, len(inner.types), exprs)
        return inner.plan
    raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is an index; it cannot be read directly')


def _table_function_node(node: exp.Expression) -> exp.Expression | None:
    """The call of a FROM item that is a set-returning function (`generate_series(1, 3) g`)."""
    if isinstance(node, exp.Lateral):
        node = node.this
        if is_table_function(node):  # LATERAL f(...): the call itself
            return node
    if isinstance(node, exp.Table) and is_table_function(node.this):
        return node.this
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
        return node.this  # a scalar function in FROM: one row, its value (PostgreSQL allows any)
    if isinstance(node, exp.Unnest):  # sqlglot's own node for UNNEST(...) in FROM
        return exp.Anonymous(this="unnest", expressions=list(node.expressions))
    return None


def _function_item_aliases(node: exp.Expression) -> tuple[bool, str | None, list[str]]:
    """(WITH ORDINALITY?, table alias, column aliases) of a function FROM item. sqlglot keeps
    them on the LATERAL around the call or on the call's Table or Unnest, and moves unnest's
    last column alias into `offset` under WITH ORDINALITY: put back in the written order."""
    inner = node.this if isinstance(node, exp.Lateral) else node
    ordinality = bool(node.args.get("ordinality") or inner.args.get("ordinality"))
    alias, col_aliases = _alias_columns(node)
    if alias is None and not col_aliases and inner is not node:
        alias, col_aliases = _alias_columns(inner)
    if isinstance(inner, exp.Unnest):
        offset = inner.args.get("offset")
        if offset:
            ordinality = True
        if isinstance(offset, exp.Identifier):
            col_aliases = col_aliases + [offset.name]
    return ordinality, alias, col_aliases


def _function_name(call: exp.Expression) -> str:
    return (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()


def _plan_function_item(node: exp.Expression, left: _Item | None, ctx: PlanContext) -> _Item:
    """A set-returning function in FROM, evaluated for each row of `left` (the FROM items before
    it, which its arguments may refer to) or, with no `left`, once."""
    call = _table_function_node(node)
    ordinality, alias, col_aliases = _function_item_aliases(node)
    if left is None:
        left = _Item(Constant(((),), ()), Scope())
    if is_table_function(call):
        plan, columns = flat_map(call, left.plan, ScalarLowerer(left.scope, ctx, clause="FROM"), ctx,
                                 ordinality=ordinality, in_from=True)
    else:
        value = resolve_unknown(ScalarLowerer(left.scope, ctx, clause="FROM").lower(call), ctx)
        plan, columns = Map(left.plan, (value,) + ((Literal(1, INT8),) if ordinality else ())), [(None, value.type)]
    name = _function_name(call)
    names = column_names(name, columns, ordinality, alias, col_aliases)
    types = [t for _, t in columns] + ([INT8] if ordinality else [])
    # A whole-row reference to the item: its value when it has one column, else a record.
    return _Item(plan, left.scope + Scope([ScopeColumn(alias or name, n, t, whole_row=alias or name)
                                           for n, t in zip(names, types)]))


def _derived_ctx(ctx: PlanContext) -> PlanContext:
    """The context of a FROM item (derived table, CTE, VALUES, function) inside a correlated
    subquery: the outer query's names are known there, but reading them is not supported."""
    if ctx.outer is None or ctx.outer.blocked:
        return ctx
    return replace(ctx, outer=ctx.outer.blocked_view())


def _lateral_query(node: exp.Expression) -> exp.Expression | None:
    """The query of a `LATERAL (SELECT ...)` FROM item."""
    if isinstance(node, exp.Lateral) and isinstance(node.this, (exp.Subquery, exp.Select)):
        return node.this
    return None


def _plan_lateral_item(node: exp.Lateral, left: _Item | None, ctx: PlanContext,
                       left_join_on: exp.Expression | None = None) -> _Item:
    """`LATERAL (SELECT ...)` after the FROM items `left` (whose columns it may read): planned
    like a correlated subquery (`planner.subqueries`), once per distinct value of the left
    columns it reads, then joined to the left rows on them (NULL-safely). As the right side of
    a LEFT JOIN, left rows no subquery row matches `left_join_on` for are kept, NULL-padded."""
    if left is None:
        left = _Item(Constant(((),), ()), Scope())
    query = _lateral_query(node)
    used, _ = analyze(query, left.scope, ctx)
    q = build(query, left.plan, left.scope, used, ctx)
    n_left, n_right = len(left.scope.columns), len(q.columns)
    joined = join_on_keys(left.plan, used, q.plan, list(range(n_right, n_right + len(used))))
    plan: Plan = Project(joined, tuple(range(n_left + n_right)))
    alias, col_aliases = _alias_columns(node)
    names = _rename([c.name for c in q.columns], col_aliases, alias or "subquery")
    scope = left.scope + Scope([ScopeColumn(alias, n, t) for n, t in zip(names, q.types)])
    if left_join_on is not None:
        if contains_subquery(left_join_on):
            raise unsupported("subqueries in the ON condition of a LEFT JOIN LATERAL")
        lowerer = ScalarLowerer(scope, ctx, clause="JOIN/ON")
        preds = [p for c in _conjuncts(left_join_on) for p in _split_scalar(to_bool(lowerer.lower(c), ctx, "JOIN/ON"))]
        pairs = Filter(plan, tuple(preds)) if preds else plan
        matched = Distinct(Project(pairs, tuple(range(n_left))))
        unmatched = Union_((left.plan, Negate(semijoin_rows(left.plan, matched, left.scope.types))))
        plan = Union_((pairs, Map(unmatched, tuple(Literal(None, t) for t in q.types))))
    return _Item(plan, scope)


def _correlated_recursive(node: exp.Expression, ctx: PlanContext) -> bool:
    """A reference to a recursive CTE that reads the outer query's columns, inside a correlated
    subquery (asyncpg's type introspection: `WITH RECURSIVE typebases ... WHERE t2.oid = t.oid`)."""
    if ctx.outer is None or ctx.outer.blocked or not isinstance(node, exp.Table) or node.db:
        return False
    cte = ctx.ctes.get(node.name)
    return isinstance(cte, exp.CTE) and bool(cte.args.get(recursive.RECURSIVE_MARK)) and \
        recursive.reads_outer(cte, ctx.outer.scope)


def _plan_correlated_recursive_item(node: exp.Table, left: _Item, ctx: PlanContext) -> _Item:
    """A recursive CTE reading the outer query's columns: computed for every outer value at once
    (its rows carry the outer value, `planner.recursive`), joined to the FROM items before it
    (`left`, whose first columns are the outer values, D) on them, NULL-safely."""
    q = recursive.plan_recursive_cte(ctx.ctes[node.name], ctx)
    n_left, n_cols = len(left.scope.columns), len(q.columns)
    joined = join_on_keys(left.plan, list(range(q.keys)), q.plan, list(range(n_cols, n_cols + q.keys)))
    alias, col_aliases = _alias_columns(node)
    names = _rename([c.name for c in q.columns], col_aliases, alias or node.name)
    return _Item(Project(joined, tuple(range(n_left + n_cols))),
                 left.scope + Scope([ScopeColumn(alias or node.name, n, t) for n, t in zip(names, q.types)]))


def _plan_from_item(node: exp.Expression, ctx: PlanContext) -> _Item:
    ctx = _derived_ctx(ctx)
    if isinstance(node, exp.Table) and node.args.get("rows_from"):
        raise unsupported("ROWS FROM (...)")
    if _table_function_node(node) is not None:
        return _plan_function_item(node, None, ctx)
    if isinstance(node, exp.Table):
        if not isinstance(node.this, exp.Identifier):
            raise unsupported(f"FROM item {node.this.sql(dialect='postgres')}")
        name = node.name
        alias, col_aliases = _alias_columns(node)
        parts = tuple(p for p in (node.catalog, node.db, name) if p)
        if len(parts) == 1 and name in ctx.ctes:
            cte = ctx.ctes[name]
            if isinstance(cte, recursive.RecursiveRef):  # the recursive reference to a binding
                names = _rename(list(cte.names), col_aliases, alias or name)
                return _Item(Get(cte.id, cte.types), Scope([ScopeColumn(alias or name, n, t)
                                                            for n, t in zip(names, cte.types)]))
            if cte.args.get(recursive.RECURSIVE_MARK):
                q = recursive.plan_recursive_cte(cte, ctx)
                names = _rename([c.name for c in q.columns], col_aliases, alias or name)
                return _Item(q.plan, Scope([ScopeColumn(alias or name, n, t) for n, t in zip(names, q.types)]))
            inner_ctx = ctx.with_ctes({k: v for k, v in ctx.ctes.items() if k != name})
            q = plan_query(cte.this, inner_ctx, top=False)
            _, cte_cols = _alias_columns(cte)
            names = _rename([c.name for c in q.columns], cte_cols, name)
            names = _rename(names, col_aliases, alias or name)
            return _Item(q.plan, Scope([ScopeColumn(alias or name, n, t) for n, t in zip(names, q.types)]))
        system = resolve_system(parts, ctx)
        if system is not None:
            names = _rename([c.name for c in system.columns], col_aliases, alias or name)
            return _Item(plan_system_relation(system, ctx),
                         Scope([ScopeColumn(alias or name, n, c.type) for n, c in zip(names, system.columns)]))
        item = ctx.catalog.resolve(parts, ctx.search_path, ctx.database)
        plan = plan_catalog_item(item, ctx)
        names = _rename([c.name for c in item.columns], col_aliases, alias or name)
        return _Item(plan, Scope([ScopeColumn(alias or name, n, c.type, origin=(item.oid, i + 1))
                                  for i, (n, c) in enumerate(zip(names, item.columns))]))
    if isinstance(node, exp.Subquery) and _nested_join(node) is not None:
        item = _plan_nested_join(_nested_join(node), ctx)
        alias, col_aliases = _alias_columns(node)
        if alias is None:
            return item  # the joined tables stay visible by their own names
        names = _rename([c.name for c in item.scope.columns], col_aliases, alias)
        return _Item(item.plan, Scope([ScopeColumn(alias, n, c.type) for n, c in zip(names, item.scope.columns)]))
    if isinstance(node, exp.Subquery):
        alias, col_aliases = _alias_columns(node)
        q = plan_query(node, ctx, top=False)
        names = _rename([c.name for c in q.columns], col_aliases, alias or "subquery")
        return _Item(q.plan, Scope([ScopeColumn(alias, n, t) for n, t in zip(names, q.types)]))
    if isinstance(node, exp.Values):
        alias, col_aliases = _alias_columns(node)
        q = _plan_values(node, ctx, None)
        names = _rename([c.name for c in q.columns], col_aliases, alias or "values")
        return _Item(q.plan, Scope([ScopeColumn(alias or "*VALUES*", n, t) for n, t in zip(names, q.types)]))
    if _lateral_query(node) is not None:
        return _plan_lateral_item(node, None, ctx)
    if isinstance(node, exp.Lateral):
        raise unsupported("LATERAL")
    raise unsupported(f"FROM item {node.sql(dialect='postgres')!r}")


@dataclass
class _Group:
    """Relations to be inner-joined: the items, the ON conditions of the inner joins between them,
    and the USING column pairs (positions in the group's concatenated scope)."""

    items: list[_Item]
    conds: list[exp.Expression] = field(default_factory=list)
    using: list[tuple[int, int]] = field(default_factory=list)
    star: list[int] | None = None  # `*` order when USING reordered it (see Scope.order)

    @property
    def width(self) -> int:
        return sum(len(it.scope.columns) for it in self.items)

    def scope(self) -> Scope:
        s = Scope()
        for it in self.items:
            s = s + it.scope
        return Scope(s.columns, self.star if self.star is not None else s.order)

    def add(self, item: _Item) -> None:
        if self.star is not None:
            self.star += [self.width + i for i in item.scope.star_order()]
        self.items.append(item)

    def extend(self, other: "_Group") -> None:
        base, order = self.width, self.scope().star_order()
        other_order = other.scope().star_order()
        self.items.extend(other.items)
        self.conds.extend(other.conds)
        self.using.extend((a + base, b + base) for a, b in other.using)
        if self.star is not None or other.star is not None or any(it.scope.order for it in other.items):
            self.star = order + [base + p for p in other_order]


def _is_comma(j: exp.Join) -> bool:
    # sqlglot keeps `FROM a, b` as a Join with nothing but the relation.
    return not any(j.args.get(k) for k in ("side", "kind", "on", "using", "method"))


def _plan_from(sel: exp.Select, ctx: PlanContext) -> _Item:
    """FROM + JOINs + WHERE. The comma binds loosest (`FROM a, b LEFT JOIN c ON ...` is
    `a × (b LEFT JOIN c)`), so the FROM list is split at its commas into join chains; each chain
    is planned left to right (`_plan_chain`) and the chains' relations are inner-joined with
    every WHERE condition: a left-deep join with equi-keys and filters pushed down."""
    from_ = sel.args.get("from_")
    where = sel.args.get("where")
    where_conds: list[exp.Expression] = list(_conjuncts(where.this if where is not None else None))
    outer = [_Item(ctx.outer.plan, ctx.outer.scope)] if ctx.outer is not None and not ctx.outer.blocked else []
    if from_ is None:
        return _close_group(_Group(outer or [_Item(Constant(((),), ()), Scope())]), where_conds, ctx)
    chains: list[tuple[exp.Expression, list[exp.Join]]] = [(from_.this, [])]
    for j in sel.args.get("joins") or []:
        if _is_comma(j):
            chains.append((j.this, []))
        else:
            chains[-1][1].append(j)
    # In a correlated subquery the outer values it reads (D) are joined like one more table.
    top = _Group(outer)
    for first, joins in chains:
        call = _table_function_node(first)
        reads_left = call is not None and call.find(exp.Column) is not None
        lateral = _as_lateral_if_reading_outer(first, outer[0], ctx) if outer else None
        if lateral is not None:
            # A derived table, VALUES or CTE reading the outer query's columns (pgcli: `(SELECT
            # unnest(fk.confkey) ...) x`): planned like LATERAL over the outer values before it.
            first = lateral
        if top.items and (reads_left or _lateral_query(first) is not None
                          or (outer and _correlated_recursive(first, ctx))):
            # A function after a comma sees the items before it (PostgreSQL's implicit LATERAL).
            sides = [(j.side or "").upper() for j in joins]
            if {"RIGHT", "FULL"} & set(sides):
                # x, f(x.a) RIGHT JOIN t is x × LATERAL (f(x.a) RIGHT JOIN t): not planned yet.
                raise unsupported("RIGHT or FULL JOIN after a set-returning function or LATERAL over the FROM items before it")
            left = _close_group(top, where_conds, ctx, final=False)
            top = _plan_chain(first, joins, ctx, where_conds, left=left)
            continue
        chain = _plan_chain(first, joins, ctx, where_conds)
        if chain.conds and len(chains) > 1 and not outer:
            # A JOIN's ON sees only its own chain, not the FROM items after a comma (`a JOIN b
            # ON c1 = 1, t` where t has a c1 too is not ambiguous): its conditions are applied
            # in the chain's scope. (In a correlated subquery ON may read the outer query's
            # columns, which the chain alone does not have: there the whole FROM still is.)
            chain = _Group([_close_group(chain, where_conds, ctx, final=False)])
        top.extend(chain)
    return _close_group(top, where_conds, ctx)


def _as_lateral_if_reading_outer(node: exp.Expression, outer: _Item, ctx: PlanContext) -> exp.Lateral | None:
    """A derived table, VALUES or CTE reference (in a correlated subquery) that reads the outer
    query's columns, as the equivalent `LATERAL (query) AS alias(columns)`; None otherwise."""
    alias = node.args.get("alias")
    if isinstance(node, exp.Values):
        query = node.copy()
        query.set("alias", None)
    elif isinstance(node, exp.Subquery) and _nested_join(node) is None:
        query = node.this
    elif isinstance(node, exp.Table) and not node.db and node.name in ctx.ctes:
        cte = ctx.ctes[node.name]
        if isinstance(cte, recursive.RecursiveRef) or cte.args.get(recursive.RECURSIVE_MARK):
            return None  # a recursive binding, or a recursive CTE (planned by planner/recursive.py)
        query = cte.this
        as_name, as_columns = _alias_columns(node)
        _, cte_columns = _alias_columns(cte)
        columns = as_columns + cte_columns[len(as_columns):]
        alias = exp.TableAlias(this=exp.to_identifier(as_name or node.name),
                               columns=[exp.to_identifier(c) for c in columns])
    else:
        return None
    if not any(True for _ in query.find_all(exp.Column)):
        return None
    used, _ = analyze(query, outer.scope, ctx)
    return exp.Lateral(this=exp.Subquery(this=query), alias=alias) if used else None


def _plan_chain(first: exp.Expression, joins: list[exp.Join], ctx: PlanContext,
                where: list[exp.Expression] | None, left: _Item | None = None) -> _Group:
    """One join chain `x JOIN y ON ... LEFT JOIN z ON ...`, left-associative. Inner joins only
    collect relations and conditions; an outer join first closes everything to its left into one
    relation. WHERE conditions (`where`, used ones are removed from it) are applied inside that
    relation only when it stays on the preserved side of every later outer join of the chain
    (LEFT JOINs only): under a RIGHT or FULL join a filter must see the NULL-padded rows."""
    if left is None:
        first_item = _plan_from_item(first, ctx)
    elif _lateral_query(first) is not None:
        first_item = _plan_lateral_item(first, left, ctx)
    elif _correlated_recursive(first, ctx):
        first_item = _plan_correlated_recursive_item(first, left, ctx)
    else:
        first_item = _plan_function_item(first, left, ctx)
    group = _Group([first_item])
    # A lateral function's chain carries the items before the comma (`left`): they are not
    # part of this chain for USING (`t, f(t.x) AS g JOIN u USING (k)` joins g and u only).
    before = len(left.scope.columns) if left is not None else 0
    sides = [(j.side or "").upper() for j in joins]
    for i, j in enumerate(joins):
        side, kind = sides[i], (j.kind or "").upper()
        method = (j.args.get("method") or "").upper()
        if kind in ("SEMI", "ANTI") or method not in ("", "NATURAL"):
            raise unsupported(f"{(method or kind)} JOIN")
        if method == "NATURAL" and (kind == "CROSS" or j.args.get("on") or j.args.get("using")):
            raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{kind or "ON"}"')
        if _lateral_query(j.this) is not None:
            # JOIN LATERAL (SELECT ...): planned per distinct value of what it reads on its left.
            if side in ("RIGHT", "FULL") or j.args.get("using"):
                raise unsupported(f"{side or 'USING'} JOIN LATERAL")
            left_item = _close_group(group, None, ctx, final=False)
            if side == "LEFT":
                group = _Group([_plan_lateral_item(j.this, left_item, ctx, left_join_on=j.args.get("on"))])
            else:
                group = _Group([_plan_lateral_item(j.this, left_item, ctx)])
                group.conds.extend(_conjuncts(j.args.get("on")))
            continue
        if _table_function_node(j.this) is not None:
            # `JOIN generate_series(1, t.n) ON ...` / CROSS JOIN: evaluated per row on its left.
            if side in ("LEFT", "RIGHT", "FULL") or j.args.get("using"):
                raise unsupported(f"{side or 'USING'} JOIN with a set-returning function")
            group = _Group([_plan_function_item(j.this, _close_group(group, None, ctx, final=False), ctx)])
            group.conds.extend(_conjuncts(j.args.get("on")))
            continue
        item = _plan_from_item(j.this, ctx)
        using = [ident.name for ident in j.args.get("using") or []]
        if method == "NATURAL":  # USING the column names both sides have, in the left's order
            using = _natural_columns(Scope(group.scope().columns[before:]), item.scope)
        if side in ("LEFT", "RIGHT", "FULL"):
            later = [s for s in sides[i:] if s in ("LEFT", "RIGHT", "FULL")]
            pushable = where if where is not None and all(s == "LEFT" for s in later) else None
            left = _close_group(group, pushable, ctx, final=False)
            if using:
                group = _Group([_outer_join_using(left, item, side, using, before, ctx)])
            else:
                group = _Group([_outer_join(left, item, side, j.args.get("on"), ctx)])
            continue
        if kind == "OUTER":
            raise unsupported("OUTER JOIN without LEFT, RIGHT or FULL")
        if using:
            left_scope = group.scope()
            base = len(left_scope.columns)
            hidden = list(item.scope.columns)
            merged = []
            # A merged column whose common type is not the left column's (integer USING
            # numeric is numeric) is computed from the right copy (equal to the left one in an
            # inner join); the left copy keeps its type for `a.c` and leaves `c` and `*`.
            extra: list[ScalarExpr] = []
            extra_cols: list[ScopeColumn] = []
            for name in using:
                li = before + Scope(left_scope.columns[before:]).resolve(name)
                ri = item.scope.resolve(name)
                lt, rt = left_scope.columns[li].type, item.scope.columns[ri].type
                group.using.append((li, base + ri))
                hidden[ri] = ScopeColumn(hidden[ri].table, name, hidden[ri].type, using_hidden=True)
                common = lt
                if lt != rt:
                    (_, _), common = coerce_all([Literal(None, lt), Literal(None, rt)], ctx, "JOIN/USING")
                if common == lt:
                    merged.append(li)
                    continue
                right_copy = ColumnRef(ri, rt)
                if lt.kind is TypeKind.BPCHAR and lt.length and common.kind is TypeKind.BPCHAR:
                    # Equal to the left copy, whose padding PostgreSQL's merged column keeps
                    # (character(3) USING varchar: '   ', not '').
                    extra.append(Cast(Cast(right_copy, lt), common))
                else:
                    extra.append(coerce(right_copy, common, ctx))
                extra_cols.append(ScopeColumn(None, name, common))
                merged.append(base + len(item.scope.columns) + len(extra) - 1)
                _hide_group_column(group, li)
            # `*` lists the USING columns first, then the rest of the left, then the right.
            order = left_scope.star_order()
            group.star = [p for p in order if p < before] + merged + \
                [p for p in order if p >= before and p not in merged]
            if extra:
                width = len(item.scope.columns)
                plan = _project_exprs(item.plan, width, [ColumnRef(i, c.type) for i, c in
                                                         enumerate(item.scope.columns)] + extra)
                item = _Item(plan, Scope(hidden + extra_cols, item.scope.star_order()))
            else:
                item = _Item(item.plan, Scope(hidden, item.scope.order))
        group.conds.extend(_conjuncts(j.args.get("on")))
        group.add(item)
    return group


def _natural_columns(left: Scope, right: Scope) -> list[str]:
    """NATURAL JOIN's USING list: the names of visible columns both sides have, in the left
    side's order (no common name: a cross join, as in PostgreSQL)."""
    right_names = {c.name for c in right.columns if not c.using_hidden and c.level == 0}
    out: list[str] = []
    for c in left.columns:
        if not c.using_hidden and c.level == 0 and c.name in right_names and c.name not in out:
            out.append(c.name)
    return out


def _outer_join_using(left: _Item, right: _Item, side: str, names: list[str], before: int,
                      ctx: PlanContext) -> _Item:
    """LEFT / RIGHT / FULL JOIN ... USING (or NATURAL): an outer join on the equalities of the
    named columns, each merged into one column as PostgreSQL does: the left copy for LEFT, the
    right copy for RIGHT, COALESCE(left, right) for FULL (cast to their common type). The
    copies stay reachable qualified (`a.k`); `*` lists the merged columns first."""
    nl, nr = len(left.scope.columns), len(right.scope.columns)
    lowerer = ScalarLowerer(left.scope + right.scope, ctx, clause="JOIN/USING")
    preds: list[ScalarExpr] = []
    merged: list[tuple[int, int, str, ScalarExpr]] = []
    for name in names:
        li = before + Scope(left.scope.columns[before:]).resolve(name)
        ri = right.scope.resolve(name)
        lt, rt = left.scope.columns[li].type, right.scope.columns[ri].type
        preds.append(lowerer.compare("eq", "=", ColumnRef(li, lt), ColumnRef(nl + ri, rt)))
        (_, _), common = coerce_all([Literal(None, lt), Literal(None, rt)], ctx, "JOIN/USING")
        l, r = coerce(ColumnRef(li, lt), common, ctx), coerce(ColumnRef(nl + ri, rt), common, ctx)
        value = l if side == "LEFT" else r if side == "RIGHT" else Call("coalesce", (l, r), common)
        merged.append((li, ri, name, value))
    joined = _outer_join(left, right, side, None, ctx, using_preds=preds)
    columns = list(left.scope.columns) + list(right.scope.columns)
    extra: list[ScalarExpr] = []
    positions: list[int] = []
    for li, ri, name, value in merged:
        for k in (li, nl + ri):
            c = columns[k]
            columns[k] = ScopeColumn(c.table, c.name, c.type, using_hidden=True, origin=c.origin)
        if isinstance(value, ColumnRef):
            c = columns[value.index]
            columns[value.index] = ScopeColumn(c.table, c.name, c.type, origin=c.origin)
            positions.append(value.index)
        else:
            extra.append(value)
            columns.append(ScopeColumn(None, name, value.type))
            positions.append(nl + nr + len(extra) - 1)
    order = left.scope.star_order() + [nl + p for p in right.scope.star_order()]
    star = [p for p in order if p < before] + positions + [p for p in order if p >= before and p not in positions]
    plan = joined.plan
    if extra:
        plan = Map(plan, tuple(extra))
    return _Item(plan, Scope(columns, star))


def _hide_group_column(group: _Group, position: int) -> None:
    """Mark column `position` of a group (counted over all its items) as reachable only
    qualified, in place."""
    offset = 0
    for k, it in enumerate(group.items):
        width = len(it.scope.columns)
        if position < offset + width:
            columns = list(it.scope.columns)
            c = columns[position - offset]
            columns[position - offset] = ScopeColumn(c.table, c.name, c.type, using_hidden=True, origin=c.origin)
            group.items[k] = _Item(it.plan, Scope(columns, it.scope.order))
            return
        offset += width


def _nested_join(node: exp.Expression) -> exp.Table | None:
    """The chain inside a parenthesised join `(a JOIN b ON ...)`, which sqlglot keeps as a
    Subquery around a Table carrying the joins."""
    while isinstance(node, exp.Subquery) and not node.args.get("joins"):
        node = node.this
    return node if isinstance(node, (exp.Table, exp.Subquery)) and node.args.get("joins") else None


def _plan_nested_join(table: exp.Expression, ctx: PlanContext) -> _Item:
    first = table.copy()
    first.set("joins", None)
    return _close_group(_plan_chain(first, list(table.args["joins"]), ctx, None), None, ctx)


def _close_group(group: _Group, optional: list[exp.Expression] | None, ctx: PlanContext,
                 final: bool = True) -> _Item:
    """Inner-join the group's items with its ON conditions and USING pairs, and with every
    condition of `optional` (WHERE conditions) that refers only to them; those used are removed
    from `optional`. When `final`, every optional condition must apply here."""
    items = group.items
    scope = group.scope()
    lowerer = ScalarLowerer(scope, ctx, clause="WHERE")
    preds: list[ScalarExpr] = []
    semijoins: list[tuple[ScalarExpr, QueryResult]] = []
    used: list[exp.Expression] = []
    if any(window_calls(c) for c in group.conds):
        raise window_not_allowed("JOIN/ON")
    # Conditions with subqueries: lowered now, applied once their columns are attached.
    subqueries = Subqueries(scope, ctx)
    late_lowerer = ScalarLowerer(scope, ctx, clause="WHERE")
    subqueries.install(late_lowerer)
    late: list[ScalarExpr] = []
    for cond, is_optional in [(c, False) for c in group.conds] + [(c, True) for c in optional or []]:
        if contains_aggregate(cond):
            what = "aggregate functions" if contains_aggregate(cond, grouping=False) else "grouping operations"
            raise SqlError(SqlState.GROUPING_ERROR, f"{what} are not allowed in WHERE")
        n_specs = len(subqueries.specs)
        try:
            if isinstance(cond, exp.In) and cond.args.get("query") is not None and \
                    not analyze(cond.args["query"], scope, ctx)[0]:
                # Uncorrelated `x IN (SELECT ...)` as a condition of its own: a semijoin.
                semijoins.append((lowerer.lower(cond.this), _in_subquery(cond.args["query"], ctx)))
            elif contains_subquery(cond):
                if not final and is_optional:
                    continue  # applied with the whole FROM, where every name it may read is
                late.extend(_split_scalar(to_bool(late_lowerer.lower(cond), ctx, "WHERE")))
            else:
                # After a constantly false condition the rest is never evaluated (PostgreSQL
                # folds `false AND x` to false without folding x; after a NULL it goes on).
                decided = any(isinstance(p, Literal) and p.value is False for p in preds)
                lower = lowerer.lower_unused if decided else lowerer.lower
                preds.extend(_split_scalar(to_bool(lower(cond), ctx, "WHERE")))
        except SqlError as e:
            # Not final: the condition names a relation joined later; it is applied there.
            if final or not is_optional or e.sqlstate not in (SqlState.UNDEFINED_COLUMN, SqlState.UNDEFINED_TABLE):
                raise
            del subqueries.specs[n_specs:]
            continue
        if is_optional:
            used.append(cond)
    if optional is not None:
        optional[:] = [c for c in optional if not any(c is u for u in used)]
    for li, ri in group.using:
        preds.append(lowerer.compare("eq", "=", ColumnRef(li, scope.columns[li].type),
                                     ColumnRef(ri, scope.columns[ri].type)))
    if any(isinstance(p, Literal) and p.value is not True for p in preds):
        # A condition that is false (or NULL) for every row: nothing else needs evaluating,
        # but a failing constant PostgreSQL folded on the way still fails the statement.
        raise_deferred(preds)
        preds = [Literal(False, BOOL)]
    plan = _join(items, factor_disjunctions(preds))
    for key, sub in semijoins:
        plan = _semijoin(plan, len(scope.columns), key, sub, ctx)
    if late:
        plan = subqueries.attach(plan)
        plan = Project(Filter(plan, tuple(subqueries.substitute(p) for p in late)), tuple(range(len(scope.columns))))
    return _Item(plan, scope)


def _in_subquery(query: exp.Expression, ctx: PlanContext) -> QueryResult:
    """The one-column result of an uncorrelated `x IN (SELECT ...)`."""
    try:
        sub = plan_query(query, ctx, top=False)
    except SqlError as e:
        if e.sqlstate in (SqlState.UNDEFINED_COLUMN, SqlState.UNDEFINED_TABLE):
            raise SqlError(e.sqlstate, e.message, detail=e.detail,
                           hint="Correlated subqueries (referring to the outer query) are not yet supported.") from None
        raise
    if len(sub.columns) != 1:
        raise SqlError(SqlState.SYNTAX_ERROR, "subquery has too many columns")
    return sub


def _semijoin(plan: Plan, width: int, key: ScalarExpr, sub: QueryResult, ctx: PlanContext) -> Plan:
    """Rows of `plan` whose `key` is among the subquery's values (`WHERE key IN (SELECT ...)`):
    a join with the subquery's distinct values, so each row keeps its multiplicity. NULLs never
    match, which is what IN does in a WHERE clause."""
    (key, value), _ = coerce_all(bpchar_as_text([key, ColumnRef(0, sub.types[0])], ctx), ctx, "IN",
                                 common=False)
    key, value = resolve_unknown(key, ctx), resolve_unknown(value, ctx)
    key, value = equality_keys.key(key), equality_keys.key(value)  # (intervals by span)
    values = Distinct(sub.plan if isinstance(value, ColumnRef) else Project(Map(sub.plan, (value,)), (1,)))
    if isinstance(key, ColumnRef):
        return Project(Join(plan, values, (key.index,), (0,)), tuple(range(width)))
    joined = Join(Map(plan, (key,)), values, (width,), (0,))
    return Project(joined, tuple(range(width)))


def _outer_join(left: _Item, right: _Item, side: str, on: exp.Expression | None, ctx: PlanContext,
                using_preds: list[ScalarExpr] = ()) -> _Item:
    """LEFT / RIGHT / FULL JOIN ... ON: the ON condition lowered over both sides, then
    `planner.outer_join` builds it from inner joins, semijoins and NULL padding."""
    scope = left.scope + right.scope
    lowerer = ScalarLowerer(scope, ctx, clause="JOIN/ON")
    subqueries = Subqueries(scope, ctx)
    late_lowerer = ScalarLowerer(scope, ctx, clause="JOIN/ON")
    subqueries.install(late_lowerer)
    preds: list[ScalarExpr] = []
    late: list[ScalarExpr] = []
    for cond in _conjuncts(on):
        if contains_aggregate(cond):
            what = "aggregate functions" if contains_aggregate(cond, grouping=False) else "grouping operations"
            raise SqlError(SqlState.GROUPING_ERROR, f"{what} are not allowed in JOIN conditions")
        if contains_subquery(cond):
            # Evaluated for each joined pair (`lower_outer_join`'s residual).
            late.extend(_split_scalar(to_bool(late_lowerer.lower(cond), ctx, "JOIN/ON")))
            continue
        preds.extend(_split_scalar(to_bool(lowerer.lower(cond), ctx, "JOIN/ON")))
    preds = factor_disjunctions(preds + list(using_preds))
    if any(isinstance(p, Literal) and p.value is not True for p in preds):
        raise_deferred(preds)  # a failing constant PostgreSQL folded on the way
        preds = [Literal(False, BOOL)]  # ON false / ON NULL: nothing matches
    if any("mz_now" in repr(p) for p in preds):
        raise unsupported(f"mz_now() in the ON condition of a {side} JOIN")
    left_types = tuple(c.type for c in left.scope.columns)
    right_types = tuple(c.type for c in right.scope.columns)
    def filter_pairs(pairs: Plan) -> Plan:
        attached = subqueries.attach(pairs)
        kept = Filter(attached, tuple(subqueries.substitute(p) for p in late))
        return Project(kept, tuple(range(len(scope.columns))))
    plan = lower_outer_join(left.plan, left_types, right.plan, right_types, side, preds,
                            filter_pairs if late else None)
    return _Item(plan, scope)


def shift(e: ScalarExpr, delta: int) -> ScalarExpr:
    """Renumber column references by `delta` (moving a predicate onto a sub-plan)."""
    if isinstance(e, ColumnRef):
        return ColumnRef(e.index + delta, e.type)
    if isinstance(e, Literal):
        return e
    if isinstance(e, Call):
        return Call(e.func, tuple(shift(a, delta) for a in e.args), e.type)
    if isinstance(e, If):
        return If(shift(e.cond, delta), shift(e.then, delta), shift(e.els, delta), e.type)
    if isinstance(e, Cast):
        return Cast(shift(e.arg, delta), e.type)
    raise TypeError(e)


def _join(items: list[_Item], preds: list[ScalarExpr]) -> Plan:
    """Inner-join `items` on `preds` (over their columns side by side), left-deep. The items
    are joined in the written order, except that an item with no equality to those before it
    waits until one that has is joined (a cross product only when nothing connects): in
    `FROM part, supplier, lineitem WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey`,
    lineitem is joined before supplier. The output keeps the written column order."""
    order = _join_order(items, preds)
    if order == list(range(len(items))):
        return _join_in_order(items, preds)
    from planner.rules.prune_columns import remap_expr
    offsets = _offsets(items)
    mapping: dict[int, int] = {}
    for i in order:
        for c in range(len(items[i].scope.columns)):
            mapping[offsets[i] + c] = len(mapping)
    plan = _join_in_order([items[i] for i in order], [remap_expr(p, mapping) for p in preds])
    return Project(plan, tuple(mapping[c] for c in range(len(mapping))))


def _offsets(items: list[_Item]) -> list[int]:
    offsets, o = [], 0
    for it in items:
        offsets.append(o)
        o += len(it.scope.columns)
    return offsets


def _join_order(items: list[_Item], preds: list[ScalarExpr]) -> list[int]:
    """Written order, but each next item one that an equality connects to those already
    joined, when any remaining item is (the first such in written order)."""
    if len(items) < 3:
        return list(range(len(items)))
    owner = [i for i, it in enumerate(items) for _ in it.scope.columns]
    neighbours: list[set[int]] = [set() for _ in items]
    for p in preds:
        if isinstance(p, Call) and p.func == "eq" and len(p.args) == 2:
            sides = [{owner[c] for c in columns_used(a)} for a in p.args]
            if all(len(s) == 1 for s in sides) and sides[0] != sides[1]:
                (a,), (b,) = sides
                neighbours[a].add(b)
                neighbours[b].add(a)
    order, rest, reachable = [0], list(range(1, len(items))), set(neighbours[0])
    while rest:
        nxt = next((j for j in rest if j in reachable), rest[0])
        order.append(nxt)
        rest.remove(nxt)
        reachable |= neighbours[nxt]
    return order


def _join_in_order(items: list[_Item], preds: list[ScalarExpr]) -> Plan:
    remaining = list(preds)

    def take(lo: int, hi: int, need_cols: bool = True) -> list[ScalarExpr]:
        out = []
        for p in list(remaining):
            cols = columns_used(p)
            if (cols or not need_cols) and all(lo <= c < hi for c in cols) and "mz_now" not in repr(p):
                out.append(p)
                remaining.remove(p)
        return out

    offsets = _offsets(items)
    plans = []
    for it, off in zip(items, offsets):
        own = take(off, off + len(it.scope.columns))
        plans.append(Filter(it.plan, tuple(shift(p, -off) for p in own)) if own else it.plan)
    acc, width = plans[0], len(items[0].scope.columns)
    for it, off, right in zip(items[1:], offsets[1:], plans[1:]):
        w = len(it.scope.columns)
        lkeys, rkeys = [], []
        lspans, rspans = [], []  # keys by SQL equality (an interval's span): a Map on each side
        for p in list(remaining):
            cols = [equality_keys.keyed_column(a) for a in p.args] if isinstance(p, Call) and p.func == "eq" else []
            if cols and all(c is not None for c in cols):
                a, b = cols[0].index, cols[1].index
                if a >= width:
                    a, b = b, a
                t = cols[0].type
                if a < width and off <= b < off + w and t == cols[1].type:
                    if equality_keys.needs_key(t):
                        lspans.append(equality_keys.key(ColumnRef(a, t)))
                        rspans.append(equality_keys.key(ColumnRef(b - off, t)))
                        a, b = width + len(lspans) - 1, off + w + len(rspans) - 1
                    lkeys.append(a)
                    rkeys.append(b - off)
                    remaining.remove(p)
                continue
            sides = _expression_keys(p, width, off, w)
            if sides is not None:
                # `a.c::text = b.c` (character(n) with varchar, int with bigint, ...): each side's
                # expression computed on its own input and joined on, not a filtered cross product
                lspans.append(equality_keys.key(sides[0]))
                rspans.append(equality_keys.key(shift(sides[1], -off)))
                lkeys.append(width + len(lspans) - 1)
                rkeys.append(w + len(rspans) - 1)
                remaining.remove(p)
        if lspans:
            n = len(lspans)
            joined = Join(Map(acc, tuple(lspans)), Map(right, tuple(rspans)), tuple(lkeys), tuple(rkeys))
            acc = Project(joined, tuple(range(width)) + tuple(range(width + n, width + n + w)))
        else:
            acc = Join(acc, right, tuple(lkeys), tuple(rkeys))
        width += w
        rest = take(0, width)
        if rest:
            acc = Filter(acc, tuple(rest))
    if remaining:
        acc = Filter(acc, tuple(remaining))
    return acc


def _expression_keys(p: ScalarExpr, width: int, off: int, w: int) -> tuple[ScalarExpr, ScalarExpr] | None:
    """(left expression, right expression) of an equality whose operands each read only one
    input of a join: the left one columns [0, width), the right one [off, off + w)."""
    if not (isinstance(p, Call) and p.func == "eq" and len(p.args) == 2):
        return None
    a, b = p.args
    ca, cb = columns_used(a), columns_used(b)
    if ca and all(off <= c < off + w for c in ca) and cb and all(c < width for c in cb):
        a, b, ca, cb = b, a, cb, ca
    if not (ca and cb and all(c < width for c in ca) and all(off <= c < off + w for c in cb)):
        return None
    if a.type != b.type or _volatile(p):
        return None
    return a, b


def _volatile(e: ScalarExpr) -> bool:
    from planner.rules.fold_constants import _VOLATILE
    from planner.functions import WALL_CLOCK_KERNELS
    return any(isinstance(n, Call) and (n.func in _VOLATILE or n.func in WALL_CLOCK_KERNELS) for n in _nodes(e))


def _nodes(e: ScalarExpr):
    todo = [e]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, Call):
            todo.extend(n.args)
        elif isinstance(n, Cast):
            todo.append(n.arg)
        elif isinstance(n, If):
            todo.extend((n.cond, n.then, n.els))


# ---- SELECT -----------------------------------------------------------------------------------

def _project_exprs(plan: Plan, width: int, exprs: list[ScalarExpr]) -> Plan:
    """Output exactly `exprs` (over a `width`-column input): Map what is not a plain column."""
    mapped = [e for e in exprs if not isinstance(e, ColumnRef)]
    cols, k = [], 0
    for e in exprs:
        if isinstance(e, ColumnRef):
            cols.append(e.index)
        else:
            cols.append(width + k)
            k += 1
    if mapped:
        plan = Map(plan, tuple(mapped))
    if tuple(cols) == tuple(range(width)) and not mapped:
        return plan
    return Project(plan, tuple(cols))


def _expand_select(sel: exp.Select, scope: Scope) -> list[tuple[exp.Expression | int, str]]:
    """Select items with `*` and `t.*` expanded to scope positions."""
    out: list[tuple[exp.Expression | int, str]] = []
    for node in sel.expressions:
        if isinstance(node, exp.Star):
            if not scope.columns:
                raise SqlError(SqlState.SYNTAX_ERROR, "SELECT * with no tables specified is not valid")
            out.extend((i, scope.columns[i].name) for i in scope.star())
        elif isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            out.extend((i, scope.columns[i].name) for i in scope.star(node.table))
        else:
            out.append((node, expr_name(node)))
    return out


def _group_keys(sel: exp.Select, items, scope: Scope, ctx: PlanContext
                ) -> tuple[list[ScalarExpr], list[tuple[int, ...]] | None]:
    """The GROUP BY keys, and with GROUPING SETS / ROLLUP / CUBE the grouping sets (positions in
    the keys; `planner.grouping_sets`), else None."""
    group = sel.args.get("group")
    if group is None:
        return [], None
    lowerer = ScalarLowerer(scope, ctx, clause="GROUP BY")

    def lower_key(g: exp.Expression) -> ScalarExpr:
        node: exp.Expression | int = g
        bare = g
        while isinstance(bare, (exp.Paren, exp.Neg)):  # PostgreSQL folds `(- 0.5)` into a constant
            bare = bare.this
        if isinstance(bare, exp.Literal) and _position(g) is None:
            raise SqlError(SqlState.SYNTAX_ERROR, "non-integer constant in GROUP BY")
        pos = _position(g)
        if pos is not None:
            if not 1 <= pos <= len(items):
                raise SqlError("42P10", f"GROUP BY position {pos} is not in select list")
            node = items[pos - 1][0]
        elif isinstance(g, exp.Column) and not g.table:
            try:
                scope.resolve(g.name)
            except SqlError as e:
                named = [it for it, name in items if name == g.name and not isinstance(it, int)]
                if e.sqlstate != SqlState.UNDEFINED_COLUMN or not named:
                    raise
                node = named[0]
        if isinstance(node, int):
            return ColumnRef(node, scope.columns[node].type)
        if contains_aggregate(node):
            raise SqlError(SqlState.GROUPING_ERROR, "aggregate functions are not allowed in GROUP BY")
        if contains_subquery(node):
            raise unsupported("subqueries in GROUP BY")
        return resolve_unknown(lowerer.lower(node), ctx)

    if has_grouping_sets(group):
        keys, sets = expand_grouping(group, lower_key)
        if len(sets) != 1:
            return keys, sets
        return [keys[k] for k in sets[0]], None  # one set: a plain GROUP BY (`GROUP BY ()`: none)
    keys: list[ScalarExpr] = []
    for g in group.expressions:
        e = lower_key(g)
        if e not in keys:
            keys.append(e)
    return keys, None


def _plan_select(sel: exp.Select, ctx: PlanContext, top: bool) -> QueryResult:
    if sel.args.get("into"):
        raise unsupported("SELECT INTO")
    base = _plan_from(sel, ctx)
    scope = base.scope
    items = _expand_select(sel, scope)
    having = sel.args.get("having")
    order = sel.args.get("order")
    order_nodes = [o.this for o in order.expressions] if order else []
    if any(find_table_functions(o) for o in order_nodes) or (sel.args.get("where") and find_table_functions(
            sel.args["where"])):
        raise SqlError("0A000", "set-returning functions are not allowed in WHERE or ORDER BY")
    aggregated = bool(sel.args.get("group")) or having is not None or any(
        not isinstance(it, int) and contains_aggregate(it) for it, _ in items) or any(
        contains_aggregate(o) for o in order_nodes)
    windows = SelectWindows.of(sel, items, order_nodes, ctx)
    # Inside a correlated subquery: the outer values (D's columns) this SELECT is computed for.
    outer_keys = [ColumnRef(i, c.type) for i, c in enumerate(scope.columns) if c.level > 0]
    if aggregated:
        if any(find_table_functions(it) for it, _ in items if not isinstance(it, int)):
            raise unsupported("set-returning functions in a select list with aggregates or GROUP BY")
        user_keys, grouping_sets = _group_keys(sel, items, scope, ctx)
        grouping = Grouping(base.plan, scope, ctx, user_keys + [k for k in outer_keys if k not in user_keys],
                            grouping_sets)
        # Subqueries here see the grouped rows: the GROUP BY columns (keys come first).
        subqueries = Subqueries(_grouped_scope(grouping.keys, scope), ctx)
        lowerer = grouping.lowerer("SELECT")
        if windows is not None:
            windows.over(grouping.lowerer("window definitions"))
            lowerer = windows.wrap(lowerer)
        subqueries.install(lowerer)

        def lower_item(it):
            if isinstance(it, int):
                return lowerer.lower(exp.column(scope.columns[it].name, scope.columns[it].table)) \
                    if scope.columns[it].table else lowerer.lower(exp.column(scope.columns[it].name))
            return lowerer.lower(it)
        exprs = [resolve_unknown(lower_item(it), ctx) for it, _ in items]
        having_pred = None
        if having is not None:
            having_lowerer = grouping.lowerer("HAVING")
            subqueries.install(having_lowerer)
            having_pred = to_bool(having_lowerer.lower(having.this), ctx, "HAVING")
        order_lowerer = grouping.lowerer("ORDER BY")
        if windows is not None:
            order_lowerer = windows.wrap(order_lowerer)
        subqueries.install(order_lowerer)
        plan = None  # built after ORDER BY lowering has registered its aggregates
    else:
        plan = base.plan
        srfs = [f for it, _ in items if not isinstance(it, int) for f in find_table_functions(it)]
        hook = None
        if srfs:
            # A set-returning function in the select list: the FROM result with the function's
            # values as one more column, one row per value.
            if len({f.sql() for f in srfs}) > 1:
                plan, scope, hook = _lockstep_array_functions(srfs, plan, scope, ctx)
            else:
                plan, scope, hook = _one_select_list_function(srfs[0], plan, scope, ctx)
        lowerer = ScalarLowerer(scope, ctx, hook=hook, clause="SELECT")
        if windows is not None:
            if srfs:
                raise unsupported("set-returning functions in a select list with window functions")
            windows.over(ScalarLowerer(scope, ctx, clause="window definitions"))
            lowerer = windows.wrap(lowerer)
        subqueries = Subqueries(scope, ctx)
        subqueries.install(lowerer)
        exprs = [ColumnRef(it, scope.columns[it].type) if isinstance(it, int)
                 else resolve_unknown(lowerer.lower(it), ctx) for it, _ in items]
        having_pred = None
        order_lowerer = lowerer
    names = [name for _, name in items]
    distinct = sel.args.get("distinct")
    distinct_on = distinct.args.get("on") if distinct is not None else None
    if distinct_on is not None:
        distinct = None  # DISTINCT ON is a top-1 per group (`planner.distinct_on`), not a Distinct
    # ORDER BY: output name or position, else an expression (a hidden extra column).
    order_by, extras = [], []

    def expression_column(node: exp.Expression, what: str) -> int:
        e = resolve_unknown(order_lowerer.lower(node), ctx)
        if e in exprs:
            return exprs.index(e)
        if distinct is not None:
            raise SqlError("42P10", "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
        if e not in extras:
            extras.append(e)
        return len(exprs) + len(outer_keys) + extras.index(e)
    on_cols = distinct_on_columns(distinct_on, names, expression_column) if distinct_on is not None else None
    for o in (order.expressions if order else []):
        col = _output_ref(o.this, names, [repr(e) for e in exprs])
        if col is None:
            col = expression_column(o.this, "ORDER BY")
        order_by.append(_order_entry(col, o))
    if aggregated:
        if not user_keys and not grouping.aggs:
            # PostgreSQL's degenerate grouping (HAVING or GROUP BY () with no aggregate and no
            # key): one row per grouping set whatever the input holds, so the input is never
            # read, and an error in its WHERE or joins is never raised:
            # `SELECT 1 FROM t WHERE t.s::int > 0 HAVING true` answers 1 where s holds 'ab'.
            # Joined with no rows, the input stays in the plan until `prune_empty` removes it,
            # so a failing constant in it still fails the statement (PostgreSQL plans the input).
            grouping.input_plan = Join(grouping.input_plan, Constant((), ()), (), ())
        plan = grouping.build()
        if outer_keys and not user_keys and grouping_sets is None:
            # A global aggregate per outer value: its default row where nothing matched.
            plan = global_aggregate_per_key(plan, ctx.outer.plan)
        outer_keys = [ColumnRef(grouping.keys.index(k), k.type) for k in outer_keys]
    if subqueries:
        plan = subqueries.attach(plan)
        exprs = [subqueries.substitute(e) for e in exprs]
        extras = [subqueries.substitute(e) for e in extras]
        if having_pred is not None:
            having_pred = subqueries.substitute(having_pred)
    if having_pred is not None:
        plan = Filter(plan, (having_pred,))
    width = len(output_types(plan))
    if windows is not None:
        if outer_keys:
            # In a correlated subquery each outer value has its own window partitions.
            windows.partition_first(outer_keys)
        plan, width, finished = windows.apply(plan, width, exprs + extras)
        exprs, extras = finished[:len(exprs)], finished[len(exprs):]
    if on_cols is not None:
        check_order(on_cols, tuple(order_by))
    order_by = _keyed_order(order_by, exprs + outer_keys, extras)
    plan = _project_exprs(plan, width, exprs + outer_keys + extras)
    if distinct is not None:
        plan = equality_keys.distinct(plan, range(len(exprs), len(exprs) + len(outer_keys)))
    if on_cols is not None:
        plan = distinct_on_plan(plan, on_cols, tuple(order_by),
                                tuple(range(len(exprs), len(exprs) + len(outer_keys))), checked=True)
    origins = [scope.columns[e.index].origin if not aggregated and isinstance(e, ColumnRef)
               and e.index < len(scope.columns) else None for e in exprs]
    columns = tuple(Column(n, e.type, table_oid=o[0] if o else 0, attnum=o[1] if o else 0)
                    for n, e, o in zip(names, exprs, origins))
    result = QueryResult(plan, columns + tuple(Column("?order?", e.type) for e in extras), keys=len(outer_keys))
    return _finish(result, len(columns), tuple(order_by), sel, ctx, top)


def _keyed_order(order_by: list, front: list[ScalarExpr], extras: list[ScalarExpr]) -> list:
    """ORDER BY entries over arrays, jsonb and intervals point at their sort key
    (`planner.ordering`), added to `extras` as a hidden column (a function of a column the query
    has, so DISTINCT keeps the same rows)."""
    out = []
    for col, desc, nulls_last in order_by:
        e = (front + extras)[col]
        if needs_key(e.type):
            key = Call("sort_key", (e,), BYTEA)
            if key not in extras:
                extras.append(key)
            col = len(front) + extras.index(key)
        out.append((col, desc, nulls_last))
    return out


def _grouped_scope(keys: list[ScalarExpr], scope: Scope) -> Scope:
    """The names a subquery in a grouped query's select list, HAVING or ORDER BY can read: the
    GROUP BY columns (the Reduce's first columns), by their names."""
    out = []
    for k in keys:
        if isinstance(k, ColumnRef):
            out.append(scope.columns[k.index])
        else:
            out.append(ScopeColumn(None, "?key?", k.type, using_hidden=True))
    return Scope(out)


def _order_entry(col: int, o: exp.Ordered) -> tuple[int, bool, bool]:
    desc = bool(o.args.get("desc"))
    nulls_first = o.args.get("nulls_first")
    # PostgreSQL: NULLs sort as larger than everything (last ascending, first descending).
    nulls_last = (not desc) if nulls_first is None else not nulls_first
    if desc and not _explicit_nulls(o):
        nulls_last = False
    return (col, desc, nulls_last)


def _explicit_nulls(o: exp.Ordered) -> bool:
    sql = o.sql(dialect="postgres").upper()
    return "NULLS FIRST" in sql or "NULLS LAST" in sql


def _position(node: exp.Expression) -> int | None:
    """An integer constant in GROUP BY / ORDER BY is a select-list position. PostgreSQL's parser
    folds a minus sign and parentheses into the constant, so `(- 7)` is position -7 (an error)
    and `(1)` is position 1."""
    if isinstance(node, exp.Paren):
        return _position(node.this)
    if isinstance(node, exp.Neg):
        inner = _position(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def _output_ref(node: exp.Expression, names: list[str], select_nodes) -> int | None:
    pos = _position(node)
    if pos is not None:
        if not 1 <= pos <= len(names):
            raise SqlError("42P10", f"ORDER BY position {pos} is not in select list")
        return pos - 1
    if isinstance(node, exp.Column) and not node.table and names.count(node.name) >= 1:
        # An output name wins over an input column (SQL92 rule PostgreSQL applies to ORDER BY).
        hits = [i for i, n in enumerate(names) if n == node.name]
        if len(hits) > 1 and select_nodes is not None and len({select_nodes[i] for i in hits}) > 1:
            raise SqlError(SqlState.AMBIGUOUS_COLUMN, f'ORDER BY "{node.name}" is ambiguous')
        return hits[0]
    return None


def _limit_value(node: exp.Expression | None, ctx: PlanContext, what: str) -> int | None:
    if node is None:
        return None
    if isinstance(node, exp.Fetch):  # FETCH FIRST [n] ROWS ONLY: LIMIT n (1 without n)
        options = node.args.get("limit_options")
        if options is not None and options.args.get("percent"):
            raise SqlError(SqlState.SYNTAX_ERROR, 'syntax error at or near "PERCENT"')
        e = node.args.get("count") or exp.Literal.number(1)
    else:
        e = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if e is None or (isinstance(e, exp.Var) and e.name.upper() == "ALL"):
        return None
    if any(isinstance(n, exp.Column) for n in e.walk()) and not contains_subquery(e):
        raise SqlError("42P10", f"argument of {what} must not contain variables")
    v = ScalarLowerer(Scope(), ctx, clause=what).lower(e)
    if isinstance(v, Literal) and v.value is None and v.type.kind is TypeKind.UNKNOWN:
        return None
    try:  # as PostgreSQL's coerce_to_specific_type: an assignment cast (1.5 rounds to 2)
        v = coerce(v, INT8, ctx, mode="assignment")
    except SqlError as err:
        if err.sqlstate != SqlState.DATATYPE_MISMATCH:
            raise
        raise SqlError(SqlState.DATATYPE_MISMATCH,
                       f"argument of {what} must be type bigint, not type {v.type.name}") from None
    v = fold_constant(v)  # a constant even where folding is off (unread CTEs)
    raise_deferred(v)
    if not isinstance(v, Literal):
        raise unsupported(f"non-constant {what}")
    if v.value is not None and v.value < 0:
        raise SqlError("2201W" if what == "LIMIT" else "2201X", f"{what} must not be negative")
    return v.value


def _with_ties(node: exp.Expression) -> bool:
    fetch = node.args.get("limit")
    options = fetch.args.get("limit_options") if isinstance(fetch, exp.Fetch) else None
    return bool(options is not None and options.args.get("with_ties"))


def _with_ties_rows(result: QueryResult, order_by: tuple, limit: int | None, offset: int, n_visible: int,
                    keys: int) -> QueryResult:
    """FETCH FIRST n ROWS WITH TIES: the first n rows and every row that ties with the last of
    them, i.e. the rows with fewer than n rows strictly before them: rank() <= n (per
    correlation key, inside a correlated subquery). After OFFSET m: the rows at positions after
    m (row_number() > m) with rank() <= m + n; which of several rows tied across position m
    OFFSET skips is PostgreSQL's sort order's choice, here the engine's (one of its answers).

        SELECT a FROM t ORDER BY a DESC FETCH FIRST 2 ROWS WITH TIES      (a: 1, 2, 2, 3)
        -> Project(Filter(Window(t, (), ((0, desc),), (rank,)), (#1 <= 2,)), (0,))   -> 3, 2, 2
    """
    if not order_by:
        raise SqlError(SqlState.SYNTAX_ERROR, "WITH TIES cannot be specified without ORDER BY clause")
    if limit is None:
        raise SqlError("2201W", "row count cannot be null in FETCH FIRST ... WITH TIES clause")
    width = len(output_types(result.plan))
    partition = tuple(range(n_visible, n_visible + keys))  # the correlation keys follow the visible columns
    funcs = (WindowFunc("rank", (), INT8),) + ((WindowFunc("row_number", (), INT8),) if offset else ())
    ranked = Window(result.plan, partition, order_by, funcs)
    preds = (Call("lte", (ColumnRef(width, INT8), Literal(limit + offset, INT8)), BOOL),)
    if offset:
        preds += (Call("gt", (ColumnRef(width + 1, INT8), Literal(offset, INT8)), BOOL),)
    return replace(result, plan=Project(Filter(ranked, preds), tuple(range(width))))


def _finish(result: QueryResult, n_visible: int, order_by: tuple, node: exp.Expression,
            ctx: PlanContext, top: bool) -> QueryResult:
    limit = _limit_value(node.args.get("limit"), ctx, "LIMIT")
    offset = _limit_value(node.args.get("offset"), ctx, "OFFSET") or 0
    plan_types = output_types(result.plan)
    keyed = [(col, plan_types[col]) for col, _, _ in order_by if needs_key(plan_types[col])]
    if keyed:
        # Arrays, jsonb, intervals (of a set operation's result): sort by their sort keys,
        # appended as hidden columns.
        keys = list(dict.fromkeys(Call("sort_key", (ColumnRef(c, t),), BYTEA) for c, t in keyed))
        width = len(plan_types)
        order_by = tuple((width + keys.index(Call("sort_key", (ColumnRef(c, plan_types[c]),), BYTEA))
                          if needs_key(plan_types[c]) else c, d, n) for c, d, n in order_by)
        result = replace(result, plan=Map(result.plan, tuple(keys)),
                         columns=result.columns + tuple(Column("?order?", BYTEA) for _ in keys))
    hidden = len(result.columns) > n_visible
    visible = result.columns[:n_visible]
    keys = result.keys  # correlation keys follow the visible columns: kept, and TopK ranks per key
    if _with_ties(node):
        result, limit, offset = _with_ties_rows(result, order_by, limit, offset, n_visible, keys), None, 0
    if top:
        project = tuple(range(n_visible + keys)) if hidden else None
        return QueryResult(result.plan, visible, Finishing(order_by, limit, offset, project), keys)
    plan = result.plan
    if limit is not None or offset:
        plan = TopK(plan, tuple(range(n_visible, n_visible + keys)), order_by, limit, offset)
    if hidden:
        plan = Project(plan, tuple(range(n_visible + keys)))
    return QueryResult(plan, visible, keys=keys)


def _order_limit(result: QueryResult, node: exp.Expression, ctx: PlanContext, top: bool,
                 _unused) -> QueryResult:
    """ORDER BY/LIMIT on a set operation or parenthesised query: output columns only."""
    order = node.args.get("order")
    names = [c.name for c in result.columns]
    order_by = []
    for o in (order.expressions if order else []):
        col = _output_ref(o.this, names, None)
        if col is None and isinstance(o.this, exp.Column) and o.this.table:
            raise SqlError(SqlState.UNDEFINED_TABLE, f'missing FROM-clause entry for table "{o.this.table}"')
        if col is None and isinstance(o.this, exp.Column):
            raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{o.this.name}" does not exist')
        if col is None:
            # PostgreSQL's own restriction (its message and SQLSTATE).
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                           detail="Only result column names can be used, not expressions or functions.",
                           hint="Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
        order_by.append(_order_entry(col, o))
    if not order_by and node.args.get("limit") is None and node.args.get("offset") is None:
        if top and result.finishing != Finishing():
            return result
        return result
    if result.finishing != Finishing():  # the inner one was top-level: make it a TopK first
        result = _finish(result, len(result.columns), result.finishing.order_by, exp.Select(), ctx, False)
    return _finish(result, len(result.columns), tuple(order_by), node, ctx, top)


# ---- set operations and VALUES ----------------------------------------------------------------

def _cast_columns(q: QueryResult, types: tuple[SqlType, ...], ctx: PlanContext,
                  untyped: set[int] = frozenset()) -> Plan:
    """The query's columns cast to `types`; an untyped literal's column (held as text) is read
    as the target type, as the literal itself would have been."""
    if q.types == types:
        return q.plan
    exprs = [coerce(ColumnRef(i, t), want, ctx, mode="explicit" if i in untyped else "implicit")
             for i, (t, want) in enumerate(zip(q.types, types))]
    all_types = output_types(q.plan)
    exprs += [ColumnRef(i, all_types[i]) for i in range(len(types), len(types) + q.keys)]
    return _project_exprs(q.plan, len(types) + q.keys, exprs)


def _untyped_outputs(node: exp.Expression) -> set[int]:
    """Positions of a SELECT's output columns that are bare NULLs or string literals."""
    while isinstance(node, exp.Subquery):
        node = node.this
    if not isinstance(node, exp.Select) or any(isinstance(e, exp.Star) for e in node.expressions):
        return set()
    if node.args.get("distinct"):
        return set()  # DISTINCT needs their type inside the branch: PostgreSQL makes them text
    out = set()
    for k, e in enumerate(node.expressions):
        e = e.this if isinstance(e, exp.Alias) else e
        if isinstance(e, exp.Null) or (isinstance(e, exp.Literal) and e.is_string):
            out.add(k)
    return out


def _plan_setop(node: exp.SetOperation, ctx: PlanContext) -> QueryResult:
    op = {exp.Union: "UNION", exp.Except: "EXCEPT", exp.Intersect: "INTERSECT"}[type(node)]
    left = plan_query(node.this, ctx, top=False)
    right = plan_query(node.expression, ctx, top=False)
    if len(left.columns) != len(right.columns):
        raise SqlError(SqlState.SYNTAX_ERROR, f"each {op} query must have the same number of columns")
    # A bare NULL or string literal in a branch's select list takes its type from the other
    # branch (`SELECT i FROM t UNION ALL SELECT NULL`), as in PostgreSQL.
    l_untyped, r_untyped = _untyped_outputs(node.this), _untyped_outputs(node.expression)
    flattened = node.args.get("distinct", True) is False and op == "UNION" and all(
        lc.type == rc.type or k in l_untyped or k in r_untyped
        for k, (lc, rc) in enumerate(zip(left.columns, right.columns)))
    branch_errors = []
    for branch in (left, right):
        # PostgreSQL keeps every column of a set operation's branch, read or not: a failing
        # constant among them fails the statement (`planner.rules.fold_constants`), when it
        # plans the set operation (`set_operation_errors`: not under a constantly false
        # condition). Except in a UNION ALL whose branches have the result's types: it becomes
        # one "append" relation pulled into the parent, whose branches' select lists are folded
        # whatever the parent's conditions (their conditions only if it plans them), and of a
        # branch that stays a subquery there (GROUP BY, DISTINCT, LIMIT, ...) it drops the
        # unread columns, as it does a derived table's.
        if flattened and _stays_subquery(branch.plan):
            continue
        if first_deferred(branch.plan) is not None:
            pruned = prune_columns(branch.plan)  # (not one in a column pruned inside it)
            if flattened and not _constantly_empty(pruned):
                raise_deferred(first_deferred(rewrite_up(pruned, _without_filters)))
            # (nor under a constantly false condition in it)
            err = first_deferred(pruned, planned=True)
            if err is not None:
                branch_errors.append(err)
    types = []
    for k, (lc, rc) in enumerate(zip(left.columns, right.columns)):
        lt = UNKNOWN if k in l_untyped else lc.type
        rt = UNKNOWN if k in r_untyped else rc.type
        (_, _), t = coerce_all([Literal(None, lt), Literal(None, rt)], ctx, op)
        types.append(TEXT if t.kind is TypeKind.UNKNOWN else t)
    types = tuple(types)
    distinct = node.args.get("distinct", True) is not False
    l = _cast_columns(left, types, ctx, l_untyped)
    r = _cast_columns(right, types, ctx, r_untyped)
    outer_values = range(len(types), len(types) + left.keys)  # (a correlated subquery's)
    if op == "UNION":
        plan: Plan = Union_((l, r))
        if distinct:
            plan = equality_keys.distinct(plan, outer_values)
    else:  # EXCEPT, INTERSECT
        plan = equality_keys.set_operation(op, _zero_floats(l, types), _zero_floats(r, types), not distinct,
                                           outer_values)
    plan = set_operation_errors(plan, branch_errors)
    return QueryResult(plan, tuple(Column(c.name, t) for c, t in zip(left.columns, types)), keys=left.keys)


def _without_filters(node: Plan) -> Plan:
    return node.input if isinstance(node, Filter) else node


def _constantly_empty(plan: Plan) -> bool:
    """Whether a query's own condition is constantly false or NULL (`WHERE false`): PostgreSQL
    plans none of it, select list included."""
    while isinstance(plan, (Map, Project, Filter)):
        if isinstance(plan, Filter) and any(isinstance(p, Literal) and p.value is not True for p in plan.predicates):
            return True
        plan = plan.input
    return False


def _stays_subquery(plan: Plan) -> bool:
    """Whether a query's plan is one PostgreSQL cannot pull up into its parent: its select list
    (and HAVING) sit on an aggregate, DISTINCT, LIMIT or window."""
    while isinstance(plan, (Map, Filter, Project, Negate)):
        plan = plan.input
    if isinstance(plan, Union_):   # (a global aggregate: its rows and the row for no input)
        return any(_stays_subquery(p) for p in plan.inputs)
    return isinstance(plan, (Reduce, Distinct, TopK, Window, Threshold))


def _zero_floats(plan: Plan, types: tuple[SqlType, ...]) -> Plan:
    """-0 as 0 in float columns (x + 0.0): EXCEPT and INTERSECT subtract multiplicities, and a
    -0 and a 0 (equal in SQL) must cancel as one value (INTERSECT ALL of -0 and 0 left a row
    with a negative count)."""
    if not any(is_float(t) for t in types):
        return plan
    exprs = [Call("add", (ColumnRef(i, t), Literal(0.0, t)), t) if is_float(t) else ColumnRef(i, t)
             for i, t in enumerate(types)]
    return _project_exprs(plan, len(types), exprs)


def _plan_values(node: exp.Values, ctx: PlanContext, target: tuple[SqlType, ...] | None) -> QueryResult:
    if ctx.outer is not None and not ctx.outer.blocked:
        return _plan_correlated_values(node, ctx)
    lowerer = ScalarLowerer(Scope(), ctx, clause="VALUES")
    rows = [[lowerer.lower(e) for e in (t.expressions if isinstance(t, exp.Tuple) else [t])]
            for t in node.expressions]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise SqlError(SqlState.SYNTAX_ERROR, "VALUES lists must all be the same length")
    types = []
    for i in range(width):
        col, t = coerce_all([r[i] for r in rows], ctx, "VALUES")
        for r, e in zip(rows, col):
            r[i] = resolve_unknown(e, ctx)
        types.append(rows[0][i].type)
    types_t = tuple(types)
    columns = tuple(Column(f"column{i + 1}", t) for i, t in enumerate(types_t))
    if all(isinstance(e, Literal) for r in rows for e in r):
        return QueryResult(Constant(tuple(tuple(e.value for e in r) for r in rows), types_t), columns)
    unit = Constant(((),), ())
    parts = tuple(Map(unit, tuple(r)) for r in rows)
    return QueryResult(parts[0] if len(parts) == 1 else Union_(parts), columns)


def _plan_correlated_values(node: exp.Values, ctx: PlanContext) -> QueryResult:
    """VALUES inside a correlated subquery: each row for each outer value (D), whose columns
    its expressions may read, followed by D's columns as keys."""
    outer = ctx.outer
    n = len(outer.scope.columns)
    if not any(node.find_all(exp.Column)):  # no names: the rows once per outer value
        q = _plan_values(node, replace(ctx, outer=None), None)
        return QueryResult(Join(q.plan, outer.plan, (), ()), q.columns, keys=n)
    lowerer = ScalarLowerer(outer.scope, ctx, clause="VALUES")
    rows = [[lowerer.lower(e) for e in (t.expressions if isinstance(t, exp.Tuple) else [t])]
            for t in node.expressions]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise SqlError(SqlState.SYNTAX_ERROR, "VALUES lists must all be the same length")
    types = []
    for i in range(width):
        col, _ = coerce_all([r[i] for r in rows], ctx, "VALUES")
        for r, e in zip(rows, col):
            r[i] = resolve_unknown(e, ctx)
        types.append(rows[0][i].type)
    parts = tuple(Project(Map(outer.plan, tuple(r)), tuple(range(n, n + width)) + tuple(range(n))) for r in rows)
    columns = tuple(Column(f"column{i + 1}", t) for i, t in enumerate(types))
    return QueryResult(parts[0] if len(parts) == 1 else Union_(parts), columns, keys=n)


def _one_select_list_function(srf: exp.Expression, plan: Plan, scope: Scope, ctx: PlanContext):
    """A set-returning function in the select list: the FROM result with the function's values
    as one more column, one row per value."""
    plan, scope, args_hook = _srf_argument_subqueries([srf], plan, scope, ctx)
    plan, t = select_list_flat_map(srf, plan, ScalarLowerer(scope, ctx, hook=args_hook, clause="SELECT"), ctx)
    srf_col = ColumnRef(len(scope.columns), t)
    scope = scope + Scope([ScopeColumn(None, "?srf?", t, using_hidden=True)])
    key = srf.sql()
    return plan, scope, lambda node: srf_col if is_table_function(node) and node.sql() == key else None


def _srf_argument_subqueries(srfs: list[exp.Expression], plan: Plan, scope: Scope, ctx: PlanContext):
    """Subqueries in the arguments of select-list set-returning functions (pgcli's
    `unnest((SELECT array_agg(attname ...) ...))`): computed once per FROM row as hidden columns
    before the functions run; the returned hook lowers each such subquery to its column."""
    nodes: dict[str, exp.Expression] = {}
    for f in srfs:
        for a in f.expressions:
            for n in a.walk(prune=lambda e: is_subquery(e)):
                if is_subquery(n):
                    nodes.setdefault(n.sql(), n)
    if not nodes:
        return plan, scope, None
    lowerer = ScalarLowerer(scope, ctx, clause="SELECT")
    subqueries = Subqueries(scope, ctx)
    subqueries.install(lowerer)
    values = [lowerer.lower(n) for n in nodes.values()]
    n_in = len(output_types(plan))
    attached = subqueries.attach(plan)
    values = [subqueries.substitute(v) for v in values]
    width = len(output_types(attached))
    plan = Project(Map(attached, tuple(values)), tuple(range(n_in)) + tuple(range(width, width + len(values))))
    first = len(scope.columns)
    scope = scope + Scope([ScopeColumn(None, f"?srf argument {k}?", v.type, using_hidden=True)
                           for k, v in enumerate(values)])
    refs = {key: ColumnRef(first + k, v.type) for k, (key, v) in enumerate(zip(nodes, values))}
    return plan, scope, lambda node: refs.get(node.sql()) if is_subquery(node) else None


_LOCKSTEP = "?lockstep?"


def _is_first_dimension(dim: exp.Expression) -> exp.Expression:
    return exp.EQ(this=exp.Cast(this=dim.copy(), to=exp.DataType.build("int")), expression=exp.Literal.number(1))


def _lockstep_array_functions(srfs: list[exp.Expression], plan: Plan, scope: Scope, ctx: PlanContext):
    """Several set-returning functions in one select list run in lockstep in PostgreSQL: row i
    has each function's i-th value, NULL where a function has fewer. For unnest(array) and
    generate_subscripts(array, 1) (what catalog queries use, `unnest(indkey), generate_subscripts
    (indkey, 1)`) that is one series of positions up to the longest array:

        unnest(a), generate_subscripts(b, 1)
        -> FROM generate_series(1, greatest(cardinality(a), cardinality(b))) AS i
           SELECT a[i], CASE WHEN i <= cardinality(b) THEN i END
    """
    lengths = []
    for f in {f.sql(): f for f in srfs}.values():
        name = f.name.lower()
        args = f.expressions
        if name == "unnest" and len(args) == 1 or (name == "generate_subscripts" and len(args) == 2
                                                  and args[1].sql() == "1"):
            lengths.append(exp.Anonymous(this="cardinality", expressions=[args[0].copy()]))
        elif name == "generate_subscripts" and len(args) == 2:
            # A dimension that is not the literal 1 (SQLAlchemy binds it: `generate_subscripts
            # (indkey, $1::INTEGER)`): a one-dimensional array has subscripts in dimension 1
            # only, and a function with no rows does not lengthen the series (NULL to greatest).
            lengths.append(exp.Case(ifs=[exp.If(this=_is_first_dimension(args[1]), true=exp.Anonymous(
                this="cardinality", expressions=[args[0].copy()]))]))
        else:
            raise unsupported("more than one set-returning function in a select list, other than "
                              "unnest and generate_subscripts of arrays")
    longest = exp.Anonymous(this="greatest", expressions=lengths)
    series = exp.Anonymous(this="generate_series", expressions=[exp.Literal.number(1), longest])
    plan, scope, args_hook = _srf_argument_subqueries(srfs, plan, scope, ctx)
    plan, t = select_list_flat_map(series, plan, ScalarLowerer(scope, ctx, hook=args_hook, clause="SELECT"), ctx)
    scope = scope + Scope([ScopeColumn(_LOCKSTEP, "i", t, using_hidden=True)])
    position = exp.Column(this=exp.to_identifier("i"), table=exp.to_identifier(_LOCKSTEP))
    inner = ScalarLowerer(scope, ctx, hook=args_hook, clause="SELECT")
    replacements = {}
    for f in srfs:
        arg = f.expressions[0].copy()
        if f.name.lower() == "unnest":
            ast = exp.Bracket(this=arg, expressions=[position.copy()])
        else:
            within = exp.LTE(this=position.copy(), expression=exp.Anonymous(this="cardinality", expressions=[arg]))
            if f.expressions[1].sql() != "1":
                within = exp.And(this=_is_first_dimension(f.expressions[1]), expression=within)
            ast = exp.Case(ifs=[exp.If(this=within, true=position.copy())])
        replacements[f.sql()] = inner.lower(ast)
    return plan, scope, lambda node: replacements.get(node.sql()) if is_table_function(node) else None
