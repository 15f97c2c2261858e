"""Regenerate catalog/system/native_procs.py: the PostgreSQL pg_proc signatures (non-polymorphic,
one to four arguments, pg_catalog) of functions outside the function library that the planner
plans with PostgreSQL's result type.

    PYTHONPATH=. .venv/bin/python scripts/gen_native_procs.py
"""

import sys

import psycopg

sys.path.insert(0, '.')
from planner import parse, plan_statement
from planner.functions import FUNCTIONS
from planner.functions.aggregates import AGGREGATE_FUNCTIONS
from planner.table_functions import TABLE_FUNCTIONS
from tests.planner.planner_catalog import MemoryCatalog
from tests.support.pg_oracle import PgOracle
from dataflow.errors import SqlError
pg = PgOracle.start()
out = []
try:
    conn = psycopg.connect(pg.dsn, autocommit=True)
    rows = conn.execute("""
      SELECT p.proname, p.proargtypes::oid[]::int[], p.prorettype::int,
             array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t)
      FROM pg_proc p
      WHERE p.prokind = 'f' AND NOT p.proretset AND p.pronamespace = 'pg_catalog'::regnamespace
        AND p.proname !~ '^(pg_|_|binary_upgrade|has_|txid|brin|gin|gist|spg|hash|bt|range_|multirange|ts_|tsvector|tsquery|to_tsquery|int4range|int8range|numrange|daterange|tsrange|tstzrange)'
        AND p.proname ~ '^[a-z][a-z0-9_]*$'
        AND NOT EXISTS (SELECT 1 FROM unnest(p.proargtypes) t WHERE t IN (SELECT oid FROM pg_type WHERE typtype = 'p' OR typname IN ('internal','cstring')))
        AND p.prorettype NOT IN (SELECT oid FROM pg_type WHERE typtype = 'p')
        AND p.pronargs BETWEEN 1 AND 4
      ORDER BY 1, 2""").fetchall()
    cat = MemoryCatalog()
    known = set(FUNCTIONS) | set(AGGREGATE_FUNCTIONS) | set(TABLE_FUNCTIONS)
    for name, args, ret, types in rows:
        if name in known:
            continue
        sql = f"SELECT {name}({', '.join(f'CAST(NULL AS {t})' for t in types)})"
        try:
            p = plan_statement(cat, parse(sql)[0])
        except (SqlError, Exception):
            continue
        cols = getattr(p, 'columns', None)
        if not cols or len(cols) != 1:
            continue
        t = cols[0].type
        if t.oid == ret:
            out.append((name, tuple(args), ret))
finally:
    pg.stop()
lines = ",\n".join(f"    ({n!r}, {tuple(a)!r}, {r})" for n, a, r in out)
path = "catalog/system/native_procs.py"
head = open(path).read().split("NATIVE_PROCS:")[0]
open(path, "w").write(head + f"NATIVE_PROCS: tuple[tuple[str, tuple[int, ...], int], ...] = (\n{lines},\n)\n")
print(f"{len(out)} signatures of {len({n for n, _, _ in out})} functions written to {path}")
