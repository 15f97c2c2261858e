"""Webhook sources without a server: the DDL's parsing and planning (columns, SQLSTATEs), body
decoding for every BODY FORMAT (Materialize's rules, 400 for a bad body), header columns, and
the CHECK evaluated with the engine's kernels over a batch of requests."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json

import pytest

from catalog.durable import Catalog
from dataflow.errors import SqlError
from dataflow.types import BYTEA, JSONB, TEXT
from planner.parse import parse
from planner.planning import plan_statement
from planner.webhook_syntax import CreateWebhookSourcePlan
from storage.sources.webhook import (MAX_BODY_BYTES, WebhookError, WebhookSpec, collect_headers, decode_body,
                                     decode_request, rows_batch)
from storage.sources.webhook_ingest import WebhookIngest, _evaluate, _Queued


@pytest.fixture
def catalog(tmp_path):
    c = Catalog.open(tmp_path / "catalog.sqlite")
    yield c
    c.close()


def plan(catalog, sql: str) -> CreateWebhookSourcePlan:
    p = plan_statement(catalog, parse(sql)[0])
    assert isinstance(p, CreateWebhookSourcePlan)
    return p


def spec_of(p: CreateWebhookSourcePlan) -> WebhookSpec:
    return WebhookSpec.from_json(json.loads(json.dumps(p.config)))


# -- DDL ----------------------------------------------------------------------------------------

def test_columns_follow_materialize(catalog):
    p = plan(catalog, "CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON")
    assert [(c.name, c.type, c.nullable) for c in p.columns] == [("body", JSONB, False)]
    p = plan(catalog, "CREATE SOURCE w IN CLUSTER quickstart FROM WEBHOOK BODY FORMAT TEXT INCLUDE HEADERS "
                      "INCLUDE HEADER 'X-Event' AS ev INCLUDE HEADER 'sig' AS sig BYTES")
    assert [(c.name, c.type, c.nullable) for c in p.columns] == [
        ("body", TEXT, False), ("headers", JSONB, False), ("ev", TEXT, True), ("sig", BYTEA, True)]
    assert p.config["mapped"] == [["x-event", "ev", False], ["sig", "sig", True]]
    p = plan(catalog, "CREATE SOURCE w FROM WEBHOOK BODY FORMAT BYTES INCLUDE HEADERS (NOT 'authorization', 'a')")
    assert p.columns[0].type == BYTEA and p.config["headers"] == {"allow": ["a"], "block": ["authorization"]}
    assert plan(catalog, "CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON ARRAY").config["body_format"] == "json_array"


@pytest.mark.parametrize("sql, sqlstate", [
    ("CREATE SOURCE w FROM WEBHOOK", "42601"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT AVRO", "0A000"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADER 'a' AS body", "42701"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADERS INCLUDE HEADERS", "42601"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (BODY) body)", "42804"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (BODY) nope = 'x')", "42703"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (SECRET s) s = 'x')", "42704"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (HEADERS BYTES) true)", "0A000"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (BODY) body IN (SELECT 'a'))", "0A000"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (BODY, BODY) true)", "42701"),
    ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON extra", "42601"),
    ("CREATE SOURCE w FROM MYSQL CONNECTION k (TOPIC 't')", "0A000"),
])
def test_bad_ddl(catalog, sql, sqlstate):
    with pytest.raises(SqlError) as e:
        plan_statement(catalog, parse(sql)[0])
    assert e.value.sqlstate == sqlstate, e.value.message


# -- bodies -------------------------------------------------------------------------------------

def test_body_formats():
    assert decode_body("bytes", b"\xff\x00raw") == [b"\xff\x00raw"]
    assert decode_body("text", "héllo".encode()) == ["héllo"]
    assert decode_body("json", b' {"b": 1, "a": [1.50, true]} ') == ['{"a": [1.50, true], "b": 1}']
    # NDJSON: several documents, several rows.
    assert decode_body("json", b'{"a": 1}\n{"a": 2}\n\n3') == ['{"a": 1}', '{"a": 2}', "3"]
    # JSON: an array is one row; JSON ARRAY: one row per element, a non-array one row.
    assert decode_body("json", b"[1, 2]") == ["[1, 2]"]
    assert decode_body("json_array", b'[{"e": "a"}, {"e": "b"}, {"e": "c"}]') == ['{"e": "a"}', '{"e": "b"}', '{"e": "c"}']
    assert decode_body("json_array", b'{"e": "d"}') == ['{"e": "d"}']
    assert decode_body("json_array", b"[]") == []
    assert decode_body("json_array", b"[1, 2]\n[3]") == ["1", "2", "3"]


@pytest.mark.parametrize("fmt, body", [
    ("text", b"\xff\xfe"), ("json", b"\xff"), ("json", b"{"), ("json", b""), ("json", b"   "),
    ("json", b"NaN"), ("json", b'{"a": 1} garbage'), ("json_array", b"[1, 2"), ("json_array", b"[{}, {]"),
])
def test_bad_bodies_are_400(fmt, body):
    with pytest.raises(WebhookError) as e:
        decode_body(fmt, body)
    assert e.value.status == 400


def test_body_limit_is_413(catalog):
    spec = spec_of(plan(catalog, "CREATE SOURCE w FROM WEBHOOK BODY FORMAT BYTES"))
    assert decode_request(spec, b"x" * MAX_BODY_BYTES, {}).bodies == [b"x" * MAX_BODY_BYTES]
    with pytest.raises(WebhookError) as e:
        decode_request(spec, b"x" * (MAX_BODY_BYTES + 1), {})
    assert e.value.status == 413


def test_duplicate_header_is_401():
    assert collect_headers([("X-A", "1"), ("b", "2")]) == {"x-a": "1", "b": "2"}
    with pytest.raises(WebhookError) as e:
        collect_headers([("X-A", "1"), ("x-a", "2")])
    assert e.value.status == 401 and "x-a provided more than once" in e.value.message


def test_header_columns_and_batch(catalog):
    spec = spec_of(plan(catalog, "CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON ARRAY "
                                 "INCLUDE HEADERS (NOT 'authorization') INCLUDE HEADER 'x-ev' AS ev "
                                 "INCLUDE HEADER 'x-missing' AS missing BYTES INCLUDE HEADER 'x-sig' AS sig BYTES"))
    headers = {"authorization": "secret", "x-ev": "signup", "x-sig": "abc", "content-type": "application/json"}
    a = decode_request(spec, b"[1, 2]", headers)
    b = decode_request(spec, b'"x"', {"x-ev": "other"})
    batch = rows_batch(spec, [a, b])
    rows = [tuple(r.values()) for r in batch.to_pylist()]
    expected_headers = '{"x-ev": "signup", "x-sig": "abc", "content-type": "application/json"}'
    assert rows == [
        ("1", expected_headers, "signup", None, b"abc", 0, 1),
        ("2", expected_headers, "signup", None, b"abc", 0, 1),
        ('"x"', '{"x-ev": "other"}', "other", None, None, 0, 1),
    ]


# -- CHECK --------------------------------------------------------------------------------------

def _queued(spec, check, body: bytes, headers: dict) -> _Queued:
    return _Queued("u1", spec, check, decode_request(spec, body, headers), body, headers, None)


def _check_results(catalog, sql: str, requests: list[tuple[bytes, dict]]) -> list:
    p = plan(catalog, sql)
    spec = spec_of(p)
    ingest = WebhookIngest(coord=type("C", (), {"catalog": catalog})())
    check = ingest._compile_check(spec)
    results = _evaluate(check, [_queued(spec, check, b, h) for b, h in requests], catalog)
    return [r if not isinstance(r, WebhookError) else r.status for r in results]


def test_check_api_key(catalog):
    sql = ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (HEADERS, BODY AS request_body) "
           "constant_time_eq(headers->'x-api-key', 'token'))")
    got = _check_results(catalog, sql, [(b"{}", {"x-api-key": "token"}), (b"{}", {"x-api-key": "nope"}),
                                        (b"{}", {})])
    assert got == [True, False, None]  # a missing header: NULL, not true: refused


def test_check_hmac_signature(catalog):
    key = "shh"
    sql = ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (HEADERS, BODY AS request_body) "
           "constant_time_eq(decode(headers->'x-signature', 'base64'), "
           f"hmac(request_body, '{key}', 'sha256')))")
    bodies = [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    good = [base64.b64encode(hmac.new(key.encode(), b, hashlib.sha256).digest()).decode() for b in bodies]
    requests = [(bodies[0], {"x-signature": good[0]}), (bodies[1], {"x-signature": good[0]}),
                (bodies[2], {"x-signature": "%%% not base64"}), (bodies[2], {"x-signature": good[2]})]
    # The third request's decode fails: only it is refused (evaluated alone after the batch failed).
    assert _check_results(catalog, sql, requests) == [True, False, 400, True]


def test_check_over_bytes_body_and_plain_predicates(catalog):
    sql = ("CREATE SOURCE w FROM WEBHOOK BODY FORMAT BYTES CHECK (WITH (BODY AS b BYTES, HEADERS AS h) "
           "length(b) < 4 AND h->>'x-kind' LIKE 'ok%')")
    got = _check_results(catalog, sql, [(b"abc", {"x-kind": "ok1"}), (b"abcd", {"x-kind": "ok"}),
                                        (b"a", {"x-kind": "bad"})])
    assert got == [True, False, False]


def test_hmac_and_constant_time_eq_in_sql(catalog):
    from dataflow.render import evaluate_constant
    p = plan_statement(catalog, parse("SELECT encode(hmac('data', 'key', 'sha256'), 'hex'), "
                                      "constant_time_eq('a', 'a'), constant_time_eq('a'::bytea, 'b'::bytea), "
                                      "encode(hmac('data'::bytea, 'key'::bytea, 'md5'), 'hex')")[0])
    row = evaluate_constant(p.plan, 0).to_pylist()[0]
    assert list(row.values())[:4] == [hmac.new(b"key", b"data", "sha256").hexdigest(), True, False,
                                     hmac.new(b"key", b"data", "md5").hexdigest()]
