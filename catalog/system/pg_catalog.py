"""pg_catalog: PostgreSQL's system catalogs and views, with the columns clients read.

Tables and materialized views are relkind 'r' and 'm', views 'v', indexes 'i'; pg_catalog's own
relations are listed too (as PostgreSQL lists them), each with its columns in pg_attribute.
Catalogs of features Slipstream does not have (triggers, policies, publications, inheritance,
sequences, ...) exist and are empty, so the joins clients write against them work.
"""

from __future__ import annotations

from catalog.items import CatalogItem, ItemKind
from catalog.system.pg_types import all_types, io_functions
from catalog.system.relations import SYSTEM_SCHEMAS, all_relations, empty, relation, schema_oid
from catalog.system.snapshot import SUPERUSER_OID, CatalogSnapshot
from dataflow.types import TypeKind

DATABASE_OID = 16384
HEAP_AM, BTREE_AM, HASH_AM = 2, 403, 405
DEFAULT_COLLATION = 100
PG_DEFAULT_TABLESPACE = 1663
ENCODING_UTF8 = 6

_RELKIND = {ItemKind.TABLE: "r", ItemKind.VIEW: "v", ItemKind.MATERIALIZED_VIEW: "m", ItemKind.INDEX: "i",
            ItemKind.SOURCE: "r", ItemKind.SUBSOURCE: "r"}


def _namespaces(snap: CatalogSnapshot) -> list[tuple[str, int]]:
    """(name, oid) of the schemas of the statement's database, then the system schemas."""
    return [(n, o) for d, n, o in snap.schemas if d == snap.database] + \
        [(s, o) for s, o in SYSTEM_SCHEMAS.items() if s != "mz_internal"]


def user_items(snap: CatalogSnapshot) -> list[CatalogItem]:
    return [i for i in snap.items if i.database == snap.database]


def relkind(item: CatalogItem) -> str:
    return _RELKIND[item.kind]


def _type_modifier(t) -> int:
    """atttypmod: -1, or PostgreSQL's encoding of varchar(n)/character(n) and numeric(p,s)."""
    if t.kind in (TypeKind.VARCHAR, TypeKind.BPCHAR) and t.precision is not None:
        return t.precision + 4
    if t.kind is TypeKind.NUMERIC and t.scale is not None:
        return ((t.precision << 16) | t.scale) + 4
    return -1


_TYPE_LEN = {r.oid: r.length for r in all_types()}
_TYPE_BYVAL = {r.oid: r.byval for r in all_types()}
_TYPE_ALIGN = {r.oid: r.align for r in all_types()}
_TYPE_COLL = {r.oid: r.collation for r in all_types()}


@relation("pg_catalog", "pg_namespace", 2615, "oid oid, nspname name, nspowner oid, nspacl aclitem[]")
def pg_namespace(snap: CatalogSnapshot):
    def owner(s):
        key = ("schema", f"{snap.database}.{s}")
        return snap.role_oid(snap.owners[key]) if key in snap.owners else SUPERUSER_OID
    return [(o, s, owner(s), snap.acls.get(("schema", f"{snap.database}.{s}"))) for s, o in _namespaces(snap)]


_CLASS = ("oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, relam oid, "
          "relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, "
          "reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char, relkind char, "
          "relnatts int2, relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool, "
          "relrowsecurity bool, relforcerowsecurity bool, relispopulated bool, relreplident char, "
          "relispartition bool, relrewrite oid, relfrozenxid xid, relminmxid xid, relacl aclitem[], "
          "reloptions text[], relpartbound pg_node_tree")


def _class_row(oid, name, nsp, owner, kind, natts, has_index):
    am = BTREE_AM if kind == "i" else (HEAP_AM if kind in ("r", "m") else 0)
    return (oid, name, nsp, 0, 0, owner, am, oid if kind in ("r", "m", "i") else 0, 0, 0, -1.0, 0, 0,
            has_index, False, "p", kind, natts, 0, kind == "v", False, False, False, False, True,
            "d" if kind in ("r", "m") else "n", False, 0, 0, 0, None, None, None)


