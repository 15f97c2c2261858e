"""TPC-H as live views: queries, data and refresh sets (shared with tests/e2e/test_tpch_views.py)
and the benchmark (`python -m bench.tpch`)."""
