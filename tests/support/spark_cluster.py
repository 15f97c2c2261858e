"""A Spark standalone cluster on loopback (one master, one worker) from pyspark's own
`bin/spark-class`, for tests of the cluster path (`slipstream serve --spark-master spark://…`).

    with SparkStandalone.start(cores=4) as cluster:
        server = SlipstreamServer.start(..., extra_args=("--spark-master", cluster.master_url))
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from tests.support.ports import free_port

START_TIMEOUT_S = 90


def _spark_class() -> Path:
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


@dataclass
class SparkStandalone:
    master_url: str
    workdir: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    @classmethod
    def start(cls, workdir: Path, cores: int = 4, memory: str = "2g") -> "SparkStandalone":
        workdir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        cluster = cls(f"spark://127.0.0.1:{port}", workdir)
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
               "SPARK_LOG_DIR": str(workdir), "SPARK_WORKER_DIR": str(workdir / "work")}
        try:
            cluster._spawn("master", [str(_spark_class()), "org.apache.spark.deploy.master.Master",
                                      "--host", "127.0.0.1", "--port", str(port),
                                      "--webui-port", str(free_port())], env)
            cluster._wait_port(port)
            cluster._spawn("worker", [str(_spark_class()), "org.apache.spark.deploy.worker.Worker",
                                      cluster.master_url, "--host", "127.0.0.1", "--cores", str(cores),
                                      "--memory", memory, "--webui-port", str(free_port())], env)
            cluster._wait_registered()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        log = open(self.workdir / f"{name}.log", "ab")
        self.processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                               stdin=subprocess.DEVNULL, start_new_session=True))
        log.close()

    def _wait_port(self, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the Spark master did not listen on {port}: {self.log_tail('master')}")

    def _wait_registered(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if "Successfully registered with master" in self.log_tail("worker"):
                return
            time.sleep(0.3)
        raise RuntimeError(f"the Spark worker did not register: {self.log_tail('worker')}")

    def log_tail(self, name: str, chars: int = 4000) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def stop(self) -> None:
        for p in reversed(self.processes):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.processes:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)

    def __enter__(self) -> "SparkStandalone":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
