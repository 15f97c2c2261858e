"""A dataflow that fails on one worker fails on every worker of the replica at once.

Two real workers joined by the real peer network (TCP on loopback), each serving its commands in
its own thread. Worker 0's dataflow raises in the middle of a step (an engine bug stands in for
it: correct code raises none), while worker 1 waits in that step's exchange for worker 0's part.
Before, worker 1 waited out the exchange timeout (two minutes) and readers with it; now worker 0
tells its peers and both report the failure at once, while the replica keeps serving other
dataflows.
"""

from __future__ import annotations

import threading
from pathlib import Path

from dataflow.errors import SqlError, SqlState
from dataflow.expr import AggregateExpr
from dataflow.peers import PeerNetwork
from dataflow.plan import Constant, Reduce
from dataflow.protocol import AdvanceUpper, CreateDataflow, DataflowOutput
from dataflow.types import INT8
from dataflow.worker import Worker

COUNT = Reduce(Constant(((1,), (2,), (3,)), (INT8,)), (0,), (AggregateExpr("count_star", None, INT8),))


def _replica(tmp_path: Path, count: int = 2) -> tuple[list[Worker], list[list[object]]]:
    listeners = [PeerNetwork.listen("127.0.0.1") for _ in range(count)]
    addresses = [("127.0.0.1", s.getsockname()[1]) for s in listeners]
    networks = [PeerNetwork(i, count, listeners[i]) for i in range(count)]
    joins = [threading.Thread(target=n.connect, args=(addresses,)) for n in networks]
    for t in joins:
        t.start()
    for t in joins:
        t.join(30)
    sent: list[list[object]] = [[] for _ in range(count)]
    workers = [Worker(i, count, tmp_path, networks[i], sent[i].append) for i in range(count)]
    return workers, sent