@relation("pg_catalog", "pg_class", 1259, _CLASS)
def pg_class(snap: CatalogSnapshot):
    items = user_items(snap)
    indexed = {i.index_on for i in items if i.kind is ItemKind.INDEX}
    rows = [_class_row(i.oid, i.name, snap.schema_oid(i.schema), snap.role_oid(i.owner), relkind(i),
                       len(i.index_key) if i.kind is ItemKind.INDEX else len(i.columns), i.id in indexed)
            for i in items]
    for k, i in enumerate(items):  # relacl (the third column from the end)
        acl = snap.acls.get(("item", i.id))
        if acl is not None:
            rows[k] = rows[k][:-3] + (acl,) + rows[k][-2:]
    rows += [_class_row(r.oid, r.name, schema_oid(r.schema), SUPERUSER_OID, r.kind, len(r.columns), False)
             for r in all_relations()]
    return rows


_ATTRIBUTE = ("attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, attnum int2, "
              "attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char, "
              "attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, "
              "attgenerated char, attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, "
              "attacl aclitem[], attoptions text[], attfdwoptions text[]")


def _storage(type_oid: int, length: int) -> str:
    """typstorage: plain for fixed-length types, extended for varlena ones, main for numeric
    (as in PostgreSQL's pg_type; psql's `\\d+` prints it)."""
    if type_oid == 1700:
        return "m"
    return "p" if length > 0 else "x"


def _attribute_rows(relid: int, columns, has_default=frozenset()):
    for n, c in enumerate(columns, start=1):
        t = c.type.oid
        yield (relid, c.name, t, -1, _TYPE_LEN.get(t, -1), n, 1 if c.type.kind is TypeKind.ARRAY else 0, -1,
               _type_modifier(c.type), _TYPE_BYVAL.get(t, False), _TYPE_ALIGN.get(t, "i"),
               _storage(t, _TYPE_LEN.get(t, -1)), "", not c.nullable, n in has_default, False, "", "",
               False, True, 0, _TYPE_COLL.get(t, 0), None, None, None)


# The system columns every PostgreSQL table has (attnum < 0): clients that list pg_attribute
# without `attnum > 0` see them, as they would on PostgreSQL (they cannot be selected here).
_SYSTEM_COLUMNS = (("tableoid", 26, -6, 4, True), ("cmax", 29, -5, 4, True), ("xmax", 28, -4, 4, True),
                   ("cmin", 29, -3, 4, True), ("xmin", 28, -2, 4, True), ("ctid", 27, -1, 6, False))


def _system_columns(relid: int):
    for name, typ, num, length, byval in _SYSTEM_COLUMNS:
        yield (relid, name, typ, 0, length, num, 0, -1, -1, byval, "s" if typ == 27 else "i", "p", "", True,
               False, False, "", "", False, True, 0, 0, None, None, None)


@relation("pg_catalog", "pg_attribute", 1249, _ATTRIBUTE)
def pg_attribute(snap: CatalogSnapshot):
    rows = []
    for i in user_items(snap):
        cols = i.columns
        if i.kind is ItemKind.INDEX:
            on = next((x for x in snap.items if x.id == i.index_on), None)
            cols = tuple(on.columns[k] for k in i.index_key) if on is not None else ()
        defaults = {n for n, _ in snap.defaults.get(i.id, ())}
        rows.extend(_attribute_rows(i.oid, cols, defaults))
        if i.kind in (ItemKind.TABLE, ItemKind.MATERIALIZED_VIEW):
            rows.extend(_system_columns(i.oid))
    for r in all_relations():
        rows.extend(_attribute_rows(r.oid, r.columns))
    return rows


@relation("pg_catalog", "pg_attrdef", 2604, "oid oid, adrelid oid, adnum int2, adbin pg_node_tree")
def pg_attrdef(snap: CatalogSnapshot):
    rows = []
    by_id = {i.id: i for i in user_items(snap)}
    for item_id, defaults in snap.defaults.items():
        item = by_id.get(item_id)
        if item is None:
            continue
        for n, text in defaults:
            rows.append((attrdef_oid(item.oid, n), item.oid, n, text))
    return rows


def attrdef_oid(relid: int, attnum: int) -> int:
    """A default's OID, derived from its table's (user OIDs are far below 2^22)."""
    return 1_000_000_000 + relid * 1000 + attnum


_TYPE = ("oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, typtype char, "
         "typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, "
         "typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, "
         "typreceive regproc, typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, "
         "typalign char, typstorage char, typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, "
         "typcollation oid, typdefaultbin pg_node_tree, typdefault text, typacl aclitem[]")


