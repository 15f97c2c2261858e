"""The bounded fuzzing run of CI: fixed seeds (the same queries every run) plus one random seed
(printed), a few thousand queries in about three minutes on two cores, compared with
PostgreSQL, checked by ternary logic partitioning, and maintained as materialized views under
random changes. On failure the report gives, for each distinct difference, its seed, the
minimised SQL (tables, rows, query) and both answers; replay one with
`scripts/fuzz --seed S --round R --query I`.

Environment: SLIPSTREAM_FUZZ_SECONDS (default 180) bounds the whole run;
SLIPSTREAM_FUZZ_FEATURES (e.g. 'known') toggles generator features, see tests/fuzz/gen.py;
SLIPSTREAM_FUZZ_LENIENT_ERRORS=1 counts Slipstream-only data errors instead of failing on them.
"""

from __future__ import annotations

import os
import random
import time

import pytest

from tests.fuzz.fuzzer import Fuzzer, Summary
from tests.fuzz.gen import Features

pytestmark = pytest.mark.e2e

FIXED_SEEDS = [20240601, 7, 1234567]
FIXED_ROUNDS = 6               # rounds of QUERIES_PER_ROUND queries per fixed seed
QUERIES_PER_ROUND = 60
SECONDS = float(os.environ.get("SLIPSTREAM_FUZZ_SECONDS", "180"))
FEATURES = os.environ.get("SLIPSTREAM_FUZZ_FEATURES", "")
# Count, do not fail, data errors (class 22) only one side raises: the documented evaluation-order
# difference (docs/sql-semantics.md). SLIPSTREAM_FUZZ_LENIENT_ERRORS=0 makes them failures.
LENIENT_ERRORS = os.environ.get("SLIPSTREAM_FUZZ_LENIENT_ERRORS", "1") == "1"
# The random seed explores: what it finds is printed with its seed (replay with scripts/fuzz)
# and fails the run only with SLIPSTREAM_FUZZ_STRICT_RANDOM=1, so an open difference it happens
# upon does not turn main red; the fixed seeds must always pass.
STRICT_RANDOM = os.environ.get("SLIPSTREAM_FUZZ_STRICT_RANDOM", "") == "1"


def test_fuzz_against_postgres(slipstream, pg_oracle, capsys):
    random_seed = random.SystemRandom().randrange(10 ** 9)
    seeds = FIXED_SEEDS + [random_seed]
    features = Features.parse(FEATURES)
    start = time.monotonic()
    deadline = start + SECONDS
    summaries: list[Summary] = []
    for i, seed in enumerate(seeds):
        left = deadline - time.monotonic()
        if left <= 5:
            break
        fixed = seed in FIXED_SEEDS
        # Fixed seeds: a fixed amount of work, within its share of the time; the random seed
        # gets whatever time is left.
        share = left / (len(seeds) - i) if fixed else left
        fz = Fuzzer(slipstream.dsn, pg_oracle.dsn, seed, features,
                    queries_per_round=QUERIES_PER_ROUND, mv_per_round=2, mv_changes=3,
                    tlp_rate=0.15, shrink_seconds=15, max_failures=4, log=lambda s: None,
                    lenient_errors=LENIENT_ERRORS)
        try:
            summaries.append(fz.run(seconds=share, rounds=FIXED_ROUNDS if fixed else None))
        finally:
            fz.close()
    elapsed = time.monotonic() - start
    reports = [s.report() for s in summaries]
    total = sum(s.queries for s in summaries)
    with capsys.disabled():
        print(f"\n[fuzz] {total} queries, seeds {seeds[:len(summaries)]}, {elapsed:.0f}s")
    fixed_failures = [f for s, seed in zip(summaries, seeds) if seed in FIXED_SEEDS for f in s.failures]
    random_failures = [f for s, seed in zip(summaries, seeds) if seed not in FIXED_SEEDS for f in s.failures]
    if random_failures and not STRICT_RANDOM:
        with capsys.disabled():
            print(f"[fuzz] random seed {random_seed} found {len(random_failures)} difference(s) "
                  f"(not failing the run; replay with scripts/fuzz --seed {random_seed}):\n" + reports[-1])
        random_failures = []
    failures = fixed_failures + random_failures
    assert not failures, (f"{len(failures)} difference(s) between Slipstream and PostgreSQL "
                          f"(random seed {random_seed}):\n\n" + "\n\n".join(reports))
    # A floor that shows the fuzzer really ran (an uncontended machine runs 1,000+ in the budget;
    # a machine shared with other heavy work can run a fifth of that).
    assert total >= 200, "the fuzzer ran too few queries:\n" + "\n".join(reports)
