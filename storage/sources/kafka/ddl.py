"""The statements of Kafka in the adapter: CREATE CONNECTION ... TO KAFKA | CONFLUENT SCHEMA
REGISTRY, CREATE SOURCE ... FROM KAFKA, CREATE SINK / DROP SINK (parsed by
planner/kafka_syntax.py).

* A connection's secrets are stored as references (`sasl_password_secret` = the secret's id) and
  read when connecting. CREATE CONNECTION connects first (unless WITH (VALIDATE = false)):
  an unreachable broker or registry is 08001, within a bounded time.
* CREATE SOURCE resolves the connections (42704 unknown, 42809 not a Kafka / registry
  connection), fetches the Avro schemas of the topic's `-key` / `-value` subjects (the reader
  schemas, stored in the definition, so the columns never change under a running source), and
  creates the source (one relation) and its progress subsource through the source controller.
  The broker is not contacted here: the ingestion task connects, and reports `stalled` with the
  error in mz_source_statuses until the broker answers.
* CREATE SINK resolves the relation and the key columns (42703), registers the Avro schemas
  (FORMAT AVRO), stores the sink (catalog/sinks.py) and starts its task
  (storage/sources/kafka/sink.py).
"""

from __future__ import annotations

import json

from dataflow.errors import SqlError, SqlState
from planner.connection_syntax import ConnectionPlan, CreateConnection, DropConnectionObject
from planner.kafka_syntax import CreateKafkaSourcePlan, CreateSink, FormatAst
from server.api import CommandComplete, Session
from storage.sources.kafka import avro
from storage.sources.kafka.client import Registry, kafka_params, registry_params, validate_kafka
from storage.sources.kafka.formats import Format
from storage.sources.kafka.spec import KafkaSpec

WRONG_OBJECT_TYPE = "42809"
_TYPE_WORDS = {"kafka": "KAFKA", "confluent-schema-registry": "CONFLUENT SCHEMA REGISTRY", "postgres": "POSTGRES"}


async def create_kafka_connection(coord, session: Session, plan: ConnectionPlan, stmt: CreateConnection):
    from server.adapter.connections import _check_schema, already_exists, find_secret
    catalog = coord.catalog
    database, schema, name = plan.qualify(stmt.name)
    _check_schema(catalog, database, schema)
    if catalog.secrets.find_connection(database, schema, name) is not None:
        return already_exists(session, "connection", name, stmt.if_not_exists, "CREATE CONNECTION")
    options: dict = {}
    for key, value in stmt.options:
        if isinstance(value, dict) and "secret" in value:
            secret = find_secret(catalog, plan, value["secret"])
            if secret is None:
                raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown secret "{".".join(value["secret"])}"')
            options[f"{key}_secret"] = secret.id
        else:
            options[key] = value
    if stmt.validate:
        if stmt.type == "kafka":
            await validate_kafka(kafka_params(catalog, options))
        else:
            await Registry(registry_params(catalog, options)).validate()
    catalog.secrets.create_connection(database, schema, name, stmt.type, options, stmt.sql, session.user)
    return CommandComplete("CREATE CONNECTION")


def _connection(catalog, database: str, search_path, name, type: str):
    from server.adapter.connections import find_connection
    conn = find_connection(catalog, database, search_path, name)
    if conn is None:
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown connection "{".".join(name)}"')
    if conn.type != type:
        raise SqlError(WRONG_OBJECT_TYPE, f'{conn.qualified_name} is not a {_TYPE_WORDS[type]} CONNECTION')
    return conn


async def _avro_format(catalog, database, search_path, csr_name, subject: str, required: bool) -> Format | None:
    csr = _connection(catalog, database, search_path, csr_name, "confluent-schema-registry")
    found = await Registry(registry_params(catalog, csr.options)).latest(subject)
    if found is None:
        if not required:
            return None
        raise SqlError(SqlState.UNDEFINED_OBJECT, f'no schema for subject "{subject}" in the schema registry',
                       hint="Register the topic's schema first (a producer with the Avro serializer does).")
    schema_id, text = found
    avro.parse_schema(text)
    return Format("avro", csr.id, text, schema_id)


async def _format(catalog, plan: CreateKafkaSourcePlan, fmt: FormatAst | None, part: str,
                  required: bool) -> Format | None:
    if fmt is None:
        return None
    kind, csr = fmt
    if kind != "avro":
        return Format(kind)
    return await _avro_format(catalog, plan.database, plan.search_path, csr, f"{plan.node.topic}-{part}", required)


