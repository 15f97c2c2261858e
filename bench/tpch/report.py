"""The markdown table of one TPC-H run (`python -m bench.tpch ... --isolated` or not) for
docs/benchmarks.md:

    .venv/bin/python -m bench.tpch.report bench/results/tpch/results_sf1_isolated.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _mib(n: int) -> str:
    return f"{n >> 20:,}"


def table(result: dict) -> str:
    isolated = result.get("isolated", False)
    lines = []
    if isolated:
        lines.append("| query | hydration (s) | rows | RSS before → after (MiB) | RF1: write / view current (s) "
                     "| RF2: write / view current (s) |")
        lines.append("|---|---|---|---|---|---|")
    else:
        pairs = sorted({r["pair"] for r in result["refresh"]})
        lines.append("| query | hydration (s) | rows | RSS before → after (MiB) | "
                     + " | ".join(f"{f} pair {p}: read returned after (s)" for p in pairs for f in ("RF1", "RF2"))
                     + " |")
        lines.append("|---|---|---|---|" + "---|" * (2 * len(pairs)))
    for n, v in result["views"].items():
        if "error" in v:
            lines.append(f"| Q{n} | refused ({v['error'].split()[0]}) | | | |" + (" |" if isolated else ""))
            continue
        row = [f"Q{n}", f"{v['hydration_s']:.2f}", str(v["rows"]),
               f"{_mib(v['rss_before'])} → {_mib(v['rss_after'])}"]
        if isolated:
            for f in ("RF1", "RF2"):
                runs = [r for r in result["refresh"] if r["function"] == f and n in r["view_latency_s"]]
                row.append(", ".join(f"{r['write_s']:.2f} / {r['view_latency_s'][n]:.2f}" for r in runs))
        else:
            for r in result["refresh"]:
                row.append(f"{r['view_latency_s'].get(n, float('nan')):.2f}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    result = json.loads(Path(argv[0]).read_text())
    print(table(result))
    check = result.get("check")
    if check is not None:
        print(f"\ncompared with PostgreSQL: {check['compared']} views, {len(check['wrong'])} wrong")
    print(f"load {result['load_s']} s; RSS idle {_mib(result['rss_idle'])} MiB, loaded "
          f"{_mib(result['rss_loaded'])} MiB, end {_mib(result['rss_end'])} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
