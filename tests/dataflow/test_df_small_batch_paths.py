"""Small-batch fast paths (a few rows handled as Python values) give exactly the results of the
general vectorised paths: forced on and off over the same inputs, with NULLs, NaNs, retractions
and several times per step."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import dataflow.arrangement as arrangement_mod
import dataflow.batch as batch_mod
import dataflow.operators.keyindex as keyindex_mod
import dataflow.operators.reduce as reduce_mod
from dataflow.arrangement import keys_equal
from dataflow.batch import batch_from_rows, consolidate, hash_columns
from dataflow.decimal_util import i64_scaled_to_decimal
from dataflow.exchange import LocalExchange
from dataflow.expr import AggregateExpr, ColumnRef
from dataflow.plan import Get, Reduce
from dataflow.render import Dataflow
from dataflow.types import FLOAT8, INT8, NUMERIC, TEXT


@pytest.fixture
def general_paths(monkeypatch):
    """Turn every small-batch path off (each module reads its own SMALL_BATCH name)."""
    def off():
        for mod in (batch_mod, arrangement_mod, reduce_mod, keyindex_mod):
            monkeypatch.setattr(mod, "SMALL_BATCH", -1)
    return off


def test_string_hash_small_equals_dictionary_path():
    vals = ["a", None, "ü", "", "a", "long string " * 5]
    small = pa.table({"c0": pa.array(vals)})
    big = pa.table({"c0": pa.array(vals * 20)})  # > 64 rows: the dictionary-encoded path
    assert hash_columns(small, [0]).tolist() == hash_columns(big, [0])[:len(vals)].tolist()


def test_keys_equal_small_matches_general(general_paths):
    a = pa.table({"x": pa.array([1, None, 3, None, 5], pa.int64()),
                  "f": pa.array([1.0, math.nan, None, 2.0, 0.0]), "s": pa.array(["a", None, "b", "c", None])})
    b = pa.table({"x": pa.array([1, None, 4, 2, 5], pa.int64()),
                  "f": pa.array([1.0, math.nan, None, 2.0, -0.0]), "s": pa.array(["a", None, "b", "c", None])})
    small = [keys_equal(a, [0, 1, 2], b, [0, 1, 2], ne).tolist() for ne in (True, False)]
    general_paths()
    general = [keys_equal(a, [0, 1, 2], b, [0, 1, 2], ne).tolist() for ne in (True, False)]
    assert small == general
    assert small[0] == [True, False, False, False, True]  # NaN never equals NaN; NULL = NULL if asked


def test_i64_scaled_to_decimal_small_matches_numpy_path():
    rng = np.random.default_rng(3)
    vals = np.concatenate([rng.integers(-2**63, 2**63 - 1, 100, dtype=np.int64),
                           np.array([0, -1, 1, -2**63, 2**63 - 1], np.int64)])
    valid = rng.random(len(vals)) > 0.1
    for shift, scale in ((0, 0), (16, 16), (18, 20)):
        big = i64_scaled_to_decimal(vals, valid, shift, scale).to_pylist()
        small = sum((i64_scaled_to_decimal(vals[i:i + 7], valid[i:i + 7], shift, scale).to_pylist()
                     for i in range(0, len(vals), 7)), [])
        assert small == big
        assert big[-1] == Decimal(2**63 - 1).scaleb(shift - scale) or not valid[-1]


def _reduce_plan():
    aggs = (AggregateExpr("count_star", None, INT8), AggregateExpr("sum", ColumnRef(1, INT8), NUMERIC),
            AggregateExpr("sum", ColumnRef(2, FLOAT8), FLOAT8), AggregateExpr("min", ColumnRef(1, INT8), INT8))
    return Reduce(Get("t", (TEXT, INT8, FLOAT8)), (0,), aggs)


def _steps():
    """Several steps, each with several times, inserts and retractions, NULL keys and NaN."""
    rng = np.random.default_rng(11)
    live, steps, t = [], [], 1
    for _ in range(12):
        parts = []
        for dt in range(int(rng.integers(1, 4))):
            rows, diffs = [], []
            for _ in range(int(rng.integers(1, 6))):
                if live and rng.random() < 0.4:
                    rows.append(live.pop(int(rng.integers(0, len(live))))), diffs.append(-1)
                else:
                    r = (["a", "b", None][int(rng.integers(0, 3))], int(rng.integers(-5, 5)),
                         [1.5, math.nan, None, -2.0][int(rng.integers(0, 4))])
                    live.append(r), rows.append(r), diffs.append(1)
            b = batch_from_rows(rows, [TEXT, INT8, FLOAT8], time=t + dt)
            parts.append(b.set_column(4, "diff", pa.array(np.array(diffs, np.int64))))
        steps.append((pa.concat_tables(parts), t + 3))
        t += 3
    return steps


def _run(steps) -> list[dict]:
    df = Dataflow(_reduce_plan(), 1, LocalExchange())
    outs = []
    for b, upper in steps:
        out = df.step({"t": b}, upper)
        # The reduce's output skips the final consolidate: it must already be consolidated.
        again = consolidate(out)
        assert again.num_rows == out.num_rows and 0 not in out["diff"].to_pylist()
        outs.append(_multiset(out))
    return outs


def _multiset(t: pa.Table) -> dict:
    def norm(v):
        return "NaN" if isinstance(v, float) and v != v else v
    rows = zip(*[[norm(v) for v in t[c].to_pylist()] for c in t.column_names if c != "diff"])
    out: dict = {}
    for r, d in zip(rows, t["diff"].to_pylist()):
        out[r] = out.get(r, 0) + d
    return out


def test_reduce_small_emit_matches_general_path(general_paths):
    steps = _steps()
    small = _run(steps)
    general_paths()
    general = _run(steps)
    assert small == general
    assert any(d < 0 for m in small for d in m.values())  # retractions were exercised


def _int_reduce_outputs(steps) -> list[dict]:
    aggs = (AggregateExpr("count_star", None, INT8), AggregateExpr("sum", ColumnRef(1, INT8), NUMERIC),
            AggregateExpr("count", ColumnRef(1, INT8), INT8))
    df = Dataflow(Reduce(Get("t", (INT8, INT8)), (0,), aggs), 1, LocalExchange())
    return [_multiset(df.step({"t": b}, upper)) for b, upper in steps]


def test_reduce_dense_counting_matches_sorted_segments(monkeypatch):
    """Hydration-sized steps group by np.bincount; forced on for every step and off for every
    step they must agree, including sums past 2**53 (where counting falls back to sorting)."""
    rng = np.random.default_rng(5)
    steps, t = [], 1
    for i in range(4):
        n = 3000
        keys = rng.integers(0, 50 if i else 1500, n)
        vals = rng.integers(-10**6, 10**6, n) if i != 2 else rng.integers(2**58, 2**59, n)
        b = pa.table({"c0": pa.array(keys, pa.int64()), "c1": pa.array(vals, pa.int64(), mask=rng.random(n) < 0.05),
                      "time": pa.array(np.full(n, t, np.uint64)),
                      "diff": pa.array(rng.choice(np.array([-1, 1, 2]), n).astype(np.int64))})
        steps.append((b, t + 1))
        t += 1
    monkeypatch.setattr(reduce_mod, "DENSE_MIN_ROWS", 1)
    dense = _int_reduce_outputs(steps)
    monkeypatch.setattr(reduce_mod, "DENSE_MIN_ROWS", 10**9)
    assert dense == _int_reduce_outputs(steps)


def _rows_and_diffs(batch: pa.Table) -> list[tuple]:
    # NaN != NaN: compare its text
    return [tuple("NaN" if isinstance(v, float) and v != v else (v, math.copysign(1, v)) if isinstance(v, float) else v
                  for v in row) for row in zip(*[batch.column(i).to_pylist() for i in range(batch.num_columns)])]


@pytest.mark.parametrize("seed", range(40))
def test_consolidate_small_matches_general(general_paths, seed):
    """A few updates with repeats, retractions that cancel, NULLs, NaNs (one value), -0.0 next
    to 0.0 (two values), several times: the dict path gives the vectorised path's updates (as
    a multiset: the general path puts rows whose hashes collide, such as 0.0 and -0.0, last)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    pick = lambda pool: [pool[i] for i in rng.integers(0, len(pool), n)]  # noqa: E731
    batch = pa.table({
        "c0": pa.array(pick([1, 2, None, 3]), pa.int64()),
        "c1": pa.array(pick(["a", "b", None, ""])),
        "c2": pa.array(pick([0.0, -0.0, math.nan, 1.5, None]), pa.float64()),
        "c3": pa.array(pick([Decimal("1.50"), None, Decimal("-2.25")]), pa.decimal128(10, 2)),
        "time": pa.array(pick([3, 4]), pa.uint64()),
        "diff": pa.array(pick([1, -1, 2]), pa.int64()),
    })
    small = consolidate(batch)
    general_paths()
    general = consolidate(batch)
    assert sorted(_rows_and_diffs(small), key=repr) == sorted(_rows_and_diffs(general), key=repr)
    assert small.schema == batch.schema


