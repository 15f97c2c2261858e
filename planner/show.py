"""The result columns of SHOW statements (shared by the adapter and Describe), following
Materialize's SHOW output shapes."""

from __future__ import annotations

from dataflow.types import TEXT, Column
from planner.statements import ShowPlan

_SHAPES = {
    "tables": ("name", "comment"),
    "views": ("name", "comment"),
    "materialized views": ("name", "cluster", "comment"),
    "indexes": ("name", "on", "cluster", "key", "comment"),
    "columns": ("name", "nullable", "type", "comment"),
    "all": ("name", "setting", "description"),
    "schemas": ("name", "comment"),
    "databases": ("name", "comment"),
    "clusters": ("name", "replicas", "comment"),
    "create table": ("name", "create_sql"),
    "create view": ("name", "create_sql"),
    "create materialized view": ("name", "create_sql"),
    "create index": ("name", "create_sql"),
}


def show_columns(plan: ShowPlan) -> tuple[Column, ...]:
    if plan.what == "variable":
        return (Column(plan.name or "?column?", TEXT),)
    return tuple(Column(n, TEXT) for n in _SHAPES.get(plan.what, ("name",)))