@relation("pg_catalog", "pg_type", 1247, _TYPE)
def pg_type(snap: CatalogSnapshot):
    procs = proc_oids_by_name(snap)
    rows = []
    for t in all_types():
        fin, fout, frecv, fsend = (procs.get(f, 0) for f in io_functions(t))
        subscript = procs.get("array_subscript_handler", 0) if t.category == "A" else 0
        rows.append((t.oid, t.name, 11, SUPERUSER_OID, t.length, t.byval, t.typtype, t.category, t.preferred,
                     True, ",", 0, subscript, t.elem, t.array_oid, fin, fout, frecv, fsend, 0, 0, 0,
                     t.align, _storage(t.oid, t.length), False, 0, -1, 0, t.collation, None, None, None))
    return rows


def proc_oids_by_name(snap: CatalogSnapshot) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in snap.procs:
        out.setdefault(p.name, p.oid)
    return out


_PROC = ("oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, "
         "prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, "
         "proleakproof bool, proisstrict bool, proretset bool, provolatile char, proparallel char, "
         "pronargs int2, pronargdefaults int2, prorettype oid, proargtypes oidvector, proallargtypes oid[], "
         "proargmodes char[], proargnames text[], proargdefaults pg_node_tree, protrftypes oid[], "
         "prosrc text, probin text, prosqlbody pg_node_tree, proconfig text[], proacl aclitem[]")

INTERNAL_LANGUAGE = 12


@relation("pg_catalog", "pg_proc", 1255, _PROC)
def pg_proc(snap: CatalogSnapshot):
    return [(p.oid, p.name, 11, SUPERUSER_OID, INTERNAL_LANGUAGE, 1.0, 1000.0 if p.retset else 0.0,
             p.variadic_oid, 0, p.kind, False, False, True, p.retset, "i", "s", len(p.arg_oids), 0,
             p.result_oid, "{" + ",".join(map(str, p.arg_oids)) + "}", None, None, None, None, None,
             p.name, None, None, None, None) for p in snap.procs]


@relation("pg_catalog", "pg_database", 1262,
          "oid oid, datname name, datdba oid, encoding int4, datlocprovider char, datistemplate bool, "
          "datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid, dattablespace oid, "
          "datcollate text, datctype text, daticulocale text, datcollversion text, datacl aclitem[]")
def pg_database(snap: CatalogSnapshot):
    return [(oid, name, snap.role_oid(snap.owners.get(("database", name), "")) if ("database", name) in snap.owners
             else SUPERUSER_OID, ENCODING_UTF8, "c", False, True, -1, 0, 0,
             PG_DEFAULT_TABLESPACE, "C", "C", None, None, snap.acls.get(("database", name)))
            for name, oid in snap.databases]


_AUTHID = ("oid oid, rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, "
           "rolcanlogin bool, rolreplication bool, rolbypassrls bool, rolconnlimit int4, rolpassword text, "
           "rolvaliduntil timestamptz")


def _roles(snap: CatalogSnapshot):
    if snap.roles:
        return snap.roles
    from catalog.system.snapshot import RoleInfo
    return (RoleInfo(snap.user, SUPERUSER_OID),)


@relation("pg_catalog", "pg_authid", 1260, _AUTHID)
def pg_authid(snap: CatalogSnapshot):
    return [(r.oid, r.name, r.superuser, True, r.superuser, r.superuser, r.login, False, r.superuser, -1,
             None, None) for r in _roles(snap)]


@relation("pg_catalog", "pg_roles", 12001,
          "rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, "
          "rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, "
          "rolvaliduntil timestamptz, rolbypassrls bool, rolconfig text[], oid oid", kind="v")
def pg_roles(snap: CatalogSnapshot):
    return [(r.name, r.superuser, True, r.superuser, r.superuser, r.login, False, -1, "********", None,
             r.superuser, None, r.oid) for r in _roles(snap)]


@relation("pg_catalog", "pg_user", 12002,
          "usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, usebypassrls bool, "
          "passwd text, valuntil timestamptz, useconfig text[]", kind="v")
def pg_user(snap: CatalogSnapshot):
    return [(r.name, r.oid, r.superuser, r.superuser, False, r.superuser, "********", None, None)
            for r in _roles(snap) if r.login]


@relation("pg_catalog", "pg_auth_members", 1261, "roleid oid, member oid, grantor oid, admin_option bool")
def pg_auth_members(snap: CatalogSnapshot):
    """GRANT role TO member (catalog/privileges.py); every grant is made by the bootstrap superuser."""
    return [(snap.role_oid(role), snap.role_oid(member), SUPERUSER_OID, False) for role, member in snap.memberships]


