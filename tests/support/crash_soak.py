"""scripts/crash_soak: many SIGKILLs of a server under the multi-table transfer workload.

    scripts/crash_soak --kills 100 [--seed 7] [--workdir /tmp/soak]

Prints one line per kill and a JSON summary; exits 1 at the first failed check (the server's
log is kept in the work directory).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from tests.support.crash_workload import (DELAY_ENV, RANDOM_PHASE_DELAY_MS, Ledger, Workload,
                                          check_consistency, create_schema, random_kills, recoveries)
from tests.support.slipstream_server import SlipstreamServer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--min-s", type=float, default=1.0, help="shortest run before a kill")
    ap.add_argument("--max-s", type=float, default=4.0, help="longest run before a kill")
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crash_soak_"))
    print(f"crash_soak: {args.kills} kills, seed {args.seed}, work dir {workdir}", flush=True)
    server = SlipstreamServer.start(data_dir=workdir / "data", log_file=workdir / "server.log",
                                    env={DELAY_ENV: RANDOM_PHASE_DELAY_MS})
    ledger = Ledger()
    started = time.monotonic()
    try:
        create_schema(server.dsn)
        random_kills(server, ledger, args.kills, random.Random(args.seed), id_base=0,
                     report=lambda line: print(line, flush=True), min_s=args.min_s, max_s=args.max_s)
        work = Workload(server.dsn, ledger, writers=3, seed=args.seed, id_base=10 ** 12).start()
        work.subscribed.wait(120)
        time.sleep(2.0)
        work.stop()
        figures = check_consistency(server.dsn, ledger)
        assert not ledger.subscribe_violations, ledger.subscribe_violations[:5]
        summary = {"kills": args.kills, "seed": args.seed, "seconds": round(time.monotonic() - started),
                   "recoveries": recoveries(server), "subscribe_checks": ledger.subscribe_checks,
                   "unexpected_errors": len(ledger.errors), **figures}
        print(json.dumps(summary), flush=True)
        if ledger.errors:
            print("unexpected errors:", *ledger.errors[:10], sep="\n  ")
            return 1
        return 0
    except AssertionError as e:
        print(f"FAILED: {e}\nserver log: {workdir / 'server.log'}", flush=True)
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
