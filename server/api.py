"""The contract between pgwire (the protocol) and the adapter (what statements mean).

pgwire owns bytes, messages, formats and the connection state machine; the adapter owns SQL.
pgwire calls the adapter with statement text and decoded parameters and gets back outcomes,
which it encodes. Errors are `dataflow.errors.SqlError` exceptions.

    outcomes = await adapter.execute(session, "SELECT 1; SELECT 2")   # simple query
    desc = await adapter.describe(session, "SELECT $1::int + a FROM t", [0])   # Parse/Describe
    outcome = await adapter.execute_one(session, sql, params)           # Bind/Execute
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol

from dataflow.types import Column, SqlType


@dataclass
class Session:
    """One client connection's state; pgwire creates it at startup, the adapter mutates it."""

    user: str
    database: str
    pid: int
    secret_key: int
    # Session variables (lower-case names), e.g. application_name, datestyle, timezone.
    vars: dict[str, str] = field(default_factory=dict)
    # 'I' idle, 'T' in transaction block, 'E' in failed transaction block (for ReadyForQuery).
    transaction_status: str = "I"
    # ParameterStatus messages pgwire must send before the next ReadyForQuery: (name, value).
    pending_parameter_status: list[tuple[str, str]] = field(default_factory=list)
    # NoticeResponse messages to send: (sqlstate, message).
    pending_notices: list[tuple[str, str]] = field(default_factory=list)
    # Adapter-private state (transaction, cursors), opaque to pgwire.
    state: Any = None


@dataclass(frozen=True)
class StatementDescription:
    """What Describe returns: parameter types and result columns (None = returns no rows)."""

    param_types: list[SqlType]
    columns: list[Column] | None


@dataclass
class CommandComplete:
    """A statement that returns no rows: `tag` is the CommandComplete tag, e.g. 'CREATE TABLE',
    'INSERT 0 3', 'DELETE 2'."""

    tag: str


@dataclass
class Rows:
    """A finite result set. `rows` are tuples of Python values (None = NULL) in the column types:
    bool, int, float, decimal.Decimal, str, datetime.datetime, datetime.date. `tag` defaults to
    'SELECT n' (pgwire fills it in when None; for FETCH it is 'FETCH n')."""

    columns: list[Column]
    rows: list[tuple[Any, ...]]
    tag: str | None = None


@dataclass
class RowStream:
    """An unbounded result (SUBSCRIBE as a bare statement): pgwire sends RowDescription, then
    DataRows as each batch arrives, flushing after each batch, until the iterator ends (then
    CommandComplete with `tag`) or the client cancels."""

    columns: list[Column]
    batches: AsyncIterator[list[tuple[Any, ...]]]
    tag: str = "SUBSCRIBE"


@dataclass
class CopyOut:
    """COPY ... TO STDOUT: pgwire sends CopyOutResponse (text format, one column format per column),
    then one CopyData per row in PostgreSQL's text COPY format (tab-separated, \\N for NULL,
    backslash escapes), flushing after each batch; CopyDone and CommandComplete 'COPY n' when
    the iterator ends. For SUBSCRIBE it ends only on cancel or disconnect."""

    columns: list[Column]
    batches: AsyncIterator[list[tuple[Any, ...]]]
    format: str = "text"  # "text" or "csv"
    header: bool = False


@dataclass
class CopyIn:
    """COPY t FROM STDIN: pgwire sends CopyInResponse, collects CopyData until CopyDone, then calls
    `await finish(data: bytes)` which returns the CommandComplete tag ('COPY n'). On CopyFail it
    calls nothing and reports 57014."""

    columns: list[Column]
    finish: Any  # async callable(bytes) -> str
    format: str = "text"


@dataclass
class EmptyQuery:
    """An empty statement: EmptyQueryResponse."""


Outcome = CommandComplete | Rows | RowStream | CopyOut | CopyIn | EmptyQuery


class Adapter(Protocol):
    async def startup(self, session: Session) -> None:
        """Validate user/database at connection start; raises SqlError (e.g. 3D000)."""

    async def execute(self, session: Session, sql: str) -> AsyncIterator[Outcome]:
        """Simple Query: one outcome per statement, in order. An error raised mid-way ends the
        query; earlier outcomes have already been yielded."""

    async def describe(self, session: Session, sql: str, param_oids: list[int]) -> StatementDescription:
        """Parse + Describe of one statement with $n parameters (oid 0 = infer)."""

    async def execute_one(self, session: Session, sql: str, params: list[Any],
                          param_types: list[SqlType]) -> Outcome:
        """Bind + Execute of one statement; params already decoded to Python values."""

    async def close_session(self, session: Session) -> None:
        """The connection ended: drop cursors, subscriptions, transactions."""
