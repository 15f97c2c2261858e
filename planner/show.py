"""The result columns of SHOW statements (shared by the adapter and Describe), following
Materialize's SHOW output shapes."""

from __future__ import annotations

from dataflow.types import BOOL, TEXT, Column
from planner.statements import ShowPlan

_T, _B = TEXT, BOOL
_SHAPES = {
    "tables": (("name", _T), ("comment", _T)),
    "views": (("name", _T), ("comment", _T)),
    "materialized views": (("name", _T), ("cluster", _T), ("comment", _T)),
    "indexes": (("name", _T), ("on", _T), ("cluster", _T), ("key", _T), ("comment", _T)),
    "columns": (("name", _T), ("nullable", _B), ("type", _T), ("comment", _T)),
    "all": (("name", _T), ("setting", _T), ("description", _T)),
    "schemas": (("name", _T), ("comment", _T)),
    "databases": (("name", _T), ("comment", _T)),
    "clusters": (("name", _T), ("replicas", _T), ("comment", _T)),
    "cluster replicas": (("cluster", _T), ("replica", _T), ("size", _T), ("ready", _B), ("comment", _T)),
    "objects": (("name", _T), ("type", _T), ("comment", _T)),
    "sources": (("name", _T), ("type", _T), ("cluster", _T), ("comment", _T)),
    "sinks": (("name", _T), ("type", _T), ("cluster", _T), ("comment", _T)),
    "secrets": (("name", _T), ("comment", _T)),
    "connections": (("name", _T), ("type", _T), ("comment", _T)),
    "roles": (("name", _T), ("comment", _T)),
    "create": (("name", _T), ("create_sql", _T)),
}


def show_columns(plan: ShowPlan) -> tuple[Column, ...]:
    """What Describe announces and what the adapter returns (server/adapter/show.py), one list
    for both: a prepared SHOW (drivers prepare after a few runs) must get the rows it described."""
    what = plan.what.lower().replace("_", " ")
    if what in ("variable", "var"):
        return (Column((plan.name or "?column?").lower(), TEXT),)
    if what.startswith("create"):
        what = "create"
    return tuple(Column(n, t) for n, t in _SHAPES.get(what, (("name", TEXT),)))
