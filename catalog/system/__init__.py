"""The system catalogs: pg_catalog, information_schema and mz_catalog, generated from Slipstream's
own durable catalog for one statement.

Clients (psql's `\\d`, SQLAlchemy's Inspector, pgJDBC's DatabaseMetaData, BI tools) learn what
exists by querying these relations with ordinary SQL: joins, subqueries, `::regclass` casts. Each
relation here is a list of columns and a function from a `CatalogSnapshot` (the objects, roles,
functions and session a statement sees) to rows. The planner reads one as a constant relation,
so a catalog query is planned and run like any other, at the statement's catalog state:

>>> snap = CatalogSnapshot(items=(), database="slipstream", user="slipstream")
>>> rel = lookup(("pg_catalog", "pg_namespace"))
>>> sorted(r[1] for r in rel.rows(snap))
['information_schema', 'mz_catalog', 'pg_catalog', 'public']

OIDs are PostgreSQL's own where PostgreSQL has the object (types, pg_catalog's relations, the
pg_catalog and public schemas), so clients that hard-code them work; user objects keep the OID
the durable catalog gave them when they were created (never reused).
"""

from __future__ import annotations

from catalog.system.snapshot import CatalogSnapshot, ProcInfo, RoleInfo, SessionRow
from catalog.system.relations import SystemRelation, lookup, all_relations, SYSTEM_SCHEMAS, schema_oid
from catalog.system import pg_catalog, information_schema, mz_catalog  # noqa: F401  (registers)

__all__ = ["CatalogSnapshot", "ProcInfo", "RoleInfo", "SessionRow", "SystemRelation", "lookup",
           "all_relations", "SYSTEM_SCHEMAS", "schema_oid"]
