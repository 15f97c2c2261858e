"""information_schema: the SQL standard's views of the catalog, as PostgreSQL fills them.

Materialized views are not in information_schema.tables in PostgreSQL (they are not standard);
Slipstream lists them as 'MATERIALIZED VIEW' there and in columns, as Materialize does, because
they are the relations users read (dbt and BI tools list relations from here).
"""

from __future__ import annotations

from catalog.items import ItemKind
from catalog.system.pg_catalog import _namespaces, user_items, view_definition
from catalog.system.relations import all_relations, relation
from catalog.system.snapshot import CatalogSnapshot
from dataflow.types import TypeKind

_TABLE_TYPE = {ItemKind.TABLE: "BASE TABLE", ItemKind.VIEW: "VIEW", ItemKind.MATERIALIZED_VIEW: "MATERIALIZED VIEW",
               # Sources read like tables (Materialize's information_schema says BASE TABLE too).
               ItemKind.SOURCE: "BASE TABLE", ItemKind.SUBSOURCE: "BASE TABLE"}


@relation("information_schema", "tables", 13300,
          "table_catalog name, table_schema name, table_name name, table_type text, "
          "self_referencing_column_name name, reference_generation text, user_defined_type_catalog name, "
          "user_defined_type_schema name, user_defined_type_name name, is_insertable_into text, "
          "is_typed text, commit_action text", kind="v")
def tables(snap: CatalogSnapshot):
    rows = [(snap.database, i.schema, i.name, _TABLE_TYPE[i.kind], None, None, None, None, None,
             "YES" if i.kind is ItemKind.TABLE else "NO", "NO", None)
            for i in user_items(snap) if i.kind in _TABLE_TYPE]
    rows += [(snap.database, r.schema, r.name, "BASE TABLE" if r.kind == "r" else "VIEW", None, None, None,
              None, None, "NO", "NO", None) for r in all_relations()]
    return rows


def data_type(t) -> str:
    """information_schema's data_type: the SQL name, 'ARRAY' for arrays, 'USER-DEFINED' never."""
    if t.kind is TypeKind.ARRAY:
        return "ARRAY"
    if t.kind is TypeKind.NUMERIC:
        return "numeric"
    if t.kind in (TypeKind.VARCHAR, TypeKind.BPCHAR):
        return "character varying" if t.kind is TypeKind.VARCHAR else "character"
    return type(t)(t.kind).name


def _udt_name(t) -> str:
    from catalog.system.pg_types import typname_of
    return typname_of(t.oid) or t.name


@relation("information_schema", "columns", 13301,
          "table_catalog name, table_schema name, table_name name, column_name name, "
          "ordinal_position int4, column_default text, is_nullable text, data_type text, "
          "character_maximum_length int4, character_octet_length int4, numeric_precision int4, "
          "numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, "
          "interval_type text, interval_precision int4, character_set_catalog name, "
          "character_set_schema name, character_set_name name, collation_catalog name, "
          "collation_schema name, collation_name name, domain_catalog name, domain_schema name, "
          "domain_name name, udt_catalog name, udt_schema name, udt_name name, scope_catalog name, "
          "scope_schema name, scope_name name, maximum_cardinality int4, dtd_identifier name, "
          "is_self_referencing text, is_identity text, identity_generation text, identity_start text, "
          "identity_increment text, identity_maximum text, identity_minimum text, identity_cycle text, "
          "is_generated text, generation_expression text, is_updatable text", kind="v")
def columns(snap: CatalogSnapshot):
    rows = []
    for i in user_items(snap):
        if i.kind not in _TABLE_TYPE:
            continue
        defaults = dict(snap.defaults.get(i.id, ()))
        for n, c in enumerate(i.columns, start=1):
            rows.append(_column_row(snap.database, i.schema, i.name, n, c, defaults.get(n),
                                    i.kind is ItemKind.TABLE))
    return rows


_NUMERIC_PRECISION = {TypeKind.INT2: 16, TypeKind.INT4: 32, TypeKind.INT8: 64, TypeKind.FLOAT4: 24,
                      TypeKind.FLOAT8: 53}