def _on_all(workers: list[Worker], command: object, timeout: float = 30.0) -> None:
    threads = [threading.Thread(target=w.handle, args=(command,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a worker is still waiting (for a peer that failed)"


def _failed(worker: Worker, id: str) -> bool:
    """Failed there: its state freed, its collection answering the error (an index or view
    stays listed so its collection's upper follows its inputs)."""
    running = worker.dataflows.get(id)
    return running is None or (running.failed is not None and running.dataflow is None)


def _outputs(sent: list[object], id: str) -> list[DataflowOutput]:
    return [m for m in sent if isinstance(m, DataflowOutput) and m.id == id]


def test_a_dataflow_failing_on_one_worker_fails_on_all_at_once(tmp_path):
    workers, sent = _replica(tmp_path)
    _on_all(workers, CreateDataflow("u1", COUNT, 0, "index"))
    _on_all(workers, CreateDataflow("u2", COUNT, 0, "index"))

    def engine_bug(inputs, upper, quiet=frozenset(), whole=None):
        raise RuntimeError("injected")

    workers[0].dataflows["u1"].dataflow.step = engine_bug
    _on_all(workers, AdvanceUpper({}, (), 1))
    for w in range(2):
        failures = [o for o in _outputs(sent[w], "u1") if o.errors]
        assert [e.sqlstate for o in failures for e in o.errors] == [SqlState.INTERNAL_ERROR], w
        assert _failed(workers[w], "u1")
        trace = workers[w].collections.get("u1")   # (none yet: it failed in its first step)
        assert trace is None or trace.error is not None
    # The other dataflow kept running on both workers, and goes on stepping.
    parts = [workers[w].collections["u2"].contents_from(1) for w in range(2)]
    counted = sorted(r for p in parts for r in zip(*(c.to_pylist() for c in p.columns[:2])))
    assert counted == [(1, 1), (2, 1), (3, 1)]
    _on_all(workers, AdvanceUpper({}, (), 2))
    assert all("u2" in w.dataflows for w in workers)


def test_a_peer_failure_reaches_a_worker_that_has_not_stepped_yet(tmp_path):
    """The abort notice may arrive before the dataflow's next step (or before it is even created
    there): the worker fails it when it comes to it, without waiting in an exchange."""
    workers, sent = _replica(tmp_path)
    _on_all(workers, CreateDataflow("u3", COUNT, 0, "index"))
    workers[0].dataflows["u3"].exchange.abort(SqlError(SqlState.INTERNAL_ERROR, "internal error in dataflow u3: injected"))
    workers[0].dataflows.pop("u3")
    workers[1].handle(AdvanceUpper({}, (), 1))   # worker 1 alone: it must not wait for worker 0
    failures = [o for o in _outputs(sent[1], "u3") if o.errors]
    assert [e.message for o in failures for e in o.errors] == ["internal error in dataflow u3: injected"]


def test_a_dataflow_growing_past_the_memory_limit_fails_with_53200_on_every_worker(tmp_path):
    """The replica's memory limit: a step that grows a worker's Arrow memory past its share fails
    that dataflow with 53200 (and its peers with the same error), freeing its state, while a
    dataflow that did not grow keeps running. (Both workers share this process's allocator here:
    only worker 0 is given a limit.)"""
    import pyarrow as pa

    workers, sent = _replica(tmp_path)
    _on_all(workers, CreateDataflow("u2", COUNT, 0, "index"))
    _on_all(workers, AdvanceUpper({}, (), 1))
    workers[0].memory_limit_bytes = pa.total_allocated_bytes() + (2 << 20)
    big = Constant(tuple((i,) for i in range(300_000)), (INT8,))
    _on_all(workers, CreateDataflow("u1", big, 1, "index"))
    _on_all(workers, AdvanceUpper({}, (), 2))
    _on_all(workers, AdvanceUpper({}, (), 3))   # worker 1 finished step 2 first: it fails at its next
    for w in range(2):
        errors = [e for o in _outputs(sent[w], "u1") for e in o.errors]
        assert [e.sqlstate for e in errors] == [SqlState.OUT_OF_MEMORY], (w, errors)
        assert "memory limit" in errors[0].message
        assert _failed(workers[w], "u1")
        assert "u2" in workers[w].dataflows and not [o for o in _outputs(sent[w], "u2") if o.errors]


def test_a_reader_of_an_index_that_failed_on_one_worker_steps_on_both(tmp_path):
    """An index that fails on one worker after its step's exchanges (here: one that has none)
    is still running on the other until the abort notice arrives. Its collection's upper keeps
    following its inputs on the failed side too, so a view reading it steps on both workers at
    once: before, it stepped only where the index was alive and waited there for ever (two
    minutes) for the other worker's part of its exchange."""
    from dataflow.plan import Get
    workers, sent = _replica(tmp_path)
    values = Constant(((1,), (2,), (3,)), (INT8,))
    _on_all(workers, CreateDataflow("x", values, 0, "index"))
    _on_all(workers, AdvanceUpper({}, (), 1))
    reader = Reduce(Get("x", (INT8,)), (0,), (AggregateExpr("count_star", None, INT8),))
    _on_all(workers, CreateDataflow("y", reader, 1, "index"))

    def engine_bug(inputs, upper, quiet=frozenset(), whole=None):
        raise RuntimeError("injected")

    workers[0].dataflows["x"].dataflow.step = engine_bug
    workers[0].dataflows["x"].always_step = True   # (it has no input that changes)
    workers[1].dataflows["x"].always_step = True
    _on_all(workers, AdvanceUpper({}, (), 2))   # no worker left waiting
    _on_all(workers, AdvanceUpper({}, (), 3))
    for w in range(2):
        assert _failed(workers[w], "x")
        assert workers[w].collections["x"].upper == 3   # followed its inputs, failed
    # The reader stepped on both workers, and reports the index's error.
    errors = [e.message for o in _outputs(sent[0], "y") for e in o.errors]
    assert errors and "injected" in errors[0]


def test_a_dataflow_one_worker_cannot_start_fails_on_the_others_too(tmp_path):
    """A table dropped while the workers import it: the slower worker finds its shard gone and
    has no collection, the faster one imported it first. A view over it created next starts on
    the faster worker only; the slower one tells it, so it fails at once instead of waiting in
    its first exchange for a peer that never steps it."""
    from dataflow.plan import Get
    from dataflow.worker import CollectionTrace

    workers, sent = _replica(tmp_path)
    t = (INT8,)
    # (worker 1 imported the table; worker 0, importing it after the DROP, has none)
    workers[1].collections["u1"] = CollectionTrace(t, 5)
    view = Reduce(Get("u1", t), (0,), (AggregateExpr("count_star", None, INT8),))
    _on_all(workers, CreateDataflow("v", view, 4, "persist"))
    _on_all(workers, AdvanceUpper({}, ("u1",), 6))
    for w in range(2):
        assert _failed(workers[w], "v"), w
        errors = [e.message for o in _outputs(sent[w], "v") for e in o.errors]
        assert errors and "dropped" in errors[0], (w, errors)
