"""PNG plots of the engine results (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_all(results: list[dict], out: Path) -> list[Path]:
    paths = []
    labels = [r["size"] for r in results]

    fig, ax = plt.subplots(figsize=(7, 4))
    for r in results:
        bs = [t["batch_size"] for t in r["throughput"]]
        ax.plot(bs, [t["changes_per_s"] for t in r["throughput"]], marker="o", label=f"{r['size']} orders")
    ax.axhline(1e6, color="grey", ls="--", label="target at b=10k")
    ax.set(xscale="log", yscale="log", xlabel="batch size (changes)", ylabel="changes / s",
           title="Throughput, V1 + V2 maintained together (1 core)")
    ax.legend()
    paths.append(_save(fig, out / "throughput.png"))

    fig, ax = plt.subplots(figsize=(7, 4))
    med = [r["latency"]["median_ms"] for r in results]
    p90 = [r["latency"]["p90_ms"] for r in results]
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], med, width=0.4, label="median")
    ax.bar([i + 0.2 for i in x], p90, width=0.4, label="p90")
    ax.axhline(1.0, color="grey", ls="--", label="target (median at 10M)")
    ax.set(xticks=list(x), xticklabels=labels, xlabel="orders arranged", ylabel="ms",
           title="Single-change latency, both views")
    ax.legend()
    paths.append(_save(fig, out / "latency.png"))

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    a1.bar(labels, [r["hydration"]["seconds"] for r in results])
    a1.set(ylabel="seconds", title="Hydration of V1 + V2")
    a2.bar(labels, [r["hydration"]["state_bytes"] / 2**20 for r in results], label="arranged state")
    a2.plot(labels, [r["hydration"]["rss_delta_bytes"] / 2**20 for r in results], "ko-", label="RSS delta")
    a2.set(ylabel="MiB", title="Memory of both views")
    a2.legend()
    paths.append(_save(fig, out / "hydration_memory.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
