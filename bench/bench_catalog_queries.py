"""Latency of the catalog queries clients send (psql's \\dt, SQLAlchemy's table listing, pgJDBC's
getTables, node tools' information_schema lookup, pgcli's column refresh) over pgwire, with N
user tables of 10 columns each in the catalog. Clients send these after every DDL and at every
connect, so they must answer in milliseconds.

    .venv/bin/python -m bench.bench_catalog_queries --dsn postgresql://slipstream@127.0.0.1:6875/slipstream \\
        --tables 200 --out bench/results/catalog_queries

Creates (and afterwards drops) tables bench_cat_0..N-1, runs each query 50 times after 3 warm-up
runs, and writes results.json (p50/p99/max in milliseconds per query) there. Run it against
PostgreSQL too (same flags, its DSN) to see both side by side.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import psycopg

QUERIES = {
    "psql \\dt": """SELECT n.nspname as "Schema", c.relname as "Name", CASE c.relkind WHEN 'r' THEN 'table'
        WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' END as "Type",
        pg_catalog.pg_get_userbyid(c.relowner) as "Owner" FROM pg_catalog.pg_class c
        LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
        WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' AND n.nspname !~ '^pg_toast'
        AND n.nspname <> 'information_schema' AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2""",
    "sqlalchemy get_table_names": """SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class
        JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace
        WHERE pg_catalog.pg_class.relkind = ANY (ARRAY['r', 'p']) AND pg_catalog.pg_class.relpersistence != 't'
        AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != 'pg_catalog'""",
    "jdbc getTables": """SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,
        d.description AS REMARKS FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
        LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0 and d.classoid = 'pg_class'::regclass)
        WHERE c.relnamespace = n.oid AND c.relname LIKE '%' AND (false OR ( c.relkind = 'r' AND n.nspname !~ '^pg_'
        AND n.nspname <> 'information_schema' ) OR ( c.relkind = 'v' AND n.nspname <> 'pg_catalog'
        AND n.nspname <> 'information_schema' ) OR ( c.relkind = 'm' )) ORDER BY TABLE_SCHEM, TABLE_NAME""",
    "information_schema.columns": """select column_name, data_type, is_nullable, column_default, ordinal_position
        from information_schema.columns where table_name = 'bench_cat_7' and table_schema = current_schema()
        order by ordinal_position""",
    "pgcli columns": """SELECT nsp.nspname schema_name, cls.relname table_name, att.attname column_name,
        att.atttypid::regtype::text type_name, att.atthasdef AS has_default,
        pg_catalog.pg_get_expr(def.adbin, def.adrelid, true) as default FROM pg_catalog.pg_attribute att
        INNER JOIN pg_catalog.pg_class cls ON att.attrelid = cls.oid INNER JOIN pg_catalog.pg_namespace nsp
        ON cls.relnamespace = nsp.oid LEFT OUTER JOIN pg_attrdef def ON def.adrelid = att.attrelid
        AND def.adnum = att.attnum WHERE cls.relkind = ANY(ARRAY['r','v','m']) AND NOT att.attisdropped
        AND att.attnum > 0 ORDER BY 1, 2, att.attnum""",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", type=Path, default=Path("bench/results/catalog_queries"))
    args = ap.parse_args()
    cols = ", ".join(f"c{i} {'int' if i % 2 else 'text'}" for i in range(10))
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        for t in range(args.tables):
            conn.execute(f"CREATE TABLE IF NOT EXISTS bench_cat_{t} ({cols})")
        results = {}
        try:
            for name, sql in QUERIES.items():
                for _ in range(3):
                    rows = conn.execute(sql).fetchall()
                times = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    conn.execute(sql).fetchall()
                    times.append((time.perf_counter() - start) * 1000)
                times.sort()
                results[name] = {"rows": len(rows), "p50_ms": round(statistics.median(times), 2),
                                 "p99_ms": round(times[int(0.99 * (len(times) - 1))], 2),
                                 "max_ms": round(times[-1], 2)}
                print(f"| {name} | {len(rows)} | {results[name]['p50_ms']} | {results[name]['p99_ms']} |")
        finally:
            for t in range(args.tables):
                conn.execute(f"DROP TABLE IF EXISTS bench_cat_{t}")
    args.out.mkdir(parents=True, exist_ok=True)
    server = "postgresql" if "Slipstream" not in psycopg.connect(args.dsn).execute("SELECT version()").fetchone()[0] \
        else "slipstream"
    (args.out / f"results_{server}.json").write_text(json.dumps(
        {"tables": args.tables, "runs": args.runs, "machine": platform.platform(), "queries": results}, indent=2))


if __name__ == "__main__":
    main()
