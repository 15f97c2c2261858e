"""Spark Structured Streaming (PySpark from the project's venv, `local[2]`, the micro-batch engine)
computing V1 and V2 as two streaming aggregations over a stream of signed records.

How the workload maps onto Spark:
- Structured Streaming has no retracting source, so orders are a stream of signed records
  (id, customer_id, amount, status, diff): a batch is one Parquet file with diff -1 for each old
  version (deletes and the old side of updates) and +1 for each new version (inserts and the new
  side of updates), written aside and renamed into a directory read by the file source (the
  write's acknowledgement). The base orders are the first file (all +1); customers is a static
  (cached) Parquet table.
- V2 = `groupBy(customer_id).agg(sum(diff) AS count, sum(diff * amount) AS sum)`; V1 = the captured
  rows joined with customers (a stream-static join) and grouped by region the same way. Each is one
  streaming query, output mode `update`, whose `foreachBatch` sink brings each micro-batch's
  changed groups to this process (Arrow) and folds them into a dict; a group whose count reaches
  0 is deleted there (Spark keeps it in its state with count 0). Default trigger (the next
  micro-batch starts as soon as new files are seen; at most 200 files per micro-batch),
  `spark.sql.shuffle.partitions` = 2 (one per core, instead of 200), new files listed by the
  driver rather than by a Spark job (`spark.sql.sources.parallelPartitionDiscovery.threshold`),
  the default (HDFS-backed, in-memory) state store, Spark's default driver memory (1 GB heap),
  checkpoints in a temporary directory.
- Spark's socket source (tried: lines of signed records, in order, no file per write) was slower
  here: 2.1-3.1 s per 10 000-change batch against 0.8-1.4 s with a Parquet file, and no faster for
  single changes.
- Hadoop's local filesystem, without its native library, runs `chmod` / `readlink` for every
  checkpoint and state file it writes (a dozen per micro-batch); the harness's RSS sampler catches
  such a child just after it was spawned, while it still shares the JVM's memory, and counts the
  JVM once more for each. So this peer also records the sum of every process's own peak
  (VmHWM, read at the end of the run: Python driver, JVM, launcher), which the report shows
  beside the sampled peak.

"Current" is decided by content at micro-batch boundaries, as for Pathway: a batch is done when
V1 equals its expected contents and V2's totals (orders, amount) equal the expected ones, each
view's sink having run for a micro-batch that read the batch's file. Hydration: both queries
started over the base file until both views show it. Freshness: the foreachBatch sink is the
subscription; V1's totals are reported at the end of each V1 micro-batch. Memory is this
process's tree (the Python driver and Spark's JVM, its child).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.workload import ChangeBatch, Workload
from bench.peers.expected import ExpectedViews, StreamedViews

WAIT_S = 600.0
SCHEMA = "id BIGINT, customer_id BIGINT, amount BIGINT, status STRING, diff INT"
# The freshness phase matches a subscription's state against the next 200 writes (harness.py),
# so a micro-batch may take at most that many files (one per write); never binding in the closed
# loop, where a micro-batch finds one file.
MAX_FILES_PER_TRIGGER = 200
# A micro-batch with more new files than this lists them with a Spark job (Spark's default: 32);
# the files are local, so the driver lists them itself (1-2 s less per micro-batch of 100+ files).
PARALLEL_LISTING = 10_000


def _tree_hwm_bytes(root: int) -> int:
    """Sum of VmHWM (a process's own peak RSS) over `root` and its lasting descendants."""
    from bench.peers.harness import tree_status_bytes
    return tree_status_bytes([root], "VmHWM", lambda pid, fields: pid == root or fields.get("Name", "").strip()
                             in ("java", "bash", "python", "python3"))


def _signed(table: pa.Table, diff: int) -> pa.Table:
    return table.append_column("diff", pa.array(np.full(table.num_rows, diff, dtype=np.int32)))


class SparkStructured(StreamedViews):
    name = "spark-structured"

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.v1: dict[str, tuple[int, int]] = {}
        self.v2: dict[int, tuple[int, int]] = {}
        self.v2_totals = [0, 0]
        self.on_v1_state: Callable[[float, int, int], None] | None = None
        self.queries: list = []
        self.sink_error: BaseException | None = None
        self.seq = 0
        self.spark = None

    async def start(self) -> None:
        from pyspark.sql import SparkSession
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        self.spark = (SparkSession.builder.master("local[2]").appName("bench-spark-structured")
                      .config("spark.ui.enabled", "false")
                      .config("spark.ui.showConsoleProgress", "false")
                      .config("spark.sql.shuffle.partitions", "2")
                      .config("spark.sql.sources.parallelPartitionDiscovery.threshold", str(PARALLEL_LISTING))
                      .getOrCreate())
        self.spark.sparkContext.setLogLevel("WARN")
        self.dir = Path(tempfile.mkdtemp(prefix="bench-spark-"))
        for sub in ("changes", "customers", "checkpoints"):
            (self.dir / sub).mkdir()

    # -- the foreachBatch sinks (called on Spark's stream threads, through py4j) ---------------
    def _v1_batch(self, df, batch_id: int) -> None:
        try:
            t = df.toArrow()
            rows = zip(t["region"].to_pylist(), t["count"].to_pylist(), t["sum"].to_pylist())
            with self.cond:
                for r, c, s in rows:
                    if c == 0:
                        self.v1.pop(r, None)
                    else:
                        self.v1[r] = (c, s)
                cb = self.on_v1_state
                c = sum(v[0] for v in self.v1.values())
                s = sum(v[1] for v in self.v1.values())
                self.cond.notify_all()
            if cb is not None:
                cb(time.perf_counter(), c, s)
        except BaseException as exc:
            self._failed(exc)
            raise

    def _v2_batch(self, df, batch_id: int) -> None:
        try:
            t = df.toArrow()
            rows = zip(t["customer_id"].to_pylist(), t["count"].to_pylist(), t["sum"].to_pylist())
            v2, tot = self.v2, self.v2_totals
            with self.cond:
                for k, c, s in rows:
                    old = v2.pop(k, None)
                    if old is not None:
                        tot[0] -= old[0]
                        tot[1] -= old[1]
                    if c != 0:
                        v2[k] = (c, s)
                        tot[0] += c
                        tot[1] += s
                self.cond.notify_all()
        except BaseException as exc:
            self._failed(exc)
            raise

    def _failed(self, exc: BaseException) -> None:
        with self.cond:
            self.sink_error = exc
            self.cond.notify_all()

    # -- the PeerSystem interface -----------------------------------------------------------
    async def load_base(self, w: Workload) -> None:
        pq.write_table(w.customers().rename_columns(["cust_id", "region"]),
                       self.dir / "customers" / "customers.parquet")
        self._drop(_signed(w.orders(), 1))
        self.expected = ExpectedViews(w)

    def _drop(self, table: pa.Table) -> None:
        """One file into the watched directory, atomically (hidden files are not read)."""
        self.seq += 1
        name = f"{self.seq:08d}.parquet"
        tmp = self.dir / "changes" / f".{name}"
        pq.write_table(table, tmp)
        os.rename(tmp, self.dir / "changes" / name)

    async def hydrate(self) -> None:
        from pyspark.sql import functions as F
        orders = (self.spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", MAX_FILES_PER_TRIGGER)
                  .parquet(str(self.dir / "changes")))
        customers = self.spark.read.parquet(str(self.dir / "customers")).cache()
        signed_amount = (F.col("diff") * F.col("amount")).cast("bigint")
        v1 = (orders.where(F.col("status") == "captured")
              .join(customers, orders.customer_id == customers.cust_id)
              .groupBy("region").agg(F.sum("diff").alias("count"), F.sum(signed_amount).alias("sum")))
        v2 = orders.groupBy("customer_id").agg(F.sum("diff").alias("count"), F.sum(signed_amount).alias("sum"))
        for name, frame, sink in (("v1", v1, self._v1_batch), ("v2", v2, self._v2_batch)):
            self.queries.append(frame.writeStream.queryName(name).outputMode("update").foreachBatch(sink)
                                .option("checkpointLocation", str(self.dir / "checkpoints" / name)).start())
        self._wait_current()

    def _wait_current(self) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.cond:
            while not self._current():
                if self.sink_error is not None:
                    raise RuntimeError(f"a foreachBatch sink failed: {self.sink_error!r}")
                if time.monotonic() > deadline:
                    raise TimeoutError("Spark's views did not become current")
                self.cond.wait(0.5)
                if not self._current():
                    for q in self.queries:
                        if not q.isActive:
                            raise RuntimeError(f"the streaming query {q.name} stopped: {q.exception()}")

    async def write(self, batch: ChangeBatch) -> None:
        self.expected.add(batch)
        self._drop(pa.concat_tables([_signed(batch.deletes, -1), _signed(batch.inserts, 1)]))

    def pids(self) -> list[int]:
        return [os.getpid()]  # Spark's JVM is a child of this process

    async def stop(self) -> None:
        hwm = _tree_hwm_bytes(os.getpid()) / 2**20
        self.extra_results = {
            "peak_rss_hwm_mb": hwm,
            "peak_rss_note": (f"the sampled peak RSS counts the JVM again for each `chmod`/`readlink` "
                              f"child Hadoop had just spawned; the processes' own peaks (VmHWM) sum to "
                              f"{hwm:,.0f} MB")}
        for q in self.queries:
            try:
                q.stop()
            except Exception:
                pass
        if self.spark is not None:
            self.spark.stop()
        if hasattr(self, "dir"):
            shutil.rmtree(self.dir, ignore_errors=True)
