"""Per-session adapter state: the transaction block and the open cursors."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import pyarrow as pa

from dataflow.types import Column


@dataclass
class Cursor:
    """A DECLAREd cursor: a finite result (rows) or a live subscription feeding `buffer`."""

    name: str
    columns: list[Column]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    stream: AsyncIterator[list[tuple[Any, ...]]] | None = None
    pump: asyncio.Task | None = None
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    error: BaseException | None = None

    def close(self) -> None:
        if self.pump is not None:
            self.pump.cancel()


@dataclass
class PendingWrite:
    """A write inside an explicit transaction, applied at COMMIT: literal updates, or the
    changes of an UPDATE/DELETE `plan` as read at `read_ts` (re-evaluated at COMMIT if the table
    was written after that)."""

    table_id: str
    updates: pa.Table | None = None
    plan: Any = None
    read_ts: int = 0
    cluster: str = "quickstart"  # the cluster `plan` was planned for (re-evaluated there)


@dataclass
class SessionState:
    in_block: bool = False
    failed: bool = False
    writes: list[PendingWrite] = field(default_factory=list)
    cursors: dict[str, Cursor] = field(default_factory=dict)
    # PREPARE'd statements: name -> (statement text, declared parameter types).
    prepared: dict = field(default_factory=dict)
    # Open savepoints, oldest first: (name, how many buffered writes there were at it).
    savepoints: list[tuple[str, int]] = field(default_factory=list)
    # The session's `cluster` as the current statement was planned with: its reads run there.
    cluster: str = "quickstart"

    def status(self) -> str:
        if not self.in_block:
            return "I"
        return "E" if self.failed else "T"
