"""The compute controller's merge of several replicas' outputs into one stream per dataflow.

Replicas compute the same steps; the controller takes each step from whichever replica reaches it
first, drops the others' copies, and cuts a step that overlaps what was delivered by time. These
tests drive `ComputeController` with replicas whose workers are simulated by the messages they
would send (the Spark path is covered by tests/e2e/test_cluster_replicas.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow as pa
import pytest

from dataflow.batch import batch_from_rows, concat, consolidate
from dataflow.controller import ComputeController, Replica, ReplicaLost, StepOutput
from dataflow.plan import Get
from dataflow.protocol import DataflowOutput, PeekResult
from dataflow.types import INT4

TYPES = (INT4,)


def _controller(sizes: dict[str, int]) -> ComputeController:
    compute = ComputeController(workers=1, data_dir=Path("unused"))
    for name, workers in sizes.items():
        compute.replicas[name] = Replica(name, workers, syncing=False)
    compute.import_collection("u1", TYPES, 5)
    return compute


def _updates(*rows: tuple[int, int, int]) -> pa.Table:
    """rows of (value, time, diff)."""
    return consolidate(concat([batch_from_rows([(v,)], TYPES, t, d) for v, t, d in rows])) if rows \
        else batch_from_rows([], TYPES, 0)


def _step(compute, replica: str, id: str, batch: pa.Table, upper: int, worker: int = 0, as_of: int = 4) -> None:
    """A worker's output for one step; `as_of` is the time its dataflow started at."""
    compute._on_message(compute.replicas[replica], DataflowOutput(id, worker, batch, upper, as_of=as_of))


def _drain(queue: asyncio.Queue) -> list:
    out = []
    while not queue.empty():
        out.append(queue.get_nowait())
    return out


def _rows(outputs: list) -> list[tuple[int, int, int]]:
    rows = []
    for o in outputs:
        assert isinstance(o, StepOutput), o
        rows += [(v, t, d) for v, t, d in zip(*(o.batch.column(i).to_pylist() for i in range(3)))]
    return sorted(rows)


def test_each_step_is_taken_once_from_the_first_replica_to_reach_it():
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    snapshot = _updates((1, 4, 1))
    _step(compute, "r1", "s1", snapshot, 5)
    _step(compute, "r2", "s1", snapshot, 5)          # the same snapshot: dropped
    _step(compute, "r2", "s1", _updates((2, 5, 1)), 6)
    _step(compute, "r1", "s1", _updates((2, 5, 1)), 6)  # r1 is behind: dropped
    _step(compute, "r1", "s1", _updates((3, 6, 1)), 7)
    out = _drain(queue)
    assert [o.upper for o in out] == [5, 6, 7]
    assert _rows(out) == [(1, 4, 1), (2, 5, 1), (3, 6, 1)]


def test_a_step_overlapping_the_stream_is_cut_by_time():
    """r2 merged two steps into one ([5, 8)); r1 already delivered [5, 7): only time 7 is new."""
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    _step(compute, "r1", "s1", _updates((1, 4, 1)), 5)
    _step(compute, "r2", "s1", _updates((1, 4, 1)), 5)
    _step(compute, "r1", "s1", _updates((2, 5, 1), (3, 6, 1)), 7)
    _step(compute, "r2", "s1", _updates((2, 5, 1), (3, 6, 1), (4, 7, 1)), 8)
    out = _drain(queue)
    assert [o.upper for o in out] == [5, 7, 8]
    assert _rows(out) == [(1, 4, 1), (2, 5, 1), (3, 6, 1), (4, 7, 1)]


