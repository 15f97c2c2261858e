"""Batches (consolidate, hashing, partition), arrangements, exchange and error handling."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from dataflow.arrangement import Arrangement
from dataflow.batch import (advance_times, batch_from_rows, consolidate, empty_batch, hash_columns,
                            partition, rows_of)
from dataflow.exchange import LocalExchange, ThreadExchange
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import Filter, Get, Map, Reduce
from dataflow.expr import AggregateExpr
from dataflow.render import Dataflow
from dataflow.types import BOOL, INT8, TEXT, arrow_schema


def test_empty_and_from_rows():
    assert empty_batch([INT8, TEXT]).schema == arrow_schema([INT8, TEXT])
    b = batch_from_rows([(1, "a")], [INT8, TEXT], time=3, diff=-2)
    assert b["time"].to_pylist() == [3] and b["diff"].to_pylist() == [-2]


def test_consolidate_sums_and_drops_zeros():
    b = pa.concat_tables([batch_from_rows([(1, "a"), (1, "a"), (2, None), (3, "c")], [INT8, TEXT], 5),
                          batch_from_rows([(2, None), (1, "a")], [INT8, TEXT], 5, diff=-1),
                          batch_from_rows([(1, "a")], [INT8, TEXT], 6)])
    out = consolidate(b)
    got = sorted(zip(rows_of(out), out["time"].to_pylist(), out["diff"].to_pylist()))
    assert got == [((1, "a"), 5, 1), ((1, "a"), 6, 1), ((3, "c"), 5, 1)]
    assert out.schema == b.schema


def test_consolidate_one_million_updates():
    # Correctness at scale only: speed is measured by bench/ (a wall-clock bound here flakes
    # on a loaded CI machine).
    n = 1_000_000
    rng = np.random.default_rng(1)
    b = pa.table({"c0": rng.integers(0, 50_000, n), "c1": rng.integers(0, 10, n),
                  "time": rng.integers(0, 4, n).astype(np.uint64), "diff": rng.choice([-1, 1], n)})
    out = consolidate(b)
    assert out["diff"].to_numpy().min() != 0
    assert out["diff"].to_numpy().sum() == b["diff"].to_numpy().sum()
    keys = list(zip(out["c0"].to_pylist(), out["c1"].to_pylist(), out["time"].to_pylist()))
    assert len(keys) == len(set(keys))


def test_advance_times():
    b = batch_from_rows([(1,)], [INT8], 3)
    assert advance_times(b, 10)["time"].to_pylist() == [10]
    assert advance_times(b, 2)["time"].to_pylist() == [3]


def test_hash_is_deterministic_across_processes_and_widths():
    b = batch_from_rows([(1, "x"), (None, None), (2**40, "ü")], [INT8, TEXT], 0)
    here = hash_columns(b, [0, 1]).tolist()
    code = ("from dataflow.batch import batch_from_rows, hash_columns; from dataflow.types import INT8, TEXT;"
            "print(hash_columns(batch_from_rows([(1, 'x'), (None, None), (2**40, 'ü')], [INT8, TEXT], 0), [0, 1]).tolist())")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert str(here) == other.strip()
    narrow = pa.table({"c0": pa.array([1], pa.int32()), "time": pa.array([0], pa.uint64()),
                       "diff": pa.array([1], pa.int64())})
    assert hash_columns(narrow, [0])[0] == hash_columns(b, [0])[0]


def test_partition_covers_every_row_once_by_key():
    b = batch_from_rows([(i % 7, str(i)) for i in range(100)], [INT8, TEXT], 0)
    parts = partition(b, [0], 3)
    assert sum(p.num_rows for p in parts) == 100
    for p in parts:
        for q in parts:
            if p is not q:
                assert not set(p["c0"].to_pylist()) & set(q["c0"].to_pylist())


def test_arrangement_lookup_snapshot_compact_and_merging():
    a = Arrangement(key=(0,))
    for t in range(1, 40):
        a.insert(batch_from_rows([(t % 5, f"v{t}")], [INT8, TEXT], t))
        a.insert(batch_from_rows([(t % 5, f"v{t}")], [INT8, TEXT], t + 1, diff=-1)) if t % 2 else None
    # Geometric merging keeps the spine logarithmic.
    assert len(a.spine) <= 8
    snap = a.snapshot(100)
    assert sorted(rows_of(snap)) == sorted((t % 5, f"v{t}") for t in range(1, 40) if t % 2 == 0)
    assert sorted(rows_of(a.snapshot(3))) == [(2, "v2"), (3, "v3")]
    hits = a.lookup(batch_from_rows([(2,), (2,)], [INT8], 0), (0,))
    assert {r[0] for r in rows_of(hits)} == {2}
    a.compact(50)
    a.compact_now()
    assert len(a) == 19 and set(a.updates()["time"].to_pylist()) == {50}


def test_arrangement_nulls_match_only_when_asked():
    a = Arrangement(key=(0,))
    a.insert(batch_from_rows([(None, "n"), (1, "one")], [INT8, TEXT], 0))
    probe = batch_from_rows([(None,)], [INT8], 0)
    idx, m = a.matches(probe, (0,), nulls_equal=True)
    assert rows_of(m) == [(None, "n")]
    idx, m = a.matches(probe, (0,), nulls_equal=False)
    assert m.num_rows == 0


def test_thread_exchange_all_to_all():
    exs = ThreadExchange.create(3)
    batches = [batch_from_rows([(w * 10 + i,) for i in range(10)], [INT8], 0) for w in range(3)]
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda w: exs[w].shuffle("c", batches[w], (0,)), range(3)))
    assert sorted(v for g in got for v in g["c0"].to_pylist()) == list(range(30))
    for w, g in enumerate(got):
        assert all(p == w for p in (hash_columns(g, [0]) % np.uint64(3)).tolist())
    assert LocalExchange().shuffle("c", batches[0], (0,)) is batches[0]


def test_errors_are_recorded_and_workers_keep_stepping():
    """Division by zero on one worker: it records the error, sends empty batches, nobody hangs."""
    plan = Reduce(Map(Get("t", (INT8,)), (Call("div", (Literal(10, INT8), ColumnRef(0, INT8)), INT8),)),
                  (), (AggregateExpr("count_star", None, INT8),))
    dfs = [Dataflow(plan, 1, ex) for ex in ThreadExchange.create(2, timeout=10)]
    inputs = [{"t": batch_from_rows([(0,)], [INT8], 1)}, {"t": batch_from_rows([(5,)], [INT8], 1)}]
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda w: dfs[w].step(inputs[w], 2), range(2)))
    assert [e.sqlstate for e in dfs[0].errors] == ["22012"] and not dfs[1].errors
    assert sum(o.num_rows for o in outs) == 1  # only worker 1's row was counted


def test_filter_predicates_apply_in_order():
    plan = Filter(Get("t", (INT8,)), (Call("neq", (ColumnRef(0, INT8), Literal(0, INT8)), BOOL),
                                      Call("gt", (Call("div", (Literal(10, INT8), ColumnRef(0, INT8)), INT8),
                                                  Literal(1, INT8)), BOOL)))
    df = Dataflow(plan, 1, LocalExchange())
    out = df.step({"t": batch_from_rows([(0,), (2,), (20,)], [INT8], 1)}, 2)
    assert rows_of(out) == [(2,)] and not df.errors


def test_every_type_hashes_consolidates_and_reduces():
    import datetime as dt
    from decimal import Decimal

    from dataflow.types import DATE, FLOAT4, TIMESTAMP, TIMESTAMPTZ, VARCHAR, numeric
    types = [DATE, TIMESTAMPTZ, TIMESTAMP, BOOL, FLOAT4, numeric(10, 2), VARCHAR]
    row = (dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 1),
           True, 1.5, Decimal("1.50"), "x")
    b = batch_from_rows([row, row, (None,) * 7], types, 0)
    h = hash_columns(b, range(7))
    assert h[0] == h[1] != h[2]
    out = consolidate(b)
    assert sorted(out["diff"].to_pylist()) == [1, 2]
    a = Arrangement(key=tuple(range(7)))
    a.insert(b)
    assert a.lookup(b, tuple(range(7))).num_rows == 2
    plan = Reduce(Get("t", tuple(types)), (6,), tuple(AggregateExpr(f, ColumnRef(i, t), t)
                                                       for i, t in enumerate(types[:3]) for f in ("min", "max")))
    df = Dataflow(plan, 0, LocalExchange())
    later = batch_from_rows([(dt.date(2025, 1, 1), None, dt.datetime(2023, 1, 1), None, None, None, "x")], types, 1)
    df.step({"t": b}, 1)
    out = df.step({"t": later}, 2)
    assert sorted(zip(rows_of(out), out["diff"].to_pylist()), key=lambda r: r[1])[1][0] == (
        "x", dt.date(2024, 1, 1), dt.date(2025, 1, 1), row[1], row[1], dt.datetime(2023, 1, 1), row[2])


def test_group_keys_that_collide_as_floats_stay_apart():
    from decimal import Decimal

    from dataflow.types import NUMERIC
    vals = [Decimal("0.1"), Decimal("0.1000000000000001"), Decimal("0.1"), Decimal("0.1000000000000002")]
    plan = Reduce(Get("t", (NUMERIC,)), (0,), (AggregateExpr("count_star", None, INT8),))
    df = Dataflow(plan, 0, LocalExchange())
    out = df.step({"t": batch_from_rows([(v,) for v in vals], [NUMERIC], 0)}, 1)
    assert sorted(rows_of(out)) == [(Decimal("0.1000000000000000"), 2), (Decimal("0.1000000000000001"), 1),
                                    (Decimal("0.1000000000000002"), 1)]


def test_constant_inputs_and_arrangement_accessor():
    from dataflow.plan import ArrangeBy, Constant, Union_
    plan = Union_((Constant(((1,), (2,)), (INT8,)), Get("t", (INT8,))))
    dfs = [Dataflow(plan, 5, ex) for ex in ThreadExchange.create(2)]
    assert dfs[0].inputs == {"t"} and dfs[0].arrangement() is None
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda df: df.step({}, 6), dfs))
    assert sorted(r for o in outs for r in rows_of(o)) == [(1,), (2,)]  # once, not once per worker
    assert all(t == 5 for o in outs for t in o["time"].to_pylist())
    idx = Dataflow(ArrangeBy(Get("t", (INT8,)), (0,)), 5, LocalExchange())
    idx.step({"t": batch_from_rows([(3,), (3,)], [INT8], 2)}, 6)  # times before as_of advance to it
    assert rows_of(idx.arrangement().snapshot(5)) == [(3,)]
    assert idx.arrangement().snapshot(5)["diff"].to_pylist() == [2]
