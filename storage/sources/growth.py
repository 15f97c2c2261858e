"""Which source relations only ever gain rows, and which of them a RETENTION WINDOW trims.

One answer for the planner (an append-only relation lets operators above it keep less state:
planner/rules/append_only.py) and for the source controller (a retention window applies to a
relation that would otherwise grow for ever: storage/sources/retention.py).

    growth(webhook source)                           -> (True, None)    append-only
    growth(webhook source WITH (RETENTION WINDOW))   -> (True, 60000)   grows, trimmed: not append-only
    growth(AUCTION's bids) / growth(COUNTER)         -> (True, None)
    growth(MARKETING's outputs, a PostgreSQL table)  -> (False, None)   updated and deleted
"""

from __future__ import annotations

import json
from typing import Protocol

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError
from storage.sources import make_generator
from storage.sources.base import LoadGenOptions


class _Items(Protocol):
    def get(self, id: str) -> CatalogItem: ...


def source_config(item: CatalogItem) -> dict:
    return json.loads(item.definition or "{}")


def growth(item: CatalogItem, catalog: _Items) -> tuple[bool, int | None]:
    """(whether the relation's rows only ever arrive by themselves, its RETENTION WINDOW in ms).
    Tables, views and sources' other relations: (False, None)."""
    if item.kind is ItemKind.SUBSOURCE:
        cfg = source_config(item)
        if cfg.get("output") in (None, "progress") or "source" not in cfg:
            return False, None
        try:
            source = catalog.get(cfg["source"])
        except (SqlError, KeyError):
            return False, None
        output = cfg["output"]
    elif item.kind is ItemKind.SOURCE and item.columns:
        source, output = item, None
    else:
        return False, None
    scfg = source_config(source)
    kind = scfg.get("type", "load-generator")
    if kind == "webhook":
        grows = True
    elif kind == "load-generator" and "generator" in scfg:
        grows = output in make_generator(scfg["generator"], LoadGenOptions.from_json(scfg["options"])).growing()
    else:
        grows = False
    return grows, (scfg.get("retention_ms") if grows else None)


def append_only(item: CatalogItem, catalog: _Items) -> bool:
    """The relation only gains rows: it grows, and no retention window trims it."""
    grows, window = growth(item, catalog)
    return grows and window is None
