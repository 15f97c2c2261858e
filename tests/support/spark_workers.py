"""The processes of a Slipstream server's dataflow workers, for fault tests that kill them."""

from __future__ import annotations

from pathlib import Path


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def dataflow_worker_pids(server_pid: int) -> list[int]:
    """Spark's Python workers: `python -m pyspark.worker` processes (Slipstream starts them
    without pyspark's forking daemon), or, under a daemon, the daemon's forked children."""
    workers, daemons = [], set()
    for pid in descendants(server_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"pyspark.worker" in cmdline and b"pyspark.daemon" not in cmdline:
            workers.append(pid)
        elif b"pyspark.daemon" in cmdline:
            daemons.add(pid)
    for pid in daemons:
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if ppid in daemons:
            workers.append(pid)
    return workers
