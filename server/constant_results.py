"""Results of plans that read no collection, kept for the next statement with the same plan.

Drivers and BI tools send the same catalog queries on every connection (asyncpg's type
introspection is a recursive query over pg_type, pg_namespace, pg_range, pg_attribute and
pg_class that plans to ~270 operators and took ~0.5 s to evaluate here, every connection). Such
a plan reads only constants: the catalog rows as the statement saw them, folded literals (the
statement time, the session's user and process id). Two statements with equal plans therefore
have equal results, unless the plan calls something whose value is not in the plan (random(),
gen_random_uuid(), pg_sleep(): the library's volatile kernels; mz_now()): those are never
kept. A catalog change changes the plan's constants, so a kept result is never stale; nothing
has to be invalidated.

Plans are compared by a fingerprint that prints each distinct sub-plan once (a plan is a DAG:
its repr prints a shared sub-plan once per path, exponential in nested outer joins) and every
value by its repr, which tells 0.0 from -0.0, 1 from 1.0 and Decimal('1.0') from
Decimal('1.00').

Example: `SELECT count(*) FROM pg_class WHERE relname = 't'` run twice evaluates once; after
`CREATE TABLE t`, pg_class's constant differs, and so does the fingerprint.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import fields, is_dataclass
from typing import Awaitable, Callable

import numpy as np
import pyarrow as pa

from dataflow.batch import TIME
from dataflow.plan import Get, LetRec, Plan, children, nodes
from planner.functions import WALL_CLOCK_KERNELS
from planner.rules.fold_constants import _VOLATILE

# Calls whose value is not determined by the plan (the planner's own list: it does not fold them
# either): volatile kernels, mz_now() (the query's timestamp), deferred errors, the wall clock.
NOT_IN_PLAN = _VOLATILE | WALL_CLOCK_KERNELS


class ConstantResults:
    """An LRU of constant plans' results, at most `max_bytes` of Arrow data in all (fingerprints
    included) and `max_result_bytes` each: catalog answers are a few KiB; a large constant
    (generate_series) is cheap to compute again and not worth the memory."""

    def __init__(self, volatile: frozenset[str] = NOT_IN_PLAN, max_bytes: int = 16 << 20,
                 max_result_bytes: int = 256 << 10) -> None:
        self._markers = tuple(f"func={name!r}" for name in sorted(volatile))
        self.max_bytes = max_bytes
        self.max_result_bytes = max_result_bytes
        self._results: OrderedDict[str, pa.Table] = OrderedDict()
        self._bytes = 0
        self.hits = 0

    async def result(self, plan: Plan, ts: int, evaluate: Callable[[], Awaitable[pa.Table]]) -> pa.Table:
        """The plan's result at `ts`: kept from an equal plan's evaluation, or `evaluate()`d."""
        key = fingerprint(plan)
        if key is None or any(marker in key for marker in self._markers):
            return await evaluate()
        kept = self._results.get(key)
        if kept is not None:
            self._results.move_to_end(key)
            self.hits += 1
            return _at(kept, ts)
        out = await evaluate()
        if out.nbytes <= self.max_result_bytes and key not in self._results:
            self._results[key] = out
            self._bytes += _size(key, out)
            while self._bytes > self.max_bytes:
                old_key, old = self._results.popitem(last=False)
                self._bytes -= _size(old_key, old)
        return out


def _size(key: str, table: pa.Table) -> int:
    return len(key) + table.nbytes


def _at(table: pa.Table, ts: int) -> pa.Table:
    """The kept rows stamped with this query's time (the rows of a constant plan are all at its
    timestamp)."""
    if TIME not in table.column_names:
        return table
    i = table.column_names.index(TIME)
    return table.set_column(i, TIME, pa.array(np.full(table.num_rows, ts, np.uint64)))


def fingerprint(plan: Plan) -> str | None:
    """A text that equal plans share and different plans do not: each distinct node once, its
    inputs by reference, its other fields by repr. None if a field is not a plain value."""
    index: dict[int, int] = {}
    lines: list[str] = []
    # Recursive bindings are named from a counter (`letrec131`): named here by first sight, so
    # that two plannings of one statement print alike.
    bound = {name: f"@rec{i}" for i, name in
             enumerate(name for node in nodes(plan) if isinstance(node, LetRec) for name in node.ids)}

    def visit(node: Plan) -> int:
        known = index.get(id(node))
        if known is not None:
            return known
        kids = children(node)
        refs = {id(k): visit(k) for k in kids}
        parts = [type(node).__name__]
        for f in fields(node):
            value = getattr(node, f.name)
            if isinstance(node, Get) and f.name == "id" and value in bound:
                parts.append(f"id={bound[value]}")
            elif isinstance(node, LetRec) and f.name == "ids":
                parts.append(f"ids={[bound[v] for v in value]}")
            elif id(value) in refs:
                parts.append(f"{f.name}=@{refs[id(value)]}")
            elif isinstance(value, tuple) and value and all(id(v) in refs for v in value):
                parts.append(f"{f.name}=@[{','.join(str(refs[id(v)]) for v in value)}]")
            elif is_dataclass(value) and type(value).__module__ == "dataflow.plan":
                raise _NotPlain  # (a plan in a field that is not an input: not expected)
            else:
                parts.append(f"{f.name}={value!r}")
        index[id(node)] = len(lines)
        lines.append(" ".join(parts))
        return index[id(node)]

    try:
        visit(plan)
    except _NotPlain:
        return None
    return "\n".join(lines)


class _NotPlain(Exception):
    pass
