"""`scripts/fuzz`: a long fuzzing run against its own PostgreSQL and Slipstream.

    python -m tests.fuzz.cli [--seconds N] [--seed S] [--features known] [--ss-dsn ... --pg-dsn ...]

Prints one line per difference found as it goes, and a summary at the end: queries executed,
differences found (with their minimised SQL and both answers), refusals by message. Exits 1
when a difference was found.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.fuzzer import Fuzzer
from tests.fuzz.gen import Features


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=300, help="how long to fuzz (default 300)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    p.add_argument("--rounds", type=int, default=None, help="stop after this many rounds")
    p.add_argument("--round", type=int, default=None,
                   help="run only this round of the seed (to reproduce a report)")
    p.add_argument("--query", type=int, default=None,
                   help="with --round: run only this query of the round")
    p.add_argument("--queries-per-round", type=int, default=80)
    p.add_argument("--views-per-round", type=int, default=4)
    p.add_argument("--changes", type=int, default=4, help="DML changes per round's views")
    p.add_argument("--tlp-rate", type=float, default=0.3)
    p.add_argument("--shrink-seconds", type=float, default=60)
    p.add_argument("--max-failures", type=int, default=None)
    p.add_argument("--lenient-errors", action="store_true",
                   help="count, do not fail, Slipstream-only data errors (class 22): evaluation "
                        "order differences")
    p.add_argument("--check-scale", action="store_true",
                   help="also compare how many digits numerics show after the point (1.50 vs 1.5)")
    p.add_argument("--no-types", action="store_true", help="do not compare column types")
    p.add_argument("--features", default="",
                   help="comma list: 'known' avoids the known bugs; +name/-name toggles one of "
                        "not_like, symmetric, comma_outer, where_outer, real_literals, "
                        "unsupported, date_arith, set_ops, subqueries, aggregates")
    p.add_argument("--ss-dsn", help="use this Slipstream instead of starting one")
    p.add_argument("--pg-dsn", help="use this PostgreSQL instead of starting one")
    p.add_argument("--slt-dir", type=Path,
                   help="write each difference found as a sqllogictest file here, with the "
                        "expected results from PostgreSQL")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10 ** 9)
    features = Features.parse(args.features)
    print(f"[fuzz] seed {seed}; features {features}", flush=True)

    servers = []
    try:
        pg_dsn, ss_dsn = args.pg_dsn, args.ss_dsn
        if pg_dsn is None:
            from tests.support.pg_oracle import PgOracle
            print("[fuzz] starting PostgreSQL", flush=True)
            oracle = PgOracle.start()
            servers.append(oracle)
            pg_dsn = oracle.dsn
        if ss_dsn is None:
            from tests.support.slipstream_server import SlipstreamServer
            base = Path(tempfile.mkdtemp(prefix="slipstream-fuzz-"))
            print(f"[fuzz] starting Slipstream (log: {base / 'server.log'})", flush=True)
            server = SlipstreamServer.start(data_dir=base / "data", log_file=base / "server.log")
            servers.append(server)
            ss_dsn = server.dsn
        log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
        fz = Fuzzer(ss_dsn, pg_dsn, seed, features, queries_per_round=args.queries_per_round,
                    mv_per_round=args.views_per_round, mv_changes=args.changes,
                    tlp_rate=args.tlp_rate, shrink_seconds=args.shrink_seconds,
                    check_types=not args.no_types, lenient_errors=args.lenient_errors,
                    check_scale=args.check_scale,
                    max_failures=args.max_failures, log=log)
        t0 = time.monotonic()
        if args.round is not None:
            fz.round(args.round, only_query=args.query)
            summary = fz.summary
            summary.rounds = 1
            summary.seconds = time.monotonic() - t0
            summary.statements = fz.ss.statements + fz.pg.statements
            summary.ss_seconds, summary.pg_seconds = fz.ss.seconds, fz.pg.seconds
        else:
            summary = fz.run(seconds=args.seconds, rounds=args.rounds)
        fz.close()
        print(summary.report(), flush=True)
        if args.slt_dir and summary.failures:
            write_slt(args.slt_dir, summary, pg_dsn)
        return 1 if summary.failures else 0
    finally:
        for s in reversed(servers):
            s.stop()


def write_slt(directory: Path, summary, pg_dsn: str) -> None:
    import psycopg

    from tests.fuzz.slt import complete_file
    directory.mkdir(parents=True, exist_ok=True)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for i, f in enumerate(summary.failures, 1):
            path = directory / f"fuzz-{summary.seed}-{i}.slt"
            path.write_text(f.to_slt())
            path.write_text(complete_file(conn, path))
            print(f"[fuzz] wrote {path}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
