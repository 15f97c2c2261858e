"""What every source shares: its outputs, its options, and deterministic per-tick generation.

A *source* is a set of output relations (each a persist shard, readable like a table) written by
an ingestion task (`storage/sources/controller.py`) that appends at timestamps from the same
timestamp oracle as tables, through the coordinator's write path: one write per batch of ticks,
every output's updates and the source's *progress* (the offset of the next tick) at one
timestamp. The progress relation is appended last, so after a crash the committed offset never
claims a tick whose data is missing.

Load generators are pure functions of (options, tick range): `generate(a, b)` returns the
updates of ticks [a, b) for every output, the same whichever way the range is split, because
every random value is a counter-based hash of (seed, tick, stream, index) computed over NumPy
arrays, never a stateful RNG. That is what makes a restart continue exactly where it stopped.

    gen = make_generator("counter", LoadGenOptions(tick_ms=1000))
    gen.generate(0, 3)["counter"]   # counter = 1, 2, 3 (diff +1)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pyarrow as pa

from dataflow.types import Column, SqlType, arrow_schema


@dataclass(frozen=True)
class LoadGenOptions:
    """The options of `FROM LOAD GENERATOR kind (...)`; base_ms is the wall-clock time of tick 0
    (fixed at CREATE SOURCE and stored with the source's definition)."""

    tick_ms: int = 1000
    as_of: int = 0
    up_to: int | None = None
    scale_factor: float = 0.01
    max_cardinality: int | None = None
    seed: int = 0
    base_ms: int = 0

    def to_json(self) -> dict:
        return {"tick_ms": self.tick_ms, "as_of": self.as_of, "up_to": self.up_to,
                "scale_factor": self.scale_factor, "max_cardinality": self.max_cardinality,
                "seed": self.seed, "base_ms": self.base_ms}

    @classmethod
    def from_json(cls, d: dict) -> "LoadGenOptions":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def with_base(self, base_ms: int) -> "LoadGenOptions":
        return replace(self, base_ms=base_ms)


@dataclass(frozen=True)
class Output:
    """One relation a source writes. `name` None: the source itself (COUNTER's single output)."""

    name: str | None
    columns: tuple[Column, ...]

    @property
    def types(self) -> tuple[SqlType, ...]:
        return tuple(c.type for c in self.columns)


def col(name: str, t: SqlType, nullable: bool = False) -> Column:
    return Column(name, t, nullable)


class Generator:
    """A load generator: its outputs and the updates of any range of ticks."""

    kind: ClassVar[str] = ""
    # Options this generator accepts besides TICK INTERVAL, AS OF, UP TO.
    accepts: ClassVar[frozenset[str]] = frozenset()
    single_output: ClassVar[bool] = False  # COUNTER: the source itself is the relation

    def __init__(self, options: LoadGenOptions) -> None:
        self.options = options

    def outputs(self) -> list[Output]:
        raise NotImplementedError

    def growing(self) -> frozenset[str | None]:
        """The outputs that only ever gain rows: a RETENTION WINDOW retracts their old rows
        (storage/sources/retention.py). None names the source itself (COUNTER)."""
        return frozenset()

    def generate(self, start: int, end: int) -> dict[str | None, pa.Table]:
        """Updates (row columns + time 0 + diff) of ticks [start, end), by output name."""
        raise NotImplementedError

    # -- time of a tick -------------------------------------------------------------------------

    def due_ms(self, tick: np.ndarray | int) -> np.ndarray | int:
        """When a tick is due (and the time its rows carry): ticks up to AS OF are the initial
        snapshot, due at tick 0's time; later ones one TICK INTERVAL apart."""
        o = self.options
        return o.base_ms + np.maximum(np.asarray(tick, dtype=np.int64) - o.as_of, 0) * o.tick_ms

    def first_batch_end(self) -> int:
        """The initial snapshot covers ticks [0, AS OF]."""
        return self.options.as_of + 1


# -- counter-based randomness --------------------------------------------------------------------

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> np.uint64(30))
    z = z * _M1
    z = z ^ (z >> np.uint64(27))
    z = z * _M2
    return z ^ (z >> np.uint64(31))


def rand_u64(seed: int, ticks: np.ndarray, stream: int, index: np.ndarray | int = 0) -> np.ndarray:
    """A 64-bit pseudo-random value per (seed, tick, stream, index), vectorised (splitmix64 over
    a combination of the four). The same inputs always give the same value."""
    with np.errstate(over="ignore"):
        t = np.asarray(ticks).astype(np.uint64)
        i = np.asarray(index).astype(np.uint64)
        z = _mix(np.uint64(seed) * _GOLD + np.uint64(stream + 1))
        z = _mix(z ^ (t * _GOLD))
        return _mix(z ^ ((i + np.uint64(1)) * _M1))


def rand_int(seed: int, ticks, stream: int, low: int, high: int, index=0) -> np.ndarray:
    """Uniform integers in [low, high)."""
    return (rand_u64(seed, ticks, stream, index) % np.uint64(high - low)).astype(np.int64) + low


def rand_unit(seed: int, ticks, stream: int, index=0) -> np.ndarray:
    """Uniform floats in [0, 1)."""
    return (rand_u64(seed, ticks, stream, index) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


# -- building update batches ---------------------------------------------------------------------

def updates(types: tuple[SqlType, ...], columns: list, diff: np.ndarray | int = 1) -> pa.Table:
    """An update batch (times 0: the write assigns them) from column arrays."""
    n = len(columns[0]) if columns else 0
    arrays = [c if isinstance(c, (pa.Array, pa.ChunkedArray)) else pa.array(c, type=t.arrow)
              for c, t in zip(columns, types)]
    arrays = [a.cast(t.arrow) if a.type != t.arrow else a for a, t in zip(arrays, types)]
    d = np.full(n, diff, dtype=np.int64) if np.isscalar(diff) else np.asarray(diff, dtype=np.int64)
    return pa.Table.from_arrays(arrays + [pa.array(np.zeros(n, np.uint64)), pa.array(d)],
                                schema=arrow_schema(list(types)))


def timestamps(ms: np.ndarray) -> pa.Array:
    """timestamptz values from epoch milliseconds."""
    return pa.array(np.asarray(ms, dtype=np.int64) * 1000, type=pa.int64()).cast(pa.timestamp("us", tz="UTC"))


def empty(types: tuple[SqlType, ...]) -> pa.Table:
    return arrow_schema(list(types)).empty_table()


@dataclass
class SourceStatistics:
    """What mz_source_statistics / mz_source_statuses show of one source (since this start)."""

    id: str
    messages_received: int = 0  # ticks generated
    updates_staged: int = 0
    updates_committed: int = 0
    bytes_received: int = 0
    offset_known: int = 0
    offset_committed: int = 0
    snapshot_committed: bool = False
    write_frontier: int = 0  # the timestamp after the last committed batch
    lag_ms: int = 0  # commit time minus the due time of the batch's last tick
    status: str = "starting"  # starting | running | stalled | paused | dropped
    error: str | None = None
    last_status_change_ms: int = 0
    per_output: dict = field(default_factory=dict)