def test_consolidate_small_falls_back_for_unhashable_values():
    batch = pa.table({"c0": pa.array([[1, 2], [1, 2], [3]]), "time": pa.array([1, 1, 1], pa.uint64()),
                      "diff": pa.array([1, 1, -1], pa.int64())})
    out = consolidate(batch)
    assert sorted(zip(out["c0"].to_pylist(), out["diff"].to_pylist())) == [([1, 2], 2), ([3], -1)]


def test_string_hash_is_the_same_whatever_the_layout(monkeypatch):
    """A value's hash comes from its bytes alone: the same for string and large_string, for a
    slice, and whichever chunk of the column its bytes are hashed in."""
    rng = np.random.default_rng(5)
    vals = ["", "a", "ab", "ba", "ü", None] + ["".join(chr(97 + int(c)) for c in rng.integers(0, 26, int(k)))
                                               for k in rng.integers(0, 300, 200)]
    col = pa.array(vals)
    whole = batch_mod._column_hash(col)
    assert batch_mod._column_hash(col.cast(pa.large_string())).tolist() == whole.tolist()
    assert batch_mod._column_hash(col.slice(7, 50)).tolist() == whole[7:57].tolist()
    chunked = batch_mod._bytes_hash(col)
    monkeypatch.setattr(batch_mod, "_BYTES_CHUNK", 64)
    assert batch_mod._bytes_hash(col).tolist() == chunked.tolist()
    distinct = {v for v in vals if v is not None}
    assert len({h for v, h in zip(vals, whole.tolist()) if v is not None}) == len(distinct)
