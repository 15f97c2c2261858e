#!/usr/bin/env bash
# Installs the peers of bench/peers (never done by the test suite):
#   - DuckDB, matplotlib (plots) and py-spy (flame graphs) into the project venv (.venv);
#   - Pathway into its own venv, bench/.venv-pathway: Pathway pins an older pyarrow than the
#     project uses, so it must not share the project's venv.
#   - Apache Flink (PyFlink) into its own venv, bench/.venv-flink, for the same reason (it pins
#     older numpy/pandas/pyarrow and apache-beam); it runs a local mini-cluster on Java 17, as
#     Spark does. The Spark Structured Streaming peer uses the project's own pyspark.
# PostgreSQL 15 binaries (initdb, pg_ctl, postgres) are expected on the machine already.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
$PY -m pip install -q "duckdb>=1.1" "matplotlib>=3.8" "py-spy>=0.3"
if [ ! -x bench/.venv-pathway/bin/python ]; then
  $PY -m venv bench/.venv-pathway
fi
if ! bench/.venv-pathway/bin/pip install -q "pathway>=0.13" psutil; then
  echo "bench/setup.sh: Pathway did not install on $(uname -m) / $($PY -V); the Pathway peer will be reported as skipped" >&2
fi
if [ ! -x bench/.venv-flink/bin/python ]; then
  $PY -m venv bench/.venv-flink
fi
[ -e bench/.venv-flink/.gitignore ] || echo '*' > bench/.venv-flink/.gitignore  # keep it out of git
if ! bench/.venv-flink/bin/pip install -q "apache-flink==2.3.0"; then
  echo "bench/setup.sh: Flink did not install on $(uname -m) / $($PY -V); the flink-sql peer will be reported as skipped" >&2
fi
command -v java >/dev/null \
  || echo "bench/setup.sh: java not found; the flink-sql and spark-structured peers need Java 17" >&2
command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
  || echo "bench/setup.sh: PostgreSQL binaries not found; the PostgreSQL peers will fail and say so" >&2
echo "bench/setup.sh: peers installed"
