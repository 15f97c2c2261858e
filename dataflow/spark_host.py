"""Hosting a replica on Spark: one barrier-mode job whose tasks never finish.

Each of the job's W tasks becomes a dataflow worker (`dataflow.worker.run_worker`) that connects
back to the compute controller and finds its peers through the barrier's allGather. Spark gives
placement, code shipping and failure detection; the same code runs on `local[N]` and on a
standalone cluster. The job runs on a background thread of the driver; when it ends (a task failed,
or the replica was dropped), `on_exit` tells the controller, which may start it again.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger("slipstream.spark")


_DRIVER_JAVA_OPTIONS = ("-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -XX:ReservedCodeCacheSize=48m "
                        "-XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -Xms16m")


def make_spark_context(master: str, app_name: str = "slipstream", extra_conf: dict[str, str] | None = None):
    """The one SparkContext of this process (the embedded driver of environmentd). A plain
    context, not a SparkSession: the replicas are RDD barrier jobs, and a session's SQL
    machinery held ~60 MB more of the driver JVM."""
    from pyspark import SparkConf, SparkContext

    # Executors' Python workers run this interpreter's path (where Slipstream is installed; the
    # docker image installs it at the same path on every node) unless PYSPARK_PYTHON says
    # otherwise: Spark's default, `python3` on the PATH, may be one without Slipstream.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # talk to the driver over loopback
    conf = SparkConf().setMaster(master).setAppName(app_name)
    settings = {
        "spark.ui.enabled": "false",
        "spark.task.maxFailures": "1",
        "spark.python.worker.reuse": "false",
        "spark.driver.bindAddress": "0.0.0.0",
        # The driver JVM only schedules the replicas' long-running tasks (the workers' data
        # never passes through it): a small heap, the serial collector and the client
        # compiler. Each worker is started directly, without pyspark's forking daemon, which
        # would otherwise stay resident for the whole run.
        "spark.driver.memory": "512m",
        "spark.driver.extraJavaOptions": _DRIVER_JAVA_OPTIONS,
        "spark.python.use.daemon": "false",
        **(extra_conf or {}),
    }
    for key, value in settings.items():
        conf.set(key, value)
    context = SparkContext.getOrCreate(conf)
    context.setLogLevel("WARN")
    return context


class SparkReplica:
    """A replica of W workers running as one Spark barrier job."""

    def __init__(self, spark_context, workers: int, controller: tuple[str, int], data_dir: Path,
                 advertise_host: str, on_exit: Callable[[BaseException | None], None], name: str = "r1",
                 memory_limit_bytes: int | None = None) -> None:
        self.spark_context = spark_context
        self.workers = workers
        self.controller = controller
        self.data_dir = data_dir
        self.advertise_host = advertise_host
        self.on_exit = on_exit
        self.name = name
        self.memory_limit_bytes = memory_limit_bytes  # the replica's; each worker gets its share
        self._thread: threading.Thread | None = None
        self.group = f"slipstream-replica-{name}-{id(self)}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"spark-replica-{self.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        controller, data_dir, workers = self.controller, str(self.data_dir), self.workers
        worker_limit = None if self.memory_limit_bytes is None else self.memory_limit_bytes // workers

        def task(_rows):
            from pyspark import BarrierTaskContext

            from dataflow.allocator import configure_malloc
            from dataflow.without_pandas import keep_pandas_out
            keep_pandas_out()
            configure_malloc()
            from dataflow.worker import run_worker
            import socket as _socket

            ctx = BarrierTaskContext.get()
            host = _socket.gethostbyname(_socket.gethostname()) if workers > 1 else "127.0.0.1"
            if controller[0] in ("127.0.0.1", "localhost"):
                host = "127.0.0.1"
            run_worker(ctx.partitionId(), workers, controller, Path(data_dir),
                       all_gather=lambda msg: list(ctx.allGather(msg)), advertise_host=host,
                       memory_limit_bytes=worker_limit)
            return iter([])

        error: BaseException | None = None
        try:
            sc = self.spark_context
            sc.setJobGroup(self.group, f"slipstream dataflow replica {self.name}", interruptOnCancel=True)
            sc.parallelize(range(workers), workers).barrier().mapPartitions(task).collect()
        except BaseException as e:  # the job failed or was cancelled
            error = e
            log.warning("replica job ended: %s", str(e).splitlines()[0] if str(e) else repr(e))
        self.on_exit(error)

    def stop(self) -> None:
        try:
            self.spark_context.cancelJobGroup(self.group)
        except Exception:  # the context may already be gone at shutdown
            pass
