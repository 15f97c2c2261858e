"""Parsed forms of the statements sqlglot's Postgres dialect does not know (Materialize
extensions and session/utility commands). `planner.dialect` builds them; embedded queries
are ordinary sqlglot expressions.

Example: `SUBSCRIBE TO t WITH (PROGRESS) AS OF 5` parses to

    Subscribe(target=("t",), query=None, progress=True, snapshot=True, as_of=<Literal 5>, ...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

Name = tuple[str, ...]  # a possibly qualified object name, e.g. ("public", "t")


@dataclass(frozen=True)
class SelectAsOf:
    """A query with Materialize's trailing `AS OF <ts>`."""

    query: exp.Expression
    as_of: exp.Expression | None


@dataclass(frozen=True)
class Subscribe:
    target: Name | None  # SUBSCRIBE [TO] obj
    query: exp.Expression | None  # SUBSCRIBE (SELECT ...)
    progress: bool = False
    snapshot: bool = True
    as_of: exp.Expression | None = None
    up_to: exp.Expression | None = None
    upsert_key: tuple[str, ...] | None = None


@dataclass(frozen=True)
class CreateView:
    name: Name
    columns: tuple[str, ...] | None
    query: exp.Expression
    definition: str  # the query's original text
    materialized: bool
    if_not_exists: bool
    or_replace: bool
    cluster: str | None = None  # IN CLUSTER name (default: the session's cluster)


@dataclass(frozen=True)
class CreateIndex:
    name: str | None
    on: Name
    columns: tuple[str, ...] | None  # None = DEFAULT INDEX (all columns)
    if_not_exists: bool
    cluster: str | None = None  # IN CLUSTER name (default: the session's cluster)


@dataclass(frozen=True)
class Drop:
    kind: str  # 'table' | 'view' | 'materialized view' | 'index'
    names: tuple[Name, ...]
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class CreateNamespace:
    kind: str  # 'schema' | 'database'
    name: Name
    if_not_exists: bool


@dataclass(frozen=True)
class DropNamespace:
    kind: str  # 'schema' | 'database'
    names: tuple[Name, ...]
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class Show:
    what: str  # 'tables', 'variable', 'create table', 'columns', ...
    target: Name | None = None  # SHOW COLUMNS FROM obj, SHOW CREATE ... obj, SHOW INDEXES ON obj
    variable: str | None = None
    schema: str | None = None  # SHOW TABLES FROM schema


@dataclass(frozen=True)
class SetVariable:
    name: str
    value: str | None  # None = RESET / DEFAULT
    local: bool = False


@dataclass(frozen=True)
class Transaction:
    action: str  # 'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollback_to'
    read_only: bool = False
    savepoint: str | None = None


@dataclass(frozen=True)
class Discard:
    what: str


@dataclass(frozen=True)
class Deallocate:
    name: str | None  # None = ALL


@dataclass(frozen=True)
class Prepare:
    """PREPARE name [(types)] AS statement: the statement's text and the declared types' text."""

    name: str
    types: tuple[str, ...]
    statement: str


@dataclass(frozen=True)
class Execute:
    """EXECUTE name [(arguments)]: each argument's text (constant expressions)."""

    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Declare:
    cursor: str
    inner: Any  # a parsed statement: SelectAsOf/exp.Query or Subscribe


@dataclass(frozen=True)
class Fetch:
    cursor: str
    count: int | None  # None = ALL
    timeout_ms: int | None = None


@dataclass(frozen=True)
class Close:
    cursor: str | None  # None = ALL


@dataclass(frozen=True)
class CopyTo:
    inner: Any  # SelectAsOf / exp.Query / Subscribe, or a Name for COPY t TO STDOUT
    columns: tuple[str, ...] | None
    format: str = "text"
    header: bool = False
    delimiter: str | None = None


@dataclass(frozen=True)
class CopyFrom:
    table: Name
    columns: tuple[str, ...] | None
    format: str = "text"
    header: bool = False
    delimiter: str | None = None


@dataclass(frozen=True)
class Explain:
    inner: Any  # a parsed query, or a Name for EXPLAIN MATERIALIZED VIEW mv
    target_kind: str | None = None  # 'materialized view' | 'view' when explaining a catalog item


@dataclass(frozen=True)
class LiteralInsert:
    """`INSERT INTO table [(columns)] VALUES` rows of plain literals (planner/literal_insert.py):
    each column's literals as written (quoted strings with their quotes), in row order."""

    table: tuple[str, ...]
    columns: tuple[str, ...] | None
    values: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Empty:
    """An empty statement (only whitespace/comments)."""


def _masked(options: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, "********" if k == "password" and v is not None else v) for k, v in options)


@dataclass(frozen=True)
class CreateRole:
    """CREATE ROLE / USER / GROUP. options: ('login' | 'superuser', bool) and ('password',
    str | None) pairs, in the order written (planner/role_syntax.py)."""

    name: str
    options: tuple[tuple[str, Any], ...] = ()

    def __repr__(self) -> str:  # never show a password
        return f"CreateRole(name={self.name!r}, options={_masked(self.options)!r})"


@dataclass(frozen=True)
class AlterRole:
    name: str  # with `special`: the keyword CURRENT_USER, SESSION_USER or CURRENT_ROLE
    options: tuple[tuple[str, Any], ...] = ()
    special: bool = False

    def __repr__(self) -> str:
        special = ", special=True" if self.special else ""
        return f"AlterRole(name={self.name!r}, options={_masked(self.options)!r}{special})"


@dataclass(frozen=True)
class DropRole:
    names: tuple[str, ...]
    if_exists: bool = False


ROLE_STATEMENTS = (CreateRole, AlterRole, DropRole)
