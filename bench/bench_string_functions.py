"""Rows per second of each string function kernel over one batch of N rows (default 1M). Each
expression is planned by the real planner (`SELECT <expr> FROM s`) and its compiled expression is
timed on the batch (best of 3): the kernel's own cost, without scans, exchanges or the wire.

    .venv/bin/python -m bench.bench_string_functions --rows 1M --out bench/results/string_functions

Writes results.json there and prints a Markdown table. `a` holds short ASCII words with digits
and punctuation (all distinct), `u` the same with some non-ASCII letters, `w` one of 1,000
distinct words (how real text columns repeat), `n` small integers, `k` 16 distinct counts.
Functions marked (py) run Python per distinct value or per row where Arrow has no kernel.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.common.kernels import best_seconds, kernel_of, parse_rows
from bench.engine.catalog import BenchCatalog

DDL = "CREATE TABLE s (a text, u text, w text, n int, b bigint, k int, c char(8))"

CASES: dict[str, list[str]] = {
    "baseline": ["a || 'x'", "length(a)", "upper(a)"],
    "positions": ["strpos(a, 'e')", "position('x' in u)", "starts_with(a, 'ab')", "strpos(a, w) (py)"],
    "slices": ["left(a, 3)", "right(a, -2)", "left(a, k)", "reverse(a)", "overlay(a placing 'XY' from 2 for 1)",
               "split_part(a, '-', 2)", "split_part(a, '-', -1)", "split_part(a, '-', k)"],
    "padding": ["lpad(a, 12)", "rpad(a, 12, '*')", "lpad(a, 16, 'ab')", "rpad(a, k, 'xy')", "repeat(w, 3)",
                "repeat(a, k)"],
    "concat": ["concat(a, n, w)", "concat(a, n, b, true)", "concat_ws(',', a, w, n)", "format('%s-%s', a, n)",
               "format('%I=%L', w, a)", "format('%5s|%-8s|', w, n)"],
    "quoting": ["quote_ident(w)", "quote_literal(a)", "quote_nullable(n)"],
    "codes": ["ascii(a)", "chr(abs(n) % 1000 + 32) (py)", "to_hex(n)", "to_hex(b)", "octet_length(u)", "bit_length(c)",
              "md5(a) (py)", "md5(w) (py)", "translate(a, 'aeiou', 'AEIOU')", "translate(a, 'ab', 'ba') (py)",
              "translate(w, 'ab', 'ba') (py)", "initcap(a)", "initcap(u) (py)"],
    "regex": ["regexp_replace(a, '[0-9]+', '#', 'g')", "regexp_replace(a, '(\\w)(\\w)', '\\2\\1')",
              "regexp_count(a, '[aeiou]')", "regexp_like(a, '^ab', 'i')", "regexp_substr(a, '[0-9]+')",
              "regexp_instr(a, '-')"],
}

_ALPHA = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)


def _words(rng: np.random.Generator, n: int, non_ascii: bool = False) -> pa.Array:
    """`word-123 word` style strings, all distinct (the row number is in each)."""
    letters = _ALPHA[rng.integers(0, 26, (n, 6))]
    heads = pa.array(letters.view("S6").ravel().astype(str))
    nums = pa.array(np.arange(n)).cast(pa.string())
    tails = pa.array(_ALPHA[rng.integers(0, 26, (n, 4))].view("S4").ravel().astype(str))
    out = pc.binary_join_element_wise(heads, nums, tails, "-")
    if non_ascii:
        out = pc.replace_substring(out, "e", "é")
    return out


def make_table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    vocab = _words(rng, 1000)
    cols = {
        "c0": _words(rng, n),
        "c1": _words(rng, n, non_ascii=True),
        "c2": vocab.take(pa.array(rng.integers(0, 1000, n))),
        "c3": pa.array(rng.integers(-10 ** 6, 10 ** 6, n), pa.int32()),
        "c4": pa.array(rng.integers(-10 ** 15, 10 ** 15, n), pa.int64()),
        "c5": pa.array(rng.integers(1, 17, n), pa.int32()),
        "c6": pc.utf8_rpad(pa.array(rng.integers(0, 1000, n)).cast(pa.string()), width=8, padding=" "),
        "time": pa.array(np.zeros(n, np.uint64)),
        "diff": pa.array(np.ones(n, np.int64)),
    }
    return pa.table(cols)


def run(rows: int) -> list[dict]:
    catalog = BenchCatalog()
    catalog.create_table(DDL)
    batch = make_table(rows)
    out = []
    for family, exprs in CASES.items():
        for label in exprs:
            expr = label.removesuffix(" (py)")
            fn, inp = kernel_of(catalog, f"SELECT {expr} FROM s", batch)
            best = best_seconds(fn, inp)
            out.append({"family": family, "function": label, "rows": rows, "seconds": round(best, 4),
                        "rows_per_s": round(rows / best)})
            print(f"{family:10s} {label:45s} {rows / best / 1e6:9.3f} M rows/s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1M")
    ap.add_argument("--out", default="bench/results/string_functions")
    args = ap.parse_args()
    rows = parse_rows(args.rows)
    t0 = time.perf_counter()
    results = run(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"python": platform.python_version(), "machine": platform.machine(),
           "command": f"python -m bench.bench_string_functions --rows {args.rows} --out {args.out}"}
    (out / "results.json").write_text(json.dumps(
        {"env": env, "rows": rows, "seconds": round(time.perf_counter() - t0, 1), "results": results}, indent=2))
    print("\n| family | expression | rows/s |\n|---|---|---|")
    for r in results:
        print(f"| {r['family']} | `{r['function']}` | {r['rows_per_s'] / 1e6:.2f} M |")


if __name__ == "__main__":
    main()
