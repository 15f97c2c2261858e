"""Statement sequencing: one method per kind of statement plan."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, AsyncIterator

import pyarrow as pa
import pyarrow.compute as pc

from catalog.items import ItemKind
from catalog.roles import PASSWORD_ENCRYPTIONS
from dataflow.batch import batch_from_columns, batch_from_rows, concat, negate
from dataflow.errors import SqlError, SqlState, too_deeply_nested, unsupported
from dataflow.plan import Map
from dataflow.types import TEXT, Column, arrow_schema
from planner import describe_statement, plan_statement
from planner.context import SessionInfo
from planner.parse import ParseCache, Statement
from planner.statements import (ClosePlan, CopyFromPlan, DeallocatePlan, CopyToPlan, CreateIndexPlan, ExecutePlan,
                                PreparePlan,
                                CreateNamespacePlan, CreateTablePlan, DropNamespacePlan,
                                CreateViewPlan, DeclarePlan, DeletePlan, DiscardPlan, DropPlan, EmptyPlan,
                                ExplainPlan, FetchPlan, InsertPlan, SelectPlan, SetVariablePlan, ShowPlan,
                                SubscribePlan, TransactionPlan, UpdatePlan)
from server.adapter.copy_in import parse_copy
from planner.cluster_syntax import CLUSTER_STATEMENTS
from planner.mz_ast import ROLE_STATEMENTS
from server.adapter.finishing import finish
from server.adapter.own_writes import pending_by_table, refuse_derived_reads, with_own_writes
from server.adapter.plan_cache import PlanKey, PreparedPlans, binds_only_columns, plan_key
from server.adapter.clusters import execute_cluster_statement
from server.adapter.roles import execute_role_statement
from server.adapter import privileges
from server import limits
from planner.privilege_syntax import PRIVILEGE_STATEMENTS
from catalog.privileges import CURRENT_ROLE
from server.adapter.show import show
from server.adapter.state import Cursor, PendingWrite, SessionState
from server.adapter.subscribe import subscribe_columns, subscribe_rows
from server.adapter.vars import DEFAULTS, READ_ONLY, REPORTABLE, canonical
from server.api import (CommandComplete, CopyIn, CopyOut, EmptyQuery, Outcome, Rows, RowStream, Session,
                        StatementDescription)
from server.coordinator import Coordinator

log = logging.getLogger("slipstream.adapter")

_ALLOWED_IN_FAILED = (TransactionPlan,)


def _state(session: Session) -> SessionState:
    if session.state is None:
        session.state = SessionState()
    return session.state


def _search_path(session: Session) -> tuple[str, ...]:
    value = session.vars.get("search_path", "public")
    return tuple(p.strip().strip('"') for p in value.split(",") if p.strip()) or ("public",)


def _session_info(session: Session) -> SessionInfo:
    """What the planner's session functions read, fixed for one statement."""
    return SessionInfo(user=session.user, database=session.vars.get("database", "slipstream"),
                       search_path=_search_path(session),
                       pid=session.pid, settings={**DEFAULTS, **session.vars})


