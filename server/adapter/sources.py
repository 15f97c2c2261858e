"""CREATE SOURCE in the adapter (planned by planner/source_syntax.py, run by the coordinator's
source controller, storage/sources/controller.py), and what SHOW SOURCES lists."""

from __future__ import annotations

from catalog.system.mz_catalog import source_type
from planner.pg_source_syntax import CreatePostgresSourcePlan
from planner.source_syntax import CreateSourcePlan
from planner.webhook_syntax import CreateWebhookSourcePlan
from server.api import CommandComplete, Outcome, Session

__all__ = ["SOURCE_PLANS", "create_source", "source_type"]

from planner.kafka_syntax import CreateKafkaSourcePlan  # noqa: E402

SOURCE_PLANS = (CreateSourcePlan, CreateWebhookSourcePlan, CreatePostgresSourcePlan, CreateKafkaSourcePlan)


async def create_source(coord, session: Session,
                        plan: CreateSourcePlan | CreateWebhookSourcePlan | CreatePostgresSourcePlan) -> Outcome:
    if plan.if_not_exists and coord.catalog.try_resolve((plan.database, plan.schema, plan.name)) is not None:
        session.pending_notices.append(("42P07", f'source "{plan.name}" already exists, skipping'))
        return CommandComplete("CREATE SOURCE")
    if isinstance(plan, CreatePostgresSourcePlan):
        from storage.sources.postgres.setup import create_postgres_source
        await create_postgres_source(coord, plan, session.user)
    elif isinstance(plan, CreateKafkaSourcePlan):
        from storage.sources.kafka.ddl import create_kafka_source
        await create_kafka_source(coord, plan, session.user)
    else:
        await coord.sources.create(plan)
    return CommandComplete("CREATE SOURCE")
