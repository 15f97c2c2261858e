"""One command for the side-by-side benchmark:

    .venv/bin/python -m bench.peers --sizes 100k,1M [--systems all] [--out bench/peers/results]

Each (system, size) runs in its own child process (`--one`), so a crash, a missing peer or a
memory peak stays with that system; the Pathway and Flink children use their own venvs made by
bench/setup.sh (CHILD_VENVS).
Children print progress lines (which system, which size, how far) straight to this terminal and
write one JSON each; the parent gathers them into `results/run-<date>.json`, draws the plots and
regenerates the peers section of docs/benchmarks.md (report.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.workload import generate_base, generate_changes, parse_size, size_label

REPO_ROOT = Path(__file__).resolve().parents[2]
PATHWAY_PYTHON = REPO_ROOT / "bench" / ".venv-pathway" / "bin" / "python"
FLINK_PYTHON = REPO_ROOT / "bench" / ".venv-flink" / "bin" / "python"
# Peers whose packages conflict with the project's venv: (interpreter, module to import, name).
CHILD_VENVS = {"pathway-stream": (PATHWAY_PYTHON, "pathway", "Pathway"),
               "flink-sql": (FLINK_PYTHON, "pyflink.table", "PyFlink")}
SYSTEMS = ("slipstream-e2e", "slipstream-e2e-idx", "slipstream-e2e-idx-2w", "engine-inproc", "pg-refresh", "pg-triggers", "duckdb-recompute",
           "pathway-stream", "flink-sql", "spark-structured")
CHILD_TIMEOUT_S = 1500


def make_system(name: str):
    if name in ("slipstream-e2e", "slipstream-e2e-idx", "slipstream-e2e-idx-1w", "slipstream-e2e-idx-2w"):
        from bench.peers.slipstream_e2e import SlipstreamE2E
        return SlipstreamE2E(indexed="-idx" in name, workers=int(name[-2]) if name.endswith("w") else None)
    if name == "engine-inproc":
        from bench.peers.engine_inproc import EngineInProc
        return EngineInProc()
    if name == "pg-refresh":
        from bench.peers.pg_refresh import PgRefresh
        return PgRefresh()
    if name == "pg-triggers":
        from bench.peers.pg_triggers import PgTriggers
        return PgTriggers()
    if name == "duckdb-recompute":
        from bench.peers.duckdb_recompute import DuckDBRecompute
        return DuckDBRecompute()
    if name == "pathway-stream":
        from bench.peers.pathway_stream import PathwayStream
        return PathwayStream()
    if name == "flink-sql":
        from bench.peers.flink_sql import FlinkSQL
        return FlinkSQL()
    if name == "spark-structured":
        from bench.peers.spark_structured import SparkStructured
        return SparkStructured()
    raise SystemExit(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")


def config_for(args: argparse.Namespace, n_orders: int):
    from bench.peers.harness import MeasureConfig
    cfg = MeasureConfig(single=args.single, b100=args.b100, b10k=args.b10k,
                        freshness_s=args.freshness_s, phase_budget_s=args.phase_budget_s)
    return cfg


def versions(system: str) -> dict[str, str]:
    out: dict[str, str] = {"python": platform.python_version()}
    try:
        if system == "duckdb-recompute":
            import duckdb
            out["duckdb"] = duckdb.__version__
        elif system.startswith("pg-"):
            from tests.support.pg_oracle import find_pg_bin
            out["postgresql"] = subprocess.run([find_pg_bin("postgres"), "--version"], text=True,
                                               capture_output=True).stdout.strip()
        elif system == "pathway-stream":
            import pathway
            out["pathway"] = pathway.__version__
        elif system == "flink-sql":
            import pyflink.version
            out["flink"] = pyflink.version.__version__
            out["java"] = _java_version()
        elif system == "spark-structured":
            import pyspark
            out["pyspark"] = pyspark.__version__
            out["java"] = _java_version()
        else:
            import pyarrow
            import pyspark
            out["pyarrow"], out["pyspark"] = pyarrow.__version__, pyspark.__version__
            out["slipstream"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT,
                                               text=True, capture_output=True).stdout.strip()
    except Exception as exc:  # a version we cannot read is not a reason to fail the run
        out["error"] = repr(exc)
    return out


def _java_version() -> str:
    """The first line of `java -version` (what PyFlink and PySpark start)."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    probe = subprocess.run([java, "-version"], text=True, capture_output=True)
    return (probe.stderr or probe.stdout).strip().splitlines()[0]


