"""The statements BI tools and frameworks send when they connect and list what they can query,
taken from their public source (see docs/clients/*.md for each tool), run against Slipstream over
real sockets. Each must run and show the test's own table, view and materialized view; where
PostgreSQL answers the same statement comparably (no OIDs, owners or sizes in the answer), the
answers must be equal."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e

T, V, MV = "bi_orders", "bi_orders_v", "bi_orders_mv"

# Grafana's PostgreSQL data source (public/app/plugins/datasource/grafana-postgresql-datasource,
# postgresMetaQuery): the search-path constraint and the table / column pickers.
_GRAFANA_SCHEMA = """quote_ident(table_schema) IN (
  SELECT CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
  FROM generate_series(array_lower(string_to_array(current_setting('search_path'),','),1),
                       array_upper(string_to_array(current_setting('search_path'),','),1)) as i,
       string_to_array(current_setting('search_path'),',') s)"""

TOOLS = {
    "grafana": [
        ("SELECT current_setting('server_version_num')::int/100 as version", "same"),
        ("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'", "same"),
        (f"""SELECT quote_ident(table_name) AS "table" FROM information_schema.tables
             WHERE quote_ident(table_schema) NOT IN ('information_schema', 'pg_catalog', '_timescaledb_cache',
               '_timescaledb_catalog', '_timescaledb_internal', '_timescaledb_config',
               'timescaledb_information', 'timescaledb_experimental') AND {_GRAFANA_SCHEMA}
               AND table_name LIKE 'bi_orders%' ORDER BY 1""", "lists:" + MV),  # PostgreSQL omits MVs here
        (f"""SELECT quote_ident(column_name) AS "column", data_type AS "type" FROM information_schema.columns
             WHERE quote_ident(table_name) = '{T}' AND {_GRAFANA_SCHEMA} ORDER BY ordinal_position""", "same"),
    ],
    "metabase": [  # through pgJDBC; the session set-up and probes of its postgres driver
        ("SET extra_float_digits = 3", "runs"),
        ("SET application_name = 'Metabase v0.50.0 [test]'", "runs"),
        ("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", "runs"),
        ("SELECT setting FROM pg_catalog.pg_settings WHERE name='max_index_keys'", "same"),
        (f'SELECT TRUE AS "_" FROM "public"."{T}" WHERE 1 <> 1 LIMIT 0', "same"),
        ("SELECT t.typname, e.enumlabel FROM pg_catalog.pg_type t JOIN pg_catalog.pg_enum e "
         "ON e.enumtypid = t.oid ORDER BY 1, 2", "same"),
        ("SELECT nspname AS TABLE_SCHEM, NULL AS TABLE_CATALOG FROM pg_catalog.pg_namespace "
         "WHERE nspname <> 'pg_toast' AND (nspname !~ '^pg_temp_' OR nspname = (pg_catalog.current_schemas(true))[1]) "
         "AND (nspname !~ '^pg_toast_temp_' OR nspname = replace((pg_catalog.current_schemas(true))[1], 'pg_temp_', "
         "'pg_toast_temp_')) ORDER BY TABLE_SCHEM", "lists:public"),
    ],
    "superset": [  # SQLAlchemy's PostgreSQL dialect plus Superset's own probes
        ("select pg_catalog.version()", "runs"),
        ("select current_schema()", "same"),
        ("show standard_conforming_strings", "same"),
        ("SELECT pg_catalog.pg_am.oid, pg_catalog.pg_am.amname FROM pg_catalog.pg_am "
         "WHERE pg_catalog.pg_am.amname = 'btree'", "same"),
        (f"SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
         f"WHERE c.relkind = ANY (ARRAY['r', 'p']) AND pg_catalog.pg_table_is_visible(c.oid) "
         f"AND n.nspname != 'pg_catalog' AND c.relname LIKE 'bi_orders%' ORDER BY 1", "same"),
        (f"SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
         f"WHERE c.relkind = ANY (ARRAY['m']) AND pg_catalog.pg_table_is_visible(c.oid) "
         f"AND c.relname LIKE 'bi_orders%' ORDER BY 1", "lists:" + MV),
        ("SELECT pg_catalog.pg_type_is_visible('int4'::regtype)", "same"),
    ],
    "dbt": [  # dbt-postgres: postgres__list_relations_without_caching, get_columns_in_relation
        (f"""select 'slipstream' as database, tablename as name, schemaname as schema, 'table' as type
             from pg_tables where schemaname ilike 'public' and tablename like 'bi_orders%'
             union all
             select 'slipstream' as database, viewname as name, schemaname as schema, 'view' as type
             from pg_views where schemaname ilike 'public' and viewname like 'bi_orders%'
             union all
             select 'slipstream' as database, matviewname as name, schemaname as schema, 'materialized_view' as type
             from pg_matviews where schemaname ilike 'public' and matviewname like 'bi_orders%'""", "lists:" + MV),
        (f"""select column_name, data_type, character_maximum_length, numeric_precision, numeric_scale
             from information_schema.columns where table_name = '{T}' and table_schema = 'public'
             order by ordinal_position""", "same"),
        # dbt-materialize lists relations from mz_catalog
        (f"""select o.name, o.type from mz_catalog.mz_objects o join mz_catalog.mz_schemas s on o.schema_id = s.id
             join mz_catalog.mz_databases d on s.database_id = d.id
             where d.name = current_database() and s.name = 'public' and o.name like 'bi_orders%'
             order by 1""", "lists:" + MV),
    ],
    "dbeaver": [  # its PostgreSQL plugin's navigator queries (through pgJDBC)
        ("SELECT db.oid, db.datname FROM pg_catalog.pg_database db WHERE datallowconn AND NOT datistemplate "
         "ORDER BY db.datname", "lists:slipstream"),
        ("select setting from pg_catalog.pg_settings where name='standard_conforming_strings'", "runs"),
        ("SELECT n.oid, n.nspname, d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN "
         "pg_catalog.pg_description d ON d.objoid = n.oid AND d.objsubid = 0 "
         "AND d.classoid = 'pg_namespace'::regclass ORDER BY nspname", "lists:public"),
        ("SELECT c.oid, c.relname, c.relkind, d.description, pg_catalog.pg_get_expr(c.relpartbound, c.oid) "
         "as partition_expr, pg_catalog.pg_get_partkeydef(c.oid) as partition_key FROM pg_catalog.pg_class c "
         "LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid = c.oid AND d.objsubid = 0 "
         "AND d.classoid = 'pg_class'::regclass WHERE c.relnamespace = 'public'::regnamespace "
         "AND c.relkind not in ('i','I','c') AND c.relname LIKE 'bi_orders%'", "lists:" + V),
        ("select c.oid, pg_catalog.pg_total_relation_size(c.oid) as total_rel_size, "
         "pg_catalog.pg_relation_size(c.oid) as rel_size FROM pg_class c WHERE c.relname LIKE 'bi_orders%'", "runs"),
        (f"SELECT c.relname, a.attname, a.attnum, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value, "
         f"dsc.description, dep.objid FROM pg_catalog.pg_attribute a INNER JOIN pg_catalog.pg_class c "
         f"ON (a.attrelid = c.oid) LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid = ad.adrelid "
         f"AND a.attnum = ad.adnum) LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid = dsc.objoid "
         f"AND a.attnum = dsc.objsubid) LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid "
         f"AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid "
         f"WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid = '{T}'::regclass "
         f"ORDER BY a.attnum", "same"),
        ("SELECT e.extname, e.extversion FROM pg_catalog.pg_extension e ORDER BY 1", "runs"),
        ("SELECT t.oid, t.spcname FROM pg_catalog.pg_tablespace t ORDER BY 2", "lists:pg_default"),
    ],
    "tableau": [  # pgJDBC DatabaseMetaData.getTables, as Tableau's PostgreSQL connector sends it
        (f"""SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,
             CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' END AS TABLE_TYPE,
             d.description AS REMARKS FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
             LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0 and d.classoid = 'pg_class'::regclass)
             WHERE c.relnamespace = n.oid AND c.relname LIKE 'bi_orders%' AND (false OR ( c.relkind = 'r'
             AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ) OR ( c.relkind = 'v'
             AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema' ) OR ( c.relkind = 'm' ))
             ORDER BY TABLE_TYPE, TABLE_SCHEM, TABLE_NAME""", "lists:" + MV),
    ],
}

CASES = [(tool, i, sql, mode) for tool, stmts in TOOLS.items() for i, (sql, mode) in enumerate(stmts)]


@pytest.fixture(scope="module")
def conns(slipstream, pg_oracle):
    ddl = [f"CREATE TABLE {T} (id int NOT NULL, customer text DEFAULT 'anon', amount numeric(10,2), at timestamp)",
           f"CREATE VIEW {V} AS SELECT id, amount FROM {T}",
           f"CREATE MATERIALIZED VIEW {MV} AS SELECT customer, sum(amount) AS total FROM {T} GROUP BY customer"]
    ss = psycopg_connect(slipstream)
    pg = psycopg.connect(pg_oracle.dsn, autocommit=True)
    for conn in (ss, pg):
        for stmt in ddl:
            conn.execute(stmt)
    yield ss, pg
    ss.close()
    pg.close()


@pytest.mark.parametrize("tool,i,sql,mode", CASES, ids=[f"{t}-{i}" for t, i, _, _ in CASES])
def test_tool_statement(conns, tool, i, sql, mode):
    ss, pg = conns
    cur = ss.execute(sql)
    rows = cur.fetchall() if cur.description else []
    if mode == "same":
        assert rows == pg.execute(sql).fetchall()
    elif mode.startswith("lists:"):
        assert any(mode[len("lists:"):] in row for row in rows), rows
