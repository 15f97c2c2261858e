"""CREATE / ALTER / DROP SECRET and CREATE / DROP CONNECTION (planner/connection_syntax.py), over
the durable store of catalog/secrets.py.

CREATE CONNECTION ... TO POSTGRES logs in to the upstream first (unless WITH (VALIDATE = false)),
as Materialize does, so a wrong host or password is reported at once (08001 with the upstream's
message). A secret used by a connection, or a connection used by a source, is dropped only with
CASCADE (which drops those too); otherwise 2BP01. Only superusers run these statements (the
privilege checks' default for statement kinds without a rule of their own).
"""

from __future__ import annotations

import json

from catalog.items import ItemKind
from dataflow.errors import SqlError, SqlState
from planner.connection_syntax import (
    AlterSecret, ConnectionPlan, CreateConnection, CreateSecret, DropConnectionObject,
)
from server.api import CommandComplete, Session


def find_secret(catalog, plan: ConnectionPlan, name):
    for d, s, n in plan.candidates(name):
        found = catalog.secrets.find_secret(d, s, n)
        if found is not None:
            return found
    return None


def already_exists(session: Session, what: str, name: str, if_not_exists: bool, tag: str) -> CommandComplete:
    """CREATE of a connection or sink whose name is taken: with IF NOT EXISTS a notice and the
    statement's tag, else 42710."""
    if if_not_exists:
        session.pending_notices.append(("42710", f'{what} "{name}" already exists, skipping'))
        return CommandComplete(tag)
    raise SqlError(SqlState.DUPLICATE_OBJECT, f'{what} "{name}" already exists')


def find_connection(catalog, database: str, search_path, name):
    plan = ConnectionPlan(None, database, tuple(search_path))
    for d, s, n in plan.candidates(name):
        found = catalog.secrets.find_connection(d, s, n)
        if found is not None:
            return found
    return None


def sources_using(catalog, connection_id: str) -> list:
    """Sources reading through a connection (a Kafka source's Avro formats: its schema registry)."""
    def uses(item) -> bool:
        d = json.loads(item.definition or "{}")
        return connection_id in (d.get("connection"), (d.get("key_format") or {}).get("registry"),
                                 (d.get("value_format") or {}).get("registry"))
    return [i for i in catalog.items() if i.kind is ItemKind.SOURCE and uses(i)]


def webhooks_using(catalog, secret_id: str) -> list:
    """Webhook sources whose CHECK reads the secret (WITH (SECRET s))."""
    def reads(item) -> bool:
        check = json.loads(item.definition or "{}").get("check") or {}
        return any(o.get("secret_id") == secret_id for o in check.get("options", []))
    return [i for i in catalog.items() if i.kind is ItemKind.SOURCE and reads(i)]


async def execute_connection_statement(coord, session: Session, plan: ConnectionPlan) -> CommandComplete:
    stmt = plan.stmt
    catalog = coord.catalog
    owner = session.user
    if isinstance(stmt, CreateSecret):
        database, schema, name = plan.qualify(stmt.name)
        _check_schema(catalog, database, schema)
        if stmt.if_not_exists and catalog.secrets.find_secret(database, schema, name) is not None:
            session.pending_notices.append(("42710", f'secret "{name}" already exists, skipping'))
            return CommandComplete("CREATE SECRET")
        catalog.secrets.create_secret(database, schema, name, stmt.value, owner)
        return CommandComplete("CREATE SECRET")
    if isinstance(stmt, AlterSecret):
        secret = find_secret(catalog, plan, stmt.name)
        if secret is None:
            if stmt.if_exists:
                session.pending_notices.append(("00000", f'secret "{".".join(stmt.name)}" does not exist, skipping'))
                return CommandComplete("ALTER SECRET")
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown secret "{".".join(stmt.name)}"')
        catalog.secrets.alter_secret(secret.id, stmt.value)
        return CommandComplete("ALTER SECRET")
    if isinstance(stmt, CreateConnection):
        return await _create_connection(coord, session, plan, stmt)
    if isinstance(stmt, DropConnectionObject) and stmt.kind == "sink":
        from storage.sources.kafka.ddl import drop_sinks
        return await drop_sinks(coord, session, plan, stmt)
    if isinstance(stmt, DropConnectionObject):
        return await _drop(coord, session, plan, stmt)
    from planner.kafka_syntax import CreateSink
    if isinstance(stmt, CreateSink):
        from storage.sources.kafka.ddl import create_sink
        return await create_sink(coord, session, plan, stmt)
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "statement not yet supported")


