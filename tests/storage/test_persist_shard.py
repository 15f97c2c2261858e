import threading
from decimal import Decimal

import pyarrow as pa
import pytest

from dataflow.errors import SqlError, SqlState
from dataflow.types import (BOOL, BYTEA, DATE, FLOAT8, INT4, INT8, INTERVAL, TEXT, TIMESTAMPTZ, arrow_schema,
                            numeric)
from persist_helpers import TYPES, as_counter, updates
from storage.persist import (PersistClient, ReadBeforeSince, ReadNotReady, SchemaMismatch, ShardDropped,
                             UpperMismatch)


@pytest.fixture
def client(tmp_path):
    return PersistClient.open_local(tmp_path)


def test_new_shard_is_empty_with_zero_frontiers(client):
    shard = client.open_shard("t1", TYPES)
    assert (shard.since(), shard.upper()) == (0, 0)
    with pytest.raises(ReadNotReady) as e:
        shard.snapshot(0)
    assert e.value.sqlstate == SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE
    assert isinstance(e.value, SqlError) and "upper is 0" in e.value.message


def test_append_and_snapshot_semantics(client):
    shard = client.open_shard("t1", TYPES)
    shard.compare_and_append(updates([(1, "a", 0, 1), (2, "b", 1, 1)]), 0, 2)
    shard.compare_and_append(updates([(1, "a", 3, -1), (1, "A", 3, 1), (2, "b", 4, 1)]), 2, 5)
    assert shard.upper() == 5
    assert as_counter(shard.snapshot(0)) == {(1, "a", 0): 1}
    assert as_counter(shard.snapshot(2)) == {(1, "a", 2): 1, (2, "b", 2): 1}
    assert as_counter(shard.snapshot(3)) == {(1, "A", 3): 1, (2, "b", 3): 1}
    assert as_counter(shard.snapshot(4)) == {(1, "A", 4): 1, (2, "b", 4): 2}
    assert shard.snapshot(4).schema == arrow_schema(TYPES)
    with pytest.raises(ReadNotReady):
        shard.snapshot(5)
    assert as_counter(shard.updates_between(2, 5)) == {(1, "a", 3): -1, (1, "A", 3): 1, (2, "b", 4): 1}
    assert as_counter(shard.updates_between(1, 2)) == {(2, "b", 1): 1}
    assert shard.updates_between(3, 3).num_rows == 0
    with pytest.raises(ReadNotReady):
        shard.updates_between(2, 6)


def test_empty_appends_advance_upper_without_growing_state(client):
    shard = client.open_shard("t1", TYPES)
    shard.compare_and_append(updates([]), 0, 10)
    shard.compare_and_append(updates([(7, "x", 10, 1)]), 10, 11)
    for u in range(11, 200, 10):
        shard.compare_and_append(updates([]), u, u + 10)
    state = shard.state()
    assert state.upper == 201 and len(state.batches) == 1
    assert (state.batches[0].lower, state.batches[0].upper) == (0, 201)
    assert as_counter(shard.snapshot(200)) == {(7, "x", 200): 1}


def test_append_validates_times_and_frontiers(client):
    shard = client.open_shard("t1", TYPES)
    with pytest.raises(ValueError, match="outside"):
        shard.compare_and_append(updates([(1, "a", 5, 1)]), 0, 5)
    with pytest.raises(ValueError, match="greater"):
        shard.compare_and_append(updates([]), 0, 0)
    with pytest.raises(ValueError, match="columns"):
        shard.compare_and_append(pa.table({"time": pa.array([0], pa.uint64()), "diff": [1]}), 0, 1)
    assert shard.upper() == 0


def test_upper_mismatch_between_two_clients(tmp_path):
    a = PersistClient.open_local(tmp_path).open_shard("t1", TYPES)
    b = PersistClient.open_local(tmp_path).open_shard("t1", TYPES)
    a.compare_and_append(updates([(1, "a", 0, 1)]), 0, 3)
    with pytest.raises(UpperMismatch) as e:
        b.compare_and_append(updates([(2, "b", 0, 1)]), 0, 3)
    assert e.value.actual_upper == 3
    b.compare_and_append(updates([(2, "b", 3, 1)]), 3, 4)
    assert as_counter(a.snapshot(3)) == {(1, "a", 3): 1, (2, "b", 3): 1}
    # the loser's part was never made visible and was cleaned up
    assert len(list((tmp_path / "blob" / "t1").iterdir())) == 2


