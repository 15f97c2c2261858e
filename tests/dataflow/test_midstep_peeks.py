"""A fast-path peek that arrives while a dataflow steps is answered between that dataflow's
operators (`Runtime.pause`), not after every dataflow has stepped: a DELETE's read of the orders
index no longer waits for the views' steps of the write before it. Its answer is the one it
gets alone, and a peek of the collection still stepping waits for it."""

from __future__ import annotations

import pyarrow as pa

from dataflow.batch import batch_from_rows, rows_of
from dataflow.expr import AggregateExpr
from dataflow.fast_peek import FastPeekPlan
from dataflow.plan import ArrangeBy, Get, Reduce
from dataflow.protocol import AdvanceUpper, CreateDataflow, FastPeek, ImportCollection, PeekResults
from dataflow.types import INT8
from dataflow import worker as worker_mod
from dataflow.worker import Worker
from storage.controller import StorageController
from storage.persist import PersistClient

T = (INT8, INT8)  # (key, value)


def _answer_rows(messages: list) -> dict[str, list]:
    out = {}
    for msg in messages:
        for r in msg.answers() if isinstance(msg, PeekResults) else []:
            assert r.error is None, r.error
            out[r.id] = sorted(rows_of(r.batch)) if r.batch is not None else []
    return out


def test_a_peek_of_a_stepped_index_is_answered_while_a_later_dataflow_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(worker_mod, "PEEK_POLL_S", 0.0)  # look at every pause
    storage = StorageController(PersistClient.open_local(tmp_path))
    storage.open("u1", T)
    storage.append("u1", batch_from_rows([(1, 10), (2, 20), (3, 30)], T, 1), 2)
    sent: list = []
    offered: list[FastPeek] = []
    seen_at: dict[str, int] = {}  # peek id -> u4's upper when its answer went out

    def send(message) -> None:
        if isinstance(message, PeekResults):
            for r in message.results:
                seen_at[r.id] = worker.collections["u4"].upper
        sent.append(message)

    stepping: set[str] = set()

    def arrived(ready) -> list[FastPeek]:
        # The peeks "arrive" while u4 steps (the controller sent them during this write's
        # handling, after u3 had stepped).
        due = [p for p in offered if "u4" in stepping and ready(p)]
        for p in due:
            offered.remove(p)
        return due

    worker = Worker(0, 1, tmp_path, None, send, arrived_peeks=arrived)
    worker.handle(ImportCollection("u1", T, 2))
    worker.handle(CreateDataflow("u3", ArrangeBy(Get("u1", T), (0,)), 1, "index"))
    count = AggregateExpr("count_star", None, INT8, False, (), ())
    worker.handle(CreateDataflow("u4", Reduce(Get("u1", T), (1,), (count,)), 1, "index"))
    worker.handle(AdvanceUpper({}, ("u1",), 5))
    assert worker.collections["u4"].upper == 5
    u4 = worker.dataflows["u4"].dataflow
    step = u4.step

    def watched_step(*args, **kwargs):
        stepping.add("u4")
        try:
            return step(*args, **kwargs)
        finally:
            stepping.discard("u4")
    u4.step = watched_step

    # A write at 5; meanwhile a point read of u3 at 5 and a read of u4 at 5 arrive.
    keys = FastPeekPlan("u3", T, Get("u3", T), (0,), ((2,), (3,)))
    offered[:] = [FastPeek("p_index", keys, 5), FastPeek("p_view", FastPeekPlan("u4", T, Get("u4", T)), 5)]
    write = pa.concat_tables([batch_from_rows([(2, 20)], T, 5, -1), batch_from_rows([(2, 21)], T, 5, 1)])
    worker.handle(AdvanceUpper({"u1": write}, ("u1",), 6))

    answers = _answer_rows(sent)
    assert answers["p_index"] == [(2, 21), (3, 30)]
    assert seen_at["p_index"] == 5  # answered before u4 had stepped to 6
    assert answers["p_view"] == sorted([(10, 1), (21, 1), (30, 1)])
    assert seen_at["p_view"] == 6  # a read of the stepping view waits for its step
    assert not offered
