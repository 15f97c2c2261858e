"""Round-3 fast paths give exactly the results of the general paths and of the brute-force
reference: the arrangement's pending run of small inserts (and the join that reuses one key hash
for probe and insert), with retractions, several times per step, NULL keys and forced hash
collisions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

import dataflow.arrangement as arrangement_mod
import dataflow.batch as batch_mod
import dataflow.operators.join as join_mod
from dataflow.arrangement import Arrangement, keys_equal
from dataflow.batch import contents_at, make_batch, snapshot_at
from dataflow.plan import Get, Join
from dataflow.types import INT8, TEXT
from tests.dataflow.df_reference import check_plan, to_batch

LT, RT = (INT8, TEXT), (INT8, INT8)


def _random_steps(seed: int, n_steps: int = 30, big_every: int = 7) -> list:
    """Steps of 1-3 times with a few inserts/retractions per side; every `big_every`-th step is
    large (> SMALL_BATCH rows) so pending runs and ordinary spine batches interleave."""
    rng = np.random.default_rng(seed)
    live = {"l": [], "r": []}
    steps, t = [], 1
    keys = [None, 0, 1, 2, 3, 4]
    for s in range(n_steps):
        ups = {"l": [], "r": []}
        n_times = int(rng.integers(1, 4))
        for dt in range(n_times):
            for side in ("l", "r"):
                n_ops = 80 if (s % big_every == big_every - 1 and side == "l" and dt == 0) else int(rng.integers(0, 4))
                for _ in range(n_ops):
                    if live[side] and rng.random() < 0.35:
                        row = live[side].pop(int(rng.integers(0, len(live[side]))))
                        ups[side].append((row, t + dt, -1))
                    else:
                        k = keys[int(rng.integers(0, len(keys)))]
                        row = (k, ["x", "y", None][int(rng.integers(0, 3))]) if side == "l" else (
                            k, int(rng.integers(0, 3)))
                        live[side].append(row)
                        ups[side].append((row, t + dt, int(rng.choice([1, 1, 2]))))
                        if ups[side][-1][2] == 2:
                            live[side].append(row)
        steps.append((t + 3, ups))
        t += 3
    return steps


def _join_plan() -> Join:
    return Join(Get("l", LT), Get("r", RT), (0,), (0,))


@pytest.fixture
def colliding_hashes(monkeypatch):
    """Key hashes with only 2 distinct values: every probe meets keys that are not its own."""
    real = batch_mod.hash_columns

    def weak(batch, columns):
        return real(batch, columns) & np.uint64(1)
    for mod in (arrangement_mod, join_mod):
        monkeypatch.setattr(mod, "hash_columns", weak)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_join_small_steps_match_reference(seed):
    check_plan(_join_plan(), {"l": LT, "r": RT}, _random_steps(seed), workers=1)


def test_join_small_steps_match_reference_with_hash_collisions(colliding_hashes):
    check_plan(_join_plan(), {"l": LT, "r": RT}, _random_steps(4), workers=1)


def test_join_small_steps_two_workers():
    check_plan(_join_plan(), {"l": LT, "r": RT}, _random_steps(5, n_steps=12), workers=2)


def _multiset(t) -> dict:
    out: dict = {}
    rows = zip(*[t[c].to_pylist() for c in t.column_names if c != "diff"])
    for r, d in zip(rows, t["diff"].to_pylist()):
        out[r] = out.get(r, 0) + d
    return {r: d for r, d in out.items() if d}


def _arrangement_trace(steps, small: int) -> list:
    """Insert each step's left updates (as of compaction to the step's start) and record what a
    probe and a snapshot see after every step."""
    a = Arrangement(key=(0,))
    probe = to_batch([((k, None), 0, 1) for k in (None, 0, 1, 2, 3, 4, 9)], LT)
    seen, lower = [], 1
    for upper, ups in steps:
        if ups["l"]:
            a.insert(to_batch(ups["l"], LT))
        pidx, matched = a.matches(probe, (0,), nulls_equal=False)
        pairs: dict = {}
        for i, row in zip(pidx.tolist(), zip(*[matched[c].to_pylist() for c in matched.column_names])):
            pairs[(i,) + row[:-1]] = pairs.get((i,) + row[:-1], 0) + row[-1]
        seen.append(({k: v for k, v in pairs.items() if v}, _multiset(a.snapshot(upper - 1)),
                     a.pending_rows() if small else 0))
        a.compact(lower)
        lower = upper
    return seen


def test_arrangement_pending_run_matches_general_path(monkeypatch):
    steps = _random_steps(6, n_steps=40)
    fast = _arrangement_trace(steps, small=1)
    assert any(p for *_, p in fast)  # the pending run was used ...
    assert max(p for *_, p in fast) < batch_mod.SMALL_BATCH  # ... and flushed when full
    monkeypatch.setattr(arrangement_mod, "SMALL_BATCH", -1)
    general = _arrangement_trace(steps, small=0)
    assert [(m, s) for m, s, _ in fast] == [(m, s) for m, s, _ in general]


def test_arrangement_pending_rows_consolidate_on_entry():
    a = Arrangement(key=(0,))
    a.insert(to_batch([((1, "x"), 1, 1), ((1, "x"), 1, -1), ((2, "y"), 1, 1)], LT))
    assert a.pending_rows() == 1
    a.insert(to_batch([((2, "y"), 2, -1)], LT))
    assert _multiset(a.snapshot(2)) == {}
    a.compact(2)
    a.compact_now()
    assert a.pending_rows() == 0 and len(a) == 0


def _keyindex_slots(batches) -> list[list[int]]:
    from dataflow.operators.keyindex import KeyIndex
    ix = KeyIndex(2)
    return [ix.slots_for(b).tolist() for b in batches]


def test_keyindex_small_dict_matches_general_path(monkeypatch):
    import math
    from decimal import Decimal

    import pyarrow as pa

    import dataflow.operators.keyindex as keyindex_mod
    rng = np.random.default_rng(8)
    floats = [0.0, -0.0, math.nan, None, 1.5, 2.0]
    decs = [Decimal("1.5"), Decimal("1.50"), None, Decimal("-2"), Decimal("0.00")]
    batches = []
    for i in range(60):
        n = 70 if i % 9 == 8 else int(rng.integers(1, 5))  # a few general-path batches between
        f = [floats[int(rng.integers(0, len(floats)))] for _ in range(n)]
        d = [decs[int(rng.integers(0, len(decs)))] for _ in range(n)]
        batches.append(pa.table({"a": pa.array(f, pa.float64()), "b": pa.array(d, pa.decimal128(10, 2))}))
    fast = _keyindex_slots(batches)
    monkeypatch.setattr(keyindex_mod, "SMALL_BATCH", -1)
    general = _keyindex_slots(batches)
    assert fast == general
    # NaN is one group (as in PostgreSQL), NULL another, -0.0 = 0.0 and 1.5 = 1.50.
    flat = lambda r: [s for b in r for s in b]  # noqa: E731
    assert len(set(flat(fast))) == len({(None if x is None else "nan" if x != x else x, y)
                                        for b in batches for x, y in zip(b["a"].to_pylist(), b["b"].to_pylist())})
    # With collisions forced (2 distinct hashes), the dict still agrees with open addressing.
    real = batch_mod.hash_columns
    monkeypatch.setattr(keyindex_mod, "hash_columns", lambda b, c: real(b, c) & np.uint64(1))
    weak_general = _keyindex_slots(batches)
    monkeypatch.setattr(keyindex_mod, "SMALL_BATCH", batch_mod.SMALL_BATCH)
    weak_fast = _keyindex_slots(batches)
    assert weak_fast == weak_general
    # Same grouping (slot numbers may differ between hash functions, the partition may not).
    assert len(set(zip(flat(fast), flat(weak_fast)))) == len(set(flat(fast))) == len(set(flat(weak_fast)))


def test_merge_order_sorts_like_a_stable_sort():
    from dataflow.arrangement import merge_order
    rng = np.random.default_rng(9)
    for na, nb in ((0, 5), (5, 0), (50, 30), (200, 1)):
        a = np.sort(rng.integers(0, 20, na).astype(np.uint64))
        b = np.sort(rng.integers(0, 20, nb).astype(np.uint64))
        both = np.concatenate([a, b])
        assert merge_order(a, b).tolist() == np.argsort(both, kind="stable").tolist()


def test_merge_order_many_sorts_like_a_stable_sort():
    from dataflow.arrangement import merge_order_many
    rng = np.random.default_rng(10)
    for sizes in ((0, 5, 0), (5,), (50, 30, 1, 7), (1, 1, 1, 1, 200)):
        runs = [np.sort(rng.integers(0, 20, n).astype(np.uint64)) for n in sizes]
        assert merge_order_many(runs).tolist() == np.argsort(np.concatenate(runs), kind="stable").tolist()


def test_a_spine_of_equal_writes_stays_logarithmic_and_sizes_fall():
    """Size-tiered merging: after a big base and 300 equal writes the spine holds a handful of
    batches, larger ones older (within the rule's factor of two), and every row once."""
    from dataflow.arrangement import FAN_IN
    a = Arrangement(key=(0,))
    a.insert(to_batch([((i, "p"), 1, 1) for i in range(20_000)], LT))
    for step in range(300):
        a.insert(to_batch([((100_000 + step * 200 + i, "q"), step + 2, 1) for i in range(200)], LT))
        sizes = [len(b) for b in a.spine]
        assert len(sizes) <= 6 * FAN_IN, sizes
        assert all(older * 2 >= newer for older, newer in zip(sizes, sizes[1:])), sizes
    assert len(a) == 20_000 + 300 * 200


def _check_linear_merges(seed: int, key_space: int) -> Arrangement:
    rng = np.random.default_rng(seed)
    a = Arrangement(key=(0,))
    live: dict = {}
    for step in range(40):
        n = int(rng.choice([1, 3, 70, 150]))
        ups = []
        for _ in range(n):
            if live and rng.random() < 0.4:
                row = list(live)[int(rng.integers(0, len(live)))]
                live[row] -= 1
                if not live[row]:
                    del live[row]
                ups.append((row, step + 1, -1))
            else:
                row = (int(rng.integers(0, key_space)), ["p", "q"][int(rng.integers(0, 2))])
                live[row] = live.get(row, 0) + 1
                ups.append((row, step + 1, 1))
        a.insert(to_batch(ups, LT))
        a.compact(step + 1)
        for b in a.spine:
            assert (np.diff(b.hashes.astype(np.float64)) >= 0).all()
            assert b.table["__hash"].to_numpy().tolist() == b.hashes.tolist()
        assert {r[:2]: d for r, d in _multiset(a.snapshot(step + 1)).items()} == live
    return a


def test_linear_merges_keep_spine_sorted_and_contents_exact():
    a = _check_linear_merges(10, key_space=30)  # every key repeats: whole merges consolidate
    assert len(a.spine) > 1


def test_merges_under_a_mostly_unique_key_consolidate_only_repeated_keys():
    # Most keys occur once (lone updates pass through a merge as they are); retractions meet
    # their insert in some later merge.
    for seed in (11, 12):
        _check_linear_merges(seed, key_space=1_000_000)


def test_merges_under_a_mostly_unique_key_with_colliding_hashes(colliding_hashes):
    _check_linear_merges(13, key_space=1_000_000)


@pytest.mark.parametrize("weak", [False, True])
def test_point_lookups_find_exactly_their_key_in_every_batch(weak, request):
    """A one-key lookup reads each batch's run of the key's hash as a slice; with colliding
    hashes the run holds other keys too, which must not be returned."""
    if weak:
        request.getfixturevalue("colliding_hashes")
    a = Arrangement(key=(0,))
    live: dict = {}
    rng = np.random.default_rng(21)
    for step in range(30):
        ups = []
        for _ in range(int(rng.choice([1, 40, 300]))):
            row = (int(rng.integers(0, 50)), ["p", "q"][int(rng.integers(0, 2))])
            diff = -1 if live.get(row) and rng.random() < 0.4 else 1
            live[row] = live.get(row, 0) + diff
            ups.append((row, step + 1, diff))
        a.insert(to_batch(ups, LT))
        for key in (0, 7, 49, 99):
            got: dict = {}
            for r, d in _multiset(a.lookup(to_batch([((key,), 0, 1)], [INT8]), (0,))).items():
                got[r[:2]] = got.get(r[:2], 0) + d
            assert {r: d for r, d in got.items() if d} == \
                {r: d for r, d in live.items() if r[0] == key and d}, (step, key)


@pytest.mark.parametrize("seed", range(20))
def test_contents_at_is_the_snapshot_as_a_multiset(seed):
    """A peek's lookup leaves positive-only rows unconsolidated (`contents_at`): read as a
    multiset it is the consolidated snapshot, with and without retractions, at every time."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    values = rng.integers(0, 6, n)
    times = rng.integers(0, 5, n).astype(np.uint64)
    retract = seed % 2 == 0
    diffs = np.where(rng.random(n) < (0.3 if retract else 0.0), -1, int(rng.integers(1, 3)))
    updates = make_batch([pa.array(values), pa.array([str(v % 3) for v in values])], pa.array(times), pa.array(diffs))

    def counted(t):
        c = Counter()
        for a, b, tm, d in zip(*(t.column(i).to_pylist() for i in (0, 1)), t["time"].to_pylist(), t["diff"].to_pylist()):
            c[(a, b, tm)] += d
        return {k: v for k, v in c.items() if v}

    for as_of in range(6):
        got, want = contents_at(updates, as_of), snapshot_at(updates, as_of)
        assert counted(got) == counted(want)
        assert all(t == as_of for t in got["time"].to_pylist())
        if (got["diff"].to_numpy() < 0).any():  # only a consolidated answer may hold a negative count
            assert got.num_rows == want.num_rows


@pytest.mark.parametrize("seed", range(10))
def test_keys_equal_on_integers_matches_the_values(seed):
    """keys_equal compares NULL-free integer columns of one type with NumPy (the usual key) and
    anything else with Arrow's kernels: both say what the values say (NULL = NULL when asked)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(65, 300))  # (above the small-batch path)
    a = rng.integers(0, 4, n)
    b = rng.integers(0, 4, n)
    for nulls in (False, True):
        na = rng.random(n) < 0.2 if nulls else np.zeros(n, bool)
        nb = rng.random(n) < 0.2 if nulls else np.zeros(n, bool)
        for tb in (pa.int64(), pa.int32()):
            x = pa.table({"k": pa.array(a, pa.int64(), mask=na)})
            y = pa.table({"k": pa.array(b, tb, mask=nb)})
            want = [(u is None and v is None) or (u is not None and v is not None and u == v)
                    for u, v in zip(x.column(0).to_pylist(), y.column(0).to_pylist())]
            assert keys_equal(x, [0], y, [0]).tolist() == want


@pytest.mark.parametrize("seed", range(8))
def test_key_index_keys_come_back_in_slot_order_across_its_base_and_tail(seed):
    """KeyIndex keeps its key rows as one base chunk and a tail folded in when it reaches an
    eighth of the base (a take on several chunks would copy them all): after batches of new
    keys of every size (one at a time: the tail grows and folds; a big one: straight to the
    base), `keys` of any slots, in any order, from the base, the tail or both, are the keys."""
    from dataflow.operators.keyindex import KeyIndex

    rng = np.random.default_rng(seed)
    index = KeyIndex(2)
    known: list[tuple] = []
    for step in range(60):
        n = int(rng.choice([1, 2, 5, 70, 400]))
        a = rng.integers(0, 500, n)
        b = [f"s{int(x) % 7}" for x in rng.integers(0, 50, n)]
        slots = index.slots_for(pa.table({"c0": pa.array(a), "c1": pa.array(b)}))
        for s, key in zip(slots.tolist(), zip(a.tolist(), b)):
            if s == len(known):
                known.append(key)
            assert known[s] == key
        probe = rng.integers(0, len(known), int(rng.integers(0, 40)))
        got = index.keys(probe)
        assert list(zip(got.column(0).to_pylist(), got.column(1).to_pylist())) == [known[s] for s in probe.tolist()]
        assert index._keys.column(0).num_chunks <= 1
