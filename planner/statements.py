"""What the planner hands the adapter: one plan dataclass per kind of statement.

`planner.plan_statement(catalog, sql_ast, session_vars, params)` returns one of these. Relational
parts are `dataflow.plan.Plan` trees over catalog ids (views already inlined); the adapter picks
timestamps and drives storage and compute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dataflow.expr import ScalarExpr
from dataflow.plan import Plan
from dataflow.types import Column, SqlType
from catalog.items import ItemKind


@dataclass(frozen=True)
class Finishing:
    """ORDER BY / LIMIT / OFFSET / final projection applied to a peek's result in the adapter.
    order_by entries: (column, descending, nulls_last); `project` picks the output columns
    (hiding sort-only columns)."""

    order_by: tuple[tuple[int, bool, bool], ...] = ()
    limit: int | None = None
    offset: int = 0
    project: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SelectPlan:
    plan: Plan
    columns: tuple[Column, ...]  # the result columns after finishing (names as the client sees)
    finishing: Finishing = Finishing()
    as_of: int | None = None  # SELECT ... AS OF <ts>
    # Session variables set by the query (set_config), applied once it has succeeded.
    set_vars: tuple[tuple[str, str | None, bool], ...] = ()


@dataclass(frozen=True)
class SubscribePlan:
    plan: Plan
    columns: tuple[Column, ...]  # the relation's columns (without mz_ columns)
    progress: bool = False
    snapshot: bool = True
    as_of: int | None = None
    up_to: int | None = None
    envelope_upsert_key: tuple[int, ...] | None = None  # ENVELOPE UPSERT (KEY (...))


@dataclass(frozen=True)
class CreateTablePlan:
    name: str
    schema: str
    columns: tuple[Column, ...]
    if_not_exists: bool
    create_sql: str
    defaults: tuple[ScalarExpr | None, ...] = ()  # per column; None = NULL
    database: str = "slipstream"


@dataclass(frozen=True)
class CreateViewPlan:
    name: str
    schema: str
    materialized: bool
    plan: Plan  # for materialized views: the dataflow; for views: kept for validation
    columns: tuple[Column, ...]
    definition: str  # the SELECT text, re-planned when the view is used
    depends_on: tuple[str, ...]
    if_not_exists: bool
    or_replace: bool
    create_sql: str
    database: str = "slipstream"
    cluster: str = "quickstart"  # for materialized views: the cluster that computes it
    # The definition as PostgreSQL prints it, (pretty, plain) as pg_get_viewdef(v, true) and
    # pg_get_viewdef(v) do, or None where `planner.deparse` does not cover the query (the
    # written text is shown then).
    pg_definitions: tuple[str, str] | None = None


@dataclass(frozen=True)
class CreateIndexPlan:
    name: str  # generated as <relation>_<cols>_idx when the user gave none
    schema: str
    on_id: str
    key: tuple[int, ...]  # column positions of the indexed relation
    if_not_exists: bool
    create_sql: str
    database: str = "slipstream"
    cluster: str = "quickstart"  # the cluster that maintains it


@dataclass(frozen=True)
class CreateNamespacePlan:
    """CREATE SCHEMA [database.]name / CREATE DATABASE name."""

    kind: str  # 'schema' | 'database'
    database: str
    name: str | None  # the schema's name; None for CREATE DATABASE
    if_not_exists: bool


@dataclass(frozen=True)
class DropNamespacePlan:
    """DROP SCHEMA / DROP DATABASE: `schemas` of `database` (every schema for a database) go,
    and with CASCADE the objects in them (`ids`, with everything that depends on them)."""

    kind: str
    database: str
    schemas: tuple[str, ...]
    ids: tuple[str, ...]
    cascade: bool
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropPlan:
    kind: ItemKind
    ids: tuple[str, ...]  # resolved objects (missing ones with IF EXISTS produce notices instead)
    cascade: bool
    missing: tuple[str, ...] = ()  # names that did not exist (IF EXISTS): one notice each


@dataclass(frozen=True)
class InsertPlan:
    table_id: str
    # Either literal rows (already coerced to the table's column types, full width) ...
    rows: tuple[tuple[Any, ...], ...] | None
    # ... or a query whose result (full table width, table column types) is inserted ...
    source: Plan | None = None
    returning: None = None
    # ... or the rows as one array per column (full width, table column types).
    columns: tuple[Any, ...] | None = None

    def literal_rows(self) -> list[tuple[Any, ...]] | None:
        """The rows, if the statement gives them (not a query's), as tuples of Python values."""
        if self.columns is not None:
            return list(zip(*(c.to_pylist() for c in self.columns)))
        return None if self.rows is None else list(self.rows)


@dataclass(frozen=True)
class UpdatePlan:
    """UPDATE: read the rows of `table_id` matching `selection` (a Filter over Get), and for each
    write a retraction and the row produced by `assignments` (one expr per table column, over the
    old row)."""

    table_id: str
    selection: Plan
    assignments: tuple[ScalarExpr, ...]


@dataclass(frozen=True)
class DeletePlan:
    table_id: str
    selection: Plan  # the rows to delete (Filter over Get of the table)


@dataclass(frozen=True)
class ShowPlan:
    """SHOW TABLES / VIEWS / MATERIALIZED VIEWS / INDEXES / COLUMNS / CREATE ... / <variable>:
    the adapter answers from the catalog or session. `what` is e.g. 'tables', 'variable'."""

    what: str
    name: str | None = None
    schema: str | None = None


@dataclass(frozen=True)
class SetVariablePlan:
    name: str
    value: str | None  # None = RESET / DEFAULT
    local: bool = False


@dataclass(frozen=True)
class TransactionPlan:
    """BEGIN / START TRANSACTION / COMMIT / END / ROLLBACK / ABORT, and SAVEPOINT / RELEASE /
    ROLLBACK TO (`savepoint` names the savepoint)."""

    action: str  # 'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollback_to'
    read_only: bool = False
    savepoint: str | None = None


@dataclass(frozen=True)
class DeclarePlan:
    cursor: str
    inner: "SelectPlan | SubscribePlan"


@dataclass(frozen=True)
class FetchPlan:
    cursor: str
    count: int | None  # None = ALL
    timeout_ms: int | None = None  # FETCH ... WITH (timeout = '1s')


@dataclass(frozen=True)
class ClosePlan:
    cursor: str | None  # None = CLOSE ALL


@dataclass(frozen=True)
class CopyToPlan:
    """COPY (SELECT|SUBSCRIBE ...) TO STDOUT / COPY t TO STDOUT."""

    inner: "SelectPlan | SubscribePlan"
    format: str = "text"
    header: bool = False


@dataclass(frozen=True)
class CopyFromPlan:
    """COPY t [(cols)] FROM STDIN."""

    table_id: str
    columns: tuple[int, ...]  # target column positions
    format: str = "text"
    delimiter: str | None = None
    header: bool = False


@dataclass(frozen=True)
class ExplainPlan:
    text: str


@dataclass(frozen=True)
class DiscardPlan:
    what: str  # 'all' | 'plans' | ...


@dataclass(frozen=True)
class EmptyPlan:
    """A statement accepted and ignored (e.g. SET of an unknown-but-harmless parameter is NOT this;
    this is for an empty statement)."""


@dataclass(frozen=True)
class PreparePlan:
    """PREPARE: the statement text, kept by the session, and its declared parameter types."""

    name: str
    statement: str
    param_types: tuple[SqlType, ...]


@dataclass(frozen=True)
class ExecutePlan:
    """EXECUTE: the prepared statement's name and the arguments' values and types."""

    name: str
    values: tuple
    types: tuple[SqlType, ...]


@dataclass(frozen=True)
class DeallocatePlan:
    """DEALLOCATE [PREPARE] name | ALL (name None = ALL)."""

    name: str | None


StatementPlan = (SelectPlan | SubscribePlan | CreateTablePlan | CreateViewPlan | CreateIndexPlan
                 | DropPlan | InsertPlan | UpdatePlan | DeletePlan | ShowPlan | SetVariablePlan | PreparePlan | ExecutePlan
                 | TransactionPlan | DeclarePlan | FetchPlan | ClosePlan | CopyToPlan | CopyFromPlan
                 | ExplainPlan | DiscardPlan | EmptyPlan | DeallocatePlan)
