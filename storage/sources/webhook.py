"""Webhook sources: what a request becomes (Materialize's rules), independent of HTTP.

A webhook source is one relation filled by HTTP POSTs to `/api/webhook/<db>/<schema>/<name>`
(`server/http/webhook.py`). Its definition (`WebhookSpec`, stored as the catalog item's JSON
definition) says how a request body decodes and which headers become columns:

    BODY FORMAT TEXT        one row, body text (400 if not UTF-8)
    BODY FORMAT BYTES       one row, body bytea, as received
    BODY FORMAT JSON        one row per JSON document: a body of several whitespace-separated
                            documents (NDJSON) is several rows; 400 if not JSON
    BODY FORMAT JSON ARRAY  a top-level array is one row per element (an empty array: none); any
                            other document is one row

    INCLUDE HEADERS [( [NOT] 'h', ... )]   a `headers` column: jsonb object of the (filtered)
                                           headers, names lowercased (no map type here)
    INCLUDE HEADER 'h' AS c [BYTES]        a nullable text (or bytea) column; NULL when absent

    decode_request(spec, b'{"a": 1}\\n{"a": 2}', {"x-ev": "e"}) -> 2 rows (body, [headers], mapped...)

Every failure is a `WebhookError` carrying the HTTP status Materialize answers with.
Per-request work here is Python (parsing a body is inherently per request); turning a group of
decoded requests into one Arrow batch is a single `pa.array` per column (`rows_batch`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa

from dataflow.jsonb import canonical
from dataflow.types import BYTEA, JSONB, TEXT, SqlType
from storage.sources.base import updates

# Materialize's request limits.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_CONCURRENT_REQUESTS = 500


class WebhookError(Exception):
    """A request refused: the HTTP status and the message the client reads."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class WebhookSpec:
    body_format: str  # 'json' | 'json_array' | 'text' | 'bytes'
    headers: tuple[tuple[str, ...], tuple[str, ...]] | None  # (allow, block) when INCLUDE HEADERS
    mapped: tuple[tuple[str, bool], ...]  # (header name, as bytes) per INCLUDE HEADER column
    check: dict | None  # {"expr": sql, "options": [...]} (planner/webhook_check.py)

    @classmethod
    def from_json(cls, d: dict) -> "WebhookSpec":
        h = d.get("headers")
        return cls(d["body_format"], None if h is None else (tuple(h["allow"]), tuple(h["block"])),
                   tuple((name, bool(as_bytes)) for name, _, as_bytes in d.get("mapped", ())), d.get("check"))

    @property
    def types(self) -> tuple[SqlType, ...]:
        body = {"json": JSONB, "json_array": JSONB, "text": TEXT, "bytes": BYTEA}[self.body_format]
        return (body,) + ((JSONB,) if self.headers is not None else ()) + \
            tuple(BYTEA if b else TEXT for _, b in self.mapped)


def collect_headers(items) -> dict[str, str]:
    """(name, value) pairs of a request -> {lowercased name: value}; a name given twice is
    refused with 401, as Materialize does."""
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if key in out:
            raise WebhookError(401, f"headers of request were invalid: {key} provided more than once")
        out[key] = value
    return out


# -- bodies ---------------------------------------------------------------------------------

def _pairs(items):
    return dict(items)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant,
                            object_pairs_hook=_pairs)
_WS = " \t\n\r"


def json_documents(text: str) -> list:
    """Every whitespace-separated JSON document of `text` (NDJSON), parsed as jsonb parses."""
    docs, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i >= n:
            break
        try:
            doc, i = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError) as e:
            raise WebhookError(400, f"failed to deserialize body as jsonb: {e}") from None
        docs.append(doc)
    if not docs:
        raise WebhookError(400, "failed to deserialize body as jsonb: EOF while parsing a value")
    return docs


def decode_body(body_format: str, body: bytes) -> list:
    """The body column's value of every row a body makes (jsonb as its canonical text)."""
    if body_format == "bytes":
        return [body]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        kind = "text" if body_format == "text" else "jsonb"
        raise WebhookError(400, f"failed to deserialize body as {kind}: {e}") from None
    if body_format == "text":
        return [text]
    docs = json_documents(text)
    if body_format == "json_array":
        docs = [e for d in docs for e in (d if isinstance(d, list) else [d])]
    return [canonical(d) for d in docs]


def header_values(spec: WebhookSpec, headers: dict[str, str]) -> tuple:
    """The values of the header columns (after `body`) for a request."""
    out: list = []
    if spec.headers is not None:
        allow, block = spec.headers
        kept = {k: v for k, v in headers.items() if (not allow or k in allow) and k not in block}
        out.append(canonical(dict(sorted(kept.items()))))
    for name, as_bytes in spec.mapped:
        v = headers.get(name)
        out.append(None if v is None else (v.encode("utf-8", "surrogateescape") if as_bytes else v))
    return tuple(out)


@dataclass
class DecodedRequest:
    """One accepted request's rows: the body values and the header columns shared by them."""

    bodies: list
    header_row: tuple
    nbytes: int


def decode_request(spec: WebhookSpec, body: bytes, headers: dict[str, str]) -> DecodedRequest:
    if len(body) > MAX_BODY_BYTES:
        raise WebhookError(413, f"request body exceeds the maximum allowed size of {MAX_BODY_BYTES} bytes")
    return DecodedRequest(decode_body(spec.body_format, body), header_values(spec, headers), len(body))


def rows_batch(spec: WebhookSpec, requests: list[DecodedRequest]) -> pa.Table:
    """One update batch (diff +1, time 0: the write assigns it) of every row of `requests`."""
    types = spec.types
    bodies = [b for r in requests for b in r.bodies]
    columns: list[list] = [bodies]
    for k in range(len(types) - 1):
        columns.append([r.header_row[k] for r in requests for _ in r.bodies])
    return updates(types, columns, 1)

