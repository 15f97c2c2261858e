"""A minimal in-memory CatalogReader holding the workload's two tables, so the real planner can
plan V1 and V2 (ids: customers = u1, orders = u2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError, SqlState
from planner import parse, plan_statement
from planner.statements import CreateTablePlan, SelectPlan


@dataclass
class BenchCatalog:
    by_id: dict[str, CatalogItem] = field(default_factory=dict)

    def resolve(self, name, search_path=("public",), database="slipstream") -> CatalogItem:
        item = self.try_resolve(name, search_path, database)
        if item is None:
            raise SqlError(SqlState.UNDEFINED_TABLE, f'relation "{".".join(name)}" does not exist')
        return item

    def try_resolve(self, name, search_path=("public",), database="slipstream") -> CatalogItem | None:
        return next((it for it in self.by_id.values() if it.name == name[-1]), None)

    def get(self, id: str) -> CatalogItem:
        return self.by_id[id]

    def items(self) -> list[CatalogItem]:
        return list(self.by_id.values())

    def indexes_on(self, id: str) -> list[CatalogItem]:
        return []

    def create_table(self, ddl: str) -> str:
        plan = plan_statement(self, parse(ddl)[0])
        assert isinstance(plan, CreateTablePlan)
        iid = f"u{len(self.by_id) + 1}"
        self.by_id[iid] = CatalogItem(iid, 20000 + len(self.by_id), ItemKind.TABLE, "slipstream", plan.schema,
                                      plan.name, plan.columns, plan.create_sql)
        return iid

    def plan_select(self, sql: str) -> SelectPlan:
        plan = plan_statement(self, parse(sql)[0])
        assert isinstance(plan, SelectPlan)
        return plan
