"""Turn one run's JSON into PNG plots and the markdown section of docs/benchmarks.md.

    .venv/bin/python -m bench.peers.report bench/peers/results/latest.json   # redo plots + docs

Only figures whose run passed the ground-truth check are drawn or tabulated as numbers; a wrong
or failed run shows why instead (a wrong answer voids the figure).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC = REPO_ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"


def _batch(run: dict[str, Any], size: str, key: str) -> float | None:
    return run.get("batches", {}).get(size, {}).get(key)


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:,.0f} ms" if v >= 100 else f"{v:.2f} ms" if v < 10 else f"{v:.1f} ms"


def _fmt_rate(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v / 1000:,.1f}k/s" if v >= 1000 else f"{v:,.0f}/s"


def _fmt_s(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f} s" if v < 100 else f"{v:,.0f} s"


def _freshness(run: dict[str, Any]) -> str:
    f = run.get("freshness")
    if not f:
        return "—"
    if "unsupported" in f:
        return "n/a"
    if "p50_ms" not in f:
        return "none arrived"
    late = f.get("writes_started_late")
    kept = "" if late is None else ", every write on time" if late == 0 else f", {late} writes late"
    return (f"{_fmt_ms(f['p50_ms'])} / {_fmt_ms(f['p99_ms'])} "
            f"(at {_fmt_rate(f['achieved_rate'])}{kept})")


def _why_invalid(run: dict[str, Any]) -> str:
    if run.get("skipped"):
        return run["skipped"]
    if run.get("errors"):
        k, v = next(iter(run["errors"].items()))
        done = "; ".join(f"b={b}: {x['batches_done']} batches, median {_fmt_ms(x.get('median_ms'))}"
                         for b, x in run.get("batches", {}).items())
        return (f"failed in {k}: {v.splitlines()[0][:300]}" + (f" (before that: {done})" if done else ""))
    check = run.get("check")
    if check and not check.get("ok"):
        return f"WRONG ANSWER (V1 ok={check['v1_ok']}, V2 ok={check['v2_ok']}): figures void"
    return "no result"


def table(doc: dict[str, Any]) -> str:
    head = ("| base | system | hydrate | 1-change median | p90 | b=1 | b=100 | b=10k | peak RSS | "
            "freshness p50 / p99 (achieved rate) | check |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    notes: list[str] = []
    from bench.peers.run import SYSTEMS
    order = {name: i for i, name in enumerate(SYSTEMS)}
    runs = sorted(doc["runs"], key=lambda r: (r["n_orders"], order.get(r["system"], 99)))
    for run in runs:
        sys_, size = run["system"], run["size"]
        if not run.get("valid"):
            lines.append(f"| {size} | {sys_} | — | — | — | — | — | — | — | — | ✗ |")
            notes.append(f"- **{sys_} at {size}**: {_why_invalid(run)}")
            continue
        lines.append(
            f"| {size} | {sys_} | {_fmt_s(run.get('hydrate_s'))} | {_fmt_ms(_batch(run, '1', 'median_ms'))} | "
            f"{_fmt_ms(_batch(run, '1', 'p90_ms'))} | {_fmt_rate(_batch(run, '1', 'changes_per_s'))} | "
            f"{_fmt_rate(_batch(run, '100', 'changes_per_s'))} | "
            f"{_fmt_rate(_batch(run, '10000', 'changes_per_s'))} | {run.get('peak_rss_mb', 0):,.0f} MB | "
            f"{_freshness(run)} | ✓ {run['check']['changes']:,} changes |")
        for size_key, b in run.get("batches", {}).items():
            if b.get("note"):
                notes.append(f"- {sys_} at {size}, b={size_key}: {b['note']}")
            elif b.get("batches_done", 0) < b.get("batches_planned", 0):
                notes.append(f"- {sys_} at {size}, b={size_key}: {b['batches_done']} of "
                             f"{b['batches_planned']} batches")
        # The bench's own previous child leaves a 1-minute load of ~2; above 3 someone else is busy.
        if run.get("loadavg_before") and run["loadavg_before"][0] > 3.0:
            notes.append(f"- {sys_} at {size}: the machine was busy before this run (1-min load "
                         f"{run['loadavg_before'][0]:.1f} on {doc['machine']['cores']} cores): figures pessimistic")
        if run.get("peak_rss_note"):
            notes.append(f"- {sys_} at {size}: {run['peak_rss_note']}")
        f = run.get("freshness") or {}
        if f.get("writes_planned", 0) > f.get("writes", 0):
            notes.append(f"- {sys_} at {size}, freshness: the writer kept up with only "
                         f"{_fmt_rate(f['achieved_rate'])} and stopped after {f['writes']} of "
                         f"{f['writes_planned']} writes")
        if "unsupported" in f and size == runs[0]["size"]:
            notes.append(f"- {sys_}: freshness n/a: {f['unsupported']}")
    return "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "")


def versions(doc: dict[str, Any]) -> str:
    """Each component's versions across the runs (several when some systems were measured
    again on a later commit), in the order the runs list them."""
    seen: dict[str, list[str]] = {}
    for run in doc["runs"]:
        for k, v in (run.get("versions") or {}).items():
            if k != "error" and str(v) not in seen.setdefault(k, []):
                seen[k].append(str(v))
    return ", ".join(f"{k} {' / '.join(v)}" for k, v in sorted(seen.items()))


def plots(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    valid = [r for r in doc["runs"] if r.get("valid")]
    systems = sorted({r["system"] for r in valid})
    paths = []
    specs = [("latency.png", "single-change latency (median, closed loop)", [("1", "median_ms")], "ms"),
             ("throughput.png", "throughput (changes/s, closed loop)",
              [("100", "changes_per_s"), ("10000", "changes_per_s")], "changes/s")]
    for fname, title, series, unit in specs:
        fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.2), squeeze=False)
        for ax, (bsize, key) in zip(axes[0], series):
            for s in systems:
                pts = sorted((r["n_orders"], _batch(r, bsize, key)) for r in valid
                             if r["system"] == s and _batch(r, bsize, key) is not None)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=s)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("base size (orders)")
            ax.set_ylabel(unit)
            ax.set_title(f"{title}" + (f", batch {int(bsize):,}" if len(series) > 1 else ""), fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / fname
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def section(doc: dict[str, Any], out_dir: Path, sizes: str) -> str:
    m = doc["machine"]
    rel = out_dir.resolve().relative_to(REPO_ROOT) if out_dir.resolve().is_relative_to(REPO_ROOT) else out_dir
    return f"""## Side by side with the peers

