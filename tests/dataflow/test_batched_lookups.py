"""Concurrent point lookups in one index are found with one probe of its arrangement and run
through their chain once per time and chain (dataflow/worker.py `_point_lookups`): every peek
gets exactly the answer it gets alone - keys with several rows, keys without rows, the same key
in two peeks, different times, a filter that keeps some peeks' rows only, a chain that fails for
one key only - through a real worker."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from dataflow.batch import batch_from_rows, rows_of
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.fast_peek import FastPeekPlan
from dataflow.plan import ArrangeBy, Filter, Get, Map, Project
from dataflow.protocol import AdvanceUpper, CreateDataflow, FastPeek, FastPeeks, ImportCollection, PeekResults
from dataflow.types import BOOL, INT8
from dataflow.worker import Worker
from storage.controller import StorageController
from storage.persist import PersistClient

T = (INT8, INT8)  # (key, value)


def _worker(path, rows: list[tuple[int, int]], changes: list[tuple[int, int, int]]) -> tuple[Worker, list]:
    """A worker with table u1 (`rows` at time 1, then `changes` (key, value, diff) one per
    time from 10 on) and index u3 on its key."""
    storage = StorageController(PersistClient.open_local(path))
    storage.open("u1", T)
    storage.append("u1", batch_from_rows(rows, T, 1), 2)
    sent: list = []
    worker = Worker(0, 1, path, None, sent.append)
    worker.handle(ImportCollection("u1", T, 2))
    worker.handle(CreateDataflow("u3", ArrangeBy(Get("u1", T), (0,)), 1, "index"))
    for i, (k, v, d) in enumerate(changes):
        worker.handle(AdvanceUpper({"u1": batch_from_rows([(k, v)], T, 10 + i, d)}, ("u1",), 11 + i))
    worker.handle(AdvanceUpper({}, ("u1",), 11 + len(changes)))
    return worker, sent


def _answers(worker: Worker, sent: list, peeks: list[FastPeek]) -> dict[str, tuple]:
    sent.clear()
    worker.handle(FastPeeks(peeks))
    out = {}
    for msg in sent:
        for r in msg.answers() if isinstance(msg, PeekResults) else []:
            out[r.id] = (r.error.sqlstate if r.error else None,
                         sorted(zip(rows_of(r.batch), r.batch["diff"].to_pylist())) if r.batch is not None else None)
    return out


# 100 / (value - 3): fails for a row whose value is 3, and only for that peek.
CHAIN = Project(Map(Get("u3", T), (Call("div", (Literal(100, INT8), Call("sub", (ColumnRef(1, INT8), Literal(3, INT8)), INT8)), INT8),)),
                (0, 2))
# value > 4: some peeks' rows pass, others' do not.
KEEP = Project(Filter(Get("u3", T), (Call("gt", (ColumnRef(1, INT8), Literal(4, INT8)), BOOL),)), (1,))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_batched_point_lookups_answer_as_single_ones(tmp_path_factory, seed):
    rng = random.Random(seed)
    rows = [(rng.randrange(8), rng.randrange(10)) for _ in range(rng.randrange(0, 20))]
    changes = [(rng.randrange(8), rng.randrange(10), rng.choice([1, 1, -1])) for _ in range(rng.randrange(0, 10))]
    worker, sent = _worker(tmp_path_factory.mktemp("w"), rows, changes)
    upper = 11 + len(changes)  # every peek's time is readable
    peeks = []
    for i in range(rng.randrange(2, 12)):
        key = rng.randrange(10)  # 8 and 9: no rows
        chain = rng.choice([CHAIN, KEEP, KEEP, Project(Get("u3", T), (1, 0)), Project(Get("u3", T), (1, 0))])
        plan = FastPeekPlan("u3", T, chain, (0,), ((key,),))
        peeks.append(FastPeek(f"p{i}", plan, rng.randrange(2, upper)))
    together = _answers(worker, sent, peeks)
    alone = {}
    for p in peeks:
        alone.update(_answers(worker, sent, [p]))
    assert together == alone and len(together) == len(peeks)


def test_point_lookups_at_one_time_share_one_table(tmp_path):
    """Peeks of one chain at one time come back as slices of one table (one probe, one run of
    the chain), each with its own rows: the same key twice keeps both copies, a key without rows
    an empty slice."""
    worker, sent = _worker(tmp_path, [(1, 10), (1, 11), (2, 20), (5, 50)], [])
    keys = [1, 2, 1, 7, 5]
    sent.clear()
    worker.handle(FastPeeks([FastPeek(f"p{i}", FastPeekPlan("u3", T, KEEP, (0,), ((k,),)), 5)
                             for i, k in enumerate(keys)]))
    (message,) = [m for m in sent if isinstance(m, PeekResults)]
    assert len(message.tables) == 1 and all(r.part is not None for r in message.results)
    got = {r.id: sorted(rows_of(r.batch)) for r in message.answers()}
    assert got == {"p0": [(10,), (11,)], "p1": [(20,)], "p2": [(10,), (11,)], "p3": [], "p4": [(50,)]}
