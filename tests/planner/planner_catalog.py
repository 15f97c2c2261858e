"""A tiny in-memory CatalogReader for planner tests, filled by planning real CREATE statements."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError, SqlState
from planner import parse, plan_statement
from planner.statements import CreateIndexPlan, CreateTablePlan, CreateViewPlan


@dataclass
class MemoryCatalog:
    by_id: dict[str, CatalogItem] = field(default_factory=dict)
    next_id: int = 1

    def resolve(self, name, search_path=("public",), database="slipstream") -> CatalogItem:
        item = self.try_resolve(name, search_path, database)
        if item is None:
            raise SqlError(SqlState.UNDEFINED_TABLE, f'relation "{".".join(name)}" does not exist')
        return item

    def try_resolve(self, name, search_path=("public",), database="slipstream"):
        schemas = search_path if len(name) == 1 else (name[-2],)
        for s in schemas:
            for it in self.by_id.values():
                if it.schema == s and it.name == name[-1]:
                    return it
        return None

    def get(self, id: str) -> CatalogItem:
        return self.by_id[id]

    def items(self) -> list[CatalogItem]:
        return list(self.by_id.values())

    def indexes_on(self, id: str) -> list[CatalogItem]:
        return [i for i in self.by_id.values() if i.kind is ItemKind.INDEX and i.index_on == id]

    def execute(self, sql: str):
        """Plan DDL and apply it; return the plan."""
        plan = plan_statement(self, parse(sql)[0])
        iid = f"u{self.next_id}"
        if isinstance(plan, CreateTablePlan):
            item = CatalogItem(iid, 20000 + self.next_id, ItemKind.TABLE, "slipstream", plan.schema,
                               plan.name, plan.columns, plan.create_sql)
        elif isinstance(plan, CreateViewPlan):
            kind = ItemKind.MATERIALIZED_VIEW if plan.materialized else ItemKind.VIEW
            item = CatalogItem(iid, 20000 + self.next_id, kind, "slipstream", plan.schema, plan.name,
                               plan.columns, plan.create_sql, plan.definition, plan.depends_on)
        elif isinstance(plan, CreateIndexPlan):
            on = self.by_id[plan.on_id]
            item = CatalogItem(iid, 20000 + self.next_id, ItemKind.INDEX, "slipstream", plan.schema,
                               plan.name, on.columns, plan.create_sql, index_on=plan.on_id,
                               index_key=plan.key)
        else:
            return plan
        self.by_id[iid] = item
        self.next_id += 1
        return plan
