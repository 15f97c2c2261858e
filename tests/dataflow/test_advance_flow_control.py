"""Flow control of table advances (dataflow/controller.py): a replica's workers have at most two
advances to apply; later ones are held and merged into one command whose updates keep their
own times, per collection in the order written."""

from __future__ import annotations

from dataflow.batch import batch_from_rows, rows_of
from dataflow.controller import MAX_ADVANCES_IN_FLIGHT, Replica, _Advance, _merged_updates
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
    replica.held.append(_Advance({0: {}, 1: {}}, ("u1",), 7))
    replica.reset_flow()  # a restarted replica imports from persist: nothing held or in flight
    assert not replica.held and not replica.in_flight and not replica.stepped


def test_a_whole_advance_splits_on_the_workers_as_the_controller_splits_a_large_one(tmp_path):
    """Small writes go whole to every worker (`AdvanceUpper.whole`), which keeps its own part:
    the rows the controller sends it when it splits a write itself."""
    from hypothesis import given, settings, strategies as st

    from dataflow.controller import _split
    from dataflow.protocol import AdvanceUpper
    from dataflow.types import FLOAT8
    from dataflow.worker import CollectionTrace, Worker

    types = (INT8, TEXT, FLOAT8)

    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.one_of(st.none(), st.text("ab", max_size=2)),
                              st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5]))), max_size=30))
    def check(rows):
        batch = batch_from_rows(rows, types, 10)
        parts = _split({"u1": batch}, 3)
        for w in range(3):
            worker = Worker(w, 3, tmp_path, None, lambda m: None)
            worker.collections["u1"] = CollectionTrace(types, 10)
            worker.handle(AdvanceUpper({"u1": batch}, ("u1",), 11, whole=True))
            kept = worker.collections["u1"].contents_from(10)
            assert sorted(map(repr, rows_of(kept))) == sorted(map(repr, rows_of(parts[w]["u1"])))
        assert sorted(map(repr, rows_of(batch))) == sorted(repr(r) for p in parts.values() for r in rows_of(p["u1"]))

    check()