class SlipstreamAdapter:
    def __init__(self, coordinator: Coordinator) -> None:
        self.coord = coordinator
        self._parsed = ParseCache()
        self._plans = PreparedPlans()  # (shared by sessions: the key holds what differs)

    # -- the pgwire contract ---------------------------------------------------------------------

    async def startup(self, session: Session) -> None:
        _state(session)
        privileges.apply_role_settings(self.coord.catalog, session)  # ALTER ROLE ... SET
        # psql and most drivers default the database to the user name; as in Materialize, an
        # unknown database does not refuse the connection: the session uses "slipstream".
        if session.database and session.database != "slipstream":
            if any(n == session.database for n, _ in self.coord.catalog.databases()):
                session.vars["database"] = session.database
            else:
                session.pending_notices.append(
                    ("00000", f'session database "{session.database}" does not exist; using "slipstream"'))

    async def close_session(self, session: Session) -> None:
        state = _state(session)
        for cursor in state.cursors.values():
            cursor.close()
        state.cursors.clear()

    async def execute(self, session: Session, sql: str) -> AsyncIterator[Outcome]:
        statements = self._parsed.parse(sql)
        for stmt in statements:
            yield await self._run(session, stmt, None, None)

    async def execute_one(self, session: Session, sql: str, params: list[Any], param_types) -> Outcome:
        info = _session_info(session)
        version = getattr(self.coord.catalog, "version", None)
        key = None if version is None else plan_key(sql, param_types, version, info)
        if key is not None:  # a point read (or a read without parameters) planned before: no parse, no plan
            bound = self._plans.bind(key, params)
            if bound is not None:
                return await self._run(session, Statement(sql, None), params, param_types, bound=bound)
        statements = self._parsed.parse(sql)
        if len(statements) > 1:
            raise SqlError(SqlState.SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement")
        return await self._run(session, statements[0], params, param_types, key=key, info=info)

    async def describe(self, session: Session, sql: str, param_oids: list[int]) -> StatementDescription:
        statements = self._parsed.parse(sql)
        if len(statements) > 1:
            raise SqlError(SqlState.SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement")
        stmt = statements[0]
        if stmt.is_empty:
            return StatementDescription([], None)
        param_types, columns = describe_statement(self.coord.catalog, stmt, param_oids,
                                                  session=_session_info(session))
        if columns is None:
            columns = self._columns_of_special(session, stmt, param_types)
        return StatementDescription(list(param_types), None if columns is None else list(columns))

    def _columns_of_special(self, session: Session, stmt: Statement, param_types) -> list[Column] | None:
        """Result columns the planner cannot know: FETCH (the cursor's), SUBSCRIBE, SHOW."""
        try:
            plan = plan_statement(self.coord.catalog, stmt, params=[None] * len(param_types),
                                  param_types=list(param_types), session=_session_info(session))
        except SqlError:
            return None
        if isinstance(plan, FetchPlan):
            cursor = _state(session).cursors.get(plan.cursor.lower())
            return None if cursor is None else cursor.columns
        if isinstance(plan, SubscribePlan):
            return subscribe_columns(plan)
        if isinstance(plan, ShowPlan):
            try:
                return show(plan, self.coord.catalog, session).columns
            except SqlError:
                return None
        return None

    def reg_names(self, session: Session):
        """How reg* values (regclass, regtype, regproc, regnamespace, regrole) print for this
        session: (type oid, oid) -> name, the names looked up on first use (once per result set)
        the way the planner looks them up for `::text`."""
        from planner.catalog_casts import maps_for
        from planner.context import Params, PlanContext
        from planner.typing import type_from_oid
        built: dict[int, dict[int, str]] = {}

        def name(type_oid: int, oid: int) -> str | None:
            names = built.get(type_oid)
            if names is None:
                info = _session_info(session)
                ctx = PlanContext(self.coord.catalog, Params(None, []), info.search_path, info.database,
                                  session=info)
                names = built[type_oid] = maps_for(type_from_oid(type_oid).kind, ctx).names
            return names.get(oid)
        return name

    # -- dispatch -------------------------------------------------------------------------------

    async def _run(self, session: Session, stmt: Statement, params, param_types, *,
                   bound: tuple[SelectPlan, list[str]] | None = None, key: PlanKey | None = None,
                   info: SessionInfo | None = None) -> Outcome:
        """Plan and run one statement; `bound`: its plan and reads, kept from an earlier
        execution (server/adapter/plan_cache.py); `key`: under which to keep its plan."""
        state = _state(session)
        try:
            if stmt.is_empty:
                return EmptyQuery()
            CURRENT_ROLE.set(session.user)  # new catalog objects are owned by the session's role
            if bound is not None:
                plan, reads = bound
            else:
                plan, reads = self._plan(stmt, params, param_types, info or _session_info(session), key)
            if state.failed and not isinstance(plan, _ALLOWED_IN_FAILED):
                raise SqlError(SqlState.IN_FAILED_SQL_TRANSACTION,
                               "current transaction is aborted, commands ignored until end of transaction block")
            privileges.check(self.coord.catalog, session, plan, reads, stmt.ast)
            return await self._sequence(session, state, plan)
        except SqlError:
            if state.in_block:
                state.failed = True
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            if state.in_block:
                state.failed = True
            raise
        except RecursionError:  # nested past what the parser and planner recurse through
            if state.in_block:
                state.failed = True
            raise too_deeply_nested() from None
        except Exception as e:  # a bug: report it as an internal error, keep the connection
            # A role statement's text may hold a password: it is never logged.
            log.exception("internal error executing %r",
                          "(a role statement)" if isinstance(stmt.ast, ROLE_STATEMENTS) else stmt.sql)
            if state.in_block:
                state.failed = True
            raise SqlError(SqlState.INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}") from e
        finally:
            session.transaction_status = state.status()

    def _plan(self, stmt: Statement, params, param_types, info: SessionInfo, key: PlanKey | None):
        """The statement's plan and the catalog objects it names; with `key`, the plan is kept
        for later executions if it can be (server/adapter/plan_cache.py)."""
        keep = key is not None and not self._plans.knows(key)
        candidate = keep and binds_only_columns(stmt.ast, len(params))  # before the planner rewrites it
        reads: list[str] = []
        plan = plan_statement(self.coord.catalog, stmt, params=params, param_types=param_types,
                              session=info, reads=reads)
        if keep:
            def replan(values, at: SessionInfo, again: list[str]):
                return plan_statement(self.coord.catalog, self._parsed.parse(stmt.sql)[0], params=values,
                                      param_types=param_types, session=at, reads=again)
            self._plans.learn(key, params, plan if candidate else None, reads, info, replan)
        return plan, reads

    async def _sequence(self, session: Session, state: SessionState, plan) -> Outcome:
        state.cluster = session.vars.get("cluster") or DEFAULTS["cluster"]
        if isinstance(plan, SelectPlan):
            rows = await self._peek_rows(plan, session, state)
            for name, value, local in plan.set_vars:  # set_config(): as SET would
                self._set(session, SetVariablePlan(name, value, local))
            return Rows(list(plan.columns), rows)
        if isinstance(plan, InsertPlan):
            return await self._insert(state, plan)
        if isinstance(plan, UpdatePlan):
            return await self._update_or_delete(state, plan.table_id, plan, "UPDATE")
        if isinstance(plan, DeletePlan):
            return await self._update_or_delete(state, plan.table_id, plan, "DELETE")
        if isinstance(plan, SubscribePlan):
            self._refuse_subscribe(state, plan)
            return RowStream(subscribe_columns(plan), subscribe_rows(self.coord, plan, state.cluster))
        if isinstance(plan, CopyToPlan):
            return await self._copy_to(plan, session, state)
        if isinstance(plan, CopyFromPlan):
            return self._copy_from(state, plan)
        if isinstance(plan, DeclarePlan):
            return await self._declare(state, plan, session)
        if isinstance(plan, FetchPlan):
            return await self._fetch(state, plan)
        if isinstance(plan, ClosePlan):
            return self._close(state, plan)
        if isinstance(plan, TransactionPlan):
            return await self._transaction(session, state, plan)
        if isinstance(plan, CreateTablePlan):
            return await self._create_table(session, plan)
        if isinstance(plan, CreateViewPlan):
            return await self._create_view(session, plan)
        if isinstance(plan, CreateIndexPlan):
            return await self._create_index(session, plan)
        if isinstance(plan, DropPlan):
            return await self._drop(session, plan)
        if isinstance(plan, CreateNamespacePlan):
            return await self._create_namespace(session, plan)
        if isinstance(plan, DropNamespacePlan):
            return await self._drop_namespace(session, plan)
        if isinstance(plan, ShowPlan):
            return show(plan, self.coord.catalog, session)
        if isinstance(plan, SetVariablePlan):
            return self._set(session, plan)
        if isinstance(plan, ExplainPlan):
            return Rows([Column("Optimized Plan", TEXT)], [(plan.text,)])
        if isinstance(plan, DiscardPlan):
            for cursor in state.cursors.values():
                cursor.close()
            state.cursors.clear()
            if plan.what in ("all", "plans"):
                state.prepared.clear()
            return CommandComplete(f"DISCARD {plan.what.upper()}")
        if isinstance(plan, DeallocatePlan):
            # Names the driver prepared at the protocol level are the connection's: not an error.
            if plan.name is None:
                state.prepared.clear()
            else:
                state.prepared.pop(plan.name.lower(), None)
            return CommandComplete("DEALLOCATE ALL" if plan.name is None else "DEALLOCATE")
        if isinstance(plan, PreparePlan):
            if plan.name.lower() in state.prepared:
                raise SqlError("42P05", f'prepared statement "{plan.name}" already exists')
            state.prepared[plan.name.lower()] = (plan.statement, plan.param_types)
            return CommandComplete("PREPARE")
        if isinstance(plan, ExecutePlan):
            return await self._execute_prepared(session, state, plan)
        if isinstance(plan, EmptyPlan):
            return EmptyQuery()
        if isinstance(plan, ROLE_STATEMENTS):
            return await execute_role_statement(self.coord, session, plan)
        if isinstance(plan, CLUSTER_STATEMENTS):
            return await execute_cluster_statement(self.coord, session, plan)
        from server.adapter.sources import SOURCE_PLANS, create_source
        if isinstance(plan, SOURCE_PLANS):
            return await create_source(self.coord, session, plan)
        from server.adapter.connections import ConnectionPlan, execute_connection_statement
        if isinstance(plan, ConnectionPlan):
            return await execute_connection_statement(self.coord, session, plan)
        if isinstance(plan, PRIVILEGE_STATEMENTS):
            return await privileges.execute_privilege_statement(self.coord, session, plan)
        raise unsupported(type(plan).__name__)

    async def _execute_prepared(self, session: Session, state: SessionState, plan: ExecutePlan) -> Outcome:
        found = state.prepared.get(plan.name.lower())
        if found is None:
            raise SqlError("26000", f'prepared statement "{plan.name}" does not exist')
        sql, declared = found
        if len(plan.values) != len(declared) and declared:
            raise SqlError(SqlState.SYNTAX_ERROR, f'wrong number of parameters for prepared statement "{plan.name}"',
                           detail=f"Expected {len(declared)} parameters but got {len(plan.values)}.")
        from planner.casts import cast_value
        values, types = list(plan.values), list(plan.types)
        for i, t in enumerate(declared):  # each argument as a value of its declared type
            src = TEXT if types[i].kind.value == "unknown" else types[i]
            values[i], types[i] = cast_value(values[i], src, t), t
        stmt = self._parsed.parse(sql)[0]
        reads: list[str] = []
        plan_ = plan_statement(self.coord.catalog, stmt, params=values, param_types=types,
                               session=_session_info(session), reads=reads)
        privileges.check(self.coord.catalog, session, plan_, reads, stmt.ast)
        return await self._sequence(session, state, plan_)

    # -- reads ----------------------------------------------------------------------------------

    def _own(self, state: SessionState | None, plan):
        """`plan` as this session's open transaction sees it: with its own buffered writes."""
        if state is None or not state.in_block or not state.writes:
            return plan
        return with_own_writes(self.coord.catalog, plan, pending_by_table(state.writes))

    def _refuse_subscribe(self, state: SessionState, plan: SubscribePlan) -> None:
        if state.in_block and state.writes:
            refuse_derived_reads(self.coord.catalog, plan.plan, set(pending_by_table(state.writes)),
                                 subscribe=True)

    async def _peek_rows(self, plan: SelectPlan, session: Session | None = None,
                         state: SessionState | None = None) -> list[tuple]:
        ts = None
        if plan.as_of is not None:
            ts = plan.as_of
            if ts > self.coord.read_ts():
                raise SqlError(SqlState.DATA_EXCEPTION,
                               f"Timestamp ({ts}) is later than the latest complete timestamp ({self.coord.read_ts()})")
        cluster = state.cluster if state is not None else "quickstart"
        batch = await self.coord.peek(self._own(state, plan.plan), ts, cluster)
        if session is not None:  # max_result_size, before the rows become Python objects
            limits.check_result_size(session.vars, batch)
        return finish(batch, plan.finishing, [c.type for c in plan.columns])

    async def _copy_to(self, plan: CopyToPlan, session: Session | None = None,
                       state: SessionState | None = None) -> Outcome:
        if plan.format == "binary":
            raise unsupported("COPY TO with FORMAT binary")
        inner = plan.inner
        if isinstance(inner, SubscribePlan):
            if state is not None:
                self._refuse_subscribe(state, inner)
            return CopyOut(subscribe_columns(inner), subscribe_rows(self.coord, inner, state.cluster if state else "quickstart"), plan.format, plan.header)
        rows = await self._peek_rows(inner, session, state)

        async def once():
            yield rows

        return CopyOut(list(inner.columns), once(), plan.format, plan.header)

    # -- cursors --------------------------------------------------------------------------------

    async def _declare(self, state: SessionState, plan: DeclarePlan, session: Session | None = None) -> Outcome:
        if not state.in_block:
            raise SqlError(SqlState.NO_ACTIVE_SQL_TRANSACTION, "DECLARE CURSOR can only be used in transaction blocks")
        name = plan.cursor.lower()
        if name in state.cursors:
            raise SqlError(SqlState.DUPLICATE_CURSOR, f'cursor "{plan.cursor}" already exists')
        inner = plan.inner
        if isinstance(inner, SubscribePlan):
            self._refuse_subscribe(state, inner)
            cursor = Cursor(name, subscribe_columns(inner))
            cursor.stream = subscribe_rows(self.coord, inner, state.cluster)
            cursor.pump = asyncio.ensure_future(self._pump(cursor))
        else:
            cursor = Cursor(name, list(inner.columns), rows=await self._peek_rows(inner, session, state))
            cursor.arrived.set()
        state.cursors[name] = cursor
        return CommandComplete("DECLARE CURSOR")

    @staticmethod
    async def _pump(cursor: Cursor) -> None:
        try:
            async for rows in cursor.stream:
                cursor.rows.extend(rows)
                cursor.arrived.set()
        except asyncio.CancelledError:
            raise
        except BaseException as e:
            cursor.error = e
            cursor.arrived.set()

    async def _fetch(self, state: SessionState, plan: FetchPlan) -> Outcome:
        cursor = state.cursors.get(plan.cursor.lower())
        if cursor is None:
            raise SqlError(SqlState.INVALID_CURSOR_NAME, f'cursor "{plan.cursor}" does not exist')
        if cursor.stream is not None and not cursor.rows and cursor.error is None:
            cursor.arrived.clear()
            timeout = None if plan.timeout_ms is None else plan.timeout_ms / 1000
            if timeout != 0:
                try:
                    await asyncio.wait_for(cursor.arrived.wait(), timeout)
                except asyncio.TimeoutError:
                    pass
        if not cursor.rows and cursor.error is not None:
            error, cursor.error = cursor.error, None
            raise error
        n = len(cursor.rows) if plan.count is None else min(plan.count, len(cursor.rows))
        rows, cursor.rows[:n] = cursor.rows[:n], []
        return Rows(cursor.columns, rows, tag=f"FETCH {len(rows)}")

    def _close(self, state: SessionState, plan: ClosePlan) -> Outcome:
        if plan.cursor is None:
            for cursor in state.cursors.values():
                cursor.close()
            state.cursors.clear()
            return CommandComplete("CLOSE CURSOR ALL")
        cursor = state.cursors.pop(plan.cursor.lower(), None)
        if cursor is None:
            raise SqlError(SqlState.INVALID_CURSOR_NAME, f'cursor "{plan.cursor}" does not exist')
        cursor.close()
        return CommandComplete("CLOSE CURSOR")

    # -- transactions ---------------------------------------------------------------------------

    async def _transaction(self, session: Session, state: SessionState, plan: TransactionPlan) -> Outcome:
        if plan.action in ("savepoint", "release", "rollback_to"):
            return self._savepoint(state, plan)
        state.savepoints.clear()
        if plan.action == "begin":
            if state.in_block:
                session.pending_notices.append(("25001", "there is already a transaction in progress"))
            state.in_block = True
            return CommandComplete("BEGIN")
        committing = plan.action == "commit" and not state.failed
        writes, state.writes = state.writes, []
        if not state.in_block:
            session.pending_notices.append(("25P01", "there is no transaction in progress"))
        for cursor in state.cursors.values():
            cursor.close()
        state.cursors.clear()
        state.in_block = False
        was_failed, state.failed = state.failed, False
        if committing and writes:
            await self._apply_writes(writes)
        if plan.action == "commit" and not was_failed:
            return CommandComplete("COMMIT")
        return CommandComplete("ROLLBACK")

    @staticmethod
    def _savepoint(state: SessionState, plan: TransactionPlan) -> Outcome:
        """Savepoints mark a place in the transaction's buffered writes: ROLLBACK TO drops the
        writes made after it (and clears an error), RELEASE forgets it."""
        name = plan.savepoint.lower()
        if not state.in_block:
            verb = {"savepoint": "SAVEPOINT", "release": "RELEASE SAVEPOINT",
                    "rollback_to": "ROLLBACK TO SAVEPOINT"}[plan.action]
            raise SqlError(SqlState.NO_ACTIVE_SQL_TRANSACTION, f"{verb} can only be used in transaction blocks")
        if plan.action == "savepoint":
            if state.failed:
                raise SqlError(SqlState.IN_FAILED_SQL_TRANSACTION,
                               "current transaction is aborted, commands ignored until end of transaction block")
            state.savepoints.append((name, len(state.writes)))
            return CommandComplete("SAVEPOINT")
        found = [i for i, (n, _) in enumerate(state.savepoints) if n == name]
        if not found:
            raise SqlError("3B001", f'savepoint "{plan.savepoint}" does not exist')
        i = found[-1]
        if plan.action == "release":
            if state.failed:
                raise SqlError(SqlState.IN_FAILED_SQL_TRANSACTION,
                               "current transaction is aborted, commands ignored until end of transaction block")
            del state.savepoints[i:]
            return CommandComplete("RELEASE")
        del state.writes[state.savepoints[i][1]:]
        del state.savepoints[i + 1:]
        state.failed = False
        return CommandComplete("ROLLBACK")

    async def _apply_writes(self, writes: list[PendingWrite]) -> None:
        async with self.coord.write_lock:
            updates: dict[str, list[pa.Table]] = {}
            done: list[PendingWrite] = []  # the writes before this one, as they will commit
            redo: set[str] = set()  # tables whose statements are evaluated again from here on
            for w in writes:
                stale = w.plan is not None and (w.table_id in redo
                                                or self.coord.last_write.get(w.table_id, 0) > w.read_ts)
                if stale:
                    redo.add(w.table_id)
                batch = await self._changes_of(w.plan, own=pending_by_table(done), cluster=w.cluster) \
                    if stale else w.updates
                updates.setdefault(w.table_id, []).append(batch)
                done.append(PendingWrite(w.table_id, batch))
            await self.coord.write_locked({id: concat(b) for id, b in updates.items()})

    # -- writes ---------------------------------------------------------------------------------

    def _table(self, table_id: str):
        item = self.coord.catalog.get(table_id)
        if item.kind is not ItemKind.TABLE:
            raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'cannot modify {item.kind.value} "{item.name}"')
        return item

    @staticmethod
    def _check_not_null(item, batch: pa.Table) -> None:
        for i, col in enumerate(item.columns):
            if not col.nullable and batch.column(i).null_count:
                raise SqlError(SqlState.NOT_NULL_VIOLATION,
                               f'null value in column "{col.name}" of relation "{item.name}" violates not-null constraint')

    async def _commit_or_buffer(self, state: SessionState, table_id: str, updates: pa.Table | None, plan=None):
        if state.in_block:
            state.writes.append(PendingWrite(table_id, updates, plan, cluster=state.cluster))
            return
        if plan is None:
            await self.coord.write({table_id: updates})
        else:
            async with self.coord.write_lock:
                await self.coord.write_locked({table_id: await self._changes_of(plan, cluster=state.cluster)})

    async def _insert(self, state: SessionState, plan: InsertPlan) -> Outcome:
        item = self._table(plan.table_id)
        types = [c.type for c in item.columns]
        if plan.columns is not None:
            batch = batch_from_columns(plan.columns, types, 0, 1, rows=len(plan.columns[0]) if plan.columns else 0)
        elif plan.rows is not None:
            batch = batch_from_rows(list(plan.rows), types, 0, 1)
        else:
            result = await self.coord.peek(self._own(state, plan.source), None, state.cluster)
            batch = pa.Table.from_arrays(list(result.columns), schema=arrow_schema(types))
        self._check_not_null(item, batch)
        count = int(pc.sum(batch.column("diff")).as_py() or 0)
        if count:
            await self._commit_or_buffer(state, item.id, batch)
        return CommandComplete(f"INSERT 0 {count}")

    async def _changes_of(self, plan, ts: int | None = None, own: dict | None = None,
                          cluster: str = "quickstart") -> pa.Table:
        """The updates an UPDATE or DELETE makes, read at `ts` (default: the latest time; then the
        caller holds the write lock), over the tables plus `own` (a transaction's earlier writes)."""
        def read(p):
            return with_own_writes(self.coord.catalog, p, own) if own else p

        item = self._table(plan.table_id)
        types = [c.type for c in item.columns]
        schema = arrow_schema(types)
        n = len(types)
        if isinstance(plan, DeletePlan):
            old = await self.coord.peek(read(plan.selection), ts, cluster)
            return negate(old)
        both = await self.coord.peek(read(Map(plan.selection, plan.assignments)), ts, cluster)
        time, diff = both.column("time"), both.column("diff")
        old = pa.Table.from_arrays([both.column(i) for i in range(n)] + [time, pc.negate(diff)], schema=schema)
        new = pa.Table.from_arrays([both.column(n + i) for i in range(n)] + [time, diff], schema=schema)
        self._check_not_null(item, new)
        return pa.concat_tables([old, new])

    async def _update_or_delete(self, state: SessionState, table_id: str, plan, verb: str) -> Outcome:
        if state.in_block:
            # Compute the changes now (for the row count); COMMIT reuses them unless the table
            # was written in between, in which case it evaluates the statement again.
            read_ts = self.coord.read_ts()
            changes = await self._changes_of(plan, read_ts, own=pending_by_table(state.writes), cluster=state.cluster)
            count = int(pc.sum(pc.abs(changes.column("diff"))).as_py() or 0)
            state.writes.append(PendingWrite(table_id, changes, plan, read_ts, state.cluster))
            return CommandComplete(f"{verb} {count // 2 if verb == 'UPDATE' else count}")
        async with self.coord.write_lock:
            changes = await self._changes_of(plan, cluster=state.cluster)
            diffs = changes.column("diff")
            count = int(pc.sum(pc.abs(diffs)).as_py() or 0)
            if verb == "UPDATE":
                count //= 2
            if changes.num_rows:
                await self.coord.write_locked({table_id: changes})
        return CommandComplete(f"{verb} {count}")

    def _copy_from(self, state: SessionState, plan: CopyFromPlan) -> Outcome:
        item = self._table(plan.table_id)
        types = [c.type for c in item.columns]
        targets = list(plan.columns)

        async def finish_copy(data: bytes) -> str:
            arrays = parse_copy(data, [types[i] for i in targets], plan.format, plan.delimiter, plan.header)
            length = len(arrays[0]) if arrays else 0
            full = [pa.nulls(length, t.arrow) for t in types]
            for pos, arr in zip(targets, arrays):
                full[pos] = arr
            batch = batch_from_columns(full, types, 0, 1, rows=length)
            self._check_not_null(item, batch)
            if length:
                await self._commit_or_buffer(state, item.id, batch)
            return f"COPY {length}"

        return CopyIn([item.columns[i] for i in targets], finish_copy, plan.format)

    # -- DDL ------------------------------------------------------------------------------------

    def _exists(self, database: str, schema: str, name: str):
        return self.coord.catalog.try_resolve((database, schema, name))

    async def _create_table(self, session: Session, plan: CreateTablePlan) -> Outcome:
        if plan.if_not_exists and self._exists(plan.database, plan.schema, plan.name):
            session.pending_notices.append(("42P07", f'relation "{plan.name}" already exists, skipping'))
            return CommandComplete("CREATE TABLE")
        await self.coord.create_table(plan.schema, plan.name, plan.columns, plan.create_sql, plan.database)
        return CommandComplete("CREATE TABLE")

    async def _create_view(self, session: Session, plan: CreateViewPlan) -> Outcome:
        tag = "CREATE MATERIALIZED VIEW" if plan.materialized else "CREATE VIEW"
        existing = self._exists(plan.database, plan.schema, plan.name)
        if existing is not None:
            if plan.if_not_exists:
                session.pending_notices.append(("42P07", f'relation "{plan.name}" already exists, skipping'))
                return CommandComplete(tag)
            if plan.or_replace:
                if existing.kind is not (ItemKind.MATERIALIZED_VIEW if plan.materialized else ItemKind.VIEW):
                    raise SqlError(SqlState.WRONG_OBJECT_TYPE, f'"{plan.name}" is not a view')
                if self.coord.catalog.dependents(existing.id):
                    raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                                   f'cannot replace view "{plan.name}": other objects depend on it')
                await self.coord.drop([existing.id], cascade=False)
        if plan.materialized:
            await self.coord.create_materialized_view(plan.schema, plan.name, plan.columns, plan.create_sql,
                                                      plan.definition, plan.depends_on, plan.plan, plan.database,
                                                      plan.cluster, plan.pg_definitions)
        else:
            await self.coord.create_view(plan.schema, plan.name, plan.columns, plan.create_sql,
                                         plan.definition, plan.depends_on, plan.database, plan.pg_definitions)
        return CommandComplete(tag)

    async def _create_index(self, session: Session, plan: CreateIndexPlan) -> Outcome:
        if self._exists(plan.database, plan.schema, plan.name):
            if plan.if_not_exists:
                session.pending_notices.append(("42P07", f'relation "{plan.name}" already exists, skipping'))
                return CommandComplete("CREATE INDEX")
        on = self.coord.catalog.get(plan.on_id)
        await self.coord.create_index(plan.schema, plan.name, on, plan.key, plan.create_sql, plan.cluster)
        return CommandComplete("CREATE INDEX")

    async def _drop(self, session: Session, plan: DropPlan) -> Outcome:
        word = {ItemKind.TABLE: "TABLE", ItemKind.VIEW: "VIEW", ItemKind.MATERIALIZED_VIEW: "MATERIALIZED VIEW",
                ItemKind.INDEX: "INDEX", ItemKind.SOURCE: "SOURCE"}[plan.kind]
        for name in plan.missing:
            session.pending_notices.append(("00000", f'{plan.kind.value} "{name}" does not exist, skipping'))
        if plan.ids:
            await self.coord.drop(list(plan.ids), plan.cascade)
        return CommandComplete(f"DROP {word}")

    async def _create_namespace(self, session: Session, plan: CreateNamespacePlan) -> Outcome:
        tag = f"CREATE {plan.kind.upper()}"
        exists = (any(n == plan.database for n, _ in self.coord.catalog.databases()) if plan.kind == "database"
                  else any(n == plan.name for _, n, _ in self.coord.catalog.schemas(plan.database)))
        if exists and plan.if_not_exists:
            what = plan.database if plan.kind == "database" else plan.name
            session.pending_notices.append(("42P06" if plan.kind == "schema" else "42P04",
                                            f'{plan.kind} "{what}" already exists, skipping'))
            return CommandComplete(tag)
        await self.coord.create_namespace(plan.kind, plan.database, plan.name)
        privileges.after_create_namespace(self.coord.catalog, session, plan)
        return CommandComplete(tag)

    async def _drop_namespace(self, session: Session, plan: DropNamespacePlan) -> Outcome:
        for name in plan.missing:
            session.pending_notices.append(("00000", f'{plan.kind} "{name}" does not exist, skipping'))
        if plan.schemas:
            await self.coord.drop_namespace(plan.kind, plan.database, plan.schemas, plan.ids)
        return CommandComplete(f"DROP {plan.kind.upper()}")

    # -- session variables ----------------------------------------------------------------------

    def _set(self, session: Session, plan: SetVariablePlan) -> Outcome:
        name = canonical(plan.name)
        if name in READ_ONLY:
            raise SqlError(SqlState.CANT_CHANGE_RUNTIME_PARAM, f'parameter "{name}" cannot be changed')
        if plan.value is None:
            session.vars.pop(name, None)
            value = None
        else:
            value = plan.value
            if name == "timezone" and value.upper() not in ("UTC", "GMT", "ETC/UTC", "Z", "+00:00", "0"):
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "TimeZone": "{value}"',
                               hint="Only UTC is supported.")
            if name == "password_encryption" and value not in PASSWORD_ENCRYPTIONS:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"',
                               hint="Available values: md5, scram-sha-256.")
            limits.validate(name, value)
            if name == "client_encoding" and value.upper().replace("-", "") not in ("UTF8", "UNICODE"):
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "client_encoding": "{value}"')
            session.vars[name] = value
        if name in REPORTABLE:
            from server.adapter.vars import get_var

            session.pending_parameter_status.append((REPORTABLE[name], get_var(session.vars, name) or ""))
        return CommandComplete("RESET" if plan.value is None else "SET")