def test_racing_writers_each_time_written_exactly_once(tmp_path):
    shards = [PersistClient.open_local(tmp_path).open_shard("t1", TYPES) for _ in range(3)]
    wins = [[] for _ in shards]

    def writer(i: int) -> None:
        shard = shards[i]
        for _ in range(15):
            while True:
                upper = shard.upper()
                try:
                    shard.compare_and_append(updates([(i, "w", upper, 1)]), upper, upper + 1)
                    wins[i].append(upper)
                    break
                except UpperMismatch as e:
                    assert e.actual_upper > upper

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = sorted(t for w in wins for t in w)
    assert times == list(range(45))
    snap = as_counter(shards[0].updates_between(0, 45))
    assert snap == {(i, "w", t): 1 for i, w in enumerate(wins) for t in w}


def test_since_semantics(client):
    shard = client.open_shard("t1", TYPES)
    shard.compare_and_append(updates([(1, "a", 0, 1), (1, "a", 2, -1), (2, "b", 3, 1)]), 0, 5)
    shard.downgrade_since(3)
    shard.downgrade_since(1)  # never goes backward
    assert shard.since() == 3
    with pytest.raises(ReadBeforeSince) as e:
        shard.snapshot(2)
    assert e.value.sqlstate == SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE and "compacted up to 3" in e.value.message
    with pytest.raises(ReadBeforeSince):
        shard.updates_between(2, 4)
    assert as_counter(shard.snapshot(3)) == {(2, "b", 3): 1}
    assert as_counter(shard.updates_between(4, 5)) == {}
    # lower == since: history before since reads as at since, compacted or not
    before = as_counter(shard.updates_between(3, 5))
    assert before == {(2, "b", 3): 1}
    shard.compare_and_append(updates([(9, "z", 5, 1)]), 5, 6)
    shard.compact(max_batches=1)
    assert as_counter(shard.updates_between(3, 5)) == before


def test_durability_across_reopen(tmp_path):
    shard = PersistClient.open_local(tmp_path).open_shard("t1", TYPES)
    shard.compare_and_append(updates([(1, "a", 0, 1), (2, "b", 1, 1)]), 0, 2)
    shard.downgrade_since(1)
    reopened = PersistClient.open_local(tmp_path).open_shard("t1", TYPES)
    assert (reopened.since(), reopened.upper()) == (1, 2)
    assert as_counter(reopened.snapshot(1)) == {(1, "a", 1): 1, (2, "b", 1): 1}


def test_open_with_other_types_is_rejected(client):
    client.open_shard("t1", TYPES)
    with pytest.raises(SchemaMismatch) as e:
        client.open_shard("t1", [INT8])
    assert e.value.sqlstate == SqlState.DATATYPE_MISMATCH
    with pytest.raises(ValueError):
        client.open_shard("a/b", TYPES)


def test_drop_shard_tombstones_and_deletes_parts(tmp_path, client):
    shard = client.open_shard("t1", TYPES)
    other = client.open_shard("t10", TYPES)
    shard.compare_and_append(updates([(1, "a", 0, 1)]), 0, 1)
    other.compare_and_append(updates([(1, "a", 0, 1)]), 0, 1)
    client.blob.set("t1/orphan.parquet", b"garbage from a crashed writer")
    assert client.list_shards() == ["t1", "t10"]
    client.drop_shard("t1")
    client.drop_shard("t1")  # idempotent
    assert client.blob.list_keys("t1/") == []
    assert client.list_shards() == ["t10"]
    with pytest.raises(ShardDropped) as e:
        shard.upper()
    assert e.value.sqlstate == SqlState.UNDEFINED_OBJECT
    with pytest.raises(ShardDropped):
        client.open_shard("t1", TYPES)
    assert as_counter(other.snapshot(0)) == {(1, "a", 0): 1}


def _every_type_batch() -> tuple[list, pa.Table]:
    import datetime as dt
    types = [BOOL, INT4, FLOAT8, numeric(10, 2), TIMESTAMPTZ, DATE, TEXT, INTERVAL, BYTEA]
    schema = arrow_schema(types)
    row = [True, 7, 1.5, Decimal("12.34"), dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
           dt.date(2024, 1, 2), "héllo", pa.MonthDayNano([1, 2, 3000]), b"\x00\xff"]
    nulls = [None] * len(types)
    cols = [pa.array([a, b], f.type) for a, b, f in zip(row, nulls, schema)]
    batch = pa.Table.from_arrays(cols + [pa.array([0, 0], pa.uint64()), pa.array([1, 2], pa.int64())],
                                 schema=schema)
    return types, batch


