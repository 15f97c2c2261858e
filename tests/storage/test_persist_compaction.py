"""Compaction must never change what any readable time sees, and must bound upsert-like shards."""

import random
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persist_helpers import TYPES, as_counter, brute_snapshot, updates
from storage.persist import PersistClient
from storage.persist.compaction import plan_merges


def brute_between(history: list[tuple], since: int, lower: int, upper: int) -> Counter:
    acc: Counter = Counter()
    for c0, c1, t, d in history:
        t = max(t, since)
        if lower <= t < upper:
            acc[(c0, c1, t)] += d
    return Counter({k: v for k, v in acc.items() if v != 0})


update_rows = st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", None]), st.integers(0, 3), st.sampled_from([-1, 1, 2])),
    max_size=6,
)
append_op = st.tuples(st.just("append"), update_rows, st.integers(1, 4))
op = st.one_of(
    append_op,
    append_op,
    st.tuples(st.just("since"), st.integers(0, 3)),
    st.tuples(st.just("compact"), st.integers(1, 8)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=40))
def test_compaction_preserves_every_readable_snapshot(ops):
    with tempfile.TemporaryDirectory() as d:
        shard = PersistClient.open_local(Path(d), auto_compact_batches=3).open_shard("s", TYPES)
        history: list[tuple] = []
        for o in ops:
            if o[0] == "append":
                _, rows, width = o
                upper = shard.upper()
                batch = [(c0, c1, upper + dt % width, diff) for c0, c1, dt, diff in rows]
                shard.compare_and_append(updates(batch), upper, upper + width)
                history.extend(batch)
            elif o[0] == "since":
                shard.downgrade_since(min(shard.upper(), shard.since() + o[1]))
            else:
                shard.compact(max_batches=o[1])
        since, upper = shard.since(), shard.upper()
        for t in range(since, upper):
            assert as_counter(shard.snapshot(t)) == brute_snapshot(history, t), t
        for lower in range(since, upper):
            assert as_counter(shard.updates_between(lower, upper)) == brute_between(history, since, lower, upper)
        # a fresh client (cold cache, parts from Parquet) agrees
        cold = PersistClient.open_local(Path(d)).open_shard("s", TYPES)
        if since < upper:
            assert as_counter(cold.snapshot(upper - 1)) == brute_snapshot(history, upper - 1)
        live = cold.state().part_keys
        assert set(cold.client.blob.list_keys("s/")) == live  # replaced parts were deleted


def test_upsert_stream_stays_proportional_to_keys(tmp_path):
    rng = random.Random(7)
    keys = 20
    shard = PersistClient.open_local(tmp_path).open_shard("u", TYPES)
    value = {k: 0 for k in range(keys)}
    shard.compare_and_append(updates([(k, "v0", 0, 1) for k in range(keys)]), 0, 1)
    written, peak = keys, 0
    for t in range(1, 400):
        batch = []
        for k in rng.sample(range(keys), 5):
            batch += [(k, f"v{value[k]}", t, -1), (k, f"v{value[k] + 1}", t, 1)]
            value[k] += 1
        shard.compare_and_append(updates(batch), t, t + 1)
        shard.downgrade_since(t)
        shard.compact()
        written += len(batch)
        state = shard.state()
        peak = max(peak, sum(b.rows for b in state.batches))
        assert len(state.batches) <= 9
    assert written == 20 + 399 * 10
    assert peak <= 8 * keys, peak  # vs 4010 rows written
    assert as_counter(shard.snapshot(399)) == {(k, f"v{v}", 399): 1 for k, v in value.items()}


def test_append_only_keeps_logarithmically_many_batches(tmp_path):
    shard = PersistClient.open_local(tmp_path).open_shard("a", TYPES)
    for t in range(300):
        shard.compare_and_append(updates([(t, "x", t, 1)]), t, t + 1)
    state = shard.state()
    assert len(state.batches) <= 17  # auto-compaction kicks in above 16
    assert sum(b.rows for b in state.batches) == 300
    assert shard.snapshot(299).num_rows == 300


def test_plan_merges_is_geometric():
    assert plan_merges([]) == []
    assert plan_merges([5]) == []
    assert plan_merges([100, 10]) == []
    assert plan_merges([10, 10]) == [(0, 2)]
    assert plan_merges([0, 100]) == [(0, 2)]
    assert plan_merges([1000, 100, 10, 1, 1]) == [(3, 5)]
    assert plan_merges([2 ** (11 - i) for i in range(12)]) == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12)]
    assert plan_merges([3 ** (11 - i) for i in range(12)], max_batches=8) == [(7, 12)]


def test_concurrent_writer_compactor_and_readers_agree_with_history(tmp_path):
    """Compaction racing appends and reads (separate clients, as separate processes would be):
    no append is lost, and every snapshot a reader takes equals the brute-force result."""
    import threading

    writer = PersistClient.open_local(tmp_path, auto_compact_batches=None).open_shard("c", TYPES)
    compactor = PersistClient.open_local(tmp_path).open_shard("c", TYPES)
    reader = PersistClient.open_local(tmp_path).open_shard("c", TYPES)
    history: list[tuple] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        rng = random.Random(1)
        for t in range(120):
            batch = [(rng.randrange(10), "k", t, 1), (rng.randrange(10), "k", t, -1)]
            history.extend(batch)  # before the append, so readers never see unknown updates
            writer.compare_and_append(updates(batch), t, t + 1)
            if t % 10 == 9:
                writer.downgrade_since(t - 5)
        done.set()

    def compact() -> None:
        while not done.is_set():
            compactor.compact(max_batches=2)

    def read() -> None:
        try:
            while not done.is_set():
                state = reader.state()
                if state.upper == 0:
                    continue
                as_of = state.upper - 1
                try:
                    got = as_counter(reader.snapshot(as_of))
                except Exception as e:  # since may pass as_of between state() and snapshot()
                    if "compacted" in str(e):
                        continue
                    raise
                assert got == brute_snapshot(history, as_of)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (write, compact, read)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not errors, errors[0]
    assert as_counter(reader.snapshot(119)) == brute_snapshot(history, 119)
    assert set(reader.client.blob.list_keys("c/")) == reader.state().part_keys


