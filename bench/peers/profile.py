"""Flame graphs with py-spy while a system runs its change phases.

    with_profile = FlameGraph.start(pid, Path("results/flame-slipstream-1M.svg"), subprocesses=True)
    ...                                   # the measured phases
    with_profile.stop()                   # SIGINT: py-spy writes the SVG and exits

Enabled by `python -m bench.peers --profile` (the child reads BENCH_PROFILE_DIR). A missing
py-spy is reported and skipped, never fatal.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "BENCH_PROFILE_DIR"


def py_spy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    project = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "py-spy"
    for candidate in (here, project):
        if candidate.exists():
            return str(candidate)
    return shutil.which("py-spy")


@dataclass
class FlameGraph:
    proc: subprocess.Popen
    out: Path

    @classmethod
    def maybe_start(cls, pid: int, name: str, subprocesses: bool) -> "FlameGraph | None":
        out_dir = os.environ.get(ENV)
        exe = py_spy()
        if not out_dir or exe is None or pid <= 0:
            return None
        out = Path(out_dir) / f"flame-{name}.svg"
        argv = [exe, "record", "--pid", str(pid), "--rate", "200", "--format", "flamegraph",
                "--output", str(out), "--nonblocking"]
        if subprocesses:
            argv.append("--subprocesses")
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return cls(proc, out)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
