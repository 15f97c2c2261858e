"""Per-statement planning state: the catalog, the session's name resolution settings, the
parameters (values when executing, types being inferred when describing) and the dependencies
found so far. One `PlanContext` lives for one `plan_statement` call; nothing is global."""

from __future__ import annotations

from dataclasses import dataclass, field
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

    def child(self) -> "PlanContext":
        """A context for planning a view's definition: same params/catalog, own dependencies,
        no CTEs from the outer query."""
        return PlanContext(self.catalog, self.params, self.search_path, self.database)
