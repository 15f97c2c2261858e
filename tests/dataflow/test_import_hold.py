"""A worker busy with earlier commands imports a collection late: the shard's history back to the
import's upper must still be there when it reads. The fuzzer met the race (CREATE TABLE, then
INSERTs while a worker was still hydrating): the tick compacted the table's shard to its latest
upper, the worker's read at the import's upper failed (ReadBeforeSince), the replica restarted
and the reads in flight failed with XX000. Now the compute controller holds each shard's
compaction at the upper of every import its workers have not acknowledged (`Imported`).

Real persist, a real worker, the real controller's bookkeeping (no Spark job: the replica's
commands go nowhere, the worker is handed them directly)."""

from __future__ import annotations

import pytest

from dataflow.batch import batch_from_rows
from dataflow.controller import ComputeController, Replica
from dataflow.protocol import ImportCollection, Imported
from dataflow.types import INT8
from dataflow.worker import Worker
from storage.controller import StorageController
from storage.persist import PersistClient
from storage.persist.errors import ReadBeforeSince

TYPES = (INT8,)


def _storage(tmp_path) -> StorageController:
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("u1", TYPES)
    storage.append("u1", batch_from_rows([(1,), (2,)], TYPES, 1), 2)
    return storage


def _controller(tmp_path, workers: int = 2) -> tuple[ComputeController, Replica]:
    compute = ComputeController(workers, tmp_path)
    replica = Replica("r1", workers, syncing=False)
    compute.replicas["r1"] = replica
    return compute, replica


def test_a_late_import_reads_what_it_was_sent_for(tmp_path):
    storage = _storage(tmp_path)
    compute, replica = _controller(tmp_path)
    compute.import_collection("u1", TYPES, 2)           # sent; both workers still busy
    storage.append("u1", batch_from_rows([(3,)], TYPES, 5), 6)
    storage.compact("u1", compute.import_hold("u1"))    # the tick, meanwhile
    sent: list[object] = []
    worker = Worker(0, 1, tmp_path, None, sent.append)
    worker.handle(ImportCollection("u1", TYPES, 2))     # now it gets to it
    rows = worker.collections["u1"].contents_from(1)
    assert sorted(rows.column(0).to_pylist()) == [1, 2]  # the contents before upper 2, not row 3
    assert any(isinstance(m, Imported) and m.id == "u1" for m in sent)
    # Held until every worker of every replica has read it; then compaction moves on.
    compute._on_message(replica, Imported("u1", 0))
    assert compute.import_hold("u1") == 1
    compute._on_message(replica, Imported("u1", 1))
    assert compute.import_hold("u1") is None
    storage.compact("u1", compute.import_hold("u1"))
    with pytest.raises(ReadBeforeSince):  # what the late worker met before the hold
        PersistClient.open_local(tmp_path).open_shard("u1", TYPES).snapshot(1)


def test_holds_end_with_the_replica_or_the_collection(tmp_path):
    compute, replica = _controller(tmp_path)
    compute.import_collection("u1", TYPES, 2)
    compute.import_collection("u2", TYPES, 7)
    assert (compute.import_hold("u1"), compute.import_hold("u2")) == (1, 6)
    compute.drop_collection("u2")
    assert compute.import_hold("u2") is None
    compute._forget(replica)                             # failed: a restart imports afresh
    assert compute.import_hold("u1") is None
