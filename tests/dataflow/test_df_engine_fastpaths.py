"""The engine's fast paths give exactly the answers of the slow, obviously-correct ones:
sort-based consolidation (including hash collisions) and int64 sum accumulators (including the
switch to exact Python ints near overflow)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa

from dataflow import batch as batch_mod
from dataflow.batch import _consolidate_arrow, batch_from_rows, consolidate, consolidate_hashed, row_hashes
from dataflow.exchange import LocalExchange
from dataflow.expr import AggregateExpr, ColumnRef
from dataflow.plan import Get, Reduce
from dataflow.render import Dataflow
from dataflow.types import INT8, NUMERIC, TEXT


def _as_multiset(t: pa.Table) -> dict:
    rows = zip(*[t[c].to_pylist() for c in t.column_names if c != "diff"])
    return dict(zip(rows, t["diff"].to_pylist()))


def _random_batch(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = rng.integers(0, 5, n)
    texts = np.array(["a", "b", None], dtype=object)[rng.integers(0, 3, n)]
    return pa.table({"c0": pa.array(ints, pa.int64(), mask=rng.random(n) < 0.1),
                     "c1": pa.array(list(texts), pa.string()),
                     "time": pa.array(rng.integers(0, 3, n).astype(np.uint64)),
                     "diff": pa.array(rng.choice(np.array([-2, -1, 1, 2]), n))})


def test_consolidate_matches_hash_aggregation_in_first_appearance_order():
    for seed in range(5):
        b = _random_batch(seed, 500)
        fast, slow = consolidate(b), _consolidate_arrow(b)
        assert _as_multiset(fast) == _as_multiset(slow)
        assert fast.schema == b.schema
        assert 0 not in fast["diff"].to_pylist()
        assert len(set(_as_multiset(fast))) == fast.num_rows  # each (row, time) once
        # rows come in order of their first appearance in the input
        keys = [tuple(r) for r in zip(*[b[c].to_pylist() for c in ("c0", "c1", "time")])]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        positions = [first[k] for k in _as_multiset(fast)]
        assert positions == sorted(positions)


def test_consolidate_is_exact_when_every_hash_collides(monkeypatch):
    # Force all rows onto one hash: the equality check must split them back into real groups.
    monkeypatch.setattr(batch_mod, "_mix64", lambda u: np.zeros_like(u))
    b = _random_batch(11, 300)
    assert _as_multiset(consolidate(b)) == _as_multiset(_consolidate_arrow(b))


def test_consolidate_with_kept_row_hashes_is_consolidate_and_keeps_them_right(monkeypatch):
    """A trace merges with the row hashes it kept (`consolidate_hashed`): the answer is
    consolidate's, and the hashes it gives back are the output rows' own, also when rows had
    to be set apart for colliding hashes or the batch is small."""
    for seed, n in ((1, 500), (2, 40), (3, 2), (4, 0)):
        b = _random_batch(seed, n)
        out, h = consolidate_hashed(b, row_hashes(b))
        assert out.equals(consolidate(b))
        assert (h == row_hashes(out)).all()
        again, h2 = consolidate_hashed(pa.concat_tables([out, b]), np.concatenate([h, row_hashes(b)]))
        assert _as_multiset(again) == _as_multiset(_consolidate_arrow(pa.concat_tables([out, b])))
        assert (h2 == row_hashes(again)).all()
    monkeypatch.setattr(batch_mod, "_mix64", lambda u: np.zeros_like(u))  # every row collides
    b = _random_batch(5, 300)
    out, h = consolidate_hashed(b, row_hashes(b))
    assert _as_multiset(out) == _as_multiset(_consolidate_arrow(b))
    assert (h == row_hashes(out)).all()


def test_consolidate_small_batches():
    one = batch_from_rows([(1, "x")], [INT8, TEXT], time=3)
    assert consolidate(one).num_rows == 1
    gone = batch_from_rows([(1, "x")], [INT8, TEXT], time=3, diff=0)
    assert consolidate(gone).num_rows == 0
    pair = pa.concat_tables([one, batch_from_rows([(1, "x")], [INT8, TEXT], time=3, diff=-1)])
    assert consolidate(pair).num_rows == 0


def test_sum_switches_to_exact_ints_before_int64_overflow():
    plan = Reduce(Get("t", (INT8, INT8)), (0,), (AggregateExpr("sum", ColumnRef(1, INT8), NUMERIC),
                                                   AggregateExpr("count_star", None, INT8)))
    df = Dataflow(plan, 0, LocalExchange())
    big = 2**62
    out = [df.step({"t": batch_from_rows([(1, big), (1, big), (2, 5)], [INT8, INT8], time=0)}, 1)]
    out.append(df.step({"t": batch_from_rows([(1, big), (2, 7)], [INT8, INT8], time=1)}, 2))
    out.append(df.step({"t": batch_from_rows([(1, big)], [INT8, INT8], time=2, diff=-1)}, 3))
    state: dict = {}
    for o in out:
        for row, d in _as_multiset(o.drop_columns(["time"]).append_column(
                "time", pa.array(np.zeros(o.num_rows, np.uint64)))).items():
            state[row] = state.get(row, 0) + d
    final = {r[:3] for r, d in state.items() if d}
    assert final == {(1, Decimal(2 * big), 2), (2, Decimal(12), 2)}


def test_int64_to_scaled_decimal_is_exact_at_the_extremes():
    from dataflow.decimal_util import i64_scaled_to_decimal

    rng = np.random.default_rng(0)
    v = np.concatenate([rng.integers(-2**63, 2**63 - 1, 2000, dtype=np.int64),
                        np.array([0, -1, 1, 2**63 - 1, -2**63], np.int64)])
    valid = rng.random(len(v)) < 0.9
    for shift in (0, 1, 16, 18):
        got = i64_scaled_to_decimal(v, valid, shift, shift).to_pylist()
        assert got == [Decimal(int(x)) if ok else None for x, ok in zip(v, valid)]


def test_compare_with_literal_fast_path_keeps_sql_null_semantics():
    from dataflow.expr import Call, Literal
    from dataflow.scalar import compile_expr, compile_predicate
    from dataflow.types import BOOL

    b = batch_from_rows([("a", 1), (None, 2), ("b", None)], [TEXT, INT8], time=0)
    eq = Call("eq", (ColumnRef(0, TEXT), Literal("a", TEXT)), BOOL)
    assert compile_expr(eq)(b).to_pylist() == [True, None, False]
    assert list(compile_predicate(eq)(b)) == [True, False, False]
    gt = Call("gt", (ColumnRef(1, INT8), Literal(1, INT8)), BOOL)
    assert compile_expr(gt)(b).to_pylist() == [False, True, None]
