"""Per-statement planning state: the catalog, the session's name resolution settings, the
parameters (values when executing, types being inferred when describing) and the dependencies
found so far. One `PlanContext` lives for one `plan_statement` call; nothing is global."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from catalog.items import CatalogReader
from dataflow.errors import SqlError
from dataflow.types import SqlType


@dataclass(frozen=True)
class ParamSlot:
    """The value of a `$n` literal whose type is not known yet; coercion decides it."""

    index: int  # 0-based
    raw: Any = None  # the client's value when executing (a str for untyped text params)


@dataclass
class Params:
    values: list[Any] | None  # None when describing
    types: list[SqlType | None]  # known (given or inferred) types; None = not yet known

    def ensure(self, index: int) -> None:
        if index >= len(self.types):
            if self.values is not None:
                raise SqlError("42P02", f"there is no parameter ${index + 1}")
            self.types.extend([None] * (index + 1 - len(self.types)))

    def infer(self, index: int, t: SqlType) -> None:
        if self.types[index] is None:
            self.types[index] = t


@dataclass(frozen=True)
class SessionInfo:
    """What session and system functions read (current_user, current_setting, now(), ...):
    fixed for one statement. `settings` holds the session's variables over their defaults."""

    user: str = "slipstream"
    database: str = "slipstream"
    search_path: tuple[str, ...] = ("public",)
    pid: int = 0
    settings: dict[str, str] = field(default_factory=dict)
    # The statement's start time (UTC), the value of now() in a one-off query.
    statement_time: dt.datetime = field(
        default_factory=lambda: dt.datetime.now(dt.timezone.utc).replace(tzinfo=None))


@dataclass
class PlanContext:
    catalog: CatalogReader
    params: Params
    search_path: tuple[str, ...] = ("public",)
    database: str = "slipstream"
    ctes: dict[str, exp.Expression] = field(default_factory=dict)
    depends_on: list[str] = field(default_factory=list)
    # False while planning a part PostgreSQL only analyses but never plans (a CTE nothing
    # reads): constants are then not evaluated, so only analysis errors surface.
    fold_constants: bool = True
    session: SessionInfo = field(default_factory=SessionInfo)
    # What keeps this plan's result up to date ("a materialized view", "an index", "SUBSCRIBE"),
    # or None for a one-off query: wall-clock and random functions are refused in the former.
    maintained: str | None = None
    # Values computed once per statement and shared with every child context (the system
    # catalogs' snapshot, name-to-oid maps).
    caches: dict = field(default_factory=dict)
    # Session variables the statement sets when it succeeds (set_config): (name, value, local).
    session_changes: list = field(default_factory=list)
    # Inside a subquery that may read an enclosing query's columns: those columns as a relation
    # every SELECT of the subquery joins with (`planner.subqueries.OuterRelation`), else None.
    outer: Any = None
    # The compute cluster (name) the plan will run on, when not the session's (IN CLUSTER, or an
    # item's own cluster when the coordinator re-plans it): only its indexes may be read.
    cluster: str | None = None

    @property
    def cluster_name(self) -> str:
        return self.cluster or self.session.settings.get("cluster") or "quickstart"

    def child(self) -> "PlanContext":
        """A context for planning a view's definition: same params/catalog, own dependencies,
        no CTEs from the outer query."""
        return replace(self, ctes={}, depends_on=[], fold_constants=True, outer=None)

    def with_ctes(self, ctes: dict[str, exp.Expression], depends_on: list[str] | None = None,
                  fold_constants: bool | None = None) -> "PlanContext":
        """The same context with other CTEs in scope (and optionally its own dependencies, or
        constant folding off)."""
        return replace(self, ctes=ctes, depends_on=self.depends_on if depends_on is None else depends_on,
                       fold_constants=self.fold_constants if fold_constants is None else fold_constants)
