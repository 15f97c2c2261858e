"""What the kernel microbenchmarks (bench/functions, bench_math_functions, bench_string_functions)
share: the compiled kernel of `SELECT <expr> FROM t` with the batch it reads, its best time,
and the row-count argument ('1M')."""

from __future__ import annotations

import time
from typing import Callable

import pyarrow as pa

from bench.engine.catalog import BenchCatalog
from dataflow.plan import Get, Map, Project
from dataflow.scalar import compile_expr


def kernel_of(catalog: BenchCatalog, sql: str, batch: pa.Table) -> tuple[Callable, pa.Table]:
    """The compiled expression of the query's Map and the batch laid out as that Map's input
    (the table itself, or its pruned columns). RuntimeError when the plan has no Map over the
    table (an expression folded to a constant at plan time)."""
    node = catalog.plan_select(sql).plan
    while not isinstance(node, Map):
        if not hasattr(node, "input"):
            raise RuntimeError("no Map over the table: the expression is a plan-time constant")
        node = node.input
    inner = node.input
    if isinstance(inner, Get):
        inp = batch
    elif isinstance(inner, Project) and isinstance(inner.input, Get):
        cols = [batch.column(i) for i in inner.columns] + [batch.column("time"), batch.column("diff")]
        inp = pa.table(cols, names=[f"c{k}" for k in range(len(inner.columns))] + ["time", "diff"])
    else:
        raise RuntimeError(f"unexpected plan shape under the Map: {type(inner).__name__}")
    return compile_expr(node.exprs[-1]), inp


def best_seconds(fn: Callable, inp: pa.Table, runs: int = 3, enough: float | None = None) -> float:
    """The fastest of `runs` calls; stop early once one call took `enough` seconds."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(inp)
        best = min(best, time.perf_counter() - t0)
        if enough is not None and best > enough:
            break
    return best


def parse_rows(text: str) -> int:
    """'100k', '1M', '250000' -> a row count."""
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text[:-1] if mult != 1 else text) * mult)