def test_parts_are_written_as_one_record_batch_whatever_the_chunks(tmp_path):
    """A merge concatenates its inputs' tables, so a part written as it came would have as many
    record batches as the parts it merged, and the next merge more again: at 1M orders a
    138k-row part took ~220 ms to write (lz4 per record batch and column) instead of ~20 ms."""
    from storage.persist.parts import decode_part
    from persist_helpers import SCHEMA

    client = PersistClient.open_local(tmp_path, auto_compact_batches=None)
    shard = client.open_shard("c", TYPES)
    history = []
    for t in range(40):
        rows = [(t * 10 + i, "x" * (i % 3), t, 1) for i in range(10)]
        history += rows
        shard.compare_and_append(updates(rows), t, t + 1)
    shard.compact(max_batches=1)
    for step in range(3):  # merged parts merged again
        for t in range(40 + 4 * step, 44 + 4 * step):
            rows = [(t * 10, "y", t, 1)]
            history += rows
            shard.compare_and_append(updates(rows), t, t + 1)
        shard.compact(max_batches=1)
    state = shard.state()
    keys = state.part_keys
    assert keys
    for key in keys:
        part = decode_part(client.blob.get(key), SCHEMA)
        assert part.column(0).num_chunks == 1, key
    cold = PersistClient.open_local(tmp_path).open_shard("c", TYPES)
    upper = state.upper
    assert as_counter(cold.snapshot(upper - 1)) == brute_snapshot(history, upper - 1)


def test_a_compacted_part_is_cached_with_its_rows_hashes(tmp_path):
    """Compaction keeps each part it writes cached with the rows' hashes, so the next merge of
    that part does not hash its rows again; the kept hashes are exactly the rows' hashes (in the
    part's row order), through merges that cancel rows, and the result reads like the history."""
    from dataflow.batch import row_hashes

    client = PersistClient.open_local(tmp_path, auto_compact_batches=None)
    shard = client.open_shard("h", TYPES)
    history = []
    for t in range(30):
        rows = [(t * 10 + i, "x" * (i % 3), t, 1) for i in range(10)]
        if t % 3 == 2:  # retract some earlier rows: merges cancel them
            rows += [((t - 2) * 10 + i, "x" * (i % 3), t, -1) for i in range(0, 10, 2)]
        history += rows
        shard.compare_and_append(updates(rows), t, t + 1)
        if t % 5 == 4:
            shard.compact(max_batches=2)
            for batch in shard.state().batches:
                for part in batch.parts:
                    table, kept = client.cache.get(part.key), client.cache.hashes(part.key)
                    if kept is not None:
                        assert kept.tolist() == row_hashes(table).tolist(), part.key
    assert any(client.cache.hashes(p.key) is not None for b in shard.state().batches for p in b.parts)
    upper = shard.upper()
    assert as_counter(shard.snapshot(upper - 1)) == brute_snapshot(history, upper - 1)
    cold = PersistClient.open_local(tmp_path).open_shard("h", TYPES)  # no hashes cached
    cold.compact(max_batches=1)
    assert as_counter(cold.snapshot(upper - 1)) == brute_snapshot(history, upper - 1)


def test_an_append_keeps_the_hashes_its_writer_consolidated_with(tmp_path):
    """A writer that consolidated its batch with `consolidate_hashed` hands the hashes to the
    append, which caches them with the part (its first merge does not hash it); hashes of a
    batch that is cast on the way in, or of the wrong length, are not kept."""
    from dataflow.batch import consolidate_hashed

    client = PersistClient.open_local(tmp_path, auto_compact_batches=None)
    shard = client.open_shard("k", TYPES)
    history = []

    def at(t):
        rows = [(i, "y" * (i % 4), t, 1) for i in range(100)]
        history.extend(rows)
        return consolidate_hashed(updates(rows))

    batch, hashes = at(0)
    shard.compare_and_append(batch, 0, 1, consolidated=True, hashes=hashes)
    (part,) = shard.state().batches[-1].parts
    assert client.cache.hashes(part.key).tolist() == hashes.tolist()
    batch, hashes = at(1)
    shard.compare_and_append(batch, 1, 2, consolidated=True, hashes=hashes[:-1])  # wrong length
    (part,) = shard.state().batches[-1].parts
    assert client.cache.hashes(part.key) is None
    batch, hashes = at(2)
    renamed = batch.rename_columns([f"x{i}" for i in range(batch.num_columns)])  # conformed: a new table
    shard.compare_and_append(renamed, 2, 3, consolidated=True, hashes=hashes)
    (part,) = shard.state().batches[-1].parts
    assert client.cache.hashes(part.key) is None
    shard.compact(max_batches=1)
    assert as_counter(shard.snapshot(2)) == brute_snapshot(history, 2)