def run_one(args: argparse.Namespace) -> None:
    """Child: measure one system at one size and write its JSON."""
    from bench.peers.harness import measure
    n = parse_size(args.sizes)
    label = size_label(n)
    cfg = config_for(args, n)
    t0 = time.perf_counter()
    w = generate_base(n)
    stream = generate_changes(w, min(cfg.changes_needed(), int(n * 2)))
    system = make_system(args.systems)
    load_before = os.getloadavg()
    result = asyncio.run(measure(system, w, stream, cfg, label))
    # Other work on the machine skews everything: keep the evidence with the figures.
    result["loadavg_before"], result["loadavg_after"] = load_before, os.getloadavg()
    result.update(getattr(system, "extra_results", None) or {})  # a peer's own remarks on its run
    result["versions"] = versions(args.systems)
    result["wall_s"] = time.perf_counter() - t0
    Path(args.out).write_text(json.dumps(result, indent=2, default=str))


def child_python(system: str) -> tuple[str | None, str]:
    if system not in CHILD_VENVS:
        return sys.executable, ""
    python, module, what = CHILD_VENVS[system]
    if not python.exists():
        rel = python.relative_to(REPO_ROOT)
        return None, f"{what} is not installed: run bench/setup.sh (expected {rel})"
    probe = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"{what} does not import here: {probe.stderr.strip()[-500:]}"
    return str(python), ""


def run_all(args: argparse.Namespace) -> Path:
    systems = SYSTEMS if args.systems == "all" else tuple(args.systems.split(","))
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    runs: list[dict[str, Any]] = []
    total = len(systems) * len(sizes)
    step = 0
    for n in sizes:
        for system in systems:
            step += 1
            label = size_label(n)
            print(f"=== [{step}/{total}] {system} at {label} orders", flush=True)
            python, why = child_python(system)
            if python is None:
                print(f"    skipped: {why}", flush=True)
                runs.append({"system": system, "size": label, "n_orders": n, "valid": False,
                             "skipped": why})
                continue
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                child_out = f.name
            argv = [python, "-m", "bench.peers", "--one", "--systems", system, "--sizes", str(n),
                    "--out", child_out, "--single", str(args.single), "--b100", str(args.b100),
                    "--b10k", str(args.b10k), "--freshness-s", str(args.freshness_s),
                    "--phase-budget-s", str(args.phase_budget_s)]
            env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
            if args.profile:
                env["BENCH_PROFILE_DIR"] = str(out_dir.resolve())
            try:
                proc = subprocess.run(argv, cwd=REPO_ROOT, env=env, timeout=CHILD_TIMEOUT_S)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            try:
                result = json.loads(Path(child_out).read_text())
            except (OSError, ValueError):
                result = {"system": system, "size": label, "n_orders": n, "valid": False,
                          "skipped": f"the child process failed (exit {rc}) before writing results"}
            os.unlink(child_out)
            runs.append(result)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": machine(), "sizes": args.sizes,
           "runs": runs}
    if args.replace_in:
        # Re-measured systems replace their entries in an earlier run; the rest is kept.
        old = json.loads(Path(args.replace_in).read_text())
        fresh = {(r["system"], r["size"]) for r in runs}
        doc["runs"] = [r for r in old["runs"] if (r["system"], r["size"]) not in fresh] + runs
        doc["sizes"] = old.get("sizes", args.sizes)
        doc["date"] = (f"{old['date']} (re-measured {', '.join(sorted({r['system'] for r in runs}))} "
                       f"at {', '.join(sorted({r['size'] for r in runs}))} on {doc['date']})")
    path = out_dir / f"run-{stamp}.json"
    path.write_text(json.dumps(doc, indent=2, default=str))
    (out_dir / "latest.json").write_text(json.dumps(doc, indent=2, default=str))
    print(f"results: {path}", flush=True)
    if not args.no_report:
        from bench.peers import report
        report.write_all(doc, out_dir)
    return path


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_gib = int(open("/proc/meminfo").readline().split()[1]) / 2**20
    except OSError:
        mem_gib = 0
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": round(mem_gib, 1),
            "kernel": platform.release(), "python": platform.python_version()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100k,1M", help="comma-separated base sizes (100k,1M,10M)")
    ap.add_argument("--systems", default="all", help=f"comma-separated subset of {','.join(SYSTEMS)}")
    ap.add_argument("--out", default=str(REPO_ROOT / "bench" / "peers" / "results"))
    ap.add_argument("--single", type=int, default=100, help="single-change batches")
    ap.add_argument("--b100", type=int, default=20, help="100-change batches")
    ap.add_argument("--b10k", type=int, default=3, help="10 000-change batches")
    ap.add_argument("--freshness-s", type=float, default=3.0)
    ap.add_argument("--phase-budget-s", type=float, default=90.0)
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--replace-in", help="an earlier run's JSON: replace only the systems measured now")
    ap.add_argument("--profile", action="store_true",
                    help="py-spy flame graphs (SVG, beside the results) of the change phases")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        run_one(args)
    else:
        run_all(args)
