"""Flow control of table advances (dataflow/controller.py): a replica's workers have at most two
advances to apply; later ones are held and merged into one command whose updates keep their
own times, per collection in the order written."""

from __future__ import annotations

from dataflow.batch import batch_from_rows, rows_of
from dataflow.controller import MAX_ADVANCES_IN_FLIGHT, Replica, _merged_updates
from dataflow.types import INT8, TEXT


def test_held_advances_merge_per_collection_in_order():
    a1 = {"u1": batch_from_rows([(1,)], (INT8,), 10), "u2": batch_from_rows([("x",)], (TEXT,), 10)}
    a2 = {"u1": batch_from_rows([(2,), (3,)], (INT8,), 11, -1)}
    a3 = {"u1": batch_from_rows([(4,)], (INT8,), 12)}
    merged = _merged_updates([a1, a2, a3])
    assert set(merged) == {"u1", "u2"}
    u1 = merged["u1"]
    assert rows_of(u1) == [(1,), (2,), (3,), (4,)]
    assert u1["time"].to_pylist() == [10, 11, 11, 12] and u1["diff"].to_pylist() == [1, -1, -1, 1]
    assert merged["u2"] is a1["u2"]  # (a single batch goes as it is)


def test_a_replica_is_busy_until_every_worker_has_applied_an_advance():
    replica = Replica("r1", 2)
    assert not replica.busy()
    replica.in_flight.extend([5, 6])
    assert MAX_ADVANCES_IN_FLIGHT == 2 and replica.busy()
    replica.acknowledge(0, 5)
    assert replica.busy()  # worker 1 has not applied 5 yet
    replica.acknowledge(1, 6)
    assert list(replica.in_flight) == [6] and not replica.busy()
    replica.acknowledge(0, 6)
    assert not replica.in_flight
    replica.held.append(({0: {}, 1: {}}, ("u1",), 7))
    replica.reset_flow()  # a restarted replica imports from persist: nothing held or in flight
    assert not replica.held and not replica.in_flight and not replica.stepped
