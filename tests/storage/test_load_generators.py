"""Load generators are pure functions of (options, tick range): the updates of [a, c) equal those
of [a, b) plus [b, c) for any split (what makes a restart at any offset exact), the relations
have Materialize's documented shapes, and MARKETING's lead updates retract what was inserted."""

from __future__ import annotations

import pyarrow as pa
import pytest

from dataflow.errors import SqlError
from dataflow.batch import consolidate
from dataflow.types import INT4, INT8, TEXT, TIMESTAMPTZ
from planner.parse import parse
from storage.sources import GENERATORS, LoadGenOptions, make_generator

OPTS = LoadGenOptions(tick_ms=100, base_ms=1_700_000_000_000)


def _canon(t: pa.Table) -> list:
    return sorted(consolidate(t).to_pylist(), key=repr)


@pytest.mark.parametrize("kind", ["counter", "auction", "marketing"])
@pytest.mark.parametrize("splits", [(0, 1, 57, 300), (0, 3, 4, 5, 299, 300), (0, 300)])
def test_generation_is_independent_of_how_ticks_are_batched(kind, splits):
    gen = make_generator(kind, OPTS)
    whole = gen.generate(0, 300)
    parts: dict = {}
    for a, b in zip(splits, splits[1:]):
        for name, t in gen.generate(a, b).items():
            parts.setdefault(name, []).append(t)
    assert set(parts) == set(whole)
    for name in whole:
        assert _canon(pa.concat_tables(parts[name])) == _canon(whole[name]), name


def test_counter_values_and_max_cardinality():
    gen = make_generator("counter", OPTS)
    assert gen.generate(0, 4)[None].column(0).to_pylist() == [1, 2, 3, 4]
    bounded = make_generator("counter", LoadGenOptions(max_cardinality=3))
    batch = consolidate(pa.concat_tables([bounded.generate(0, 5)[None], bounded.generate(5, 7)[None]]))
    assert sorted(r["c0"] for r in batch.to_pylist() if r["diff"] == 1) == [5, 6, 7]


def test_auction_shapes_and_referential_integrity():
    gen = make_generator("auction", OPTS)
    shapes = {o.name: [(c.name, c.type) for c in o.columns] for o in gen.outputs()}
    assert shapes["bids"] == [("id", INT8), ("buyer", INT8), ("auction_id", INT8), ("amount", INT4),
                              ("bid_time", TIMESTAMPTZ)]
    assert shapes["auctions"] == [("id", INT8), ("seller", INT8), ("item", TEXT), ("end_time", TIMESTAMPTZ)]
    assert sorted(shapes) == ["accounts", "auctions", "bids", "organizations", "users"]
    out = gen.generate(0, 500)
    auctions = {r["c0"]: r for r in out["auctions"].to_pylist()}
    assert sorted(auctions) == list(range(1, 501))
    bids = out["bids"].to_pylist()
    assert len({b["c0"] for b in bids}) == len(bids)
    users = {r["c0"] for r in out["users"].to_pylist()}
    for b in bids:  # every bid is on an auction that is still open, by a known user
        a = auctions[b["c2"]]
        assert b["c1"] in users and b["c4"] < a["c3"]
    assert gen.generate(1, 2).keys() == {"auctions", "bids"}  # the snapshot comes once


def test_marketing_leads_convert_by_retraction():
    gen = make_generator("marketing", OPTS)
    leads = consolidate(gen.generate(0, 100)["leads"]).to_pylist()
    assert all(r["diff"] == 1 for r in leads)
    ids = [r["c0"] for r in leads]
    assert sorted(ids) == list(range(1, 101))  # one row per lead: old versions were retracted
    converted = [r for r in leads if r["c3"] is not None]
    assert converted and all(r["c4"] is not None for r in converted)


def test_tick_times_follow_as_of():
    gen = make_generator("counter", LoadGenOptions(tick_ms=1000, as_of=5, base_ms=10_000))
    assert gen.first_batch_end() == 6
    assert [int(gen.due_ms(k)) for k in (0, 5, 6, 8)] == [10_000, 10_000, 11_000, 13_000]


def test_parse_create_source_options():
    with pytest.raises(SqlError) as err:   # one compute cluster: naming another is an error
        parse("CREATE SOURCE s IN CLUSTER c FROM LOAD GENERATOR COUNTER")
    assert err.value.sqlstate == "42704"
    ast = parse("CREATE SOURCE IF NOT EXISTS s IN CLUSTER quickstart FROM LOAD GENERATOR AUCTION "
                "(TICK INTERVAL '250ms', UP TO 100, AS OF 3) FOR ALL TABLES EXPOSE PROGRESS AS p")[0].ast
    assert (ast.name, ast.generator, dict(ast.options), ast.for_all_tables, ast.progress_name, ast.if_not_exists) == \
        (("s",), "auction", {"tick_ms": 250, "up_to": 100, "as_of": 3}, True, "p", True)
    assert set(GENERATORS) == {"counter", "auction", "marketing", "tpch"}


def test_tpch_snapshot_at_a_small_scale_factor():
    from dataflow.types import arrow_schema
    gen = make_generator("tpch", LoadGenOptions(scale_factor=0.001))
    out = gen.generate(0, 1)
    outputs = {o.name: o for o in gen.outputs()}
    assert sorted(out) == sorted(outputs) == ["customer", "lineitem", "nation", "orders", "part", "partsupp",
                                              "region", "supplier"]
    for name, batch in out.items():
        assert batch.schema == arrow_schema(list(outputs[name].types)), name
    assert out["nation"].num_rows == 25 and out["region"].num_rows == 5
    assert out["orders"].num_rows == 1500 and out["lineitem"].num_rows > 5000
    assert gen.generate(1, 10) == {}
