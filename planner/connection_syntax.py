"""CREATE / ALTER / DROP SECRET and CREATE / DROP CONNECTION (Materialize's syntax), read from the
dialect's tokens and run by server/adapter/connections.py.

    CREATE SECRET [IF NOT EXISTS] name AS 'value'
    ALTER SECRET [IF EXISTS] name AS 'value'
    DROP SECRET [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
    CREATE CONNECTION [IF NOT EXISTS] name TO POSTGRES (
        HOST [=] 'host', PORT [=] 5432, USER [=] 'user', PASSWORD [=] SECRET secret_name,
        DATABASE [=] 'db' [, SSL MODE [=] 'disable'] ) [WITH (VALIDATE [=] true | false)]
    DROP CONNECTION [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
    DROP SINK [IF EXISTS] name [, ...]

Kafka and Confluent Schema Registry connections and CREATE SINK are in planner/kafka_syntax.py.
Connections to other systems (MySQL, AWS, SSH tunnels) and TLS to the upstream (SSL MODE other than disable) are refused with 0A000. A secret's value is a
string literal (Materialize also takes expressions such as decode(...): refused with 0A000).

>>> from planner.dialect import parse_one_statement
>>> parse_one_statement("CREATE SECRET pgpass AS 'x'").name
('pgpass',)
>>> parse_one_statement("CREATE CONNECTION pg TO POSTGRES (HOST 'h', PORT 5433, USER 'u', DATABASE 'd')").options
(('database', 'd'), ('host', 'h'), ('port', 5433), ('user', 'u'))
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState

Name = tuple[str, ...]


@dataclass(frozen=True)
class CreateSecret:
    name: Name
    value: str
    if_not_exists: bool

    def __repr__(self) -> str:  # never show the value (logs, errors)
        return f"CreateSecret(name={self.name!r}, value='********', if_not_exists={self.if_not_exists})"


@dataclass(frozen=True)
class AlterSecret:
    name: Name
    value: str
    if_exists: bool

    def __repr__(self) -> str:
        return f"AlterSecret(name={self.name!r}, value='********', if_exists={self.if_exists})"


@dataclass(frozen=True)
class CreateConnection:
    name: Name
    type: str  # 'postgres' | 'kafka' | 'confluent-schema-registry'
    options: tuple[tuple[str, object], ...]  # host, port, user, password (a secret's Name), database
    validate: bool
    if_not_exists: bool
    sql: str = ""


@dataclass(frozen=True)
class DropConnectionObject:
    kind: str  # 'secret' | 'connection' | 'sink'
    names: tuple[Name, ...]
    if_exists: bool
    cascade: bool


from planner.kafka_syntax import CreateSink  # noqa: E402 - CREATE SINK runs next to the connections it uses

CONNECTION_STATEMENTS = (CreateSecret, AlterSecret, CreateConnection, DropConnectionObject, CreateSink)

_OTHER_CONNECTIONS = {"MYSQL": "MySQL", "AWS": "AWS", "SSH": "SSH tunnel", "SQL": "SQL Server"}


def _secret_value(c) -> str:
    from planner.dialect import syntax_error_at
    t = c.peek()
    if t is None:
        raise syntax_error_at(None)
    if t.token_type != TokenType.STRING:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "secret values other than string literals not yet supported",
                       hint="Write the value as a string literal: CREATE SECRET name AS 'value'.")
    c.pos += 1
    return t.text


def parse_create_secret(c) -> CreateSecret:
    c.expect("SECRET")
    if_not_exists = bool(c.accept("IF", "NOT", "EXISTS"))
    name = c.name()
    c.expect("AS")
    value = _secret_value(c)
    c.expect_end()
    return CreateSecret(name, value, if_not_exists)


def parse_alter_secret(c) -> AlterSecret:
    c.expect("SECRET")
    if_exists = bool(c.accept("IF", "EXISTS"))
    name = c.name()
    if c.accept("RENAME") or c.accept("OWNER"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "ALTER SECRET ... RENAME / OWNER TO not yet supported")
    c.expect("AS")
    value = _secret_value(c)
    c.expect_end()
    return AlterSecret(name, value, if_exists)


def parse_drop(c) -> DropConnectionObject:
    kind = "secret" if c.accept("SECRET") else "sink" if c.accept("SINK") else None
    if kind is None:
        c.expect("CONNECTION")
        kind = "connection"
    if_exists = bool(c.accept("IF", "EXISTS"))
    names = [c.name()]
    while c.accept_type(TokenType.COMMA):
        names.append(c.name())
    cascade = bool(c.accept("CASCADE"))
    if not cascade:
        c.accept("RESTRICT")
    c.expect_end()
    return DropConnectionObject(kind, tuple(names), if_exists, cascade)


def parse_create_connection(c) -> CreateConnection:
    from planner.dialect import syntax_error_at
    c.expect("CONNECTION")
    if_not_exists = bool(c.accept("IF", "NOT", "EXISTS"))
    name = c.name()
    c.expect("TO")
    t = c.peek()
    word = t.text.upper() if t is not None else ""
    if word in _OTHER_CONNECTIONS:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"CREATE CONNECTION ... TO {word} not yet supported",
                       detail=f"{_OTHER_CONNECTIONS[word]} connections are not built yet; PostgreSQL, Kafka and "
                              "Confluent Schema Registry connections are.")
    if c.accept("KAFKA"):  # planner/kafka_syntax.py
        from planner.kafka_syntax import parse_kafka_connection
        return parse_kafka_connection(c, name, if_not_exists)
    if c.accept("CONFLUENT", "SCHEMA", "REGISTRY"):
        from planner.kafka_syntax import parse_csr_connection
        return parse_csr_connection(c, name, if_not_exists)
    c.expect("POSTGRES")
    c.expect_type(TokenType.L_PAREN)
    options: dict[str, object] = {}
    while True:
        if c.accept("HOST"):
            key = "host"
        elif c.accept("PORT"):
            key = "port"
        elif c.accept("USER"):
            key = "user"
        elif c.accept("PASSWORD"):
            key = "password"
        elif c.accept("DATABASE"):
            key = "database"
        elif c.accept("SSL", "MODE"):
            key = "ssl_mode"
        elif c.accept("SSL") or c.accept("AWS") or c.accept("SSH"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"CREATE CONNECTION option {c.toks[c.pos - 1].text.upper()} ... not yet supported")
        else:
            t = c.peek()
            raise syntax_error_at(t)
        if key in options:
            raise SqlError(SqlState.SYNTAX_ERROR, f"{key.upper().replace('_', ' ')} specified more than once")
        c.accept_type(TokenType.EQ)
        if key == "password":
            if not c.accept("SECRET"):
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "PASSWORD must be a secret",
                               hint="CREATE SECRET pw AS '...'; then PASSWORD SECRET pw.")
            options[key] = c.name()
        elif key == "port":
            text = c.value()
            if not text.isdigit() or not 0 < int(text) < 65536:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid PORT: "{text}"')
            options[key] = int(text)
        else:
            options[key] = c.value()
        if c.accept_type(TokenType.R_PAREN):
            break
        c.expect_type(TokenType.COMMA)
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
    for required in ("host", "user"):
        if required not in options:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"POSTGRES connection must specify {required.upper()}")
    ssl = str(options.get("ssl_mode", "disable")).lower()
    if ssl != "disable":
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"SSL MODE '{ssl}' not yet supported",
                       hint="Connections to PostgreSQL are made without TLS: SSL MODE 'disable'.")
    options.pop("ssl_mode", None)
    return CreateConnection(name, "postgres", tuple(sorted(options.items())), validate, if_not_exists, c.text)


@dataclass(frozen=True)
class ConnectionPlan:
    """One of the statements above with the session's database and search path (names of new
    objects go to the first schema of the path; names of existing ones are looked up along it)."""

    stmt: object
    database: str
    search_path: tuple[str, ...]

    def qualify(self, name: Name) -> tuple[str, str, str]:
        """(database, schema, name) of a new object."""
        if len(name) == 1:
            return self.database, self.search_path[0] if self.search_path else "public", name[0]
        if len(name) == 2:
            return self.database, name[0], name[1]
        if len(name) == 3:
            return name[0], name[1], name[2]
        raise SqlError(SqlState.SYNTAX_ERROR, f"improper qualified name (too many dotted names): {'.'.join(name)}")

    def candidates(self, name: Name) -> list[tuple[str, str, str]]:
        """Where an existing object's name may point, in search-path order."""
        if len(name) == 1:
            return [(self.database, s, name[0]) for s in self.search_path]
        return [self.qualify(name)]