async def create_kafka_source(coord, plan: CreateKafkaSourcePlan, user: str):
    catalog = coord.catalog
    node = plan.node
    conn = _connection(catalog, plan.database, plan.search_path, node.connection, "kafka")
    value = await _format(catalog, plan, node.value_format, "value", True)
    # A key decoded with FORMAT AVRO's registry is needed only by UPSERT / INCLUDE KEY.
    key_needed = node.envelope == "upsert" or any(w == "key" for w, _ in node.includes)
    key = await _format(catalog, plan, node.key_format, "key", key_needed)
    spec = KafkaSpec(conn.id, node.topic, key, value, node.includes, node.envelope, node.group_id_prefix)
    spec.columns()  # type mapping and name errors before anything is created
    return await coord.sources.create_from_spec(plan, spec, spec.to_definition(plan.progress_name))


# -- sinks -------------------------------------------------------------------------------------

def sinks_using(catalog, id: str) -> list:
    """Sinks writing through a connection (or its registry), or reading a relation."""
    return [s for s in catalog.sinks.sinks()
            if id in (s.relation, s.options.get("connection"), (s.options.get("format") or {}).get("registry"))]


async def create_sink(coord, session: Session, plan: ConnectionPlan, stmt: CreateSink) -> CommandComplete:
    from server.adapter.connections import _check_schema, already_exists
    from catalog.items import ItemKind
    catalog = coord.catalog
    database, schema, name = plan.qualify(stmt.name)
    _check_schema(catalog, database, schema)
    if catalog.sinks.find(database, schema, name) is not None:
        return already_exists(session, "sink", name, stmt.if_not_exists, "CREATE SINK")
    relation = None
    for candidate in plan.candidates(stmt.relation):
        relation = catalog.try_resolve(candidate)
        if relation is not None:
            break
    if relation is None:
        raise SqlError(SqlState.UNDEFINED_TABLE, f'unknown catalog item \'{".".join(stmt.relation)}\'')
    if relation.kind is ItemKind.INDEX:
        raise SqlError(WRONG_OBJECT_TYPE, f'"{relation.name}" is an index: sinks read relations')
    names = [c.name for c in relation.columns]
    for k in stmt.key or ():
        if k not in names:
            raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{k}" does not exist',
                           hint=f'The columns of "{relation.name}" are: {", ".join(names)}.')
    conn = _connection(catalog, plan.database, plan.search_path, stmt.connection, "kafka")
    fmt: dict = {"kind": stmt.format[0]}
    if stmt.format[0] == "avro":
        csr = _connection(catalog, plan.database, plan.search_path, stmt.format[1], "confluent-schema-registry")
        from storage.sources.kafka.sink import sink_schemas
        key_schema, value_schema = sink_schemas(relation.name, relation.columns, stmt.key, stmt.envelope)
        registry = Registry(registry_params(catalog, csr.options))
        fmt.update(registry=csr.id, value_schema=value_schema,
                   value_schema_id=await registry.register(f"{stmt.topic}-value", json.dumps(value_schema)))
        if key_schema is not None:
            fmt.update(key_schema=key_schema,
                       key_schema_id=await registry.register(f"{stmt.topic}-key", json.dumps(key_schema)))
    options = {"connection": conn.id, "topic": stmt.topic, "key": list(stmt.key) if stmt.key else None,
               "format": fmt, "envelope": stmt.envelope}
    sink = catalog.sinks.create_sink(database, schema, name, relation.id, "kafka", options, stmt.sql, session.user)
    coord.sources.kafka_sinks.start_sink(sink)
    return CommandComplete("CREATE SINK")


async def drop_sink(coord, sink) -> None:
    coord.sources.kafka_sinks.stop(sink.id)
    coord.catalog.sinks.drop_sink(sink.id)


async def drop_sinks(coord, session: Session, plan: ConnectionPlan, stmt: DropConnectionObject) -> CommandComplete:
    for name in stmt.names:
        found = None
        for d, s, n in plan.candidates(name):
            found = coord.catalog.sinks.find(d, s, n)
            if found is not None:
                break
        if found is None:
            shown = ".".join(name)
            if not stmt.if_exists:
                raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown sink "{shown}"')
            session.pending_notices.append(("00000", f'sink "{shown}" does not exist, skipping'))
            continue
        await drop_sink(coord, found)
    return CommandComplete("DROP SINK")
