"""Kafka / Redpanda in SQL (Materialize's syntax): connections, sources and sinks.

    CREATE CONNECTION [IF NOT EXISTS] k TO KAFKA (
        BROKER 'host:9092' | BROKERS ('h1:9092', 'h2:9092')
        [, SECURITY PROTOCOL [=] 'PLAINTEXT' | 'SASL_PLAINTEXT']
        [, SASL MECHANISMS [=] 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512']
        [, SASL USERNAME [=] 'user' | SECRET s] [, SASL PASSWORD [=] SECRET s]
    ) [WITH (VALIDATE [=] false)]
    CREATE CONNECTION [IF NOT EXISTS] csr TO CONFLUENT SCHEMA REGISTRY (
        URL [=] 'http://host:8081' [, USERNAME [=] 'user' | SECRET s] [, PASSWORD [=] SECRET s]
    ) [WITH (VALIDATE [=] false)]

    CREATE SOURCE [IF NOT EXISTS] s [IN CLUSTER c]
      FROM KAFKA CONNECTION k (TOPIC [=] 't' [, GROUP ID PREFIX [=] 'p'])
      [ KEY FORMAT f VALUE FORMAT f | FORMAT f ]
      [ INCLUDE KEY [AS n] | PARTITION [AS n] | OFFSET [AS n] | TIMESTAMP [AS n] [, ...] ]
      [ ENVELOPE NONE | UPSERT | DEBEZIUM ]
      [ EXPOSE PROGRESS AS name ]
    f := BYTES | TEXT | JSON | AVRO USING CONFLUENT SCHEMA REGISTRY CONNECTION csr

    CREATE SINK [IF NOT EXISTS] snk [IN CLUSTER c] FROM relation
      INTO KAFKA CONNECTION k (TOPIC [=] 't') [KEY (col, ...) [NOT ENFORCED]]
      FORMAT JSON | FORMAT AVRO USING CONFLUENT SCHEMA REGISTRY CONNECTION csr
      ENVELOPE UPSERT | DEBEZIUM
    DROP SINK [IF EXISTS] snk [, ...]                (planner/connection_syntax.py's parse_drop)

Refused with 0A000: TLS / SSL options, SSH tunnels and PrivateLink, AWS connections, FORMAT
PROTOBUF / CSV / REGEX, INCLUDE HEADERS / HEADER, START OFFSET / START TIMESTAMP, ENVELOPE
UPSERT's VALUE DECODING ERRORS, Debezium with INCLUDE PARTITION / OFFSET / TIMESTAMP (a
retraction must equal the row it retracts, whose metadata was another message's).

>>> from planner.dialect import parse_one_statement
>>> s = parse_one_statement("CREATE SOURCE s FROM KAFKA CONNECTION k (TOPIC 't') KEY FORMAT TEXT "
...                         "VALUE FORMAT JSON INCLUDE KEY, OFFSET AS o ENVELOPE UPSERT")
>>> s.topic, s.key_format, s.value_format, s.includes, s.envelope
('t', ('text', None), ('json', None), (('key', None), ('offset', 'o')), 'upsert')
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState

Name = tuple[str, ...]
FormatAst = tuple[str, Name | None]  # (kind, the schema registry connection for avro)

_UNSUPPORTED_FORMATS = {"PROTOBUF": "PROTOBUF", "CSV": "CSV", "REGEX": "REGEX"}


def _string(c) -> str:
    from planner.dialect import syntax_error_at
    c.accept_type(TokenType.EQ)
    t = c.peek()
    if t is None or t.token_type != TokenType.STRING:
        raise syntax_error_at(t)
    c.pos += 1
    return t.text


def _string_or_secret(c) -> object:
    """'value' or SECRET name ({'secret': name})."""
    c.accept_type(TokenType.EQ)
    if c.accept("SECRET"):
        return {"secret": c.name()}
    return _string(c)


def _secret(c, what: str) -> dict:
    c.accept_type(TokenType.EQ)
    if not c.accept("SECRET"):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"{what} must be a secret",
                       hint=f"CREATE SECRET s AS '...'; then {what} SECRET s.")
    return {"secret": c.name()}


def _validate_clause(c) -> bool:
    validate = True
    if c.accept("WITH"):
        c.expect_type(TokenType.L_PAREN)
        c.expect("VALIDATE")
        c.accept_type(TokenType.EQ)
        v = c.value().lower()
        if v not in ("true", "false", "on", "off"):
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid VALIDATE value: "{v}"')
        validate = v in ("true", "on")
        c.expect_type(TokenType.R_PAREN)
    c.expect_end()
    return validate


def parse_kafka_connection(c, name: Name, if_not_exists: bool):
    """After TO KAFKA."""
    from planner.connection_syntax import CreateConnection
    from planner.dialect import syntax_error_at
    c.expect_type(TokenType.L_PAREN)
    options: dict[str, object] = {}
    while True:
        if c.accept("BROKER"):
            key, value = "brokers", [_string(c)]
        elif c.accept("BROKERS"):
            c.accept_type(TokenType.EQ)
            c.expect_type(TokenType.L_PAREN)
            value = [_string(c)]
            while c.accept_type(TokenType.COMMA):
                value.append(_string(c))
            c.expect_type(TokenType.R_PAREN)
            key = "brokers"
        elif c.accept("SECURITY", "PROTOCOL"):
            key, value = "security_protocol", _string(c).upper()
            if value not in ("PLAINTEXT", "SASL_PLAINTEXT"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"SECURITY PROTOCOL '{value}' not yet supported",
                               hint="Connections to Kafka are made without TLS: PLAINTEXT or SASL_PLAINTEXT.")
        elif c.accept("SASL", "MECHANISMS"):
            key, value = "sasl_mechanism", _string(c).upper()
            if value not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"SASL MECHANISMS '{value}' not yet supported")
        elif c.accept("SASL", "USERNAME"):
            key, value = "sasl_username", _string_or_secret(c)
        elif c.accept("SASL", "PASSWORD"):
            key, value = "sasl_password", _secret(c, "SASL PASSWORD")
        elif c.accept("PROGRESS", "TOPIC"):
            key, value = "progress_topic", _string(c)
        elif c.is_word("SSL") or c.is_word("SSH") or c.is_word("AWS") or c.is_word("BROKERS"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"KAFKA connection option {c.peek().text.upper()} ... not yet supported")
        else:
            raise syntax_error_at(c.peek())
        if key in options:
            raise SqlError(SqlState.SYNTAX_ERROR, f"{key.upper().replace('_', ' ')} specified more than once")
        options[key] = value
        if c.accept_type(TokenType.R_PAREN):
            break
        c.expect_type(TokenType.COMMA)
    validate = _validate_clause(c)
    if "brokers" not in options:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "KAFKA connection must specify BROKER or BROKERS")
    sasl = "sasl_mechanism" in options or "sasl_username" in options or "sasl_password" in options
    protocol = options.setdefault("security_protocol", "SASL_PLAINTEXT" if sasl else "PLAINTEXT")
    if protocol == "SASL_PLAINTEXT":
        for need in ("sasl_mechanism", "sasl_username", "sasl_password"):
            if need not in options:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                               f"SASL connections must specify {need.upper().replace('_', ' ').replace('MECHANISM', 'MECHANISMS')}")
    return CreateConnection(name, "kafka", tuple(sorted(options.items())), validate, if_not_exists, c.text)


def parse_csr_connection(c, name: Name, if_not_exists: bool):
    """After TO CONFLUENT SCHEMA REGISTRY."""
    from planner.connection_syntax import CreateConnection
    from planner.dialect import syntax_error_at
    c.expect_type(TokenType.L_PAREN)
    options: dict[str, object] = {}
    while True:
        if c.accept("URL"):
            key, value = "url", _string(c).rstrip("/")
            if not value.startswith("http://"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED if value.startswith("https://")
                               else SqlState.INVALID_PARAMETER_VALUE,
                               f"schema registry URL {value!r} not supported" if value.startswith("https://")
                               else f"invalid schema registry URL {value!r}",
                               hint="Use an http:// URL (TLS to the registry is not built yet).")
        elif c.accept("USERNAME"):
            key, value = "username", _string_or_secret(c)
        elif c.accept("PASSWORD"):
            key, value = "password", _secret(c, "PASSWORD")
        elif c.is_word("SSL") or c.is_word("SSH") or c.is_word("AWS"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"CONFLUENT SCHEMA REGISTRY option {c.peek().text.upper()} ... not yet supported")
        else:
            raise syntax_error_at(c.peek())
        if key in options:
            raise SqlError(SqlState.SYNTAX_ERROR, f"{key.upper()} specified more than once")
        options[key] = value
        if c.accept_type(TokenType.R_PAREN):
            break
        c.expect_type(TokenType.COMMA)
    validate = _validate_clause(c)
    if "url" not in options:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "CONFLUENT SCHEMA REGISTRY connection must specify URL")
    return CreateConnection(name, "confluent-schema-registry", tuple(sorted(options.items())), validate,
                            if_not_exists, c.text)


# -- CREATE SOURCE ... FROM KAFKA ---------------------------------------------------------------

@dataclass(frozen=True)
class CreateKafkaSource:
    name: Name
    connection: Name
    topic: str
    group_id_prefix: str | None
    key_format: FormatAst | None
    value_format: FormatAst
    includes: tuple[tuple[str, str | None], ...]
    envelope: str
    progress_name: str | None
    if_not_exists: bool


@dataclass(frozen=True)
class CreateKafkaSourcePlan:
    name: str
    schema: str
    database: str
    search_path: tuple[str, ...]
    node: CreateKafkaSource
    progress_name: str
    if_not_exists: bool
    create_sql: str


def _format(c) -> FormatAst:
    from planner.dialect import syntax_error_at
    for word in ("BYTES", "TEXT", "JSON"):
        if c.accept(word):
            return word.lower(), None
    if c.accept("AVRO"):
        if c.accept("USING", "CONFLUENT", "SCHEMA", "REGISTRY", "CONNECTION"):
            csr = c.name()
            if c.accept("KEY", "STRATEGY") or c.accept("VALUE", "STRATEGY") or c.accept("SEED"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "Avro KEY / VALUE STRATEGY and SEED not yet supported",
                               hint="The latest schema of the topic's -key / -value subject is used.")
            return "avro", csr
        if c.is_word("USING") or c.is_word("SCHEMA"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "FORMAT AVRO other than USING CONFLUENT SCHEMA REGISTRY "
                                                           "not yet supported")
        raise syntax_error_at(c.peek())
    t = c.peek()
    if t is not None and t.text.upper() in _UNSUPPORTED_FORMATS:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"FORMAT {t.text.upper()} not yet supported",
                       hint="Kafka sources take FORMAT BYTES, TEXT, JSON or AVRO.")
    raise syntax_error_at(t)


def parse_kafka_source(c, name: Name, if_not_exists: bool) -> CreateKafkaSource:
    """After FROM KAFKA."""
    from planner.dialect import syntax_error_at
    if c.accept("BROKER"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "FROM KAFKA BROKER ... not supported",
                       hint="Create a connection first: CREATE CONNECTION k TO KAFKA (BROKER '...'); "
                            "then FROM KAFKA CONNECTION k (TOPIC '...').")
    c.expect("CONNECTION")
    connection = c.name()
    topic = group = None
    c.expect_type(TokenType.L_PAREN)
    while True:
        if c.accept("TOPIC"):
            topic = _string(c)
        elif c.accept("GROUP", "ID", "PREFIX"):
            group = _string(c)
        elif c.accept("START", "OFFSET") or c.accept("START", "TIMESTAMP") or c.accept("TOPIC", "METADATA"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"Kafka source option {c.toks[c.pos - 2].text.upper()} {c.toks[c.pos - 1].text.upper()} "
                           "not yet supported")
        else:
            raise syntax_error_at(c.peek())
        if c.accept_type(TokenType.R_PAREN):
            break
        c.expect_type(TokenType.COMMA)
    if not topic:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "KAFKA CONNECTION without TOPIC",
                       hint="FROM KAFKA CONNECTION k (TOPIC 'name')")
    key_format = value_format = None
    if c.accept("KEY", "FORMAT"):
        key_format = _format(c)
        c.expect("VALUE", "FORMAT")
        value_format = _format(c)
    elif c.accept("FORMAT"):
        value_format = _format(c)
        if c.is_word("USING"):
            raise syntax_error_at(c.peek())
    includes: list[tuple[str, str | None]] = []
    if c.accept("INCLUDE"):
        while True:
            t = c.peek()
            word = t.text.upper() if t is not None else ""
            if word in ("KEY", "PARTITION", "OFFSET", "TIMESTAMP"):
                c.pos += 1
                alias = c.ident() if c.accept("AS") else None
                if any(w == word.lower() for w, _ in includes):
                    raise SqlError(SqlState.SYNTAX_ERROR, f"INCLUDE {word} specified more than once")
                includes.append((word.lower(), alias))
            elif word in ("HEADERS", "HEADER", "TOPIC"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"INCLUDE {word} not yet supported")
            else:
                raise syntax_error_at(t)
            if not c.accept_type(TokenType.COMMA):
                break
    envelope = "none"
    if c.accept("ENVELOPE"):
        t = c.peek()
        word = t.text.upper() if t is not None else ""
        if word in ("NONE", "UPSERT", "DEBEZIUM"):
            c.pos += 1
            envelope = word.lower()
            if envelope == "upsert" and c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "ENVELOPE UPSERT (VALUE DECODING ERRORS ...) "
                                                               "not yet supported")
        elif word == "MATERIALIZE":
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "ENVELOPE MATERIALIZE not yet supported")
        else:
            raise syntax_error_at(t)
    progress = None
    if c.accept("EXPOSE", "PROGRESS", "AS"):
        progress = c.name()[-1]
    if c.accept("WITH"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE SOURCE ... WITH (...) not yet supported")
    c.expect_end()
    if value_format is None:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "Kafka sources need a FORMAT",
                       hint="FORMAT JSON, or KEY FORMAT TEXT VALUE FORMAT JSON, ...")
    if envelope == "upsert" and key_format is None:
        if value_format[0] != "avro":
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "ENVELOPE UPSERT requires a KEY FORMAT",
                           hint="KEY FORMAT TEXT VALUE FORMAT JSON ... ENVELOPE UPSERT")
        key_format = value_format  # FORMAT AVRO ... decodes keys with the -key subject's schema
    if any(w == "key" for w, _ in includes) and key_format is None:
        if value_format[0] != "avro":
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "INCLUDE KEY requires specifying KEY FORMAT .. VALUE "
                                                             "FORMAT, got bare FORMAT")
        key_format = value_format
    if envelope == "debezium":
        if value_format[0] not in ("avro", "json"):
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "ENVELOPE DEBEZIUM requires FORMAT AVRO (or JSON)")
        meta = [w for w, _ in includes if w != "key"]
        if meta:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"INCLUDE {meta[0].upper()} with ENVELOPE DEBEZIUM not yet supported")
    return CreateKafkaSource(name, connection, topic, group, key_format, value_format, tuple(includes), envelope,
                             progress, if_not_exists)


def plan_kafka_source(node: CreateKafkaSource, ctx, sql: str) -> CreateKafkaSourcePlan:
    from planner.lower_ddl import _qualified
    database, schema, name = _qualified(node.name, ctx)
    return CreateKafkaSourcePlan(name, schema, database, tuple(ctx.search_path), node,
                                 node.progress_name or f"{name}_progress", node.if_not_exists, sql)


# -- CREATE SINK ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class CreateSink:
    name: Name
    relation: Name
    connection: Name
    topic: str
    key: tuple[str, ...] | None
    format: FormatAst
    envelope: str  # 'upsert' | 'debezium'
    if_not_exists: bool
    sql: str = ""


def parse_create_sink(c) -> CreateSink:
    """After CREATE (at SINK)."""
    from planner.cluster_syntax import check_cluster
    from planner.dialect import syntax_error_at
    c.expect("SINK")
    if_not_exists = bool(c.accept("IF", "NOT", "EXISTS"))
    name = c.name()
    if c.accept("IN", "CLUSTER"):
        check_cluster(c.ident())
    c.expect("FROM")
    relation = c.name()
    c.expect("INTO")
    t = c.peek()
    if t is not None and t.text.upper() in ("S3", "ICEBERG", "POSTGRES"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"CREATE SINK ... INTO {t.text.upper()} not yet supported")
    c.expect("KAFKA", "CONNECTION")
    connection = c.name()
    c.expect_type(TokenType.L_PAREN)
    topic = None
    while True:
        if c.accept("TOPIC"):
            topic = _string(c)
        elif c.is_word("COMPRESSION") or c.is_word("PARTITION") or c.is_word("TOPIC"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"Kafka sink option {c.peek().text.upper()} not yet supported")
        else:
            raise syntax_error_at(c.peek())
        if c.accept_type(TokenType.R_PAREN):
            break
        c.expect_type(TokenType.COMMA)
    if not topic:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "KAFKA CONNECTION without TOPIC")
    key = None
    if c.accept("KEY"):
        key = c.ident_list()
        c.accept("NOT", "ENFORCED")
    fmt: FormatAst | None = None
    if c.accept("KEY", "FORMAT") or c.accept("HEADERS"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "Kafka sink KEY FORMAT / HEADERS not yet supported")
    if c.accept("FORMAT"):
        fmt = _format(c)
        if fmt[0] not in ("json", "avro"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"Kafka sinks in FORMAT {fmt[0].upper()} not yet supported",
                           hint="FORMAT JSON or FORMAT AVRO USING CONFLUENT SCHEMA REGISTRY CONNECTION csr")
    c.expect("ENVELOPE")
    if c.accept("UPSERT"):
        envelope = "upsert"
    elif c.accept("DEBEZIUM"):
        envelope = "debezium"
    else:
        raise syntax_error_at(c.peek())
    if c.accept("WITH"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE SINK ... WITH (...) not yet supported")
    c.expect_end()
    if fmt is None:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "Kafka sinks need a FORMAT", hint="FORMAT JSON")
    if envelope == "upsert" and key is None:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "upsert sinks must specify a key",
                       hint="KEY (col, ...) before FORMAT")
    return CreateSink(name, relation, connection, topic, key, fmt, envelope, if_not_exists, c.text)
