"""Apache Flink SQL (PyFlink, the `apache-flink` package: a local mini-cluster in one JVM,
parallelism 1) computing V1 and V2 as continuous SQL queries over a changelog.

Runs in its own venv made by bench/setup.sh (bench/.venv-flink): PyFlink pins older pandas,
pyarrow and apache-beam than the project uses.

How the workload maps onto Flink:
- orders = `orders_base UNION ALL orders_changes`. The base is a CSV file (filesystem connector,
  bounded: the snapshot). The changes arrive on a TCP socket that this process serves and Flink's
  socket source reads (`socketTextStream`, one ordered stream, like a Kafka partition), one line
  per change event `op,id,customer_id,amount,status`, turned into a changelog with retractions by
  Flink's built-in `FROM_CHANGELOG` table function: an update is `-U` (old version) and `+U` (new
  version), a delete `-D`, an insert `+I`. A batch is its lines sent in one `sendall` (the
  write's acknowledgement: handed to the socket). customers is a bounded CSV source.
- V1 and V2 are the reference SQL, unchanged, in one job (a statement set; the sources are shared),
  each `INSERT`ed into a `print` sink. The JVM's stdout is a pipe to this process, where a thread
  applies the changelog rows (+I/+U set a row, -U/-D remove it) to V1 and V2 kept as dicts.
- Flink's defaults except one latency setting a Flink user would make, network buffers flushed
  after every record (`execution.buffer-timeout.interval` 0 ms instead of 100 ms), and a 1 GB
  heap (`-Xmx1g`, Spark's default driver heap; the JVM's default, a quarter of the machine's
  memory, let G1 grow to 5 GB at 1M orders before collecting; 1 GB holds the 1M-order state and
  hydrated faster here). No mini-batch aggregation (so every input row makes its own -U/+U pair
  downstream), heap state backend, no checkpoints.
- Why not files: the filesystem source (first tried, with the `debezium-json` format) hands out
  the files that are waiting in no fixed order, so under the open-loop writer V1 never showed
  "exactly the first k writes" and freshness could not be measured; it also polls.

Flink does not say which input an output row belongs to, so "current" is decided by content as for
Pathway: a batch is done when V1 equals its expected contents and V2's totals (orders, amount)
equal the expected ones. Hydration is the job planned, submitted and run over the base files
until both views show them (ingest, join and aggregation of the base are one step here).
Freshness: the print sink is the subscription; V1's totals are reported after every V1 row that
arrives. Memory is this process's tree (the Python driver and the Flink JVM, its child).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from bench.common.workload import ChangeBatch, Workload
from bench.peers.expected import ExpectedViews, StreamedViews

WAIT_S = 600.0
BUFFER_TIMEOUT = "0ms"
JVM_HEAP = "1g"  # -Xmx, as Spark's default driver heap (the JVM's own default: a quarter of RAM)

ORDERS_COLUMNS = "id BIGINT, customer_id BIGINT, amount BIGINT, status STRING"
CHANGES_SQL = """SELECT * FROM FROM_CHANGELOG(
    input => TABLE change_events, op => DESCRIPTOR(op),
    op_mapping => MAP['+I', 'INSERT', '-U', 'UPDATE_BEFORE', '+U', 'UPDATE_AFTER', '-D', 'DELETE'])"""
EVENTS_SQL = ("SELECT SPLIT_INDEX(f0, ',', 0) AS op, CAST(SPLIT_INDEX(f0, ',', 1) AS BIGINT) AS id, "
              "CAST(SPLIT_INDEX(f0, ',', 2) AS BIGINT) AS customer_id, "
              "CAST(SPLIT_INDEX(f0, ',', 3) AS BIGINT) AS amount, SPLIT_INDEX(f0, ',', 4) AS status "
              "FROM change_lines")
V1_INSERT = ("INSERT INTO v1_out SELECT c.region, count(*), sum(o.amount) FROM orders o JOIN customers c "
             "ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region")
V2_INSERT = "INSERT INTO v2_out SELECT customer_id, count(*), sum(amount) FROM orders GROUP BY customer_id"


class FlinkSQL(StreamedViews):
    name = "flink-sql"

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.v1: dict[str, tuple[int, int]] = {}
        self.v2: dict[int, tuple[int, int]] = {}
        self.v2_totals = [0, 0]
        self.v1_totals = [0, 0]
        self.on_v1_state: Callable[[float, int, int], None] | None = None
        self.jvm = None
        self.result = None
        self.reader: threading.Thread | None = None
        self.reader_error: BaseException | None = None
        self.seq = 0

    async def start(self) -> None:
        import pyflink.pyflink_gateway_server as gateway_server
        from pyflink.common import Configuration
        from pyflink.datastream import StreamExecutionEnvironment
        from pyflink.table import StreamTableEnvironment

        # The print sink writes to the JVM's stdout: make that a pipe into this process.
        read_fd, write_fd = os.pipe()
        real_popen = gateway_server.Popen

        def popen(*args, **kwargs):
            kwargs["stdout"] = write_fd
            self.jvm = real_popen(*args, **kwargs)
            return self.jvm

        gateway_server.Popen = popen
        os.environ["JVM_ARGS"] = f"-Xmx{JVM_HEAP} " + os.environ.get("JVM_ARGS", "")
        try:
            conf = Configuration()
            conf.set_string("parallelism.default", "1")
            conf.set_string("execution.buffer-timeout.interval", BUFFER_TIMEOUT)
            conf.set_string("pipeline.name", "slipstream-bench-v1-v2")
            self.env = StreamExecutionEnvironment.get_execution_environment(conf)
            self.tenv = StreamTableEnvironment.create(self.env)
        finally:
            gateway_server.Popen = real_popen
            os.close(write_fd)
        if self.jvm is None:
            raise RuntimeError("PyFlink did not start its JVM through the expected launcher")
        try:  # a larger pipe lets the JVM run ahead of the reader in bursts
            import fcntl
            fcntl.fcntl(read_fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except OSError:
            pass
        self.read_fd = read_fd
        self.reader = threading.Thread(target=self._read, name="flink-print-reader", daemon=True)
        self.reader.start()
        self.dir = Path(tempfile.mkdtemp(prefix="bench-flink-"))
        for sub in ("base", "customers"):
            (self.dir / sub).mkdir()
        # The change stream: Flink's socket source connects here when the job starts.
        self.server = socket.create_server(("127.0.0.1", 0))
        self.conn: socket.socket | None = None

    # -- the print sink's rows ----------------------------------------------------------------
    # A row is printed as `V2> -U[customer_id, count, sum]` (`+I`/`+U` set the key's row,
    # `-U`/`-D` remove it); the reader applies them in order and keeps each view's totals.
    def _read(self) -> None:
        rest = b""
        try:
            while True:
                chunk = os.read(self.read_fd, 1 << 20)
                if not chunk:
                    return
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                self._apply(lines)
        except BaseException as exc:  # the waiter reports it
            self.reader_error = exc
        finally:
            with self.cond:
                self.cond.notify_all()

    def _apply(self, lines: list[bytes]) -> None:
        at = time.perf_counter()
        cb = self.on_v1_state
        v1, v2, t1, t2 = self.v1, self.v2, self.v1_totals, self.v2_totals
        with self.cond:
            for line in lines:
                tag = line[:4]
                if tag == b"V2> ":
                    k, c, s = line[7:-1].split(b", ")
                    k, c, s = int(k), int(c), int(s)
                    if line[4] == 43:  # '+': +I / +U
                        v2[k] = (c, s)
                        t2[0] += c
                        t2[1] += s
                    else:              # '-': -U / -D
                        v2.pop(k, None)
                        t2[0] -= c
                        t2[1] -= s
                elif tag == b"V1> ":
                    r, c, s = line[7:-1].split(b", ")
                    r, c, s = r.decode(), int(c), int(s)
                    if line[4] == 43:
                        v1[r] = (c, s)
                        t1[0] += c
                        t1[1] += s
                    else:
                        v1.pop(r, None)
                        t1[0] -= c
                        t1[1] -= s
                    if cb is not None:
                        cb(at, t1[0], t1[1])
            self.cond.notify_all()

    # -- the PeerSystem interface -----------------------------------------------------------
    async def load_base(self, w: Workload) -> None:
        opts = pacsv.WriteOptions(include_header=False)
        pacsv.write_csv(w.customers(), self.dir / "customers" / "customers.csv", opts)
        pacsv.write_csv(w.orders(), self.dir / "base" / "orders.csv", opts)
        self.expected = ExpectedViews(w)
        t = self.tenv
        t.execute_sql(f"CREATE TABLE customers (id BIGINT, region STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{self.dir / 'customers'}', 'format' = 'csv')")
        t.execute_sql(f"CREATE TABLE orders_base ({ORDERS_COLUMNS}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{self.dir / 'base'}', 'format' = 'csv')")
        from pyflink.datastream.data_stream import DataStream
        lines = self.env._j_stream_execution_environment.socketTextStream(
            "127.0.0.1", self.server.getsockname()[1])  # PyFlink has no wrapper for it
        t.create_temporary_view("change_lines", t.from_data_stream(DataStream(lines)))
        t.execute_sql(f"CREATE TEMPORARY VIEW change_events AS {EVENTS_SQL}")
        t.execute_sql(f"CREATE TEMPORARY VIEW orders_changes AS {CHANGES_SQL}")
        t.execute_sql("CREATE TEMPORARY VIEW orders AS "
                      "SELECT * FROM orders_base UNION ALL SELECT * FROM orders_changes")
        t.execute_sql("CREATE TABLE v1_out (region STRING, n BIGINT, total BIGINT) "
                      "WITH ('connector' = 'print', 'print-identifier' = 'V1')")
        t.execute_sql("CREATE TABLE v2_out (customer_id BIGINT, n BIGINT, total BIGINT) "
                      "WITH ('connector' = 'print', 'print-identifier' = 'V2')")

    async def hydrate(self) -> None:
        statements = self.tenv.create_statement_set()
        statements.add_insert_sql(V1_INSERT)
        statements.add_insert_sql(V2_INSERT)
        self.result = statements.execute()  # returns once the job is submitted
        self.server.settimeout(WAIT_S)
        self.conn, _ = self.server.accept()  # the socket source's task has started
        self._wait_current()

    def _wait_current(self) -> None:
        deadline = time.monotonic() + WAIT_S
        with self.cond:
            while not self._current():
                if self.reader_error is not None or not self.reader.is_alive():
                    raise RuntimeError(f"Flink's output stopped ({self.reader_error!r}); "
                                       f"JVM exit code {self.jvm.poll()}")
                if time.monotonic() > deadline:
                    raise TimeoutError("Flink's views did not become current")
                self.cond.wait(1.0)

    async def write(self, batch: ChangeBatch) -> None:
        self.expected.add(batch)
        self.conn.sendall(_events(batch))

    def _v1_state(self) -> tuple[int, int]:
        c, s = self.v1_totals  # (kept as the print sink's rows arrive)
        return c, s

    def pids(self) -> list[int]:
        return [os.getpid()]  # the JVM is a child of this process

    async def stop(self) -> None:
        if self.result is not None:
            try:
                self.result.get_job_client().cancel().result()
            except Exception:
                pass
        if self.jvm is not None:
            from pyflink.java_gateway import get_gateway
            get_gateway().close()  # no more calls into the JVM (nor from Python's finalizers)
            self.jvm.terminate()
            try:
                self.jvm.wait(30)
            except Exception:
                self.jvm.kill()
        if self.reader is not None:
            self.reader.join(10)
        for sock in (getattr(self, "conn", None), getattr(self, "server", None)):
            if sock is not None:
                sock.close()
        if hasattr(self, "dir"):
            shutil.rmtree(self.dir, ignore_errors=True)


def _lines(op: str, t: pa.Table) -> list[str]:
    return [f"{op},{i},{c},{a},{s}" for i, c, a, s in zip(
        t["id"].to_pylist(), t["customer_id"].to_pylist(), t["amount"].to_pylist(), t["status"].to_pylist())]


def _events(batch: ChangeBatch) -> bytes:
    """The batch as change events, one line each: an id in both deletes and inserts is an update
    (-U old version, +U new version), the rest deletes (-D) and inserts (+I)."""
    new_ids = batch.inserts["id"].to_numpy()
    old_ids = batch.deletes["id"].to_numpy()
    updated_old = np.isin(old_ids, new_ids)
    updated_new = np.isin(new_ids, old_ids)
    old, new = batch.deletes, batch.inserts
    parts = (_lines("-D", old.filter(pa.array(~updated_old))) + _lines("-U", old.filter(pa.array(updated_old)))
             + _lines("+U", new.filter(pa.array(updated_new))) + _lines("+I", new.filter(pa.array(~updated_new))))
    return ("\n".join(parts) + "\n").encode()
