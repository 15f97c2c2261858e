"""The `slipstream` command.

    slipstream serve [--host 0.0.0.0] [--port 6875] [--data-dir ./data] [--workers 2]
                     [--spark-master local[3]] [--advertise-host 127.0.0.1]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slipstream", description="A PostgreSQL-wire streaming SQL database.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server (environmentd with an embedded Spark driver)")
    serve.add_argument("--host", default=os.environ.get("SLIPSTREAM_HOST", "0.0.0.0"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("SLIPSTREAM_PORT", "6875")))
    serve.add_argument("--data-dir", type=Path, default=Path(os.environ.get("SLIPSTREAM_DATA_DIR", "data")))
    serve.add_argument("--workers", type=int, default=int(os.environ.get("SLIPSTREAM_WORKERS", "2")),
                       help="dataflow workers in the replica (Spark barrier tasks)")
    serve.add_argument("--spark-master", default=os.environ.get("SLIPSTREAM_SPARK_MASTER"),
                       help="Spark master URL (default: local[workers + 1])")
    serve.add_argument("--advertise-host", default=os.environ.get("SLIPSTREAM_ADVERTISE_HOST", "127.0.0.1"),
                       help="address Spark executors use to reach this process")
    serve.add_argument("--log-level", default=os.environ.get("SLIPSTREAM_LOG_LEVEL", "INFO"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        if args.workers < 1:
            parser.error("--workers must be at least 1")
        from server.environmentd import run

        run(args.host, args.port, args.data_dir, args.workers, args.spark_master, args.advertise_host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
