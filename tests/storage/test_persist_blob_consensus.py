import threading

import pytest

from storage.persist import LocalBlob, SqliteConsensus, VersionedData


def test_local_blob_roundtrip_and_listing(tmp_path):
    blob = LocalBlob(tmp_path)
    blob.set("s1/a.parquet", b"one")
    blob.set("s1/b.parquet", b"two")
    blob.set("s10/c.parquet", b"three")
    blob.set("s1/a.parquet", b"uno")  # overwrite is atomic too
    assert blob.get("s1/a.parquet") == b"uno"
    assert blob.get("missing") is None
    assert blob.list_keys("s1/") == ["s1/a.parquet", "s1/b.parquet"]
    assert blob.list_keys("s1") == ["s1/a.parquet", "s1/b.parquet", "s10/c.parquet"]
    blob.delete("s1/a.parquet")
    blob.delete("s1/a.parquet")  # idempotent
    assert blob.list_keys("s1/") == ["s1/b.parquet"]
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]
    with pytest.raises(ValueError):
        blob.set("../escape", b"x")


def test_sqlite_consensus_cas_semantics(tmp_path):
    c = SqliteConsensus(tmp_path / "c.sqlite")
    assert c.head("k") is None
    assert c.compare_and_set("k", None, VersionedData(1, b"a"))
    assert not c.compare_and_set("k", None, VersionedData(1, b"b"))
    assert not c.compare_and_set("k", 0, VersionedData(2, b"b"))
    assert c.compare_and_set("k", 1, VersionedData(2, b"b"))
    assert c.head("k") == VersionedData(2, b"b")
    with pytest.raises(ValueError):
        c.compare_and_set("k", 2, VersionedData(2, b"c"))
    assert c.compare_and_set("k", 2, VersionedData(3, b"c"))
    assert c.truncate("k", 3) == 2
    assert c.head("k") == VersionedData(3, b"c")
    with pytest.raises(ValueError):
        c.truncate("k", 4)  # would drop the head
    c.compare_and_set("other", None, VersionedData(1, b""))
    assert c.scan("k") == ["k"] and c.scan("") == ["k", "other"]
    # A second connection to the same file sees everything.
    assert SqliteConsensus(tmp_path / "c.sqlite").head("k") == VersionedData(3, b"c")


def test_sqlite_consensus_concurrent_cas_exactly_one_winner_per_seqno(tmp_path):
    path = tmp_path / "c.sqlite"
    clients = [SqliteConsensus(path) for _ in range(4)]
    wins = [0] * 4

    def bump(i: int) -> None:
        c = clients[i]
        for _ in range(50):
            while True:
                head = c.head("ctr")
                seq = head.seqno if head else None
                n = int(head.data) if head else 0
                if c.compare_and_set("ctr", seq, VersionedData((seq or 0) + 1, str(n + 1).encode())):
                    wins[i] += 1
                    break

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    head = clients[0].head("ctr")
    assert sum(wins) == 200 and int(head.data) == 200 and head.seqno == 200