@relation("pg_catalog", "pg_am", 2601, "oid oid, amname name, amhandler regproc, amtype char")
def pg_am(snap: CatalogSnapshot):
    return [(HEAP_AM, "heap", 0, "t"), (BTREE_AM, "btree", 0, "i"), (HASH_AM, "hash", 0, "i")]


_INDEX = ("indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, "
          "indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, "
          "indisclustered bool, indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, "
          "indisreplident bool, indkey int2vector, indcollation oidvector, indclass oidvector, "
          "indoption int2vector, indexprs pg_node_tree, indpred pg_node_tree")


@relation("pg_catalog", "pg_index", 2610, _INDEX)
def pg_index(snap: CatalogSnapshot):
    by_id = {i.id: i for i in snap.items}
    rows = []
    for i in user_items(snap):
        if i.kind is not ItemKind.INDEX or i.index_on not in by_id:
            continue
        on = by_id[i.index_on]
        keys = [k + 1 for k in i.index_key]
        colls = [_TYPE_COLL.get(on.columns[k].type.oid, 0) for k in i.index_key]
        rows.append((i.oid, on.oid, len(keys), len(keys), False, False, False, False, True, False, True,
                     False, True, True, False, "{" + ",".join(map(str, keys)) + "}",
                     "{" + ",".join(map(str, colls)) + "}", "{" + ",".join("0" for _ in keys) + "}",
                     "{" + ",".join("0" for _ in keys) + "}", None, None))
    return rows


empty("pg_catalog", "pg_constraint", 2606,
      "oid oid, conname name, connamespace oid, contype char, condeferrable bool, condeferred bool, "
      "convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid, "
      "confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, "
      "connoinherit bool, conkey int2[], confkey int2[], conpfeqop oid[], conppeqop oid[], "
      "conffeqop oid[], confdelsetcols int2[], conexclop oid[], conbin pg_node_tree")
empty("pg_catalog", "pg_description", 2609, "objoid oid, classoid oid, objsubid int4, description text")
empty("pg_catalog", "pg_shdescription", 2396, "objoid oid, classoid oid, description text")


@relation("pg_catalog", "pg_collation", 3456,
          "oid oid, collname name, collnamespace oid, collowner oid, collprovider char, "
          "collisdeterministic bool, collencoding int4, collcollate text, collctype text, "
          "colliculocale text, collversion text")
def pg_collation(snap: CatalogSnapshot):
    return [(100, "default", 11, SUPERUSER_OID, "d", True, -1, None, None, None, None),
            (950, "C", 11, SUPERUSER_OID, "c", True, -1, "C", "C", None, None),
            (951, "POSIX", 11, SUPERUSER_OID, "c", True, -1, "POSIX", "POSIX", None, None)]


@relation("pg_catalog", "pg_tablespace", 1213,
          "oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]")
def pg_tablespace(snap: CatalogSnapshot):
    return [(PG_DEFAULT_TABLESPACE, "pg_default", SUPERUSER_OID, None, None),
            (1664, "pg_global", SUPERUSER_OID, None, None)]


@relation("pg_catalog", "pg_depend", 2608,
          "classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid, refobjsubid int4, deptype char")
def pg_depend(snap: CatalogSnapshot):
    """A view or materialized view depends on what it reads ('n'); an index on its relation ('a')."""
    by_id = {i.id: i for i in snap.items}
    rows = []
    for i in user_items(snap):
        refs = [i.index_on] if i.kind is ItemKind.INDEX else list(i.depends_on)
        for ref in refs:
            if ref in by_id:
                rows.append((1259, i.oid, 0, 1259, by_id[ref].oid, 0, "a" if i.kind is ItemKind.INDEX else "n"))
    return rows


@relation("pg_catalog", "pg_settings", 12003,
          "name text, setting text, unit text, category text, short_desc text, extra_desc text, "
          "context text, vartype text, source text, min_val text, max_val text, enumvals text[], "
          "boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool", kind="v")
def pg_settings(snap: CatalogSnapshot):
    settings = dict(snap.settings)
    settings.setdefault("max_index_keys", "32")
    settings.setdefault("max_identifier_length", "63")
    settings.setdefault("block_size", "8192")
    return [(name, value, None, "Slipstream", "", None, "user", "string", "default", None, None, None,
             value, value, None, None, False) for name, value in sorted(settings.items())]


@relation("pg_catalog", "pg_tables", 12004,
          "schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool, "
          "hasrules bool, hastriggers bool, rowsecurity bool", kind="v")
