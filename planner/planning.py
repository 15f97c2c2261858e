"""Statement dispatch: a parsed `Statement` to a `StatementPlan`, and Describe.

>>> stmt = parse("SELECT a + 1 FROM t WHERE b = $1")[0]
>>> describe_statement(catalog, stmt, [0])     # t(a int4, b int8)
([bigint], [Column('?column?', integer)])
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal
from typing import Any

from sqlglot import exp

from catalog.items import CatalogItem, CatalogReader, ItemKind
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Literal
from dataflow.types import BOOL, INT8, NUMERIC, TEXT, Column, SqlType, TypeKind
from planner import mz_ast as m
from planner.context import Params, PlanContext, SessionInfo
from planner import literal_insert
from planner.dialect import parse_one_statement, parse_query, tokenize
from planner.explain import render_plan, render_select
from planner.lower_ddl import (column_positions, plan_create_index, plan_create_namespace, plan_create_table,
                               plan_create_view, plan_drop, plan_drop_namespace, resolve_item, table_columns)
from planner.lower_dml import plan_delete, plan_insert, plan_update
from planner.lower_select import plan_catalog_item, plan_query
from planner.parse import Statement
from planner.rules import optimize, optimize_statement
from planner.scalar import ScalarLowerer, coerce
from planner.scope import Scope
from planner.show import show_columns
from planner.statements import (ClosePlan, CopyFromPlan, CopyToPlan, DeallocatePlan, DeclarePlan, ExecutePlan,
                                PreparePlan,
                                DiscardPlan, EmptyPlan, ExplainPlan, FetchPlan,
                                InsertPlan, SelectPlan, SetVariablePlan, ShowPlan, StatementPlan,
                                SubscribePlan, TransactionPlan)
from planner.typing import type_from_oid


def _timestamp_value(node: exp.Expression, ctx: PlanContext, what: str) -> int:
    """AS OF / UP TO: a constant mz_timestamp (milliseconds), a number or a timestamp."""
    e = ScalarLowerer(Scope(), ctx, clause=what).lower(node)
    if not isinstance(e, Literal):
        raise unsupported(f"non-constant {what}")
    if e.type.kind is TypeKind.UNKNOWN:
        v = e.value.raw if hasattr(e.value, "raw") else e.value
        if isinstance(v, str):
            try:
                return int(v)
            except ValueError:
                e = coerce(Literal(v, e.type), SqlType(TypeKind.TIMESTAMPTZ), ctx)
        else:
            e = coerce(e, INT8, ctx)
    v = e.value
    if v is None:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{what} must not be null")
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return int(v.timestamp() * 1000)
    if isinstance(v, (int, Decimal, float)) and not isinstance(v, bool):
        if v < 0:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{what} must not be negative")
        return int(v)
    raise SqlError(SqlState.DATATYPE_MISMATCH, f"{what} must be a timestamp or number")


def _select(ast: Any, ctx: PlanContext) -> SelectPlan:
    as_of = None
    if isinstance(ast, m.SelectAsOf):
        as_of = _timestamp_value(ast.as_of, ctx, "AS OF")
        ast = ast.query
    q = plan_query(ast, ctx, top=True)
    return SelectPlan(q.plan, q.columns, q.finishing, as_of, tuple(ctx.session_changes))


def _subscribe(ast: m.Subscribe, ctx: PlanContext) -> SubscribePlan:
    ctx.maintained = "SUBSCRIBE"
    if ast.target is not None:
        item = resolve_item(ast.target, ctx)
        plan = plan_catalog_item(item, ctx)
        columns = tuple(item.columns)
    else:
        q = plan_query(ast.query, ctx, top=False)  # ORDER BY without LIMIT is meaningless here
        plan, columns = q.plan, q.columns
    key = None
    if ast.upsert_key is not None:
        key = column_positions(columns, ast.upsert_key)
    as_of = _timestamp_value(ast.as_of, ctx, "AS OF") if ast.as_of is not None else None
    up_to = _timestamp_value(ast.up_to, ctx, "UP TO") if ast.up_to is not None else None
    return SubscribePlan(plan, columns, ast.progress, ast.snapshot, as_of, up_to, key)


def _inner_read(ast: Any, ctx: PlanContext) -> SelectPlan | SubscribePlan:
    if isinstance(ast, m.Subscribe):
        return _subscribe(ast, ctx)
    return _select(ast, ctx)


def _copy_to(ast: m.CopyTo, ctx: PlanContext) -> CopyToPlan:
    if isinstance(ast.inner, tuple):
        item = resolve_item(ast.inner, ctx)
        plan = plan_catalog_item(item, ctx)
        cols = list(item.columns)
        if ast.columns is not None:
            pos = column_positions(item.columns, ast.columns, item.name)
            from dataflow.plan import Project
            plan = Project(plan, tuple(pos))
            cols = [item.columns[p] for p in pos]
        inner = SelectPlan(plan, tuple(cols))
    else:
        inner = _inner_read(ast.inner, ctx)
    return CopyToPlan(inner, ast.format, ast.header)


def _copy_from(ast: m.CopyFrom, ctx: PlanContext) -> CopyFromPlan:
    item = resolve_item(ast.table, ctx)
    if item.kind is not ItemKind.TABLE:
        raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'cannot copy to {item.kind.value} "{item.name}"')
    if ast.columns is None:
        cols = tuple(range(len(item.columns)))
    else:
        cols = column_positions(item.columns, ast.columns, item.name)
    delim = ast.delimiter
    if delim is not None and len(delim) != 1:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                       "COPY delimiter must be a single one-byte character")
    return CopyFromPlan(item.id, cols, ast.format, delim, ast.header)


def _explain(ast: m.Explain, ctx: PlanContext) -> ExplainPlan:
    """EXPLAIN shows the plan that would run: the rules applied, as plan_statement applies them,
    then what the coordinator does with a view's or a SELECT's plan on its cluster: joins read
    indexes in place (planner/shared_arrangements.py), a SELECT looks keys up in an index
    (planner/index_lookup.py)."""
    from planner.index_lookup import use_index_lookups
    from planner.shared_arrangements import use_shared_arrangements

    indexes = {i.id: tuple(i.index_key) for i in ctx.catalog.items() if i.kind is ItemKind.INDEX}
    if ast.target_kind is not None:
        item = resolve_item(ast.inner, ctx)
        if item.kind.value != ast.target_kind:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is not a {ast.target_kind}')
        q = plan_query(parse_query(item.definition), ctx, top=False)
        plan = optimize(q.plan)
        if item.kind is ItemKind.MATERIALIZED_VIEW:
            plan = use_shared_arrangements(plan, ctx.catalog, _cluster_name_of(item, ctx), reader=item.id)
        return ExplainPlan(render_plan(plan, indexes=indexes))
    if isinstance(ast.inner, m.CreateView):
        q = plan_query(ast.inner.query, ctx, top=False)
        plan = optimize(q.plan)
        if ast.inner.materialized:
            plan = use_shared_arrangements(plan, ctx.catalog, ctx.cluster_name)
        return ExplainPlan(render_plan(plan, indexes=indexes))
    p = _select(ast.inner, ctx)
    plan = use_shared_arrangements(use_index_lookups(optimize(p.plan), ctx.catalog, ctx.cluster_name),
                                   ctx.catalog, ctx.cluster_name)
    return ExplainPlan(render_select(plan, p.finishing, indexes))


def _cluster_name_of(item: CatalogItem, ctx: PlanContext) -> str:
    clusters = getattr(ctx.catalog, "clusters", None)
    spec = clusters().by_id(item.cluster_id) if clusters is not None and item.cluster_id else None
    return spec.name if spec is not None else ctx.cluster_name


def _show(ast: m.Show, ctx: PlanContext) -> ShowPlan:
    if ast.target is not None:
        item = resolve_item(ast.target, ctx)
        kind = "source" if item.kind is ItemKind.SUBSOURCE else item.kind.value
        if ast.what.startswith("create ") and kind != ast.what[len("create "):]:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{item.name}" is not a {ast.what[len("create "):]}')
        # For object-targeted SHOWs, `name` is the catalog id of the object.
        return ShowPlan(ast.what, item.id, item.schema)
    if ast.what == "variable":
        return ShowPlan("variable", ast.variable)
    return ShowPlan(ast.what, None, ast.schema)


def _table_defaults(item, ctx: PlanContext):
    """A table's DEFAULT expressions, recovered from its CREATE TABLE text (None: every column
    defaults to NULL). A text without the word has none: no parse on every INSERT."""
    if "default" not in item.create_sql.lower():
        return None
    try:
        from planner.dialect import parse_one_statement
        tree = parse_one_statement(item.create_sql)
        if isinstance(tree, exp.Create):
            return tuple(table_columns(tree, replace(ctx, params=Params(None, []), ctes={},
                                                     depends_on=[]))[1])
    except SqlError:
        pass
    return None


def _insert(ast: exp.Insert, ctx: PlanContext) -> InsertPlan:
    target = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    if not isinstance(target, exp.Table):  # e.g. `INSERT INTO VALUES t ...`
        return plan_insert(ast, ctx)       # which reports the missing table name
    parts = tuple(p for p in (target.catalog, target.db, target.name) if p)
    item = ctx.catalog.try_resolve(parts, ctx.search_path, ctx.database)
    defaults = _table_defaults(item, ctx) if item is not None and item.kind is ItemKind.TABLE else None
    return plan_insert(ast, ctx, defaults)


def _literal_insert(stmt: Statement, ast: m.LiteralInsert, ctx: PlanContext) -> InsertPlan:
    """Literal rows into a table as one array per column (planner/literal_insert.py), or the
    general INSERT's plan when a literal, the column list or the target needs it (which also
    reports what is wrong with the statement)."""
    item = ctx.catalog.try_resolve(ast.table, ctx.search_path, ctx.database)
    if item is not None and item.kind is ItemKind.TABLE and ctx.params.values is not None:
        names = [c.name for c in item.columns]
        given = ast.columns if ast.columns is not None else tuple(names[:len(ast.values)])
        if len(ast.values) == len(names) and sorted(given) == sorted(names) and len(set(given)) == len(given):
            by_column = tuple(ast.values[given.index(n)] for n in names)
            arrays = literal_insert.column_arrays(by_column, [c.type for c in item.columns])
            if arrays is not None:
                return InsertPlan(item.id, None, columns=tuple(arrays))
    return plan_in_context(Statement(stmt.sql, parse_one_statement(stmt.sql, tokenize(stmt.sql))), ctx)


def _prepare(ast: m.Prepare) -> PreparePlan:
    """PREPARE checks the statement parses (one statement) and reads the declared types."""
    from planner.dialect import parse_sqlglot
    from planner.parse import parse
    from planner.typing import type_from_ast
    statements = parse(ast.statement)
    if len(statements) != 1 or statements[0].is_empty:
        raise SqlError(SqlState.SYNTAX_ERROR, "PREPARE takes exactly one statement")
    types = tuple(type_from_ast(parse_sqlglot(f"SELECT NULL::{t}").expressions[0].to) for t in ast.types)
    return PreparePlan(ast.name, ast.statement, types)


def _execute(ast: m.Execute, ctx: PlanContext) -> ExecutePlan:
    """EXECUTE's arguments are constant expressions, evaluated now."""
    from planner.dialect import parse_sqlglot
    from planner.rules.fold_constants import fold_constant, raise_deferred
    values, types = [], []
    for text in ast.args:
        e = fold_constant(ScalarLowerer(Scope(), ctx, clause="EXECUTE").lower(
            parse_sqlglot(f"SELECT {text}").expressions[0]))
        raise_deferred(e)
        if not isinstance(e, Literal):
            raise unsupported("EXECUTE arguments that are not constants")
        values.append(e.value.raw if hasattr(e.value, "raw") else e.value)
        types.append(e.type)
    return ExecutePlan(ast.name, tuple(values), tuple(types))


