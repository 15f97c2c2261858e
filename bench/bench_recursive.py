"""Cost of one edge change in a maintained recursive view vs recomputing it from scratch.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_recursive.py [edges]

A random recursive tree (each node's parent uniform among the earlier ones) plus extra forward edges (a DAG of `edges` edges over edges*0.9 nodes);
two views: the transitive closure (UNION: the fixpoint form, one full copy of the value per
iteration) and the paths of length <= 8 from the root with their depth (UNION ALL: the working-table form).
Each is hydrated, then edges are inserted and deleted one step at a time; a step's time is
compared with hydrating the same view over the changed graph from scratch (one worker)."""

from __future__ import annotations

import random
import sys
import time

import numpy as np
import pyarrow as pa

from dataflow.exchange import LocalExchange
from dataflow.render import Dataflow
from planner import parse, plan_statement
from tests.planner.planner_catalog import MemoryCatalog

VIEWS = {
    "closure (UNION)": "WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM e UNION "
                       "SELECT r.a, e.dst FROM r JOIN e ON r.b = e.src) SELECT a, b FROM r",
    "depths from root (UNION ALL)": "WITH RECURSIVE p(n, d) AS (SELECT 0, 0 UNION ALL "
                                    "SELECT e.dst, p.d + 1 FROM p JOIN e ON e.src = p.n WHERE p.d < 8) SELECT n, d FROM p",
}


def batch(rows, time, diff):
    a = np.array(rows, np.int32).reshape(-1, 2)
    return pa.table({"c0": a[:, 0], "c1": a[:, 1], "time": np.full(len(a), time, np.uint64),
                     "diff": np.full(len(a), diff, np.int64)})


def main(n_edges: int) -> None:
    rng = random.Random(1)
    n_nodes = int(n_edges * 0.9)
    edges = [(rng.randint(0, i - 1), i) for i in range(1, n_nodes)]
    while len(edges) < n_edges:
        a = rng.randint(0, n_nodes - 2)
        edges.append((a, rng.randint(a + 1, n_nodes - 1)))
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE e (src int, dst int)")
    tid = next(i.id for i in cat.items() if i.name == "e")
    for name, sql in VIEWS.items():
        plan = plan_statement(cat, parse(sql)[0]).plan
        t0 = time.perf_counter()
        df = Dataflow(plan, 1, LocalExchange())
        out = df.step({tid: batch(edges, 1, 1)}, 2)
        hydrate = time.perf_counter() - t0
        print(f"{name}: {len(edges)} edges, {out.num_rows} rows, hydration {hydrate:.2f} s")
        t, cur = 2, list(edges)
        step_times = []
        for k in range(10):
            if k % 2 == 0:
                a = rng.randint(0, n_nodes - 2)
                change, diff = (a, rng.randint(a + 1, n_nodes - 1)), 1
                cur.append(change)
            else:
                change, diff = cur.pop(rng.randrange(len(cur))), -1
            t0 = time.perf_counter()
            d = df.step({tid: batch([change], t, diff)}, t + 1)
            step_times.append((time.perf_counter() - t0, d.num_rows, diff))
            t += 1
        for s, rows, diff in step_times:
            print(f"  {'insert' if diff > 0 else 'delete'} one edge: {s * 1000:.1f} ms, {rows} output changes")
        t0 = time.perf_counter()
        Dataflow(plan, 1, LocalExchange()).step({tid: batch(cur, 1, 1)}, 2)
        print(f"  recomputation from scratch: {time.perf_counter() - t0:.2f} s; "
              f"iterations (copies): {len(next(iter(_loops(df))).copies)}")


def _loops(df):
    from dataflow.operators.iterate import LetRecReadOp
    seen, todo = [], [df.root]
    while todo:
        op = todo.pop()
        if isinstance(op, LetRecReadOp):
            seen.append(op.loop)
            continue
        for attr in ("input", "inner", "left", "right"):
            if hasattr(op, attr) and getattr(op, attr) is not None:
                todo.append(getattr(op, attr))
        todo.extend(getattr(op, "inputs", []) or [])
    return seen


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
