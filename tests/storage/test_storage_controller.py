"""The storage controller's self-correcting sink: whatever a view's shard holds, writing the
dataflow's first output makes the shard hold exactly that output."""

from pathlib import Path

from dataflow.batch import batch_from_rows, rows_of
from dataflow.types import INT8, TEXT
from storage.controller import StorageController
from storage.persist import PersistClient

TYPES = (TEXT, INT8)


def contents(storage: StorageController, id: str) -> dict[tuple, int]:
    snap = storage.snapshot(id)
    if snap is None:
        return {}
    out: dict[tuple, int] = {}
    for row, diff in zip(rows_of(snap), snap.column("diff").to_pylist()):
        out[row] = out.get(row, 0) + diff
    return {r: d for r, d in out.items() if d}


def test_first_write_of_a_new_view_is_its_snapshot(tmp_path: Path):
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("v", TYPES)
    written = storage.correct_and_append("v", batch_from_rows([("eu", 3), ("us", 1)], TYPES, 100), 101)
    assert written.num_rows == 2
    assert storage.upper("v") == 101
    assert contents(storage, "v") == {("eu", 3): 1, ("us", 1): 1}


def test_restart_with_the_same_contents_writes_nothing_but_progress(tmp_path: Path):
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("v", TYPES)
    storage.correct_and_append("v", batch_from_rows([("eu", 3)], TYPES, 100), 101)
    again = StorageController(PersistClient.open_local(tmp_path))  # as after a crash
    again.open("v", TYPES)
    # The rehydrated dataflow starts at as_of = upper - 1 and reports the same contents.
    written = again.correct_and_append("v", batch_from_rows([("eu", 3)], TYPES, 100), 105)
    assert written.num_rows == 0
    assert again.upper("v") == 105
    assert contents(again, "v") == {("eu", 3): 1}


def test_stale_contents_are_corrected_at_the_shard_upper(tmp_path: Path):
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("v", TYPES)
    storage.correct_and_append("v", batch_from_rows([("eu", 3), ("us", 1)], TYPES, 100), 101)
    # The inputs moved on while the view's writer was down: the new dataflow starts later.
    written = storage.correct_and_append("v", batch_from_rows([("eu", 4), ("apac", 2)], TYPES, 140), 141,
                                         as_of=140)
    assert set(written.column("time").to_pylist()) == {140}
    assert contents(storage, "v") == {("eu", 4): 1, ("apac", 2): 1}


def test_a_view_that_became_empty_is_emptied_at_its_as_of(tmp_path: Path):
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("v", TYPES)
    storage.correct_and_append("v", batch_from_rows([("eu", 3)], TYPES, 100), 101)
    empty = batch_from_rows([], TYPES, 0)
    written = storage.correct_and_append("v", empty, 131, as_of=130)
    assert written.column("time").to_pylist() == [130] and written.column("diff").to_pylist() == [-1]
    assert contents(storage, "v") == {}