def plan_in_context(stmt: Statement, ctx: PlanContext) -> StatementPlan:
    ast = stmt.ast
    if isinstance(ast, (exp.Query, m.SelectAsOf)):
        return _select(ast, ctx)
    if isinstance(ast, exp.Insert):
        return _insert(ast, ctx)
    if isinstance(ast, m.LiteralInsert):
        return _literal_insert(stmt, ast, ctx)
    if isinstance(ast, exp.Update):
        return plan_update(ast, ctx)
    if isinstance(ast, exp.Delete):
        return plan_delete(ast, ctx)
    if isinstance(ast, exp.Create):
        if (ast.args.get("kind") or "").upper() != "TABLE":
            raise unsupported(f"CREATE {ast.args.get('kind')}")
        return plan_create_table(ast, ctx, stmt.sql)
    if isinstance(ast, m.CreateView):
        return plan_create_view(ast, ctx, stmt.sql)
    if isinstance(ast, m.CreateIndex):
        return plan_create_index(ast, ctx, stmt.sql)
    if isinstance(ast, m.Drop):
        return plan_drop(ast, ctx)
    if isinstance(ast, m.CreateNamespace):
        return plan_create_namespace(ast, ctx)
    if isinstance(ast, m.DropNamespace):
        return plan_drop_namespace(ast, ctx)
    if isinstance(ast, m.Subscribe):
        return _subscribe(ast, ctx)
    if isinstance(ast, m.Show):
        return _show(ast, ctx)
    if isinstance(ast, m.SetVariable):
        return SetVariablePlan(ast.name, ast.value, ast.local)
    if isinstance(ast, m.Transaction):
        return TransactionPlan(ast.action, ast.read_only, ast.savepoint)
    if isinstance(ast, m.Discard):
        return DiscardPlan(ast.what)
    if isinstance(ast, m.Deallocate):
        return DeallocatePlan(ast.name)
    if isinstance(ast, m.Prepare):
        return _prepare(ast)
    if isinstance(ast, m.Execute):
        return _execute(ast, ctx)
    if isinstance(ast, m.Declare):
        return DeclarePlan(ast.cursor, _inner_read(ast.inner, ctx))
    if isinstance(ast, m.Fetch):
        return FetchPlan(ast.cursor, ast.count, ast.timeout_ms)
    if isinstance(ast, m.Close):
        return ClosePlan(ast.cursor)
    if isinstance(ast, m.CopyTo):
        return _copy_to(ast, ctx)
    if isinstance(ast, m.CopyFrom):
        return _copy_from(ast, ctx)
    if isinstance(ast, m.Explain):
        return _explain(ast, ctx)
    if isinstance(ast, m.Empty):
        return EmptyPlan()
    from planner.source_syntax import CreateSource, plan_create_source
    if isinstance(ast, CreateSource):
        return plan_create_source(ast, ctx, stmt.sql)
    from planner.webhook_syntax import CreateWebhookSource, plan_create_webhook_source
    if isinstance(ast, CreateWebhookSource):
        return plan_create_webhook_source(ast, ctx, stmt.sql)
    from planner.pg_source_syntax import CreatePostgresSource, plan_postgres_source
    if isinstance(ast, CreatePostgresSource):
        return plan_postgres_source(ast, ctx, stmt.sql)
    from planner.kafka_syntax import CreateKafkaSource, plan_kafka_source
    if isinstance(ast, CreateKafkaSource):
        return plan_kafka_source(ast, ctx, stmt.sql)
    from planner.connection_syntax import CONNECTION_STATEMENTS, ConnectionPlan
    if isinstance(ast, CONNECTION_STATEMENTS):
        return ConnectionPlan(ast, ctx.database, tuple(ctx.search_path))  # server/adapter/connections.py
    if isinstance(ast, m.ROLE_STATEMENTS):
        return ast  # CREATE/ALTER/DROP ROLE need no planning: the adapter runs them as parsed
    from planner.cluster_syntax import CLUSTER_STATEMENTS
    if isinstance(ast, CLUSTER_STATEMENTS):
        return ast  # CREATE/DROP/ALTER CLUSTER [REPLICA]: likewise (server/adapter/clusters.py)
    from planner.privilege_syntax import PRIVILEGE_STATEMENTS
    if isinstance(ast, PRIVILEGE_STATEMENTS):
        return ast  # GRANT / REVOKE / ALTER ... OWNER TO: likewise (server/adapter/privileges.py)
    raise unsupported(f"statement {stmt.sql.split()[0] if stmt.sql else ''}")


