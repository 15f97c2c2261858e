"""Persist: durable partially-ordered time-varying collections (pTVCs) as blob parts plus consensus state.

A shard's state (since, upper, batches) lives in consensus and changes only by compare-and-set;
its updates live in immutable parts (Arrow IPC files) in blob storage. See `shard.py` for the read/write API.

Layout: consensus key `shard/<shard_id>` holds the JSON `ShardState` (versioned by seqno); blob key
`<shard_id>/<13-digit write millis>-<uuid>.arrow` holds one part with columns c0..cN-1, time, diff
(`dataflow.types.arrow_schema`). Writes: part to blob (durable), then CAS the state; a crash in
between leaves an unreferenced part that `PersistClient.collect_garbage` removes later.
A write spanning several shards commits through the transaction WAL (`txn.py`, consensus key
`txns/wal`): one compare-and-set is its commit point, then each shard is appended to.
"""

from .blob import Blob, LocalBlob
from .client import PersistClient
from .consensus import Consensus, SqliteConsensus, VersionedData
from .errors import ReadBeforeSince, ReadNotReady, SchemaMismatch, ShardDropped, UpperMismatch
from .shard import Shard
from .state import BatchDesc, PartDesc, ShardState
from .txn import TxnEntry, TxnWal

__all__ = [
    "Blob", "LocalBlob", "Consensus", "SqliteConsensus", "VersionedData", "PersistClient", "Shard",
    "UpperMismatch", "ReadBeforeSince", "ReadNotReady", "ShardDropped", "SchemaMismatch",
    "ShardState", "BatchDesc", "PartDesc", "TxnWal", "TxnEntry",
]
