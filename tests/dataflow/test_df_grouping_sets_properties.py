"""Property tests for GROUPING SETS / ROLLUP / CUBE and SELECT DISTINCT ON as the planner builds
them (a union of Reduces over a shared input; a top-1 TopK per group): after random inserts and
retractions over several steps (several times per step, duplicate rows, NULL keys, groups
emptied and refilled, the whole input emptied), the accumulated output at every time equals
(1) a fresh dataflow computing the same plan from scratch over the input at that time and
(2) a brute-force Python evaluation of the SQL's meaning. With 1 and 3 workers.

Agreement with PostgreSQL's answers is tests/slt/grouping_sets.slt, tests/slt/distinct_on.slt
and tests/e2e/test_grouping_sets_views.py.
"""

from __future__ import annotations

import os
from collections import Counter
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import parse, plan_statement
from tests.dataflow.df_reference import AS_OF, _accumulate, draw_stream, run_dataflow
from tests.planner.planner_catalog import MemoryCatalog

SETTINGS = settings(max_examples=int(os.environ.get("DF_EXAMPLES", "25")), deadline=None,
                    suppress_health_check=list(HealthCheck))
WORKERS = pytest.mark.parametrize("workers", [1, 3])

rows = st.tuples(
    st.integers(1, 6),                                   # id (repeats: duplicate rows, ties)
    st.one_of(st.none(), st.integers(0, 2)),             # g
    st.one_of(st.none(), st.sampled_from(["a", "b"])),   # h
    st.one_of(st.none(), st.integers(-3, 3)),            # x
)

# ---- brute-force meanings ---------------------------------------------------------------------


def _grouping(state: Counter, sets: list[tuple[int, ...]]) -> Counter:
    """SELECT g, h, count(*), sum(x), count(DISTINCT x), grouping(g, h) for each set (positions
    0 = g, 1 = h); the empty set gives one row even over no rows."""
    out = Counter()
    for s in sets:
        groups: dict = {}
        for row, c in state.items():
            key = tuple(row[1 + k] if k in s else None for k in (0, 1))
            groups.setdefault(key, []).append((row, c))
        if not s and not groups:
            groups[(None, None)] = []
        for key, members in groups.items():
            xs = [r[3] for r, c in members for _ in range(c) if r[3] is not None]
            bits = (0 if 0 in s else 2) | (0 if 1 in s else 1)
            out[key + (sum(c for _, c in members), sum(xs) if xs else None, len(set(xs)), bits)] += 1
    return out


def _nulls_last(v, desc=False):
    if v is None:
        return (1, 0)
    return (0, -v if desc else v)


def _distinct_on_latest(state: Counter) -> Counter:
    """SELECT DISTINCT ON (g) g, id, x ... ORDER BY g, x DESC NULLS LAST, id."""
    groups: dict = {}
    for row in state:
        groups.setdefault(row[1], []).append(row)
    out = Counter()
    for g, members in groups.items():
        best = min(members, key=lambda r: (_nulls_last(r[3], True), r[0]))
        out[(g, best[0], best[3])] += 1
    return out


def _distinct_on_unordered(state: Counter) -> Counter:
    """SELECT DISTINCT ON (h) h, id FROM t: the engine's documented choice, the smallest row
    (ascending, NULLs last) among the output columns."""
    groups: dict = {}
    for row in state:
        groups.setdefault(row[2], []).append((row[2], row[0]))
    return Counter({min(members, key=lambda r: tuple(_nulls_last(v) for v in r)): 1
                    for members in groups.values()})


def _cube_sets() -> list[tuple[int, ...]]:
    return [tuple(k for k, m in zip((0, 1), mask) if m) for mask in product((True, False), repeat=2)]


AGGS = "count(*), sum(x), count(DISTINCT x)"
CASES = {
    "rollup": (f"SELECT g, h, {AGGS}, grouping(g, h) FROM t GROUP BY ROLLUP(g, h)",
               lambda s: _grouping(s, [(0, 1), (0,), ()])),
    "cube": (f"SELECT g, h, {AGGS}, grouping(g, h) FROM t GROUP BY CUBE(g, h)",
             lambda s: _grouping(s, _cube_sets())),
    "sets": (f"SELECT g, h, {AGGS}, grouping(g, h) FROM t GROUP BY GROUPING SETS ((g), (h), (), ())",
             lambda s: _grouping(s, [(0,), (1,), (), ()])),
    "mixed": (f"SELECT g, h, {AGGS}, grouping(g, h) FROM t GROUP BY g, ROLLUP(h)",
              lambda s: _grouping(s, [(0, 1), (0,)])),
    "distinct_on": ("SELECT DISTINCT ON (g) g, id, x FROM t ORDER BY g, x DESC NULLS LAST, id",
                    _distinct_on_latest),
    "distinct_on_unordered": ("SELECT DISTINCT ON (h) h, id FROM t", _distinct_on_unordered),
}


def _plan(sql: str):
    cat = MemoryCatalog()
    cat.execute("CREATE TABLE t (id int, g int, h text, x int)")
    table = next(i for i in cat.items())
    p = plan_statement(cat, parse(sql)[0])
    return p.plan, table.id, tuple(c.type for c in table.columns)


@WORKERS
@pytest.mark.parametrize("case", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_maintained_equals_recomputation_and_meaning(workers, case, data):
    sql, meaning = CASES[case]
    plan, tid, types = _plan(sql)
    steps = draw_stream(data, {"t": rows}, max_steps=3, max_ops=8)
    steps = [(upper, {tid: ups["t"]}) for upper, ups in steps]
    outputs, dfs = run_dataflow(plan, {tid: types}, steps, workers)
    for df in dfs:
        assert not df.errors, df.errors
    seen_in, seen_out, lower = [], [], AS_OF
    for (upper, ups), out in zip(steps, outputs):
        seen_in.extend(ups[tid])
        seen_out.extend(out)
        for t in range(lower, upper):
            state = _accumulate(seen_in, t)
            scratch_out, scratch_dfs = run_dataflow(
                plan, {tid: types}, [(AS_OF + 1, {tid: [(r, AS_OF, c) for r, c in state.items()]})], 1)
            assert not scratch_dfs[0].errors, scratch_dfs[0].errors
            got = _accumulate(seen_out, t)
            assert got == _accumulate(scratch_out[0], AS_OF), f"t={t} against recomputation"
            assert got == meaning(state), f"t={t} against the brute-force meaning\n got={dict(got)}"
        lower = upper