def test_workers_of_a_replica_are_merged_before_the_step_counts():
    compute = _controller({"r1": 2, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    _step(compute, "r1", "s1", _updates((1, 4, 1)), 5, worker=0)
    assert _drain(queue) == []                       # r1's worker 1 has not answered
    _step(compute, "r2", "s1", _updates((1, 4, 1), (2, 4, 1)), 5)
    _step(compute, "r1", "s1", _updates((2, 4, 1)), 5, worker=1)   # complete, but late: dropped
    out = _drain(queue)
    assert _rows(out) == [(1, 4, 1), (2, 4, 1)]


def test_losing_one_replica_keeps_the_subscription_streaming():
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    for name in ("r1", "r2"):
        _step(compute, name, "s1", _updates((1, 4, 1)), 5)
    _step(compute, "r1", "s1", _updates((2, 5, 1)), 6)
    compute._forget(compute.replicas["r1"])          # r1's job died
    _step(compute, "r1", "s1", _updates((9, 6, 1)), 7)   # a late message of the dead job: ignored
    _step(compute, "r2", "s1", _updates((2, 5, 1)), 6)
    _step(compute, "r2", "s1", _updates((3, 6, 1)), 7)
    out = _drain(queue)
    assert _rows(out) == [(1, 4, 1), (2, 5, 1), (3, 6, 1)]


def test_a_subscription_no_replica_can_continue_ends_with_an_error():
    """r2 was restarted and has only sent its snapshot, from a later time than the stream's start
    and past its frontier: when r1 is lost, nobody can deliver the updates in between, so the
    SUBSCRIBE ends instead of skipping them."""
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    _step(compute, "r1", "s1", _updates((1, 4, 1)), 5)
    _step(compute, "r2", "s1", _updates((1, 6, 1)), 7, as_of=6)   # restarted: its first output, at 6
    compute._forget(compute.replicas["r1"])
    out = _drain(queue)
    assert isinstance(out[-1], ReplicaLost)
    assert "s1" not in compute._dataflows


def test_a_view_no_replica_can_continue_is_rebuilt_from_the_next_snapshot():
    """For a materialized view the stream restarts: the next snapshot comes after a 'rehydrate'
    marker (the persist sink then corrects its shard against it)."""
    compute = _controller({"r1": 1})
    queue = compute.create_dataflow("m1", Get("u1", TYPES), 4, "persist")
    _step(compute, "r1", "m1", _updates((1, 4, 1)), 5)
    compute._forget(compute.replicas["r1"])
    compute.advance({}, ("u1",), 8)                  # written while the job restarted
    compute._sync(compute.replicas["r1"])            # the restarted job reads u1 as of 7
    _step(compute, "r1", "m1", _updates((1, 7, 1), (2, 7, 1)), 8, as_of=7)
    out = _drain(queue)
    assert out[1] == ("rehydrate", 7)
    assert _rows([out[0]]) == [(1, 4, 1)] and _rows([out[2]]) == [(1, 7, 1), (2, 7, 1)]
    assert compute.upper_of("m1") == 8


def test_a_restarted_replica_rejoins_once_it_reaches_the_stream():
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    for name in ("r1", "r2"):
        _step(compute, name, "s1", _updates((1, 4, 1)), 5)
    compute._forget(compute.replicas["r2"])
    compute.advance({}, ("u1",), 7)
    compute._sync(compute.replicas["r2"])            # rehydrates at as_of 6
    _step(compute, "r2", "s1", _updates((1, 6, 1)), 7, as_of=6)   # its snapshot: a later start, dropped
    _step(compute, "r1", "s1", _updates(), 7)
    compute._forget(compute.replicas["r1"])          # now r2 carries the stream alone
    _step(compute, "r2", "s1", _updates((5, 7, 1)), 8)
    out = _drain(queue)
    assert [o.upper for o in out] == [5, 7, 8]
    assert _rows(out) == [(1, 4, 1), (5, 7, 1)]


def test_a_peek_takes_the_first_complete_answer_and_survives_a_lost_replica():
    async def run():
        compute = _controller({"r1": 2, "r2": 1})
        task = asyncio.ensure_future(compute.peek(Get("u1", TYPES), 4))
        await asyncio.sleep(0)
        (id,) = compute._peeks
        replicas = compute.replicas
        compute._on_message(replicas["r1"], PeekResult(id, 0, _updates((1, 4, 1))))
        compute._forget(replicas["r1"])              # r1 dies with half an answer
        assert not task.done()
        compute._on_message(replicas["r2"], PeekResult(id, 0, _updates((1, 4, 1), (2, 4, 1))))
        result = await task
        assert sorted(result.column(0).to_pylist()) == [1, 2]

        task = asyncio.ensure_future(compute.peek(Get("u1", TYPES), 4))
        await asyncio.sleep(0)
        compute._forget(replicas["r2"])              # no replica left to answer
        with pytest.raises(ReplicaLost):
            await task

    asyncio.run(run())


def test_a_read_waiting_for_a_restarted_replica_older_than_its_history_is_retried():
    """A peek issued while the only replica restarts waits for it; if the new job's imports start
    after the peek's time it cannot answer that time, and the reader is told to retry (not given
    an answer at another time, nor a 'too old' error for a read that was current)."""
    async def run():
        compute = _controller({"r1": 1})
        compute._forget(compute.replicas["r1"])
        stale = asyncio.ensure_future(compute.peek(Get("u1", TYPES), 4))
        compute.advance({}, ("u1",), 9)
        await asyncio.sleep(0)
        fresh = asyncio.ensure_future(compute.peek(Get("u1", TYPES), 8))
        await asyncio.sleep(0)
        compute._sync(compute.replicas["r1"])        # imports u1 as of 8
        with pytest.raises(ReplicaLost):
            await stale
        (id,) = compute._peeks
        compute._on_message(compute.replicas["r1"], PeekResult(id, 0, _updates((1, 8, 1))))
        assert (await fresh).column(0).to_pylist() == [1]

    asyncio.run(run())


def test_a_replica_that_started_with_the_stream_continues_it_from_its_first_output():
    """Both replicas got the dataflow at the same as_of; r1 delivered its first steps and is lost
    before r2 sent anything. r2's first output (the contents at 4, then updates at their times)
    continues the stream: only its updates at or after the frontier are new."""
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    _step(compute, "r1", "s1", _updates((1, 4, 1)), 5)
    _step(compute, "r1", "s1", _updates((2, 5, 1)), 6)
    compute._forget(compute.replicas["r1"])
    assert "s1" in compute._dataflows               # r2 can still continue it
    _step(compute, "r2", "s1", _updates((1, 4, 1), (2, 5, 1), (3, 6, 1)), 7)
    out = _drain(queue)
    assert [o.upper for o in out] == [5, 6, 7]
    assert _rows(out) == [(1, 4, 1), (2, 5, 1), (3, 6, 1)]


def test_a_first_output_from_a_later_start_than_counted_on_ends_the_subscription():
    """r2's worker started later than the command asked (its history was compacted): its first
    output cannot continue the stream, and with r1 gone nobody can, so the SUBSCRIBE ends."""
    compute = _controller({"r1": 1, "r2": 1})
    queue = compute.create_dataflow("s1", Get("u1", TYPES), 4, "subscribe")
    _step(compute, "r1", "s1", _updates((1, 4, 1)), 5)
    compute._forget(compute.replicas["r1"])
    _step(compute, "r2", "s1", _updates((1, 6, 1)), 7, as_of=6)
    out = _drain(queue)
    assert isinstance(out[-1], ReplicaLost) and "s1" not in compute._dataflows


def test_a_read_answered_by_several_workers_is_the_union_of_their_parts():
    from dataflow.controller import _merge_parts
    a, b = _updates((1, 5, 1), (2, 5, 2)), _updates((1, 5, 1), (3, 5, 1))
    merged = _merge_parts([a, b])
    assert merged.num_rows == 4  # each worker's share as it is: no consolidation needed
    assert sorted(zip(merged.column(0).to_pylist(), merged["diff"].to_pylist())) == [(1, 1), (1, 1), (2, 2), (3, 1)]
    # Parts with other counts (never expected of a snapshot) are consolidated together.
    odd = _merge_parts([a, _updates((2, 5, -2))])
    assert sorted(zip(odd.column(0).to_pylist(), odd["diff"].to_pylist())) == [(1, 1)]
    assert _merge_parts([a]) is a
