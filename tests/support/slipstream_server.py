"""Start, kill and restart a real Slipstream server (`python -m server.cli serve`) for the tests.

    server = SlipstreamServer.start(data_dir=tmp / "data", log_file=tmp / "server.log")
    server.dsn          # 'postgresql://slipstream@127.0.0.1:41234/slipstream'
    server.http_url     # 'http://127.0.0.1:41235' (webhook sources: /api/webhook/<db>/<schema>/<source>)
    server.kill(signal.SIGKILL)   # crash it
    server.restart()              # same data dir, same port; waits until pgwire answers
    server.stop()

Readiness means a pgwire connection completes its startup and answers `SELECT 1`: Spark's JVM
takes 10-30 s to come up, so the wait is generous (180 s by default).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psycopg

from tests.support.ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = float(os.environ.get("SLIPSTREAM_TEST_START_TIMEOUT", "180"))


class ServerFailedToStart(RuntimeError):
    pass


@dataclass
class SlipstreamServer:
    host: str
    port: int
    data_dir: Path
    log_file: Path
    workers: int = 2
    process: subprocess.Popen | None = field(default=None, repr=False)
    # Extra `serve` options (e.g. ("--auth", "scram-sha-256")) and environment variables; the
    # password of the default role and libpq parameters (e.g. "sslmode=require") go into `dsn`.
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)
    password: str | None = field(default=None, repr=False)
    dsn_params: str = ""
    http_port: int = 0  # the webhook endpoint's port: a free one, kept across restarts

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def dsn(self) -> str:
        auth = "slipstream" if self.password is None else f"slipstream:{quote(self.password, safe='')}"
        params = f"?{self.dsn_params}" if self.dsn_params else ""
        return f"postgresql://{auth}@{self.host}:{self.port}/slipstream{params}"

    @classmethod
    def start(cls, data_dir: Path, log_file: Path, port: int | None = None,
              workers: int = 2, **options) -> "SlipstreamServer":
        server = cls(host="127.0.0.1", port=port or free_port(), data_dir=data_dir,
                     log_file=log_file, workers=workers, **options)
        server._launch()
        return server

    def _launch(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.http_port:
            self.http_port = free_port()
        argv = [sys.executable, "-m", "server.cli", "serve", "--host", self.host,
                "--port", str(self.port), "--http-port", str(self.http_port), "--data-dir", str(self.data_dir),
                "--workers", str(self.workers), *self.extra_args]
        log = open(self.log_file, "ab")
        log.write(f"\n=== {' '.join(argv)}\n".encode())
        log.flush()
        # Own process group: a kill reaches the server and nothing else of ours.
        self.process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        env={**os.environ, **self.env} if self.env else None)
        log.close()
        self._wait_ready(START_TIMEOUT_S)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailedToStart(
                    f"slipstream exited with {self.process.returncode} during start-up\n"
                    + self.log_tail())
            try:
                with psycopg.connect(self.dsn, connect_timeout=5, autocommit=True) as conn:
                    conn.execute("SELECT 1").fetchone()
                return
            except Exception as exc:  # not up yet: refused, reset, or startup not finished
                last_error = exc
                time.sleep(0.5)
        self.kill(signal.SIGKILL)
        raise ServerFailedToStart(f"slipstream did not answer pgwire within {timeout:.0f}s "
                                  f"(last error: {last_error!r})\n" + self.log_tail())

    def log_tail(self, lines: int = 80) -> str:
        if not self.log_file.exists():
            return "(no server log)"
        text = self.log_file.read_text(errors="replace").splitlines()
        return f"--- last {lines} lines of {self.log_file} ---\n" + "\n".join(text[-lines:])

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int | None:
        """Send `sig` to the server's process group and wait for it to exit; returns its exit
        code. A server that ignores SIGTERM for `timeout` seconds is killed with SIGKILL."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        return self.process.returncode

    def restart(self, sig: int = signal.SIGTERM) -> None:
        """Stop (with `sig`) if running, then start again on the same data dir and port."""
        self.kill(sig)
        self._launch()

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
