"""Small builders for update tables in tests."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from dataflow.types import INT8, TEXT, arrow_schema

TYPES = (INT8, TEXT)
SCHEMA = arrow_schema(TYPES)


def updates(rows: list[tuple]) -> pa.Table:
    """rows of (c0, c1, time, diff) -> an update table of SCHEMA."""
    cols = list(zip(*rows)) if rows else [[] for _ in SCHEMA]
    return pa.Table.from_arrays([pa.array(list(c), f.type) for c, f in zip(cols, SCHEMA)], schema=SCHEMA)


def as_counter(table: pa.Table) -> Counter:
    """{(row..., time): diff} with zero diffs dropped, order-insensitive."""
    out: Counter = Counter()
    d = table.to_pydict()
    names = [n for n in table.column_names if n != "diff"]
    for i, diff in enumerate(d["diff"]):
        out[tuple(d[n][i] for n in names)] += diff
    return Counter({k: v for k, v in out.items() if v != 0})


def brute_snapshot(history: list[tuple], as_of: int) -> Counter:
    """The contents at `as_of` of the updates `history` ((c0, c1, time, diff)), by brute force,
    in as_counter's form."""
    acc: Counter = Counter()
    for c0, c1, t, d in history:
        if t <= as_of:
            acc[(c0, c1, as_of)] += d
    return Counter({k: v for k, v in acc.items() if v != 0})