def _rows(table: pa.Table) -> list:
    return sorted(table.to_pylist(), key=lambda r: r["diff"])


def test_all_column_types_roundtrip_through_blob_parts(tmp_path):
    types, batch = _every_type_batch()
    PersistClient.open_local(tmp_path).open_shard("t", types).compare_and_append(batch, 0, 1)
    assert [k for k in PersistClient.open_local(tmp_path).blob.list_keys("t/")]  # a blob part, not inline
    fresh = PersistClient.open_local(tmp_path).open_shard("t", types)  # no cache: decoded from the blob
    snap = fresh.snapshot(0)
    assert snap.schema == batch.schema
    assert _rows(snap) == _rows(batch)


def test_parts_written_as_parquet_by_earlier_versions_are_read(tmp_path):
    """Parts were Parquet files before they were Arrow IPC: a data directory written then is
    still readable (intervals were stored as their 16 raw bytes)."""
    import io

    import pyarrow.parquet as pq

    from storage.persist import PartDesc
    types, batch = _every_type_batch()
    raw = batch.set_column(7, pa.field("c7", pa.binary(16)), batch.column(7).combine_chunks().view(pa.binary(16)))
    buf = io.BytesIO()
    pq.write_table(raw, buf, compression="zstd")
    client = PersistClient.open_local(tmp_path)
    shard = client.open_shard("t", types)
    client.blob.set("t/0000000000000-old.parquet", buf.getvalue())
    shard.append_part(PartDesc("t/0000000000000-old.parquet", batch.num_rows, 0, 0), 0, 1)
    snap = PersistClient.open_local(tmp_path).open_shard("t", types).snapshot(0)
    assert snap.schema == batch.schema
    assert _rows(snap) == _rows(batch)


def test_partitioned_snapshots_split_rows_disjointly(client):
    shard = client.open_shard("t1", TYPES)
    shard.compare_and_append(updates([(i, f"r{i}", 0, 1) for i in range(200)]), 0, 1)
    full = as_counter(shard.snapshot(0))
    parts = [as_counter(shard.snapshot(0, partition=(i, 3))) for i in range(3)]
    assert all(p for p in parts)
    assert sum(parts, start=type(full)()) == full
    assert sum(len(p) for p in parts) == len(full)
    assert parts[1] == as_counter(shard.snapshot(0, partition=(1, 3)))  # deterministic


def test_wait_for_upper(client):
    shard = client.open_shard("t1", TYPES)
    timer = threading.Timer(0.05, lambda: shard.compare_and_append(updates([]), 0, 4))
    timer.start()
    assert shard.wait_for_upper(2, timeout=5) == 4
    with pytest.raises(TimeoutError):
        shard.wait_for_upper(10, timeout=0.05)


def test_append_from_a_stale_known_state_retries_on_the_head(client):
    """A handle starts its compare-and-set from the state it last saw; when another handle
    changed the shard since (a since downgrade: same upper, newer version), the CAS fails and
    the append is made on the head, keeping the other handle's change. When the other handle
    moved the upper, the append is refused and its part is not left behind."""
    a = client.open_shard("t1", TYPES)
    b = client.open_shard("t1", TYPES)
    a.compare_and_append(updates([(1, "a", 0, 1)]), 0, 1)
    b.compare_and_append(updates([(2, "b", 1, 1)]), 1, 2)  # b now knows upper 2
    a.downgrade_since(1)  # a new version, upper still 2
    b.compare_and_append(updates([(3, "c", 2, 1)]), 2, 3)  # from b's stale state: retried
    state = client.open_shard("t1", TYPES).state()
    assert (state.since, state.upper) == (1, 3)
    assert as_counter(a.snapshot(2)) == {(1, "a", 2): 1, (2, "b", 2): 1, (3, "c", 2): 1}
    a.compare_and_append(updates([(4, "d", 3, 1)]), 3, 4)
    keys_before = set(client.blob.list_keys(""))
    with pytest.raises(UpperMismatch):
        b.compare_and_append(updates([(5, "e", 3, 1)]), 3, 4)  # b's known upper is stale
    assert set(client.blob.list_keys("")) == keys_before
    assert as_counter(b.snapshot(3)) == {(1, "a", 3): 1, (2, "b", 3): 1, (3, "c", 3): 1, (4, "d", 3): 1}
