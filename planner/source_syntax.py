"""CREATE SOURCE ... FROM LOAD GENERATOR: parsing and planning (Materialize's syntax).

    CREATE SOURCE [IF NOT EXISTS] name [IN CLUSTER c]
      FROM LOAD GENERATOR COUNTER | AUCTION | MARKETING | TPCH
      [( [TICK INTERVAL 'interval'] [, AS OF tick] [, UP TO tick] [, SCALE FACTOR x]
         [, MAX CARDINALITY n] )]
      [FOR ALL TABLES] [EXPOSE PROGRESS AS progress_name]
      [WITH (RETENTION WINDOW [=] 'interval')]

COUNTER is a single-output generator: the source itself is the relation (column `counter`).
AUCTION, MARKETING and TPCH need FOR ALL TABLES, which creates one subsource per relation in the
source's schema. Every source also gets a progress subsource (`<name>_progress`, column
`offset`): the next tick it will generate. `FROM WEBHOOK` continues in planner/webhook_syntax.py.
`FROM POSTGRES` in planner/pg_source_syntax.py, `FROM KAFKA` in planner/kafka_syntax.py. Other
source types (MySQL, ...) and the KEY VALUE / DATUMS / CLOCK generators are refused with 0A000.
RETENTION WINDOW (Slipstream's, not Materialize's) retracts the rows of an append-only source a
window after they arrived (storage/sources/retention.py); Materialize's RETAIN HISTORY is 0A000.

>>> from planner.parse import parse
>>> parse("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms')")[0].ast.options
(('tick_ms', 100),)
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState
from planner import mz_ast as m

_GENERATORS = ("COUNTER", "AUCTION", "MARKETING", "TPCH")
_UNSUPPORTED_GENERATORS = {"KEY": "KEY VALUE", "DATUMS": "DATUMS", "CLOCK": "CLOCK"}
_UNSUPPORTED_FROM = {"MYSQL": "MySQL", "SQL": "SQL Server", "KINESIS": "Kinesis", "S3": "S3",
                     "FILE": "file"}

# option words -> (option key, value kind)
_OPTIONS = {
    ("TICK", "INTERVAL"): ("tick_ms", "interval"),
    ("AS", "OF"): ("as_of", "int"),
    ("UP", "TO"): ("up_to", "int"),
    ("SCALE", "FACTOR"): ("scale_factor", "number"),
    ("MAX", "CARDINALITY"): ("max_cardinality", "int"),
}
# Materialize's KEY VALUE generator options: known words, not supported here.
_KEY_VALUE_OPTIONS = (("KEYS",), ("SNAPSHOT", "ROUNDS"), ("TRANSACTIONAL", "SNAPSHOT"), ("VALUE", "SIZE"),
                      ("SEED",), ("PARTITIONS",), ("BATCH", "SIZE"))
_OPTION_WORDS = {"tick_ms": "TICK INTERVAL", "as_of": "AS OF", "up_to": "UP TO", "scale_factor": "SCALE FACTOR",
                 "max_cardinality": "MAX CARDINALITY", "retention_ms": "RETENTION WINDOW"}


@dataclass(frozen=True)
class CreateSource:
    name: m.Name
    generator: str  # 'counter' | 'auction' | 'marketing' | 'tpch'
    options: tuple[tuple[str, Any], ...]
    for_all_tables: bool
    progress_name: str | None
    if_not_exists: bool
    retention_ms: int | None = None


@dataclass(frozen=True)
class CreateSourcePlan:
    name: str
    schema: str
    database: str
    generator: str
    options: dict
    subsources: tuple[str, ...]  # output names (empty: COUNTER, the source itself)
    progress_name: str
    if_not_exists: bool
    create_sql: str
    retention_ms: int | None = None


def parse_create_source(c) -> "CreateSource | CreateWebhookSource":
    """After CREATE (at SOURCE)."""
    from planner.dialect import interval_ms, syntax_error_at
    c.expect("SOURCE")
    if_not_exists = bool(c.accept("IF", "NOT", "EXISTS"))
    name = c.name()
    if c.accept("IN", "CLUSTER"):
        from planner.cluster_syntax import check_cluster
        check_cluster(c.ident())
    c.expect("FROM")
    if c.accept("WEBHOOK"):  # planner/webhook_syntax.py
        from planner.webhook_syntax import parse_webhook
        return parse_webhook(c, name, bool(if_not_exists))
    if c.accept("POSTGRES"):
        from planner.pg_source_syntax import parse_postgres_source
        return parse_postgres_source(c, name, if_not_exists)
    if c.accept("KAFKA"):  # planner/kafka_syntax.py
        from planner.kafka_syntax import parse_kafka_source
        return parse_kafka_source(c, name, if_not_exists)
    if not c.accept("LOAD", "GENERATOR"):
        t = c.peek()
        word = t.text.upper() if t is not None else ""
        if word in _UNSUPPORTED_FROM:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"CREATE SOURCE ... FROM {word} not yet supported",
                           detail=f"{_UNSUPPORTED_FROM[word]} sources are not built yet; load generators, "
                                  "webhook, PostgreSQL and Kafka sources are.")
        raise syntax_error_at(t)
    t = c.peek()
    word = t.text.upper() if t is not None else ""
    if word in _UNSUPPORTED_GENERATORS:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                       f"LOAD GENERATOR {_UNSUPPORTED_GENERATORS[word]} not yet supported")
    if word not in _GENERATORS:
        raise syntax_error_at(t)
    c.pos += 1
    generator = word.lower()
    options: dict[str, Any] = {}
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        c.expect_type(TokenType.L_PAREN)
        while True:
            for words, (key, kind) in _OPTIONS.items():
                if c.accept(*words):
                    break
            else:
                for words in _KEY_VALUE_OPTIONS:
                    if c.accept(*words):
                        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                                       f"LOAD GENERATOR option {' '.join(words)} not yet supported")
                raise syntax_error_at(c.peek())
            if key in options:
                raise SqlError(SqlState.SYNTAX_ERROR, f"{_OPTION_WORDS[key]} specified more than once")
            c.accept_type(TokenType.EQ)
            options[key] = _option_value(c, key, kind, interval_ms, syntax_error_at)
            if c.accept_type(TokenType.R_PAREN):
                break
            c.expect_type(TokenType.COMMA)
    for_all = False
    if c.accept("FOR", "ALL", "TABLES"):
        for_all = True
    elif c.accept("FOR", "TABLES") or c.accept("FOR", "SCHEMAS"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE SOURCE ... FOR TABLES (...) not yet supported",
                       hint="Use FOR ALL TABLES.")
    progress = None
    if c.accept("EXPOSE", "PROGRESS", "AS"):
        parts = c.name()
        progress = parts[-1]
    retention = parse_source_with(c)
    c.expect_end()
    return CreateSource(name, generator, tuple(sorted(options.items())), for_all, progress, if_not_exists,
                        retention)


def parse_source_with(c) -> int | None:
    """`[WITH (RETENTION WINDOW [=] 'interval')]` after an append-only source's definition: the
    window in milliseconds, or None."""
    from planner.dialect import interval_ms, syntax_error_at
    if not c.accept("WITH"):
        return None
    c.expect_type(TokenType.L_PAREN)
    if c.accept("RETAIN", "HISTORY"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE SOURCE ... WITH (RETAIN HISTORY ...) not yet supported",
                       hint="Old versions are not kept. To drop a source's old rows, use "
                            "WITH (RETENTION WINDOW = 'interval').")
    if not c.accept("RETENTION", "WINDOW"):
        t = c.peek()
        if t is not None and t.token_type not in (TokenType.R_PAREN, TokenType.STRING):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"CREATE SOURCE ... WITH ({t.text.upper()} ...) not supported",
                           hint="The one option is RETENTION WINDOW.")
        raise syntax_error_at(t)
    c.accept_type(TokenType.EQ)
    window = _option_value(c, "retention_ms", "interval", interval_ms, syntax_error_at)
    c.expect_type(TokenType.R_PAREN)
    return window


def _option_value(c, key: str, kind: str, interval_ms, syntax_error_at) -> Any:
    t = c.peek()
    if t is None:
        raise syntax_error_at(None)
    word = _OPTION_WORDS[key]
    negative = False
    if t.text == "-" and t.token_type not in (TokenType.STRING,):
        negative = True
        c.pos += 1
        t = c.peek()
        if t is None:
            raise syntax_error_at(None)
    c.pos += 1
    if kind == "interval":
        if t.token_type not in (TokenType.STRING, TokenType.NUMBER) or negative:
            if negative:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} must be positive")
            raise syntax_error_at(t)
        text = t.text.strip()
        ms = interval_ms(text) if text else 0
        if ms <= 0:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} must be positive, got '{t.text}'")
        return ms
    if t.token_type not in (TokenType.NUMBER, TokenType.STRING):
        raise syntax_error_at(t)
    try:
        value = Decimal(t.text.strip())
    except InvalidOperation:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for {word}: "{t.text}"') from None
    if negative:
        value = -value
    if kind == "int":
        if value != value.to_integral_value():
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'{word} must be an integer, got "{t.text}"')
        if value < 0:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} must not be negative")
        if value > 2 ** 62:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} is out of range")
        return int(value)
    if value <= 0:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} must be positive")
    if value > 1000:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{word} must be at most 1000")
    return float(value)


def plan_create_source(node: CreateSource, ctx, sql: str) -> CreateSourcePlan:
    from planner.lower_ddl import _qualified
    from storage.sources import GENERATORS
    database, schema, name = _qualified(node.name, ctx)
    gen = GENERATORS[node.generator]
    kind_word = node.generator.upper()
    for key, _ in node.options:
        if key in ("tick_ms", "as_of", "up_to"):
            continue
        if key not in gen.accepts:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f"LOAD GENERATOR {kind_word} does not support {_OPTION_WORDS[key]}")
    options = dict(node.options)
    if gen.single_output and node.for_all_tables:
        raise SqlError(SqlState.SYNTAX_ERROR, "FOR ALL TABLES is only valid for multi-output sources",
                       hint=f"LOAD GENERATOR {kind_word} has a single output: the source itself.")
    if not gen.single_output and not node.for_all_tables:
        raise SqlError(SqlState.SYNTAX_ERROR,
                       "multi-output sources require a FOR TABLES (..) or FOR ALL TABLES statement")
    if options.get("up_to") is not None and options["up_to"] < options.get("as_of", 0):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "UP TO cannot be less than AS OF")
    outputs = () if gen.single_output else tuple(o.name for o in gen(None).outputs())
    if node.retention_ms is not None:
        from storage.sources.base import LoadGenOptions
        if not gen(LoadGenOptions(**options)).growing():
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"RETENTION WINDOW for LOAD GENERATOR {kind_word}"
                           + (" with MAX CARDINALITY" if options.get("max_cardinality") is not None else "")
                           + " not supported",
                           hint="A retention window is for relations that only grow: COUNTER (without "
                                "MAX CARDINALITY), AUCTION's auctions and bids, webhook sources.")
    return CreateSourcePlan(name, schema, database, node.generator, options, outputs,
                            node.progress_name or f"{name}_progress", node.if_not_exists, sql,
                            node.retention_ms)
