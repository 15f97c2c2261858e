"""The fuzzer's own pieces, without servers: determinism, rendering, comparison, shrinking
candidates, sqllogictest parsing."""

from __future__ import annotations

import random
from decimal import Decimal

from tests.fuzz.compare import multiset_eq, sequence_eq, value_eq
from tests.fuzz.engine import Result, judge
from tests.fuzz.fuzzer import Case, candidates, fingerprint
from tests.fuzz.gen import Features, QueryGen
from tests.fuzz.schema import random_schema
from tests.fuzz.slt import format_rows, parse
from tests.fuzz.sqlast import Names, OrderKey, Select, Lit


def queries(seed: int, n: int, features: Features | None = None) -> list[str]:
    schema = random_schema(random.Random(seed))
    return [QueryGen(random.Random(f"{seed}-{i}"), schema, features).query().render(Names("p_"))
            for i in range(n)]


def test_same_seed_same_queries():
    assert queries(3, 30) == queries(3, 30)
    assert queries(3, 30) != queries(4, 30)


def test_generator_covers_the_constructs():
    text = "\n".join(sql for seed in range(12) for sql in queries(seed, 80))
    for construct in ["LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "USING (", ", p_t",
                      "UNION", "EXCEPT", "INTERSECT", "WITH ", "GROUP BY", "HAVING", "DISTINCT",
                      "ORDER BY", "LIMIT", "OFFSET", "IS NOT DISTINCT FROM", "BETWEEN", "SYMMETRIC",
                      " IN (SELECT", "LIKE", "ILIKE", "!~~", "CASE", "coalesce(", "nullif(",
                      "greatest(", "least(", "CAST(", "::", "lower(", "upper(", "length(",
                      "substr", "trim(", "replace(", "||", "abs(", "round(", "floor(", "ceil",
                      "count(DISTINCT", "sum(", "avg(", "min(", "max(", "IS UNKNOWN", "%"]:
        assert construct in text, construct


def test_generator_covers_the_library_and_the_newer_types():
    text = "\n".join(sql for seed in range(40) for sql in queries(seed, 80))
    for construct in [
            # math
            "sqrt(", "cbrt(", "exp(", "ln(", "log(", "power(", "mod(", "div(", "gcd(", "lcm(",
            "trunc(", "sign(", "width_bucket(", "sin(", "atan2", " & ", " | ", " # ", "(~ ", " << ",
            " >> ", " ^ ",
            # strings
            "concat(", "concat_ws(", "left(", "right(", "lpad(", "rpad(", "repeat(", "reverse(",
            "position(", "strpos(", "split_part(", "initcap(", "md5(", "to_hex(", "ascii(", "chr(",
            "translate(", "overlay(", "starts_with(", "regexp_replace(", "regexp_like(", " ~ ",
            "format(",
            # date/time
            "date_trunc(", "extract(", "date_part(", "age(", "make_date(", "make_interval(",
            "justify_", "to_char(", "AS interval)", "AS time)", "INTERVAL '",
            # jsonb
            " -> ", " ->> ", " #> ", " @> ", " ? ", "jsonb_typeof(", "jsonb_array_length(",
            "jsonb_build_object(", "to_jsonb(",
            # arrays
            "ARRAY[", ")[", "array_length(", "array_position(", "array_cat(", "array_append(",
            "cardinality(", "= ANY (", "<> ALL (", " && ",
            # bytea, uuid
            "decode(", "encode(", "AS bytea)", "AS uuid)",
            # aggregates
            "bool_and(", "bool_or(", "every(", "string_agg(", "array_agg(", "jsonb_agg(",
            "variance(", "stddev", "FILTER (WHERE", " ORDER BY ",
            # set-returning functions
            "generate_series(", "unnest(", "AS g",
            # casts to varchar(n)/character(n)
            "varchar(", "char("]:
        assert construct in text, construct
    schemas = [random_schema(random.Random(seed)) for seed in range(80)]
    declared = {t for s in schemas for tab in s.tables for _, t in tab.columns}
    for t in ["interval", "time", "bytea", "uuid", "jsonb", "text[]", "integer[]", "varchar(5)",
              "character(3)"]:
        assert t in declared, t


def test_known_bug_constructs_can_be_switched_off():
    text = "\n".join(sql for seed in range(8) for sql in
                     queries(seed, 80, Features.avoiding_known_bugs()))
    for construct in ["NOT LIKE", "NOT ILIKE", "!~~", "SYMMETRIC"]:
        assert construct not in text


def test_values_compare_with_tolerance():
    assert value_eq(Decimal("0.3333333333333333"), Decimal("0.33333333333333333333"))
    assert not value_eq(Decimal("0.33"), Decimal("0.34"))
    assert value_eq(float("nan"), float("nan"))
    assert not value_eq(1, True)
    assert value_eq(3, Decimal("3.00"))
    assert value_eq(1.0000000001, 1.0)
    assert not value_eq(1.001, 1.0)
    assert multiset_eq([(1, "a"), (2, None)], [(2, None), (1, "a")], [1e-9, 1e-9])
    assert not multiset_eq([(1,), (1,)], [(1,)], [1e-9])
    assert not sequence_eq([(1,), (2,)], [(2,), (1,)], [1e-9])


def test_judge_orders_only_on_a_total_order():
    q = Select(items=[(Lit("1", "integer"), "x0"), (Lit("2", "integer"), "x1")])
    q.order_by = [OrderKey(1)]
    ss = Result(rows=[(1, 2), (1, 1)], oids=[23, 23])
    pg = Result(rows=[(1, 1), (1, 2)], oids=[23, 23])
    assert judge(q, ss, pg).status == "ok"           # ties in the key: any order
    q.order_by = [OrderKey(1), OrderKey(2)]
    assert judge(q, ss, pg).failed
    q.order_by, q.limit = [OrderKey(1)], 1
    assert judge(q, Result(rows=[(1, 2)], oids=[23, 23]), Result(rows=[(1, 1)], oids=[23, 23])).status == "ok"
    assert judge(q, Result(sqlstate="0A000", message="x not yet supported"), pg).status == "refused"


def test_judge_compares_numeric_scales():
    one = Select(items=[(Lit("1", "numeric"), "x0")])
    pg = Result(rows=[(Decimal("1.50"),)], oids=[1700])
    assert judge(one, Result(rows=[(Decimal("1.50"),)], oids=[1700]), pg).status == "ok"
    assert judge(one, Result(rows=[(Decimal("1.5"),)], oids=[1700]), pg).status == "ok"
    assert judge(one, Result(rows=[(Decimal("1.5"),)], oids=[1700]), pg, check_scale=True).kind == "scale"
    # PostgreSQL's 20 division digits are more than Slipstream keeps: values only.
    pg = Result(rows=[(Decimal("0.33333333333333333333"),)], oids=[1700])
    assert judge(one, Result(rows=[(Decimal("0.3333333333333333"),)], oids=[1700]), pg,
                 check_scale=True).status == "ok"


def test_shrink_candidates_render():
    schema = random_schema(random.Random(5))
    for i in range(20):
        q = QueryGen(random.Random(f"5-{i}"), schema).query()
        for cand in list(candidates(Case("query", schema, q)))[:200]:
            cand.query.render(Names())


def test_fingerprint_ignores_names_and_literals():
    assert fingerprint("SELECT a1.c0 FROM t0 AS a1 WHERE a1.c0 = 'x'") == \
        fingerprint("SELECT a7.c3 FROM t2 AS a7 WHERE a7.c3 = 'y'")


def test_slt_parse_and_format():
    recs = parse("statement ok\nCREATE TABLE t (a int)\n\nquery IT rowsort\nSELECT 1, 'x'\n----\n1\nx\n")
    assert [r.kind for r in recs] == ["statement", "query"]
    assert recs[1].expected == ["1", "x"]
    assert format_rows([(None, ""), (2.5, True)], "RT", "rowsort") == ["2.500", "true", "NULL", "(empty)"]


def test_judge_tolerates_float_moments_only_where_documented():
    from tests.fuzz.sqlast import Op
    moments = Select(items=[(Op("stddev_samp({0})", [Lit("x", "double precision")], "double precision"), "x0")])
    plain = Select(items=[(Lit("x", "double precision"), "x0")])
    ss, pg = Result(rows=[(0.0,)], oids=[701]), Result(rows=[(7.25e-17,)], oids=[701])
    assert judge(moments, ss, pg).status == "ok"
    assert judge(plain, ss, pg).failed
