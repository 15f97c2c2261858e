"""Persist: durable partially-ordered time-varying collections (pTVCs) as blob parts plus consensus state.

A shard's state (since, upper, batches) lives in consensus and changes only by compare-and-set;
its updates live in immutable Parquet parts in blob storage. See `shard.py` for the read/write API.
"""

from .blob import Blob, LocalBlob
from .client import PersistClient
from .consensus import Consensus, SqliteConsensus, VersionedData
from .errors import ReadBeforeSince, ReadNotReady, SchemaMismatch, ShardDropped, UpperMismatch
from .shard import Shard
from .state import BatchDesc, PartDesc, ShardState

__all__ = [
    "Blob", "LocalBlob", "Consensus", "SqliteConsensus", "VersionedData", "PersistClient", "Shard",
    "UpperMismatch", "ReadBeforeSince", "ReadNotReady", "ShardDropped", "SchemaMismatch",
    "ShardState", "BatchDesc", "PartDesc",
]
