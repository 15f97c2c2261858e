"""Messages between the compute controller (in environmentd) and dataflow workers.

Commands flow controller -> worker, in the same order to every worker, so that all workers make
the same sequence of steps (each step's exchanges then line up across workers without further
coordination). Responses flow worker -> controller.

A session, in order:
    worker:     Hello(index, count)
    controller: ImportCollection("u1", types, upper=5)      # worker reads its part from persist
    controller: CreateDataflow("t3", plan, as_of=4, sink="subscribe")
    controller: AdvanceUpper({"u1": batch}, ("u1", "u2"), upper=9)   # a table write at time 8
    worker:     DataflowOutput("t3", index, batch, upper=9, errors=[])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from dataflow.errors import SqlError
from dataflow.fast_peek import FastPeekPlan
from dataflow.plan import Plan
from dataflow.types import SqlType


# -- controller -> worker ---------------------------------------------------------------------

@dataclass
class ImportCollection:
    """Start holding collection `id` (a table's or materialized view's shard): read this worker's
    part of the shard's contents from persist; its upper is `upper` from now on."""

    id: str
    types: tuple[SqlType, ...]
    upper: int


@dataclass
class DropCollection:
    id: str


@dataclass
class AdvanceUpper:
    """Append updates (this worker's part, times in [old upper, upper)) to some collections and
    advance the upper of every collection in `ids` to `upper`; then step what can step."""

    updates: dict[str, pa.Table]
    ids: tuple[str, ...]
    upper: int
    # The updates are the whole of the write, the same on every worker (a small one): each
    # worker keeps its own part (`batch.partition_rows`), and may feed the whole to a dataflow's
    # first exchange, which then partitions it locally instead of exchanging.
    whole: bool = False


@dataclass
class CreateDataflow:
    """Build and run a dataflow. sink: 'subscribe' (every step's output goes to the controller),
    'index' (output stays in the worker as collection `id`, readable by other dataflows and peeks),
    'persist' (a materialized view: like 'index', and the output also goes to the controller, which
    writes it to the shard of `id`), 'peek' (one step at `as_of`, result sent as a PeekResult, then
    dropped)."""

    id: str
    plan: Plan
    as_of: int
    sink: str
    until: int | None = None  # stop after the frontier passes this time (SUBSCRIBE ... UP TO)
    # Rebuilds the dataflow of an existing collection `id` (one that hit an evaluation error):
    # its first output is turned into the correction from the collection's current contents.
    replaces: bool = False
    generation: int = 0  # counts rebuilds of `id`; echoed in its DataflowOutputs


@dataclass
class DropDataflow:
    id: str


@dataclass
class FastPeek:
    """One worker's part of a fast-path peek (see dataflow.fast_peek): answered from the
    collection or index `plan.source` as of `as_of`, without a dataflow."""

    id: str
    plan: FastPeekPlan
    as_of: int


@dataclass
class FastPeeks:
    """The fast-path peeks for one worker sent in one message. Unlike every other command they
    go only to the workers that hold the rows and step nothing, so workers need not see them
    alike; each is answered (in one `PeekResults` per batch of answers) once its collection's
    upper passes its time. A DropDataflow of a peek's id forgets it if it is still waiting."""

    peeks: list[FastPeek]


@dataclass
class Shutdown:
    pass


# -- worker -> controller ---------------------------------------------------------------------

@dataclass
class Hello:
    index: int
    count: int


@dataclass
class DataflowOutput:
    id: str
    worker: int
    batch: pa.Table | None  # None: no updates (only the upper moved), nothing to (un)pickle
    upper: int
    errors: list[SqlError] = field(default_factory=list)
    generation: int = 0  # the CreateDataflow's: outputs of a replaced dataflow still in flight are dropped
    as_of: int = 0  # the time the dataflow started at here (its command's, or later if that was compacted)


@dataclass
class Messages:
    """What a worker said while handling one command (its dataflows' outputs, answers to
    peeks, Stepped), in order, in one frame: one read and one unpickling for the controller
    instead of one per message."""

    messages: list[object]


@dataclass
class PeekResult:
    """A worker's answer to a peek: its rows (`batch`) or its error. In a `PeekResults`, `part`
    = (i, offset, length) says the rows are that slice of the message's `tables[i]` instead
    (answers computed together travel as one table: pickling costs per table)."""

    id: str
    worker: int
    batch: pa.Table | None
    error: SqlError | None = None
    part: tuple[int, int, int] | None = None


@dataclass
class PeekResults:
    """Several workers' answers to fast-path peeks, in one message."""

    results: list[PeekResult]
    tables: list[pa.Table] = field(default_factory=list)

    def answers(self) -> list[PeekResult]:
        """The results, each with its own rows (slices of `tables` put in place)."""
        for r in self.results:
            if r.part is not None:
                i, offset, length = r.part
                r.batch, r.part = self.tables[i].slice(offset, length), None
        return self.results


@dataclass
class Stepped:
    """The worker has applied the AdvanceUpper to `upper` (its dataflows have stepped): the
    controller sends the next one only then, merging the ones that came meanwhile (see
    ComputeController.advance)."""

    worker: int
    upper: int


@dataclass
class Imported:
    """The worker has read its part of an imported collection (ImportCollection) from persist:
    until every worker has, the shard's history back to the import's upper must stay readable
    (the controller's `import_hold`)."""

    id: str
    worker: int


@dataclass
class WorkerError:
    """The worker hit an internal error it cannot recover from; the controller restarts the replica."""

    worker: int
    message: str