def plan_statement(catalog: CatalogReader, stmt: Statement, *, params: list[Any] | None = None,
                   param_types: list[SqlType] | None = None, search_path=("public",),
                   database: str = "slipstream", session: SessionInfo | None = None,
                   maintained: str | None = None, reads: list[str] | None = None,
                   cluster: str | None = None) -> StatementPlan:
    """Plan one parsed statement. `params`/`param_types`: the bound $n values and their types
    (a type of `unknown` or None means the value is text to be read in the type context wants).
    `session` (what session functions read) overrides `search_path` and `database`;
    `maintained` names what keeps the result up to date when the caller plans a dataflow
    (e.g. "an index"), so wall-clock functions are refused. `reads`, when given, receives the ids
    of the catalog objects the statement names itself (not those read inside the views it names):
    the adapter checks privileges on them (server/adapter/privileges.py). `cluster` names the
    compute cluster the plan will run on when it is not the session's (only its indexes are read)."""
    values = list(params) if params is not None else []
    types: list[SqlType | None] = [None if t is None or t.kind is TypeKind.UNKNOWN else t
                                   for t in (param_types or [])]
    types += [None] * (len(values) - len(types))
    ctx = _context(catalog, Params(values, types), search_path, database, session)
    ctx.maintained = maintained
    ctx.cluster = cluster
    # The one place relational plans leave the planner: the rewrite rules run here.
    planned = plan_in_context(stmt, ctx)
    if reads is not None:
        reads.extend(dict.fromkeys(ctx.depends_on))
    return optimize_statement(planned)


