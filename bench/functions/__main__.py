"""Rows per second of the function library's kernels, family by family, over one batch of N rows
(default 1M) of a table with a column of every type. Each expression is planned by the real
planner (`SELECT <expr> FROM f`) and its compiled kernel is timed on the batch (best of 3), so the
figure is the kernel's own cost, without scans, exchanges or the wire.

    .venv/bin/python -m bench.functions --rows 1M --out bench/results/functions

Writes results.json there and prints a Markdown table (docs/benchmarks.md, "Function library").
Values repeat the way real columns do: texts, documents and arrays come from a few thousand
distinct values, numbers and timestamps are all distinct.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench.common.kernels import best_seconds, kernel_of, parse_rows
from bench.engine.catalog import BenchCatalog

DDL = ("CREATE TABLE f (i int, b bigint, x float8, n numeric(12,4), s text, ts timestamp, tz timestamptz, "
       "d date, iv interval, j jsonb, a int[], u uuid, by bytea)")

# family -> [(label, expression)]
CASES: dict[str, list[tuple[str, str]]] = {
    "baseline": [("i + 1", "i + 1"), ("x * 2", "x * 2"), ("upper(s)", "upper(s)")],
    "datetime": [
        ("ts + interval '1 mon'", "ts + interval '1 mon'"), ("ts + interval '1 hour'", "ts + interval '1 hour'"),
        ("ts - ts", "ts - (ts - interval '1 day')"), ("date_trunc('month', ts)", "date_trunc('month', ts)"),
        ("date_trunc('week', ts)", "date_trunc('week', ts)"), ("extract(dow FROM ts)", "extract(dow FROM ts)"),
        ("date_part('epoch', ts)", "date_part('epoch', ts)"), ("d + 7", "d + 7"),
        ("ts AT TIME ZONE 'Europe/Berlin'", "ts AT TIME ZONE 'Europe/Berlin'"),
        ("to_char(ts, 'YYYY-MM-DD')", "to_char(ts, 'YYYY-MM-DD')"), ("iv * 2", "iv * 2"),
        ("make_date(2024, 1, abs(i) % 28 + 1)", "make_date(2024, 1, abs(i) % 28 + 1)"),
        ("to_char(ts, 'FMDay DDth')", "to_char(ts, 'FMDay DDth')"),
    ],
    "to_char": [
        ("to_char(n, '999,999,990.00')", "to_char(n, '999,999,990.00')"),
        ("to_char(i, 'FM999,999')", "to_char(i, 'FM999,999')"),
        ("to_char(x, '9.999EEEE')", "to_char(x, '9.999EEEE')"),
        ("to_char(x, 'FM990.0000')", "to_char(x, 'FM990.0000')"),
        ("to_char(iv, 'HH24:MI:SS')", "to_char(iv, 'HH24:MI:SS')"),
    ],
    "json": [
        ("j -> 'k'", "j -> 'k'"), ("j ->> 'name'", "j ->> 'name'"), ("j @> '{\"k\": 1}'", "j @> '{\"k\": 1}'"),
        ("jsonb_typeof(j)", "jsonb_typeof(j)"), ("jsonb_build_object('i', i)", "jsonb_build_object('i', i)"),
        ("s::jsonb (text -> jsonb)", "('\"' || s || '\"')::jsonb"),
    ],
    "arrays": [
        ("a[1]", "a[1]"), ("i = ANY(a)", "i % 10 = ANY(a)"), ("cardinality(a)", "cardinality(a)"),
        ("array_to_string(a, ',')", "array_to_string(a, ',')"), ("a || i", "a || i"), ("ARRAY[i, i]", "ARRAY[i, i]"),
    ],
    "binary": [("encode(by, 'hex')", "encode(by, 'hex')"), ("u::text", "u::text"), ("octet_length(by)", "octet_length(by)")],
    "system": [("current_user (plan time)", "current_user"), ("pg_typeof(i)", "pg_typeof(i)")],
}


def make_table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array([f"word{k}" for k in range(5000)], dtype=object)
    docs = np.array([json.dumps({"k": k % 7, "name": f"n{k}", "tags": [k, k + 1]}) for k in range(2000)], dtype=object)
    arrs = np.array(["{" + ",".join(str(v) for v in range(k % 5 + 1)) + "}" for k in range(1000)], dtype=object)
    ts = (np.int64(1_700_000_000_000_000) + rng.integers(0, 10 ** 14, n)).astype("datetime64[us]")
    from dataflow import interval, jsonb
    cols = {
        "c0": pa.array(rng.integers(-10 ** 6, 10 ** 6, n), pa.int32()),
        "c1": pa.array(rng.integers(-10 ** 12, 10 ** 12, n), pa.int64()),
        "c2": pa.array(rng.normal(size=n)),
        "c3": pa.array(rng.integers(-10 ** 9, 10 ** 9, n), pa.int64()).cast(pa.decimal128(38, 0)).cast(pa.decimal128(38, 4)),
        "c4": pa.array(words[rng.integers(0, len(words), n)], pa.string()),
        "c5": pa.array(ts, pa.timestamp("us")),
        "c6": pa.array(ts, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "c7": pa.array(ts.astype("datetime64[D]"), pa.date32()),
        "c8": interval.join(rng.integers(0, 24, n), rng.integers(0, 30, n), rng.integers(0, 86_400 * 10 ** 6, n)),
        "c9": pa.array([jsonb.normalize(d) for d in docs], pa.string()).take(pa.array(rng.integers(0, len(docs), n))),
        "c10": pa.array(arrs[rng.integers(0, len(arrs), n)], pa.string()),
        "c11": pa.array([f"{k:032x}" for k in range(3000)], pa.string()).take(pa.array(rng.integers(0, 3000, n))),
        "c12": pa.array([bytes([k % 256, k // 256]) for k in range(3000)], pa.binary()).take(pa.array(rng.integers(0, 3000, n))),
        "time": pa.array(np.zeros(n, np.uint64)),
        "diff": pa.array(np.ones(n, np.int64)),
    }
    hexes = cols["c11"]  # 32 hex digits -> canonical uuid text
    import pyarrow.compute as pc
    cols["c11"] = pc.binary_join_element_wise(pc.utf8_slice_codeunits(hexes, 0, 8), pc.utf8_slice_codeunits(hexes, 8, 12),
                                              pc.utf8_slice_codeunits(hexes, 12, 16), pc.utf8_slice_codeunits(hexes, 16, 20),
                                              pc.utf8_slice_codeunits(hexes, 20, 32), "-")
    return pa.table(cols)


def run(rows: int) -> list[dict]:
    catalog = BenchCatalog()
    catalog.create_table(DDL)
    batch = make_table(rows)
    out = []
    for family, cases in CASES.items():
        for label, expr in cases:
            try:
                fn, inp = kernel_of(catalog, f"SELECT {expr} FROM f", batch)
            except RuntimeError:
                out.append({"family": family, "function": label, "rows": rows, "seconds": 0.0,
                            "rows_per_s": None, "note": "constant at plan time"})
                continue
            best = best_seconds(fn, inp)
            out.append({"family": family, "function": label, "rows": rows, "seconds": round(best, 4),
                        "rows_per_s": round(rows / best)})
            print(f"{family:9s} {label:40s} {rows / best / 1e6:8.2f} M rows/s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1M")
    ap.add_argument("--out", default="bench/results/functions")
    args = ap.parse_args()
    rows = parse_rows(args.rows)
    results = run(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"rows": rows, "results": results}, indent=2))
    print("\n| family | function | rows/s |\n|---|---|---|")
    for r in results:
        rate = "plan-time constant" if r["rows_per_s"] is None else f"{r['rows_per_s'] / 1e6:.2f} M"
        print(f"| {r['family']} | `{r['function']}` | {rate} |")


if __name__ == "__main__":
    main()
