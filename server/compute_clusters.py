"""The coordinator's compute controllers, one per cluster (`dataflow.controller.ComputeController`,
each running its own replicas), keyed by cluster id.

What every cluster must hold goes to all of them, so any cluster can compute anything: the
imports of tables and sources' relations, their appends and frontier advances (writes and the
tick), and the drop of a collection. A dataflow (materialized view, index, peek, SUBSCRIBE) runs
on one cluster; the coordinator picks its controller with `get`. Another cluster reads a
materialized view as an import of its persist shard, fed with what the view's sink writes
(`Coordinator._forward_view`).

    clusters = ComputeClusters()
    clusters.controllers["u1"] = quickstart          # a started ComputeController
    clusters.import_collection("u5", types, upper)   # every cluster holds table u5
    clusters.get("u1").create_dataflow(...)          # a view computed by quickstart
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from dataflow.controller import ComputeController
from dataflow.errors import SqlError
from dataflow.types import SqlType


@dataclass
class ComputeClusters:
    controllers: dict[str, ComputeController] = field(default_factory=dict)  # cluster id -> controller

    def get(self, cluster_id: str | None) -> ComputeController | None:
        return self.controllers.get(cluster_id) if cluster_id is not None else None

    @property
    def collections(self) -> dict[str, tuple[tuple[SqlType, ...], int]]:
        """Every collection some cluster holds (inputs are in all of them)."""
        merged: dict[str, tuple[tuple[SqlType, ...], int]] = {}
        for controller in self.controllers.values():
            merged.update(controller.collections)
        return merged

    def import_collection(self, id: str, types: tuple[SqlType, ...], upper: int) -> None:
        for controller in self.controllers.values():
            controller.import_collection(id, types, upper)

    def import_hold(self, id: str) -> int | None:
        """The earliest time a worker of any cluster still has to read collection `id` at."""
        holds = [h for c in self.controllers.values() if (h := c.import_hold(id)) is not None]
        return min(holds) if holds else None

    def advance(self, updates: dict[str, pa.Table], ids: tuple[str, ...], upper: int) -> None:
        for controller in self.controllers.values():
            controller.advance(updates, ids, upper)

    def drop_dataflow(self, id: str) -> None:
        for controller in self.controllers.values():
            controller.drop_dataflow(id)

    def drop_collection(self, id: str) -> None:
        for controller in self.controllers.values():
            controller.drop_collection(id)

    def readers_of(self, ids: set[str]) -> dict[str, set[str]]:
        """Dataflow id -> which of `ids` its plan reads, in every cluster."""
        found: dict[str, set[str]] = {}
        for controller in self.controllers.values():
            for id, read in controller.readers_of(ids).items():
                found.setdefault(id, set()).update(read)
        return found

    def end_dataflow(self, id: str, error: SqlError) -> None:
        """End a SUBSCRIBE's dataflow with `error` wherever it runs."""
        for controller in self.controllers.values():
            controller.end_dataflow(id, error)

    def slots_in_use(self) -> int:
        """Spark task slots the workers of every replica of every cluster hold."""
        return sum(c.slots_in_use() for c in self.controllers.values())

    async def close(self) -> None:
        for controller in self.controllers.values():
            await controller.close()