SUBSCRIBE_PREFIX_TIMESTAMP = Column("mz_timestamp", NUMERIC, False)


def result_columns(plan: StatementPlan) -> list[Column] | None:
    """The columns a statement's result has (None for statements that return no rows)."""
    if isinstance(plan, SelectPlan):
        return list(plan.columns)
    if isinstance(plan, SubscribePlan):
        cols = [SUBSCRIBE_PREFIX_TIMESTAMP]
        if plan.progress:
            cols.append(Column("mz_progressed", BOOL, False))
        if plan.envelope_upsert_key is not None:
            cols.append(Column("mz_state", TEXT))
            key = plan.envelope_upsert_key
            cols += [plan.columns[i] for i in key]
            cols += [c for i, c in enumerate(plan.columns) if i not in key]
        else:
            cols.append(Column("mz_diff", INT8))
            cols += list(plan.columns)
        return cols
    if isinstance(plan, ShowPlan):
        return list(show_columns(plan))
    if isinstance(plan, ExplainPlan):
        return [Column("Optimized Plan", TEXT)]
    return None


def _context(catalog: CatalogReader, params: Params, search_path, database: str,
             session: SessionInfo | None) -> PlanContext:
    if session is None:
        session = SessionInfo(database=database, search_path=tuple(search_path))
    return PlanContext(catalog, params, session.search_path, session.database, session=session)


def describe_statement(catalog: CatalogReader, stmt: Statement, param_oids: list[int], *,
                       search_path=("public",), database: str = "slipstream",
                       session: SessionInfo | None = None
                       ) -> tuple[list[SqlType], list[Column] | None]:
    """Parameter types (inferred from context where the client sent OID 0; text if nothing says)
    and result columns (None for statements without rows; FETCH's depend on the cursor and are
    left to the adapter, returned as None)."""
    types = [type_from_oid(o) for o in param_oids]
    ctx = _context(catalog, Params(None, types), search_path, database, session)
    plan = plan_in_context(stmt, ctx)
    out = [t if t is not None else TEXT for t in ctx.params.types]
    return out, result_columns(plan)
