"""CREATE SOURCE ... FROM WEBHOOK: parsing and planning (Materialize's syntax).

    CREATE SOURCE [IF NOT EXISTS] name [IN CLUSTER c] FROM WEBHOOK
      BODY FORMAT TEXT | JSON [ARRAY] | BYTES
      [INCLUDE HEADER 'name' AS column [BYTES] | INCLUDE HEADERS [( [NOT] 'name' [, ...] )]] [...]
      [CHECK ( [WITH ( BODY [AS alias] [BYTES] | HEADERS [AS alias] | SECRET s [AS alias] [BYTES], ...)]
               boolean expression )]
      [WITH (RETENTION WINDOW [=] 'interval')]

The source is one relation: `body` (jsonb, text or bytea), then `headers` when INCLUDE HEADERS is
given, then one nullable column per INCLUDE HEADER. Materialize's `headers` is a
`map[text => text]`; Slipstream has no map type, so it is a jsonb object of the request's
headers (names lowercased, values strings): `headers->>'x-event'` reads one as text. Inside a
CHECK, `headers->'name'` (Materialize's map lookup) is read as `headers->>'name'`, so the
documented checks work as written (`constant_time_eq(headers->'x-api-key', 'token')`).

>>> from planner.parse import parse
>>> node = parse("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON ARRAY INCLUDE HEADER 'X-Event' AS ev")[0].ast
>>> node.body_format, node.mapped
('json_array', (('x-event', 'ev', False),))
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState
from dataflow.types import BYTEA, JSONB, TEXT, Column
from planner import mz_ast as m

BODY_FORMATS = ("json", "json_array", "text", "bytes")


@dataclass(frozen=True)
class CheckOption:
    """One `WITH (...)` item of a CHECK: what the expression can read, under which name."""

    kind: str  # 'body' | 'headers' | 'secret'
    alias: str
    bytes: bool = False
    secret: tuple[str, ...] | None = None  # the secret's (qualified) name


@dataclass(frozen=True)
class CreateWebhookSource:
    name: m.Name
    body_format: str  # one of BODY_FORMATS
    include_headers: bool
    allow: tuple[str, ...]  # INCLUDE HEADERS ('a', 'b'): only these; empty: all
    block: tuple[str, ...]  # INCLUDE HEADERS (NOT 'a'): all but these
    mapped: tuple[tuple[str, str, bool], ...]  # (header name, column, BYTES)
    check_options: tuple[CheckOption, ...]
    check_sql: str | None
    if_not_exists: bool
    retention_ms: int | None = None  # WITH (RETENTION WINDOW ...): storage/sources/retention.py


@dataclass(frozen=True)
class CreateWebhookSourcePlan:
    name: str
    schema: str
    database: str
    columns: tuple[Column, ...]
    config: dict  # the source's definition (storage.sources.webhook.WebhookSpec.from_json)
    if_not_exists: bool
    create_sql: str


def parse_webhook(c, name: m.Name, if_not_exists: bool) -> CreateWebhookSource:
    """After FROM WEBHOOK."""
    from planner.dialect import syntax_error_at
    c.expect("BODY", "FORMAT")
    if c.accept("JSON", "ARRAY"):
        body_format = "json_array"
    elif c.accept("JSON"):
        body_format = "json"
    elif c.accept("TEXT"):
        body_format = "text"
    elif c.accept("BYTES"):
        body_format = "bytes"
    else:
        t = c.peek()
        if t is not None and t.token_type not in (TokenType.STRING, TokenType.NUMBER):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"BODY FORMAT {t.text.upper()} not supported",
                           hint="Use BODY FORMAT TEXT, JSON, JSON ARRAY or BYTES.")
        raise syntax_error_at(t)
    include_headers = False
    allow: list[str] = []
    block: list[str] = []
    mapped: list[tuple[str, str, bool]] = []
    while c.accept("INCLUDE"):
        if c.accept("HEADERS"):
            if include_headers:
                raise SqlError(SqlState.SYNTAX_ERROR, "INCLUDE HEADERS specified more than once")
            include_headers = True
            if c.accept_type(TokenType.L_PAREN):
                while True:
                    negated = bool(c.accept("NOT"))
                    (block if negated else allow).append(_string(c).lower())
                    if c.accept_type(TokenType.R_PAREN):
                        break
                    c.expect_type(TokenType.COMMA)
        elif c.accept("HEADER"):
            header = _string(c).lower()
            c.expect("AS")
            column = c.ident()
            mapped.append((header, column, bool(c.accept("BYTES"))))
        else:
            raise syntax_error_at(c.peek())
    options: list[CheckOption] = []
    check_sql = None
    if c.accept("CHECK"):
        start, end = c.paren_span()
        inner = type(c)(c.text, c.toks[start:end])
        if inner.accept("WITH"):
            options = _check_options(inner)
        if inner.at_end():
            raise SqlError(SqlState.SYNTAX_ERROR, "CHECK needs an expression")
        check_sql = inner.rest_text()
    from planner.source_syntax import parse_source_with
    retention = parse_source_with(c)
    c.expect_end()
    return CreateWebhookSource(name, body_format, include_headers, tuple(allow), tuple(block), tuple(mapped),
                               tuple(options), check_sql, if_not_exists, retention)


def _string(c) -> str:
    from planner.dialect import syntax_error_at
    t = c.peek()
    if t is None or t.token_type != TokenType.STRING:
        raise syntax_error_at(t)
    c.pos += 1
    return t.text


def _check_options(c) -> list[CheckOption]:
    from planner.dialect import syntax_error_at
    c.expect_type(TokenType.L_PAREN)
    out: list[CheckOption] = []
    while True:
        secret = None
        if c.accept("BODY"):
            kind, alias = "body", "body"
        elif c.accept("HEADERS"):
            kind, alias = "headers", "headers"
        elif c.accept("SECRET"):
            secret = c.name()
            kind, alias = "secret", secret[-1]
        else:
            raise syntax_error_at(c.peek())
        if c.accept("AS"):
            alias = c.ident()
        as_bytes = bool(c.accept("BYTES"))
        out.append(CheckOption(kind, alias, as_bytes, secret))
        if c.accept_type(TokenType.R_PAREN):
            return out
        c.expect_type(TokenType.COMMA)


def plan_create_webhook_source(node: CreateWebhookSource, ctx, sql: str) -> CreateWebhookSourcePlan:
    from planner.lower_ddl import _qualified
    from planner.webhook_check import lower_check
    database, schema, name = _qualified(node.name, ctx)
    body_type = {"json": JSONB, "json_array": JSONB, "text": TEXT, "bytes": BYTEA}[node.body_format]
    columns = [Column("body", body_type, False)]
    if node.include_headers:
        columns.append(Column("headers", JSONB, False))
    for header, column, as_bytes in node.mapped:
        columns.append(Column(column, BYTEA if as_bytes else TEXT, True))
    seen: set[str] = set()
    for col in columns:
        if col.name in seen:
            raise SqlError(SqlState.DUPLICATE_COLUMN, f'column "{col.name}" specified more than once')
        seen.add(col.name)
    aliases = [o.alias for o in node.check_options]
    if len(set(aliases)) != len(aliases):
        raise SqlError(SqlState.DUPLICATE_COLUMN, "CHECK WITH names the same alias more than once")
    check = None
    if node.check_sql is not None:
        from planner.webhook_check import find_secret_id
        options = tuple({"kind": o.kind, "alias": o.alias, "bytes": o.bytes,
                         "secret": list(o.secret) if o.secret else None,
                         "secret_id": find_secret_id(ctx, list(o.secret)) if o.secret else None}
                        for o in node.check_options)
        check = {"expr": node.check_sql, "options": list(options)}
        lower_check(check, ctx.catalog)  # type-checks it now: a bad CHECK fails CREATE SOURCE
    config = {"type": "webhook", "body_format": node.body_format,
              "headers": {"allow": list(node.allow), "block": list(node.block)} if node.include_headers else None,
              "mapped": [list(m_) for m_ in node.mapped], "check": check, "retention_ms": node.retention_ms}
    return CreateWebhookSourcePlan(name, schema, database, tuple(columns), config, node.if_not_exists, sql)
