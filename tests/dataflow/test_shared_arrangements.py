"""One-off joins probing an index in place (dataflow.operators.join.SharedJoinOp), on two real
workers joined by the peer network: after random inserts and deletes on both sides, a join read
at any recent time equals the join recomputed from the rows at that time, whether or not the
index has already moved past it; a read of an index rebuilt meanwhile fails with 40001; a
materialized view's join probes the index in place too and stays equal to recomputation."""

from __future__ import annotations

import random
import threading
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from dataflow.batch import make_batch, rows_of
from dataflow.exchange import LocalExchange
from dataflow.operators.join import SharedJoinOp
from dataflow.expr import Call, ColumnRef, Literal
from dataflow.plan import ArrangeBy, Filter, Get, Join, Map, Project
from dataflow.protocol import AdvanceUpper, CreateDataflow, DataflowOutput, PeekResult
from dataflow.render import Dataflow
from dataflow.types import BOOL, INT8, TEXT
from dataflow.worker import CollectionTrace
from tests.dataflow.test_worker_failure import _on_all, _replica

L, R = (INT8, INT8), (INT8, TEXT)
# SELECT l.k, l.v, r.name FROM l JOIN r ON l.k = r.k, r read through its index "ri".
JOIN = Project(Join(Get("l", L), Get("ri", R), (0,), (0,)), (0, 1, 3))
# SELECT l.k, l.v, r.k + 1, r.name FROM l JOIN (SELECT * FROM r WHERE name <> 'b') r ON l.k = r.k:
# the side filters and computes on the index's rows; the join probes the whole index and puts
# the rows it matched through the side's filter and map.
FILTERED_SIDE = Project(Map(Filter(Get("ri", R), (Call("neq", (ColumnRef(1, TEXT), Literal("b", TEXT)), BOOL),)),
                            (Call("add", (ColumnRef(0, INT8), Literal(1, INT8)), INT8),)), (0, 2, 1))
CHAINED = Project(Join(Get("l", L), FILTERED_SIDE, (0,), (0,)), (0, 1, 3, 4))


def _expected(plan, l_rows, r_rows) -> Counter:
    if plan is JOIN:
        return Counter((lk, v, name) for lk, v in l_rows for rk, name in r_rows if lk == rk)
    return Counter((lk, v, rk + 1, name) for lk, v in l_rows for rk, name in r_rows if lk == rk and name != "b")


def _batch(rows: list[tuple], types, t: int, diff: int) -> pa.Table:
    cols = [pa.array([r[i] for r in rows], pa.int64() if ty is INT8 else pa.string()) for i, ty in enumerate(types)]
    n = len(rows)
    return make_batch(cols, pa.array(np.full(n, t, np.uint64)), pa.array(np.full(n, diff, np.int64)))


