"""finishing.expand: rows repeated by their multiplicity, the same on the few-rows path (Python
lists, for point reads) as on the NumPy path, and a negative multiplicity refused either way."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from dataflow.errors import SqlError, SqlState
from server.adapter import finishing


def _batch(rows: list[tuple[int, str | None]], diffs: list[int]) -> pa.Table:
    return pa.table({"c0": pa.array([r[0] for r in rows], pa.int64()),
                     "c1": pa.array([r[1] for r in rows], pa.string()),
                     "time": pa.array([5] * len(rows), pa.uint64()),
                     "diff": pa.array(diffs, pa.int64())})


@pytest.mark.parametrize("seed", range(30))
def test_few_rows_expand_as_many_rows_do(seed, monkeypatch):
    rng = random.Random(seed)
    n = rng.randrange(0, 2 * finishing._FEW)
    rows = [(rng.randrange(5), rng.choice(["a", "b", None])) for _ in range(n)]
    batch = _batch(rows, [rng.choice([1, 1, 2, 3]) for _ in range(n)])
    got = finishing.expand(batch)
    want = [r for r, d in zip(rows, batch["diff"].to_pylist()) for _ in range(d)]
    assert got == want
    monkeypatch.setattr(finishing, "_FEW", -1)  # everything through NumPy
    assert finishing.expand(batch) == want


@pytest.mark.parametrize("few", [True, False])
def test_a_negative_multiplicity_is_refused(few, monkeypatch):
    if not few:
        monkeypatch.setattr(finishing, "_FEW", -1)
    with pytest.raises(SqlError) as e:
        finishing.expand(_batch([(1, "a"), (2, "b")], [1, -1]))
    assert e.value.sqlstate == SqlState.INTERNAL_ERROR