def _check_schema(catalog, database: str, schema: str) -> None:
    if not any(n == schema for _, n, _ in catalog.schemas(database)):
        if not any(d == database for d, _ in catalog.databases()):
            raise SqlError("3D000", f'database "{database}" does not exist')
        raise SqlError("3F000", f'schema "{schema}" does not exist')


async def _create_connection(coord, session: Session, plan: ConnectionPlan, stmt: CreateConnection):
    if stmt.type != "postgres":  # Kafka, Confluent Schema Registry
        from storage.sources.kafka.ddl import create_kafka_connection
        return await create_kafka_connection(coord, session, plan, stmt)
    from storage.sources.postgres.upstream import connect_params, validate
    catalog = coord.catalog
    database, schema, name = plan.qualify(stmt.name)
    _check_schema(catalog, database, schema)
    if catalog.secrets.find_connection(database, schema, name) is not None:
        return already_exists(session, "connection", name, stmt.if_not_exists, "CREATE CONNECTION")
    options = dict(stmt.options)
    secret_name = options.pop("password", None)
    if secret_name is not None:
        secret = find_secret(catalog, plan, secret_name)
        if secret is None:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown secret "{".".join(secret_name)}"')
        options["password_secret"] = secret.id
    options.setdefault("port", 5432)
    options.setdefault("database", "postgres")
    if stmt.validate:
        from catalog.secrets import Connection
        probe = Connection("", 0, database, schema, name, stmt.type, options, "", "")
        await validate(connect_params(catalog, probe))
    catalog.secrets.create_connection(database, schema, name, stmt.type, options, stmt.sql, session.user)
    return CommandComplete("CREATE CONNECTION")


async def _drop(coord, session: Session, plan: ConnectionPlan, stmt: DropConnectionObject) -> CommandComplete:
    catalog = coord.catalog
    tag = f"DROP {stmt.kind.upper()}"
    for name in stmt.names:
        shown = ".".join(name)
        if stmt.kind == "secret":
            secret = find_secret(catalog, plan, name)
            if secret is None:
                if not stmt.if_exists:
                    raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown secret "{shown}"')
                session.pending_notices.append(("00000", f'secret "{shown}" does not exist, skipping'))
                continue
            users = [c for c in catalog.secrets.connections()
                     if any(k.endswith("_secret") and v == secret.id for k, v in c.options.items())]
            webhooks = webhooks_using(catalog, secret.id)
            if (users or webhooks) and not stmt.cascade:
                what = f'connection "{users[0].name}"' if users else f'source "{webhooks[0].name}"'
                raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                               f'cannot drop secret "{secret.name}": still depended upon by {what}',
                               hint="Use DROP ... CASCADE to drop the dependent objects too.")
            for conn in users:
                await _drop_connection(coord, conn)
            if webhooks:
                await coord.drop([s.id for s in webhooks], cascade=True)
            catalog.secrets.drop_secret(secret.id)
        else:
            conn = find_connection(catalog, plan.database, plan.search_path, name)
            if conn is None:
                if not stmt.if_exists:
                    raise SqlError(SqlState.UNDEFINED_OBJECT, f'unknown connection "{shown}"')
                session.pending_notices.append(("00000", f'connection "{shown}" does not exist, skipping'))
                continue
            users = sources_using(catalog, conn.id)
            from storage.sources.kafka.ddl import sinks_using
            sinks = sinks_using(catalog, conn.id)
            if (users or sinks) and not stmt.cascade:
                what = f'source "{users[0].name}"' if users else f'sink "{sinks[0].name}"'
                raise SqlError(SqlState.DEPENDENT_OBJECTS_STILL_EXIST,
                               f'cannot drop connection "{conn.name}": still depended upon by {what}',
                               hint="Use DROP ... CASCADE to drop the dependent objects too.")
            await _drop_connection(coord, conn)
    return CommandComplete(tag)


async def _drop_connection(coord, conn) -> None:
    sources = sources_using(coord.catalog, conn.id)
    if sources:
        await coord.drop([s.id for s in sources], cascade=True)
    from storage.sources.kafka.ddl import drop_sink, sinks_using
    for sink in sinks_using(coord.catalog, conn.id):
        await drop_sink(coord, sink)
    coord.catalog.secrets.drop_connection(conn.id)