def _column_row(database, schema, table, n, c, default, updatable):
    t = c.type
    char_len = t.precision if t.kind in (TypeKind.VARCHAR, TypeKind.BPCHAR) else None
    octets = (char_len * 4 if char_len else 1073741824) if t.is_text and t.kind not in (TypeKind.NAME, TypeKind.CHAR) else None
    if t.kind is TypeKind.NUMERIC:
        precision, radix, scale = t.precision, 10, t.scale
    elif t.kind in _NUMERIC_PRECISION:
        precision, radix = _NUMERIC_PRECISION[t.kind], 2
        scale = 0 if t.is_integer else None
    else:
        precision = radix = scale = None
    dt_precision = 6 if t.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ, TypeKind.TIME, TypeKind.INTERVAL) \
        else (0 if t.kind is TypeKind.DATE else None)
    return (database, schema, table, c.name, n, default, "YES" if c.nullable else "NO", data_type(t),
            char_len, octets, precision, radix, scale, dt_precision, None, None, None, None, None, None,
            None, None, None, None, None, database, "pg_catalog", _udt_name(t), None, None, None, None,
            str(n), "NO", "NO", None, None, None, None, None, "NO", "NEVER", None,
            "YES" if updatable else "NO")


@relation("information_schema", "views", 13302,
          "table_catalog name, table_schema name, table_name name, view_definition text, "
          "check_option text, is_updatable text, is_insertable_into text, is_trigger_updatable text, "
          "is_trigger_deletable text, is_trigger_insertable_into text", kind="v")
def views(snap: CatalogSnapshot):
    return [(snap.database, i.schema, i.name, view_definition(i), "NONE", "NO", "NO", "NO", "NO", "NO")
            for i in user_items(snap) if i.kind is ItemKind.VIEW]


@relation("information_schema", "schemata", 13303,
          "catalog_name name, schema_name name, schema_owner name, default_character_set_catalog name, "
          "default_character_set_schema name, default_character_set_name name, sql_path text", kind="v")
def schemata(snap: CatalogSnapshot):
    return [(snap.database, s, snap.user, None, None, None, None) for s, _ in _namespaces(snap)]


@relation("information_schema", "routines", 13304,
          "specific_catalog name, specific_schema name, specific_name name, routine_catalog name, "
          "routine_schema name, routine_name name, routine_type text, data_type text, "
          "routine_body text, routine_definition text, external_language text, is_deterministic text",
          kind="v")
def routines(snap: CatalogSnapshot):
    return [(snap.database, "pg_catalog", f"{p.name}_{p.oid}", snap.database, "pg_catalog", p.name,
             "FUNCTION", None, "EXTERNAL", None, "INTERNAL", "NO") for p in snap.procs]


for _name, _oid, _spec in [
    ("table_constraints", 13305,
     "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, "
     "table_schema name, table_name name, constraint_type text, is_deferrable text, "
     "initially_deferred text, enforced text, nulls_distinct text"),
    ("key_column_usage", 13306,
     "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, "
     "table_schema name, table_name name, column_name name, ordinal_position int4, "
     "position_in_unique_constraint int4"),
    ("referential_constraints", 13307,
     "constraint_catalog name, constraint_schema name, constraint_name name, "
     "unique_constraint_catalog name, unique_constraint_schema name, unique_constraint_name name, "
     "match_option text, update_rule text, delete_rule text"),
    ("constraint_column_usage", 13308,
     "table_catalog name, table_schema name, table_name name, column_name name, "
     "constraint_catalog name, constraint_schema name, constraint_name name"),
    ("check_constraints", 13309,
     "constraint_catalog name, constraint_schema name, constraint_name name, check_clause text"),
]:
    relation("information_schema", _name, _oid, _spec, kind="v")(lambda snap: ())


@relation("information_schema", "table_privileges", 13310,
          "grantor name, grantee name, table_catalog name, table_schema name, table_name name, "
          "privilege_type text, is_grantable text, with_hierarchy text", kind="v")
def table_privileges(snap: CatalogSnapshot):
    """One row per privilege per grantee, as PostgreSQL: the owner's own (grantable), then what
    was granted (by the owner, on whose behalf every grant is made); only rows whose grantor or
    grantee is one of the user's roles, or PUBLIC, unless the user is a superuser."""
    from catalog.privileges import LETTER_NAMES, PUBLIC, valid_privileges
    rows = []
    for i in user_items(snap):
        if i.kind is ItemKind.INDEX:
            continue
        entries = [(i.owner, c, "YES") for c in valid_privileges(i.kind.value)]
        for grantee, letters in sorted(snap.grants.get(("item", i.id), {}).items()):
            if grantee != i.owner:
                entries += [(grantee, c, "NO") for c in letters]
        for grantee, letter, grantable in entries:
            visible = (snap.user_roles is None or grantee == PUBLIC or grantee in snap.user_roles
                       or i.owner in snap.user_roles)
            if visible:
                rows.append((i.owner, "PUBLIC" if grantee == PUBLIC else grantee, snap.database, i.schema, i.name,
                             LETTER_NAMES[letter], grantable, "YES" if letter == "r" else "NO"))
    return rows