def pg_tables(snap: CatalogSnapshot):
    items = user_items(snap)
    indexed = {i.index_on for i in items if i.kind is ItemKind.INDEX}
    rows = [(i.schema, i.name, i.owner, None, i.id in indexed, False, False, False)
            for i in items if i.kind is ItemKind.TABLE]
    rows += [(r.schema, r.name, snap.user, None, False, False, False, False)
             for r in all_relations() if r.kind == "r"]
    return rows


@relation("pg_catalog", "pg_views", 12005,
          "schemaname name, viewname name, viewowner name, definition text", kind="v")
def pg_views(snap: CatalogSnapshot):
    return [(i.schema, i.name, i.owner, view_definition(i)) for i in user_items(snap) if i.kind is ItemKind.VIEW]


@relation("pg_catalog", "pg_matviews", 12006,
          "schemaname name, matviewname name, matviewowner name, tablespace name, hasindexes bool, "
          "ispopulated bool, definition text", kind="v")
def pg_matviews(snap: CatalogSnapshot):
    items = user_items(snap)
    indexed = {i.index_on for i in items if i.kind is ItemKind.INDEX}
    return [(i.schema, i.name, i.owner, None, i.id in indexed, True, view_definition(i))
            for i in items if i.kind is ItemKind.MATERIALIZED_VIEW]


@relation("pg_catalog", "pg_indexes", 12007,
          "schemaname name, tablename name, indexname name, tablespace name, indexdef text", kind="v")
def pg_indexes(snap: CatalogSnapshot):
    by_id = {i.id: i for i in snap.items}
    return [(i.schema, by_id[i.index_on].name, i.name, None, index_definition(i, by_id[i.index_on]))
            for i in user_items(snap) if i.kind is ItemKind.INDEX and i.index_on in by_id]


def view_definition(item: CatalogItem, pretty: bool = False) -> str:
    """pg_get_viewdef's text: PostgreSQL's own form where the planner could write it
    (`planner.deparse`; `pretty` as pg_get_viewdef(v, true)), else the SELECT as written,
    indented by one space, with a semicolon."""
    if item.pg_definitions is not None:
        return item.pg_definitions[0 if pretty else 1]
    text = (item.definition or "").strip().rstrip(";")
    return " " + text + ";"


def index_definition(index: CatalogItem, on: CatalogItem) -> str:
    cols = ", ".join(_quote(on.columns[k].name) for k in index.index_key)
    return f"CREATE INDEX {_quote(index.name)} ON {on.schema}.{_quote(on.name)} USING btree ({cols})"


def _quote(name: str) -> str:
    import re
    return name if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'


@relation("pg_catalog", "pg_stat_activity", 12008,
          "datid oid, datname name, pid int4, leader_pid int4, usesysid oid, usename name, "
          "application_name text, client_addr text, client_hostname text, client_port int4, "
          "backend_start timestamptz, xact_start timestamptz, query_start timestamptz, "
          "state_change timestamptz, wait_event_type text, wait_event text, state text, "
          "backend_xid xid, backend_xmin xid, query_id int8, query text, backend_type text", kind="v")
def pg_stat_activity(snap: CatalogSnapshot):
    return [(DATABASE_OID, s.database, s.pid, None, snap.role_oid(s.user), s.user, s.application_name,
             s.client_addr, None, s.client_port, s.backend_start, None, None, None, None, None, s.state,
             None, None, None, s.query, "client backend") for s in snap.sessions]


empty("pg_catalog", "pg_inherits", 2611, "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool")
empty("pg_catalog", "pg_range", 3541,
      "rngtypid oid, rngsubtype oid, rngmultitypid oid, rngcollation oid, rngsubopc oid, "
      "rngcanonical regproc, rngsubdiff regproc")
empty("pg_catalog", "pg_enum", 3501, "oid oid, enumtypid oid, enumsortorder float4, enumlabel name")
empty("pg_catalog", "pg_extension", 3079,
      "oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, extversion text, "
      "extconfig oid[], extcondition text[]")
empty("pg_catalog", "pg_opclass", 2616,
      "oid oid, opcmethod oid, opcname name, opcnamespace oid, opcowner oid, opcfamily oid, "
      "opcintype oid, opcdefault bool, opckeytype oid")
empty("pg_catalog", "pg_sequence", 2224,
      "seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, seqmin int8, "
      "seqcache int8, seqcycle bool")
