"""SQL to dataflow plans: a sqlglot dialect, name resolution and typing, lowering, EXPLAIN."""
