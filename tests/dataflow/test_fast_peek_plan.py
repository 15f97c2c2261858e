"""fast_peek_plan: which reads take the fast path, and which of their conditions may narrow a
collection's raw updates before they are consolidated (only ones that cannot fail)."""

from __future__ import annotations

from dataflow.expr import Call, ColumnRef, Literal
from dataflow.fast_peek import fast_peek_plan
from dataflow.plan import Filter, Get, Project, Reduce
from dataflow.types import BOOL, INT8

TYPES = (INT8, INT8)
K = ColumnRef(0, INT8)
X = ColumnRef(1, INT8)


def _eq(a, b):
    return Call("eq", (a, b), BOOL)


def test_conditions_that_cannot_fail_become_the_prefilter():
    k_is_5 = _eq(K, Literal(5, INT8))
    ratio = Call("gt", (Call("div", (Literal(10, INT8), X), INT8), Literal(1, INT8)), BOOL)
    plan = Project(Filter(Get("u1", TYPES), (k_is_5, ratio)), (1,))
    fast = fast_peek_plan(plan)
    assert fast is not None and fast.source == "u1"
    assert fast.prefilter == (k_is_5,)
    assert fast.chain == plan  # the chain still applies every condition


def test_no_prefilter_without_a_filter_on_the_collection():
    assert fast_peek_plan(Project(Get("u1", TYPES), (0,))).prefilter == ()
    # A filter above a computed column is not on the collection's columns.
    from dataflow.plan import Map
    mapped = Filter(Map(Get("u1", TYPES), (Call("add", (K, X), INT8),)), (_eq(ColumnRef(2, INT8), Literal(1, INT8)),))
    assert fast_peek_plan(mapped).prefilter == ()


def test_reads_needing_a_dataflow_are_not_fast():
    from dataflow.expr import AggregateExpr
    plan = Reduce(Get("u1", TYPES), (0,), (AggregateExpr("count", None, INT8, False),))
    assert fast_peek_plan(plan) is None


def test_conditions_a_lookup_already_meets_leave_the_chain():
    from dataflow.plan import IndexLookup
    from dataflow.types import FLOAT8, TEXT
    types = (INT8, TEXT, FLOAT8)
    s, f = ColumnRef(1, TEXT), ColumnRef(2, FLOAT8)
    other = Call("gt", (ColumnRef(0, INT8), Literal(0, INT8)), BOOL)
    # One key value per column: `k = 5 AND s = 'a'` hold for every row found; `k > 0` stays.
    lookup = IndexLookup("u9", types, (0, 1), ((5, "a"),))
    plan = Project(Filter(lookup, (_eq(K, Literal(5, INT8)), _eq(Literal("a", TEXT), s), other)), (2,))
    fast = fast_peek_plan(plan)
    assert fast.chain == Project(Filter(Get("u9", types), (other,)), (2,))
    assert fast.keys == ((5, "a"),)
    # Nothing left to check: no Filter at all.
    alone = Project(Filter(IndexLookup("u9", types, (0,), ((5,),)), (_eq(K, Literal(5, INT8)),)), (2,))
    assert fast_peek_plan(alone).chain == Project(Get("u9", types), (2,))
    # Several key values (IN): each row meets only one of them, so the condition stays.
    two = Filter(IndexLookup("u9", types, (0,), ((5,), (6,))), (_eq(K, Literal(5, INT8)),))
    assert fast_peek_plan(two).chain == Filter(Get("u9", types), two.predicates)
    # A float key (NaN, -0) is matched by the arrangement's equality, not SQL's: kept.
    floats = Filter(IndexLookup("u9", types, (2,), ((0.0,),)), (_eq(f, Literal(0.0, FLOAT8)),))
    assert fast_peek_plan(floats).chain == Filter(Get("u9", types), floats.predicates)


def test_remembered_owners_are_the_hashed_ones():
    from dataflow.fast_peek import FastPeekPlan, route
    from dataflow.types import FLOAT8, TEXT
    owners: dict = {}
    for t, values in ((INT8, list(range(-50, 50))), (TEXT, [f"k{i}" for i in range(50)]), (FLOAT8, [0.0, -0.0, 1.5])):
        for workers in (2, 3):
            for v in values + values:  # the second time from `owners`
                plan = FastPeekPlan("u9", (t,), Get("u9", (t,)), (0,), ((v,),))
                assert route(plan, workers, owners).keys() == route(plan, workers).keys(), (v, workers)
    assert len(owners) == 2 * 150  # floats are hashed every time


def test_several_keys_go_to_their_owners_with_their_own_share():
    """`k IN (...)`: each worker gets the keys whose hash it owns, as the index's exchange put
    them (checked against hashing each key alone), and nothing when it owns none."""
    from dataflow.fast_peek import FastPeekPlan, keys_table, route
    from dataflow.batch import hash_columns
    from dataflow.types import TEXT
    types = (INT8, TEXT)
    keys = tuple((i, f"s{i % 7}") for i in range(40))
    plan = FastPeekPlan("u9", types, Get("u9", types), (1, 0), tuple((s, i) for i, s in keys))
    for workers in (2, 3, 5):
        parts = route(plan, workers, {})
        got = sorted(k for part in parts.values() for k in part.keys)
        assert got == sorted(plan.keys)
        for w, part in parts.items():
            owners = hash_columns(keys_table(types, (1, 0), part.keys), (0, 1)) % workers
            assert set(owners.tolist()) == {w}
    assert route(FastPeekPlan("u9", types, Get("u9", types), (0,), ()), 2, {}) == {}


def test_in_lists_and_arrays_a_lookup_meets_leave_the_chain():
    """`k IN (5, 6)` / `k = ANY ('{5,6}')` over a lookup of exactly those keys hold for every row
    found (a DELETE's ids need no filter over the rows the index found); a list or an array
    with a NULL, a key the list does not name, or a float key keep the condition."""
    from dataflow.plan import IndexLookup
    from dataflow.types import FLOAT8, TEXT, array_of
    types = (INT8, TEXT, FLOAT8)
    five_six = ((5,), (6,))

    def chain(pred, keys=five_six, column=0):
        return fast_peek_plan(Filter(IndexLookup("u9", types, (column,), keys), (pred,))).chain

    in_list = Call("in_list", (K, Literal(6, INT8), Literal(5, INT8)), BOOL)
    assert chain(in_list) == Get("u9", types)
    in_array = Call("in_array", (K, Literal("{5,6,6}", array_of(INT8))), BOOL)
    assert chain(in_array) == Get("u9", types)
    kept = [Call("in_list", (K, Literal(5, INT8), Literal(None, INT8), Literal(6, INT8)), BOOL),
            Call("in_array", (K, Literal("{5,NULL,6}", array_of(INT8))), BOOL),
            Call("in_array", (K, Literal("{5}", array_of(INT8))), BOOL)]
    for pred in kept:
        assert chain(pred) == Filter(Get("u9", types), (pred,)), pred
    f = ColumnRef(2, FLOAT8)
    floats = Call("in_list", (f, Literal(0.0, FLOAT8)), BOOL)
    assert chain(floats, ((0.0,),), 2) == Filter(Get("u9", types), (floats,))