empty("pg_catalog", "pg_trigger", 2620,
      "oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, tgenabled char, "
      "tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool, "
      "tginitdeferred bool, tgnargs int2, tgattr int2vector, tgoldtable name, tgnewtable name")
empty("pg_catalog", "pg_rewrite", 2618,
      "oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char, is_instead bool, "
      "ev_qual pg_node_tree, ev_action pg_node_tree")
empty("pg_catalog", "pg_policy", 3256,
      "oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles oid[], "
      "polqual pg_node_tree, polwithcheck pg_node_tree")
empty("pg_catalog", "pg_statistic_ext", 3381,
      "oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, stxstattarget int4, "
      "stxkeys int2vector, stxkind char[], stxexprs pg_node_tree")
empty("pg_catalog", "pg_publication", 6104,
      "oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, pubupdate bool, "
      "pubdelete bool, pubtruncate bool, pubviaroot bool")
empty("pg_catalog", "pg_publication_rel", 6106, "oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2vector")
empty("pg_catalog", "pg_publication_namespace", 6237, "oid oid, pnpubid oid, pnnspid oid")
empty("pg_catalog", "pg_aggregate", 2600,
      "aggfnoid regproc, aggkind char, aggnumdirectargs int2, aggtransfn regproc, aggfinalfn regproc, "
      "aggtranstype oid, agginitval text")
empty("pg_catalog", "pg_foreign_table", 3118, "ftrelid oid, ftserver oid, ftoptions text[]")
empty("pg_catalog", "pg_partitioned_table", 3350,
      "partrelid oid, partstrat char, partnatts int2, partdefid oid, partattrs int2vector, "
      "partclass oidvector, partcollation oidvector, partexprs pg_node_tree")
empty("pg_catalog", "pg_event_trigger", 3466,
      "oid oid, evtname name, evtevent name, evtowner oid, evtfoid oid, evtenabled char, evttags text[]")
empty("pg_catalog", "pg_locks", 12009,
      "locktype text, database oid, relation oid, page int4, tuple int2, virtualxid text, "
      "transactionid xid, classid oid, objid oid, objsubid int2, virtualtransaction text, pid int4, "
      "mode text, granted bool, fastpath bool, waitstart timestamptz")
empty("pg_catalog", "pg_cast", 2605,
      "oid oid, castsource oid, casttarget oid, castfunc oid, castcontext char, castmethod char")
empty("pg_catalog", "pg_operator", 2617,
      "oid oid, oprname name, oprnamespace oid, oprowner oid, oprkind char, oprcanmerge bool, "
      "oprcanhash bool, oprleft oid, oprright oid, oprresult oid, oprcode regproc")
empty("pg_catalog", "pg_language", 2612, "oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool")
empty("pg_catalog", "pg_foreign_server", 1417, "oid oid, srvname name, srvowner oid, srvfdw oid")
empty("pg_catalog", "pg_foreign_data_wrapper", 2328, "oid oid, fdwname name, fdwowner oid")
empty("pg_catalog", "pg_default_acl", 826,
      "oid oid, defaclrole oid, defaclnamespace oid, defaclobjtype char, defaclacl aclitem[]")
empty("pg_catalog", "pg_init_privs", 3394,
      "objoid oid, classoid oid, objsubid int4, privtype char, initprivs aclitem[]")
empty("pg_catalog", "pg_conversion", 2607, "oid oid, conname name, connamespace oid, conowner oid")
empty("pg_catalog", "pg_ts_config", 3602, "oid oid, cfgname name, cfgnamespace oid, cfgowner oid")
empty("pg_catalog", "pg_ts_dict", 3600, "oid oid, dictname name, dictnamespace oid, dictowner oid")
empty("pg_catalog", "pg_ts_parser", 3601, "oid oid, prsname name, prsnamespace oid")
empty("pg_catalog", "pg_ts_template", 3764, "oid oid, tmplname name, tmplnamespace oid")
empty("pg_catalog", "pg_subscription", 6100, "oid oid, subdbid oid, subname name, subowner oid")
empty("pg_catalog", "pg_stat_user_tables", 12010,
      "relid oid, schemaname name, relname name, seq_scan int8, n_live_tup int8")
empty("pg_catalog", "pg_statio_user_tables", 12011, "relid oid, schemaname name, relname name")
empty("pg_catalog", "pg_prepared_statements", 12012,
      "name text, statement text, prepare_time timestamptz, parameter_types oid[], from_sql bool")