Command: `bench/setup.sh && .venv/bin/python -m bench.peers --sizes {sizes}` (add `10M` for
the optional size). Run of {doc['date']} on {m['cpu']} ({m['cores']} cores, {m['mem_gib']} GiB,
Linux {m['kernel']}); {versions(doc)}. JSON, plots and flame graphs: `{rel}/`.

What is measured (bench/peers/harness.py): every system gets the same base data and the same
changes in the same order. A batch is one transaction: the old versions of updated/deleted orders
removed and the new versions added (an update is a delete plus an insert of the same id).
Closed loop: the batch counts as done when it is acknowledged and then all of V1 plus V2's row for
a customer the batch touched have been read back (SELECTs after an acknowledged write are strictly
serializable in Slipstream; PostgreSQL triggers are current at commit; the REFRESH / recompute
systems refresh both views first; in-process systems are current when their step returns).
Latency is per batch of one change; throughput = changes / total closed-loop time per batch size.
Hydration: both views created over the already-loaded base and read back (Pathway, Flink and
Spark: base rows pushed through their sources until both views show them; Flink's and Spark's
figure includes planning and starting their streaming jobs). Peak RSS: all the system's processes
(Slipstream: server + Spark JVM + workers; PostgreSQL: postmaster and backends; DuckDB, the engine
and Pathway run in the measuring process, Flink and Spark in a JVM that is its child, so their
figures include the workload's arrays).
Freshness: open loop, one write of 100 changes every 10 ms (10 000 changes/s target; the achieved
rate is shown) while a `SUBSCRIBE v1 WITH (PROGRESS)` runs (Pathway, Flink, Spark: their output
callback, print sink and foreachBatch sink); lag = the first closed timestamp (Flink: the first V1
row) whose V1 totals match the write's expected totals, minus the write's acknowledgement
(Pathway's "ack" is the hand-over to its input connector, Flink's the hand-over to the socket
its source reads, Spark's the batch file's rename into the directory its source watches); the
writer gives up after max(3 x duration, budget / 3) when the system cannot keep the rate. Every
run ends by comparing both views, in full, with the ground truth of exactly the changes applied; a
phase that overruns its budget stops early and says so.

Systems: `slipstream-e2e` is the server as a user gets it with just the tables and views;
`slipstream-e2e-idx` adds `CREATE INDEX ON orders (id)` after loading (PostgreSQL's tables have a
primary key), so DELETE's reads become index lookups instead of scans of orders;
`slipstream-e2e-idx-2w` is the same with `--workers 2` (the default is one worker per core but
one: on this 2-core machine one worker, which leaves a core to environmentd and makes no
exchanges; runs before 2026-11-25 afternoon defaulted to 2 and showed `-idx-1w` instead).
`flink-sql` is Apache Flink SQL (PyFlink's local mini-cluster, parallelism 1) running the reference
V1 and V2 SQL as one streaming job over the base snapshot and a changelog with retractions (change
events from a socket through `FROM_CHANGELOG`: an update is -U/+U, a delete -D), into print sinks
read by the bench. `spark-structured` is Spark Structured Streaming (`local[2]`, micro-batches)
over a stream of signed rows (diff +1/-1): count = sum(diff), sum = sum(diff * amount), V1 a
stream-static join with customers, two queries in output mode update with foreachBatch sinks.
Their module docstrings (bench/peers/flink_sql.py, spark_structured.py) give the details.

Client specifics: Slipstream and PostgreSQL get COPY (csv) for new rows and
`DELETE ... WHERE id = ANY($1)` (one array parameter) for old ones, in the batch's one
transaction; DuckDB and Pathway get Arrow tables / rows directly; Flink gets
one text line per change event on a socket, Spark one Parquet file of signed rows per batch.

![latency](../{rel}/latency.png)
![throughput](../{rel}/throughput.png)

{table(doc)}
{_analysis()}"""


def _analysis() -> str:
    """The hand-written reading of the figures (bench/peers/ANALYSIS.md), if there is one."""
    path = Path(__file__).with_name("ANALYSIS.md")
    return "\n" + path.read_text().strip() + "\n" if path.exists() else ""


def update_doc(text: str) -> None:
    doc = DOC.read_text()
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    DOC.write_text(doc[:start] + "\n" + text.rstrip() + "\n" + doc[end:])


def write_all(doc: dict[str, Any], out_dir: Path) -> None:
    plots(doc, out_dir)
    text = section(doc, out_dir, doc.get("sizes", "100k,1M"))
    (out_dir / "summary.md").write_text(text)
    update_doc(text)
    print(f"plots and table: {out_dir}; docs/benchmarks.md peers section updated", flush=True)


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else REPO_ROOT / "bench/peers/results/latest.json")
    write_all(json.loads(path.read_text()), path.parent)
