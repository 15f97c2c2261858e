"""Rows per second of each math function and integer bit operator kernel over one batch of N
rows (default 1M). Each expression is planned by the real planner (`SELECT <expr> FROM m`) and
its compiled expression is timed on the batch (best of 3, or one run when it takes
over 5 s): the kernel's own cost, without scans,
exchanges or the wire.

    .venv/bin/python -m bench.bench_math_functions --rows 1M --out bench/results/math_functions

Writes results.json there and prints a Markdown table. Doubles and integers are all distinct;
numeric columns come in two kinds, since numeric sqrt/ln/exp/power/log run PostgreSQL's
algorithm in Decimal once per distinct value: `n` has all distinct values, `k` 1,000 distinct
values (prices, quantities: how real numeric columns repeat).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench.common.kernels import best_seconds, kernel_of, parse_rows
from bench.engine.catalog import BenchCatalog

DDL = "CREATE TABLE m (a smallint, b int, c bigint, x float8, n numeric(14,4), k numeric(10,2), u float8)"

# family -> expressions (each timed alone); `u` is in [0, 1) for the functions defined there
CASES: dict[str, list[str]] = {
    "baseline": ["x * 2", "b + 1"],
    "double": ["sqrt(abs(x))", "cbrt(x)", "exp(u)", "ln(abs(x) + 1)", "log10(abs(x) + 1)", "power(x, 2)", "abs(x) ^ 0.5",
               "sign(x)", "trunc(x)", "degrees(x)", "radians(x)", "sin(x)", "cos(x)", "tan(x)", "cot(x)",
               "asin(u)", "acos(u)", "atan(x)", "atan2(x, u)", "sind(x)", "cosd(x)", "tand(x)", "cotd(x)",
               "asind(u)", "acosd(u)", "atand(x)", "atan2d(x, u)", "sinh(u)", "cosh(u)", "tanh(x)", "asinh(x)",
               "acosh(x * x + 1)", "atanh(u)", "width_bucket(x, -3, 3, 10)", "pi() * x", "random()",
               "sqrt(abs(b))"],
    "numeric (all distinct)": ["sqrt(abs(n))", "exp(n / 100000000)", "ln(abs(n) + 1)", "log(abs(n) + 1)",
                               "log(2, abs(n) + 1)", "power(n, 2)", "abs(n) ^ 0.5", "sign(n)", "trunc(n)",
                               "trunc(n, 1)", "div(n, 7)", "mod(n, 7)", "gcd(n, 0.5)", "lcm(n, 3)",
                               "width_bucket(n, -1000000, 1000000, 10)"],
    "numeric (1,000 distinct)": ["sqrt(abs(k))", "exp(k / 100)", "ln(abs(k) + 1)", "log10(abs(k) + 1)",
                                 "power(k, 3)", "abs(k) ^ 1.5", "width_bucket(k, -100, 100, 10)"],
    "integer": ["a & 7::int2", "b & 255", "c | 1", "b # c", "~b", "b << 3", "c >> 5", "b << a",
                "mod(b, 7)", "gcd(b, 12)", "lcm(b, 6)", "gcd(c, 360)", "factorial(abs(a) % 20)", "div(b, 7)"],
}


def make_table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = rng.integers(-10_000, 10_000, 1000)[rng.integers(0, 1000, n)]
    cols = {
        "c0": pa.array(rng.integers(-1000, 1000, n), pa.int16()),
        "c1": pa.array(rng.integers(-10 ** 6, 10 ** 6, n), pa.int32()),
        "c2": pa.array(rng.integers(-10 ** 12, 10 ** 12, n), pa.int64()),
        "c3": pa.array(rng.normal(size=n) * 10),
        # numeric(14,4) in [-1e9, 1e9) and numeric(10,2) in [-100, 100): unscaled integers read at the scale
        "c4": _scaled(pa.array(rng.integers(-10 ** 13, 10 ** 13, n), pa.int64()).cast(pa.decimal128(38, 0)), 4),
        "c5": _scaled(pa.array(k, pa.int64()).cast(pa.decimal128(38, 0)), 2),
        "c6": pa.array(rng.random(n)),
        "time": pa.array(np.zeros(n, np.uint64)),
        "diff": pa.array(np.ones(n, np.int64)),
    }
    return pa.table(cols)


def _scaled(arr: pa.Array, scale: int) -> pa.Array:
    """The same unscaled integers read at `scale` (so 10^13 becomes 10^9.0000)."""
    return pa.Array.from_buffers(pa.decimal128(38, scale), len(arr), arr.buffers(), null_count=arr.null_count)


def run(rows: int) -> list[dict]:
    catalog = BenchCatalog()
    catalog.create_table(DDL)
    batch = make_table(rows)
    out = []
    for family, exprs in CASES.items():
        for expr in exprs:
            fn, inp = kernel_of(catalog, f"SELECT {expr} FROM m", batch)
            best = best_seconds(fn, inp, enough=5)  # the Decimal kernels: one long run is enough
            out.append({"family": family, "function": expr, "rows": rows, "seconds": round(best, 4),
                        "rows_per_s": round(rows / best)})
            print(f"{family:26s} {expr:40s} {rows / best / 1e6:9.3f} M rows/s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1M")
    ap.add_argument("--out", default="bench/results/math_functions")
    args = ap.parse_args()
    rows = parse_rows(args.rows)
    t0 = time.perf_counter()
    results = run(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"python": platform.python_version(), "machine": platform.machine(),
           "command": f"python -m bench.bench_math_functions --rows {args.rows} --out {args.out}"}
    (out / "results.json").write_text(json.dumps(
        {"env": env, "rows": rows, "seconds": round(time.perf_counter() - t0, 1), "results": results}, indent=2))
    print("\n| family | expression | rows/s |\n|---|---|---|")
    for r in results:
        print(f"| {r['family']} | `{r['function']}` | {r['rows_per_s'] / 1e6:.2f} M |")


if __name__ == "__main__":
    main()