def _advance(workers, parts: list[dict[str, pa.Table]], upper: int) -> None:
    # Every worker is told of every collection written (its own part possibly empty), as the
    # controller does: whether a dataflow steps must not depend on which worker got rows.
    for name, types in (("l", L), ("r", R)):
        if any(name in p for p in parts):
            for p in parts:
                p.setdefault(name, _batch([], types, 0, 1))
    threads = [threading.Thread(target=w.handle, args=(AdvanceUpper(p, ("l", "r"), upper),), daemon=True)
               for w, p in zip(workers, parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive()


def _peek(workers, sent, id: str, as_of: int, upper: int | None = None, plan=JOIN) -> tuple[Counter, list]:
    _on_all(workers, CreateDataflow(id, plan, as_of, "peek"))
    if upper is not None:
        _advance(workers, [{}, {}], upper)
    results = [m for s in sent for m in s if isinstance(m, PeekResult) and m.id == id]
    assert len(results) == 2
    errors = [r.error for r in results if r.error is not None]
    rows = Counter()
    for r in results:
        if r.batch is not None:
            for row, d in zip(rows_of(r.batch), r.batch.column("diff").to_pylist()):
                rows[row] += d
    return +rows, errors


def _with_index(tmp_path):
    """Two workers holding tables l and r (empty, upper 1) and the index "ri" of r on k."""
    workers, sent = _replica(tmp_path)
    for w in workers:
        w.collections["l"] = CollectionTrace(L, 1)
        w.collections["r"] = CollectionTrace(R, 1)
    _on_all(workers, CreateDataflow("ri", ArrangeBy(Get("r", R), (0,)), 0, "index"))
    return workers, sent


@pytest.mark.parametrize("plan", [JOIN, CHAINED], ids=["plain", "filtered-side"])
def test_joins_read_through_a_shared_index_equal_recomputation(tmp_path, plan):
    workers, sent = _with_index(tmp_path)
    # The peek's plan probes the index's own arrangement on each worker.
    probe = Dataflow(plan, 0, LocalExchange(), shared=workers[0]._shared_arrangements(("l", "ri")))
    assert isinstance(probe.root.input, SharedJoinOp)

    rng = random.Random(11)
    l_rows: list[tuple[int, tuple]] = []   # (time, row) of every live row
    r_rows: list[tuple[int, tuple]] = []
    history: dict[int, tuple[list, list]] = {}
    t = 1
    for round_ in range(40):
        parts: list[dict[str, list[pa.Table]]] = [{"l": [], "r": []}, {"l": [], "r": []}]
        for name, live, make in (("l", l_rows, lambda: (rng.randrange(8), rng.randrange(100))),
                                 ("r", r_rows, lambda: (rng.randrange(8), rng.choice("abc")))):
            types = L if name == "l" else R
            for _ in range(rng.randrange(4)):
                row = make()
                live.append((t, row))
                parts[rng.randrange(2)][name].append(_batch([row], types, t, 1))
            if live and rng.random() < 0.5:
                _, row = live.pop(rng.randrange(len(live)))
                parts[rng.randrange(2)][name].append(_batch([row], types, t, -1))
        merged = [{k: pa.concat_tables(v) for k, v in p.items() if v} for p in parts]
        _advance(workers, merged, t + 1)
        history[t] = ([r for _, r in l_rows], [r for _, r in r_rows])
        # Read now, and a few steps back (the index has moved past that time since).
        for as_of in {t, max(1, t - 3)}:
            got, errors = _peek(workers, sent, f"p{round_}_{as_of}", as_of, plan=plan)
            assert not errors
            ls, rs = history[as_of]
            assert got == +_expected(plan, ls, rs), (round_, as_of)
        t += 1


def test_a_read_of_an_index_rebuilt_meanwhile_fails_with_40001(tmp_path):
    workers, sent = _with_index(tmp_path)
    _advance(workers, [{"l": _batch([(1, 5)], L, 1, 1), "r": _batch([(1, "a")], R, 1, 1)}, {}], 2)
    # A read at time 2 waits for the inputs to pass it; meanwhile the index is rebuilt.
    _on_all(workers, CreateDataflow("late", JOIN, 2, "peek"))
    _on_all(workers, CreateDataflow("ri", ArrangeBy(Get("r", R), (0,)), 2, "index", replaces=True, generation=1))
    got, errors = _peek(workers, sent, "late2", 2, upper=3)
    late = [m for s in sent for m in s if isinstance(m, PeekResult) and m.id == "late"]
    assert [m.error.sqlstate for m in late] == ["40001", "40001"]
    assert got == Counter({(1, 5, "a"): 1}) and not errors   # a read after the rebuild is fine


def _view_contents(sent, id: str) -> Counter:
    """A materialized view's accumulated output (from both workers' DataflowOutputs)."""
    rows = Counter()
    for s in sent:
        for m in s:
            if isinstance(m, DataflowOutput) and m.id == id and m.batch is not None:
                for row, d in zip(rows_of(m.batch), m.batch.column("diff").to_pylist()):
                    rows[row] += d
    return +rows


def _random_steps(workers, rng: random.Random, steps: int):
    """Steps 1..steps-1 of random inserts and deletes of l and r rows, each on a random worker;
    yields (time, live l rows, live r rows) after each step has been applied."""
    l_rows: list[tuple] = []
    r_rows: list[tuple] = []
    for t in range(1, steps):
        parts: list[dict[str, list[pa.Table]]] = [{"l": [], "r": []}, {"l": [], "r": []}]
        for name, live, make in (("l", l_rows, lambda: (rng.randrange(6), rng.randrange(100))),
                                 ("r", r_rows, lambda: (rng.randrange(6), rng.choice("abc")))):
            types = L if name == "l" else R
            for _ in range(rng.randrange(3)):
                row = make()
                live.append(row)
                parts[rng.randrange(2)][name].append(_batch([row], types, t, 1))
            if live and rng.random() < 0.6:
                row = live.pop(rng.randrange(len(live)))
                parts[rng.randrange(2)][name].append(_batch([row], types, t, -1))
        merged = [{k: pa.concat_tables(v) for k, v in p.items() if v} for p in parts]
        _advance(workers, merged, t + 1)
        yield t, l_rows, r_rows


@pytest.mark.parametrize("plan", [JOIN, CHAINED], ids=["plain", "filtered-side"])
def test_a_materialized_view_probes_the_index_in_place(tmp_path, plan):
    """A view's long-running join reads the index where it is (no arrangement of r of its own)
    and stays equal to recomputation at every step, while the index's arrangement compacts
    behind the view's frontier."""
    workers, sent = _with_index(tmp_path)
    _on_all(workers, CreateDataflow("mv", plan, 1, "persist"))
    assert any(isinstance(op, SharedJoinOp) for op in [workers[0].dataflows["mv"].dataflow.root.input])
    for t, l_rows, r_rows in _random_steps(workers, random.Random(12), 60):
        assert _view_contents(sent, "mv") == +_expected(plan, l_rows, r_rows), t
    assert not [m for s in sent for m in s if isinstance(m, DataflowOutput) and m.id == "mv" and m.errors]


def test_an_index_of_a_join_probes_another_index_in_place(tmp_path):
    """An index whose relation is a join (an index of a view) reads the index of r in place and
    its arrangement holds the join, equal to recomputation after every step."""
    from dataflow.batch import snapshot_at
    workers, sent = _with_index(tmp_path)
    _on_all(workers, CreateDataflow("ji", ArrangeBy(CHAINED, (0,)), 1, "index"))
    assert isinstance(workers[0].dataflows["ji"].dataflow.root.input.input, SharedJoinOp)
    for t, l_rows, r_rows in _random_steps(workers, random.Random(13), 40):
        got = Counter()
        for w in workers:
            snap = snapshot_at(w.collections["ji"].contents_from(t), t)
            for row, d in zip(rows_of(snap), snap.column("diff").to_pylist()):
                got[row] += d
        assert +got == +_expected(CHAINED, l_rows, r_rows), t
