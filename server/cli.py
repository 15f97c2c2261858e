"""The `slipstream` command.

    slipstream serve [--host 0.0.0.0] [--port 6875] [--http-port 6876] [--data-dir ./data] [--workers N]
                     [--spark-master local[3]] [--advertise-host 127.0.0.1]
                     [--auth trust|password|md5|scram-sha-256] [--default-password-file FILE]
                     [--tls-cert FILE --tls-key FILE [--tls-require]]

The default role's password can also come from the environment: SLIPSTREAM_DEFAULT_PASSWORD.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def default_workers() -> int:
    """One worker per core this process may run on, but one: environmentd (pgwire, planning,
    persist) keeps a core busy under load, and a worker sharing a core with it waits for every
    exchange. On two cores one worker beat two on every end-to-end measure but the largest
    hydration (docs/benchmarks.md: single change 9.0 vs 11.9 ms, b=10k 173k vs 156k changes/s
    and serving 4,279 vs 2,766 reads/s at 1M; the 10M hydration 12.6 vs 7.4 s)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS)
        cores = os.cpu_count() or 2
    return max(1, cores - 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slipstream", description="A PostgreSQL-wire streaming SQL database.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server (environmentd with an embedded Spark driver)")
    serve.add_argument("--host", default=os.environ.get("SLIPSTREAM_HOST", "0.0.0.0"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("SLIPSTREAM_PORT", "6875")))
    serve.add_argument("--http-port", type=int, default=int(os.environ.get("SLIPSTREAM_HTTP_PORT", "6876")),
                       help="HTTP port of webhook sources (POST /api/webhook/<database>/<schema>/<source>); "
                            "0 picks a free one (default 6876)")
    serve.add_argument("--http-host", default=os.environ.get("SLIPSTREAM_HTTP_HOST"),
                       help="address the HTTP port listens on (default: --host)")
    serve.add_argument("--data-dir", type=Path, default=Path(os.environ.get("SLIPSTREAM_DATA_DIR", "data")))
    serve.add_argument("--workers", type=int,
                       default=int(os.environ.get("SLIPSTREAM_WORKERS", default_workers())),
                       help="dataflow workers in the replica (Spark barrier tasks; default: one per "
                            "core but one, which is left to environmentd, and at least one)")
    serve.add_argument("--spark-master", default=os.environ.get("SLIPSTREAM_SPARK_MASTER"),
                       help="Spark master URL (default: local mode, a task slot per replica worker plus room for one more replica)")
    serve.add_argument("--advertise-host", default=os.environ.get("SLIPSTREAM_ADVERTISE_HOST", "127.0.0.1"),
                       help="address Spark executors use to reach this process")
    serve.add_argument("--log-level", default=os.environ.get("SLIPSTREAM_LOG_LEVEL", "INFO"))
    serve.add_argument("--auth", choices=("trust", "password", "md5", "scram-sha-256"),
                       default=os.environ.get("SLIPSTREAM_AUTH", "trust"),
                       help="how clients authenticate, as a pg_hba.conf method (default trust)")
    serve.add_argument("--default-password-file", type=Path,
                       default=os.environ.get("SLIPSTREAM_DEFAULT_PASSWORD_FILE"),
                       help="file whose first line is the password of the default role `slipstream` "
                            "(or set SLIPSTREAM_DEFAULT_PASSWORD)")
    serve.add_argument("--tls-cert", type=Path, default=os.environ.get("SLIPSTREAM_TLS_CERT"),
                       help="PEM certificate (chain) for TLS; with --tls-key, SSLRequest is accepted")
    serve.add_argument("--tls-key", type=Path, default=os.environ.get("SLIPSTREAM_TLS_KEY"),
                       help="PEM private key of --tls-cert")
    serve.add_argument("--tls-require", action="store_true",
                       default=os.environ.get("SLIPSTREAM_TLS_REQUIRE", "") not in ("", "0", "false", "off"),
                       help="refuse connections that do not use TLS")
    # Limits (server/limits.py): server-wide defaults of the session variables of the same name.
    serve.add_argument("--max-connections", type=int, default=os.environ.get("SLIPSTREAM_MAX_CONNECTIONS"),
                       help="client connections accepted at once (default 1000); beyond: 53300")
    serve.add_argument("--statement-timeout", default=os.environ.get("SLIPSTREAM_STATEMENT_TIMEOUT"),
                       help="default statement_timeout, e.g. 30s (default 0: none)")
    serve.add_argument("--idle-in-transaction-session-timeout",
                       default=os.environ.get("SLIPSTREAM_IDLE_IN_TRANSACTION_SESSION_TIMEOUT"),
                       help="default idle_in_transaction_session_timeout, e.g. 10min (default 0: none)")
    serve.add_argument("--max-result-size", default=os.environ.get("SLIPSTREAM_MAX_RESULT_SIZE"),
                       help="default max_result_size of one query's result, e.g. 512MB (default 1GB)")
    serve.add_argument("--replica-memory-limit", default=os.environ.get("SLIPSTREAM_REPLICA_MEMORY_LIMIT"),
                       help="memory each replica's dataflows may hold, e.g. 4GB, shared by its workers; "
                            "a result that needs more fails with 53200 (default: 40%% of this machine's "
                            "memory; 'none' for no limit)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        if args.workers < 1:
            parser.error("--workers must be at least 1")
        from dataflow.allocator import configure_malloc
        from dataflow.without_pandas import keep_pandas_out
        keep_pandas_out()
        configure_malloc()
        from server.environmentd import run
        from server.pgwire.auth import AuthConfig
        from server import limits
        from server.adapter.vars import DEFAULTS
        from dataflow.errors import SqlError

        try:
            for var, value in (("statement_timeout", args.statement_timeout),
                               ("idle_in_transaction_session_timeout", args.idle_in_transaction_session_timeout),
                               ("max_result_size", args.max_result_size)):
                if value is not None:
                    limits.validate(var, str(value))
                    DEFAULTS[var] = str(value)
        except SqlError as e:
            parser.error(str(e))
        if args.max_connections is not None:
            if int(args.max_connections) < 1:
                parser.error("--max-connections must be at least 1")
            DEFAULTS["max_connections"] = str(int(args.max_connections))

        try:
            auth = AuthConfig.build(args.auth, args.tls_cert, args.tls_key, args.tls_require)
        except (ValueError, OSError) as e:  # ssl.SSLError is an OSError
            parser.error(f"TLS/authentication configuration: {e}")
        password = os.environ.get("SLIPSTREAM_DEFAULT_PASSWORD")
        if args.default_password_file is not None:
            try:
                lines = args.default_password_file.read_text().splitlines()
            except OSError as e:
                parser.error(f"--default-password-file: {e}")
            password = lines[0] if lines else ""
        try:
            replica_memory = limits.replica_memory_bytes(args.replica_memory_limit)
        except SqlError as e:
            parser.error(str(e))
        run(args.host, args.port, args.data_dir, args.workers, args.spark_master, args.advertise_host,
            auth=auth, default_password=password or None, replica_memory_bytes=replica_memory,
            http_host=args.http_host, http_port=args.http_port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
