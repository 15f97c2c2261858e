import doctest
import importlib

import pytest

MODULES = ["", ".blob", ".consensus", ".state", ".updates", ".compaction", ".shard", ".client", ".txn"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_hold(name):
    result = doctest.testmod(importlib.import_module("storage.persist" + name))
    assert result.failed == 0


def test_zero_column_shard(tmp_path):
    import pyarrow as pa

    from storage.persist import PersistClient

    shard = PersistClient.open_local(tmp_path).open_shard("z", [])
    batch = pa.table({"time": pa.array([0, 0, 1], pa.uint64()), "diff": pa.array([1, 1, -1], pa.int64())})
    shard.compare_and_append(batch, 0, 2)
    assert shard.snapshot(0).to_pydict() == {"time": [0], "diff": [2]}
    assert shard.snapshot(1).to_pydict() == {"time": [1], "diff": [1]}
