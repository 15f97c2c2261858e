"""A PostgreSQL source's ingestion: the initial snapshot, then logical replication (pgoutput).

    first run (progress relation empty)          every later run
    ──────────────────────────────────           ──────────────────────────────
    drop a slot an interrupted attempt left       lsn = the progress relation's value
    CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT   START_REPLICATION SLOT s LOGICAL lsn
    read every table in that snapshot (asyncpg,
      REPEATABLE READ, SET TRANSACTION SNAPSHOT,
      COPY ... CSV, decoded column-wise)
    one write: all tables + progress = the
      slot's consistent point
    START_REPLICATION from it

The snapshot is exactly the database at the slot's consistent point, and the slot streams every
transaction that committed after it, so together they are every change once.

**Streaming.** A reader task decodes the stream (pgoutput.py) and turns each upstream
transaction into row updates per subsource: an insert is +new, a delete −old, an update −old
+new (REPLICA IDENTITY FULL gives the whole old row; a TOASTed value the update left unchanged
is taken from the old row). A whole transaction goes into a queue at its Commit. A writer task
takes every transaction queued (up to a bound) and commits them in one write through the
coordinator's write path (one oracle timestamp, every subsource and the progress relation,
atomically through persist's transaction WAL) with the progress set to the last one's end LSN.
Only then is that LSN reported upstream as flushed (the slot's confirmed_flush_lsn), so the
upstream keeps the WAL of anything not durable here. A transaction is never split across writes,
so every upstream transaction becomes visible at one Slipstream timestamp, whole. When no
transaction is open, a keepalive's WAL position is progress too (nothing before it is still to
come), written when it moves past the committed LSN: the progress then reaches the upstream's
current LSN even when the WAL holds nothing for this publication.

**Restart.** After a crash (kill -9), the committed LSN is the progress relation's value (a
partial write is retracted by the controller's `recover`); replication resumes from it, and the
upstream skips every transaction that committed before it: nothing lost, nothing twice.

**Errors.** A subsource is put in error, durably (its catalog definition), and no longer
written, when its table's Relation message shows columns that differ from the ones it was
created with (a column dropped or retyped; columns added upstream are ignored), when the table is
truncated upstream (as Materialize), or when a value cannot be represented (numeric NaN, dates
beyond Slipstream's range): reading it then fails with the error, and mz_source_statuses shows
it stalled with the error; the other subsources go on. A lost connection, an unreachable
upstream or a dropped slot stall the whole source with the error; the controller retries with
back-off from the committed LSN.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
from dataclasses import dataclass, field

import asyncpg
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from buildpg import render

from catalog.items import CatalogItem
from dataflow.batch import concat
from dataflow.errors import SqlError
from dataflow.types import INT8, SqlType
from storage.sources.base import SourceStatistics, updates
from storage.sources.postgres import upstream
from storage.sources.postgres.pgoutput import (
    UNCHANGED, Begin, Commit, Delete, Insert, Relation, Truncate, Update, decode,
)
from storage.sources.postgres.replication import (
    PG_EPOCH_US, Keepalive, ReplicationConnection, UpstreamError, XLogData, quote_ident,
)
from storage.sources.postgres.setup import set_subsource_error, subsource_error
from storage.sources.postgres.spec import PostgresSpec, UpstreamTable
from storage.sources.postgres.types import decode_columns

log = logging.getLogger("slipstream.sources.postgres")

MAX_ROWS_PER_WRITE = 200_000
QUEUE_TRANSACTIONS = 10_000
STATUS_INTERVAL_S = 10.0
READ_TIMEOUT_S = 60.0
SOURCE_ERROR = "XX000"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Txn:
    """One upstream transaction's row updates per subsource (rows are tuples of text values)."""

    rows: dict[str, list] = field(default_factory=dict)
    diffs: dict[str, list] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # subsource -> error raised in it
    end_lsn: int = 0
    commit_ts_us: int = 0
    count: int = 0
    messages: int = 0
    nbytes: int = 0

    def add(self, output: str, row: tuple, diff: int) -> None:
        rows = self.rows.get(output)
        if rows is None:
            rows = self.rows[output] = []
            self.diffs[output] = []
        rows.append(row)
        self.diffs[output].append(diff)
        self.count += 1


@dataclass
class Progress:
    """A keepalive's WAL position, outside any transaction."""

    lsn: int


class _TableState:
    """What the stream decoder knows of one upstream table in this session."""

    def __init__(self, table: UpstreamTable) -> None:
        self.table = table
        self.projection: tuple[int, ...] | None = None  # positions of our columns in its tuples
        self.identity = True  # the projection is 0..n-1


class Decoder:
    """pgoutput messages -> transactions of row updates per subsource (see the module doc)."""

    def __init__(self, spec: PostgresSpec, errored: set[str]) -> None:
        self.tables = {t.oid: _TableState(t) for t in spec.tables}
        self.errored = errored  # subsources in error: not written any more
        self.current: Txn | None = None

    def _error(self, txn: Txn, state: _TableState, message: str) -> None:
        out = state.table.output
        if out not in self.errored:
            self.errored.add(out)
            txn.errors[out] = message
        txn.rows.pop(out, None)
        txn.diffs.pop(out, None)

    def relation(self, msg: Relation, txn: Txn) -> None:
        state = self.tables.get(msg.oid)
        if state is None:
            return
        by_name = {c.name: (i, c) for i, c in enumerate(msg.columns)}
        positions = []
        for col in state.table.columns:
            hit = by_name.get(col.name)
            if hit is None:
                return self._error(txn, state, f'incompatible schema change: column "{col.name}" of upstream '
                                               f'table "{state.table.qualified}" was dropped or renamed')
            i, c = hit
            if c.type_oid != col.type_oid or c.typmod != col.typmod:
                return self._error(txn, state, f'incompatible schema change: column "{col.name}" of upstream '
                                               f'table "{state.table.qualified}" changed its type')
            positions.append(i)
        if msg.replica_identity != "f":
            return self._error(txn, state, f'upstream table "{state.table.qualified}" no longer has '
                                           f'REPLICA IDENTITY FULL')
        state.projection = tuple(positions)
        state.identity = state.projection == tuple(range(len(msg.columns)))

    def _project(self, state: _TableState, values: tuple) -> tuple:
        if state.identity:
            return values
        return tuple(values[i] for i in state.projection)

    def message(self, data: bytes) -> Txn | None:
        """Feed one pgoutput message; returns a transaction at its Commit."""
        msg = decode(data)
        txn = self.current
        if isinstance(msg, Begin):
            self.current = Txn(commit_ts_us=msg.commit_ts)
            return None
        if txn is None:
            return None  # Relation/Type outside a transaction do not happen in proto 1
        txn.messages += 1
        txn.nbytes += len(data)
        if isinstance(msg, Commit):
            txn.end_lsn = msg.end_lsn
            self.current = None
            return txn
        if isinstance(msg, Relation):
            self.relation(msg, txn)
            return None
        if isinstance(msg, (Insert, Update, Delete)):
            state = self.tables.get(msg.oid)
            if state is None or state.table.output in self.errored:
                return None
            if state.projection is None:
                self._error(txn, state, "a change arrived before its table's description")
                return None
            out = state.table.output
            if isinstance(msg, Insert):
                txn.add(out, self._project(state, msg.new), 1)
                return None
            old = msg.old
            if old is None:
                self._error(txn, state, f'upstream table "{state.table.qualified}" no longer has REPLICA IDENTITY FULL')
                return None
            txn.add(out, self._project(state, old), -1)
            if isinstance(msg, Update):
                new = msg.new
                if any(v is UNCHANGED for v in new):
                    new = tuple(o if v is UNCHANGED else v for v, o in zip(new, old))
                txn.add(out, self._project(state, new), 1)
            return None
        if isinstance(msg, Truncate):
            for oid in msg.oids:
                state = self.tables.get(oid)
                if state is not None:
                    self._error(txn, state, f'upstream table "{state.table.qualified}" was truncated')
            return None
        return None  # Origin, Type, logical messages


# -- the snapshot ----------------------------------------------------------------------------------

def csv_columns(data: bytes, ncols: int) -> list[pa.Array]:
    """COPY ... (FORMAT csv) output as string columns: NULL is an unquoted empty field, an empty
    string a quoted one."""
    if not data:
        return [pa.array([], pa.string()) for _ in range(ncols)]
    names = [f"c{i}" for i in range(ncols)]
    table = pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                             strings_can_be_null=True, quoted_strings_can_be_null=False,
                                             null_values=[""]))
    return [table.column(i).combine_chunks() for i in range(ncols)]


async def read_table(conn, table: UpstreamTable, types: tuple[SqlType, ...]) -> pa.Table:
    """One table's rows in the open snapshot, as an update batch."""
    cols = ", ".join(quote_ident(c.name) for c in table.columns)
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    await conn.copy_from_query(f"SELECT {cols} FROM {quote_ident(table.schema)}.{quote_ident(table.name)}",
                               output=sink, format="csv")
    data = b"".join(chunks)
    arrays = await asyncio.to_thread(lambda: decode_columns(csv_columns(data, len(table.columns)), types))
    return updates(types, arrays, 1)


# -- running --------------------------------------------------------------------------------------

def _progress_batch(lsn: int, previous: int) -> pa.Table:
    parts = [updates((INT8,), [np.array([lsn], np.int64)], 1)]
    if previous > 0:
        parts.append(updates((INT8,), [np.array([previous], np.int64)], -1))
    return concat(parts)


class Ingestion:
    def __init__(self, ctl, source: CatalogItem, stats: SourceStatistics) -> None:
        self.ctl = ctl
        self.coord = ctl.coord
        self.source = source
        self.stats = stats
        self.cfg = json.loads(source.definition)
        self.spec = PostgresSpec.from_definition(self.cfg)
        self.outputs, self.progress = ctl.parts(source)
        self.types = {t.output: tuple(c.type for c in self.coord.catalog.get(self.outputs[t.output]).columns)
                      for t in self.spec.tables}
        self.committed = 0
        self.repl: ReplicationConnection | None = None
        self.sub_stats: dict[str, SourceStatistics] = {}

    # -- errors of subsources ---------------------------------------------------------------------

    def _sub_stats(self, output: str) -> SourceStatistics:
        s = self.sub_stats.get(output)
        if s is None:
            id = self.outputs[output]
            s = self.sub_stats[output] = SourceStatistics(id, last_status_change_ms=now_ms(), status="running")
            s.per_output["source"] = self.source.id
            self.ctl.stats[id] = s
        return s

    def errored(self) -> set[str]:
        """Subsources in error (durably), their errors raised again for readers."""
        out = set()
        for t in self.spec.tables:
            item = self.coord.catalog.get(self.outputs[t.output])
            message = subsource_error(item)
            if message is not None:
                out.add(t.output)
                self._raise_on_read(t.output, message)
            else:
                self._sub_stats(t.output)
        return out

    def _raise_on_read(self, output: str, message: str) -> None:
        id = self.outputs[output]
        self.coord.errors[id] = SqlError(SOURCE_ERROR, f'source "{output}" is in error: {message}')
        s = self._sub_stats(output)
        s.status, s.error, s.last_status_change_ms = "stalled", message, now_ms()

    def record_errors(self, errors: dict[str, str]) -> None:
        """Durably, before the write that moves the progress past what caused them."""
        for output, message in errors.items():
            item = self.coord.catalog.get(self.outputs[output])
            if subsource_error(item) is None:
                log.error("source %s: subsource %s in error: %s", self.source.name, output, message)
                set_subsource_error(self.coord.catalog, item, message)
            self._raise_on_read(output, message)

    # -- the run ----------------------------------------------------------------------------------

    async def run(self) -> None:
        from storage.sources.controller import _status
        errored = self.errored()
        self.committed = await self.ctl.recover(self.source)
        self.stats.offset_committed = self.stats.offset_known = self.committed
        self.stats.snapshot_committed = self.committed > 0
        connection = self.coord.catalog.secrets.connection(self.spec.connection)
        if connection is None:
            raise SqlError(SOURCE_ERROR, "the source's connection was dropped")
        params = upstream.connect_params(self.coord.catalog, connection)
        try:
            self.repl = await ReplicationConnection.connect(params)
            log.info("source %s: connected to %s:%s, resuming at %X", self.source.name, params.host,
                     params.port, self.committed)
            if self.committed == 0:
                await self.snapshot(params, errored)
            await self.repl.start_replication(self.spec.slot, self.committed, self.spec.publication)
        except (UpstreamError, OSError) as e:
            if self.repl is not None:
                self.repl.close()
            raise upstream.user_error(params, e) from None
        _status(self.stats, "running")
        queue: asyncio.Queue = asyncio.Queue(QUEUE_TRANSACTIONS)
        decoder = Decoder(self.spec, errored)
        tasks = [asyncio.ensure_future(self.read(decoder, queue)), asyncio.ensure_future(self.write(queue)),
                 asyncio.ensure_future(self.heartbeat())]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                e = t.exception()
                if e is not None:
                    if isinstance(e, (UpstreamError, OSError)):
                        raise upstream.user_error(params, e, connecting=False) from None
                    raise e
        finally:
            for t in tasks:
                t.cancel()
            self.repl.close()

    async def snapshot(self, params, errored: set[str]) -> None:
        """Create the slot and commit every table as of its consistent point (module doc)."""
        conn = await upstream.connect(params)
        try:
            await drop_slot(conn, self.spec.slot)
            slot = await self.repl.create_slot(self.spec.slot)
            writes: dict[str, pa.Table] = {}
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                await conn.execute(f"SET TRANSACTION SNAPSHOT '{slot.snapshot}'")
                for table in self.spec.tables:
                    if table.output in errored:
                        continue
                    try:
                        batch = await read_table(conn, table, self.types[table.output])
                    except SqlError as e:
                        self.record_errors({table.output: e.message})
                        errored.add(table.output)
                        continue
                    if batch.num_rows:
                        writes[self.outputs[table.output]] = batch
        finally:
            await conn.close()
        writes[self.progress] = _progress_batch(slot.consistent_point, 0)
        rows = sum(b.num_rows for id, b in writes.items() if id != self.progress)
        ts = await self.commit(writes)
        if ts is None:
            raise asyncio.CancelledError()
        self.committed = slot.consistent_point
        self.stats.updates_staged += rows
        self.stats.updates_committed += rows
        self.stats.offset_committed = self.stats.offset_known = self.committed
        self.stats.snapshot_committed = True
        self.stats.write_frontier = ts + 1
        log.info("source %s: snapshot of %d rows at %X", self.source.name, rows, self.committed)

    async def commit(self, writes: dict[str, pa.Table]) -> int | None:
        # Shielded: stopping the task lets a write in flight finish (controller._run does so too).
        return await asyncio.shield(asyncio.ensure_future(self.ctl._commit(self.source.id, writes)))

    async def read(self, decoder: Decoder, queue: asyncio.Queue) -> None:
        stream = self.repl.messages()
        last_queued = self.committed
        while True:
            try:
                msg = await asyncio.wait_for(stream.__anext__(), READ_TIMEOUT_S)
            except asyncio.TimeoutError:
                raise UpstreamError(f"no message from the upstream server for {READ_TIMEOUT_S:.0f} seconds") from None
            if isinstance(msg, XLogData):
                self.stats.messages_received += 1
                self.stats.bytes_received += len(msg.data)
                txn = decoder.message(msg.data)
                if txn is not None:
                    self.stats.offset_known = txn.end_lsn
                    await queue.put(txn)
                    last_queued = max(last_queued, txn.end_lsn)
            elif isinstance(msg, Keepalive):
                if msg.reply_requested:
                    self.repl.send_status(self.committed)
                if decoder.current is None and msg.wal_end > last_queued:
                    last_queued = msg.wal_end
                    self.stats.offset_known = max(self.stats.offset_known, msg.wal_end)
                    await queue.put(Progress(msg.wal_end))

    async def heartbeat(self) -> None:
        """A status update every few seconds (asking for a reply, so a silent upstream is
        noticed by the read timeout)."""
        while True:
            await asyncio.sleep(STATUS_INTERVAL_S)
            self.repl.send_status(self.committed, reply=True)
            await self.repl.drain()

    async def write(self, queue: asyncio.Queue) -> None:
        while True:
            items = [await queue.get()]
            rows = getattr(items[0], "count", 0)
            while not queue.empty() and rows < MAX_ROWS_PER_WRITE:
                item = queue.get_nowait()
                items.append(item)
                rows += getattr(item, "count", 0)
            lsn = max(getattr(i, "end_lsn", 0) or getattr(i, "lsn", 0) for i in items)
            if lsn <= self.committed:
                continue
            await self.write_transactions([i for i in items if isinstance(i, Txn)], lsn)

    async def write_transactions(self, txns: list[Txn], lsn: int) -> None:
        errors: dict[str, str] = {}
        by_output: dict[str, tuple[list, list]] = {}
        for txn in txns:
            errors.update(txn.errors)
            for out, rows in txn.rows.items():
                acc = by_output.setdefault(out, ([], []))
                acc[0].extend(rows)
                acc[1].extend(txn.diffs[out])
        for out in errors:
            by_output.pop(out, None)
        writes: dict[str, pa.Table] = {}
        nrows = 0
        for out, (rows, diffs) in by_output.items():
            if out in self._errored_now():
                continue
            types = self.types[out]
            try:
                columns = list(zip(*rows)) if rows else [[] for _ in types]
                arrays = decode_columns(columns, types)
            except SqlError as e:
                errors[out] = f"a value cannot be ingested: {e.message}"
                continue
            writes[self.outputs[out]] = updates(types, arrays, np.asarray(diffs, dtype=np.int64))
            nrows += len(rows)
        if errors:
            self.record_errors(errors)
        writes[self.progress] = _progress_batch(lsn, self.committed)
        ts = await self.commit(writes)
        if ts is None:
            raise asyncio.CancelledError()  # dropped meanwhile
        self.committed = lsn
        self.repl.send_status(lsn)
        s = self.stats
        s.updates_staged += nrows
        s.updates_committed += nrows
        s.offset_committed = lsn
        s.write_frontier = ts + 1
        if txns:
            commit_ms = (txns[-1].commit_ts_us + PG_EPOCH_US) // 1000
            s.lag_ms = max(0, now_ms() - commit_ms)
        else:
            s.lag_ms = 0
        for out in by_output:
            sub = self.sub_stats.get(out)
            if sub is not None:
                sub.updates_committed += len(by_output[out][0])
                sub.offset_committed = lsn
                sub.write_frontier = ts + 1

    def _errored_now(self) -> set[str]:
        return {out for out, s in self.sub_stats.items() if s.status == "stalled"}


async def run_postgres(ctl, source: CatalogItem, stats: SourceStatistics) -> None:
    await Ingestion(ctl, source, stats).run()


# -- the slot -------------------------------------------------------------------------------------

async def drop_slot(conn, slot: str) -> bool:
    """Drop the slot if it exists, ending the walsender that still holds it (ours, from a run
    that ended); True if it existed."""
    for _ in range(20):
        sql, args = render("SELECT active_pid FROM pg_replication_slots WHERE slot_name = :s", s=slot)
        row = await conn.fetchrow(sql, *args)
        if row is None:
            return False
        if row[0] is not None:
            sql, args = render("SELECT pg_terminate_backend(:pid)", pid=row[0])
            await conn.execute(sql, *args)
            await asyncio.sleep(0.2)
            continue
        sql, args = render("SELECT pg_drop_replication_slot(:s)", s=slot)
        try:
            await conn.execute(sql, *args)
            return True
        except asyncpg.ObjectInUseError:  # became active meanwhile: look again
            await asyncio.sleep(0.2)
        except asyncpg.UndefinedObjectError:
            return False
    raise SqlError(SOURCE_ERROR, f'replication slot "{slot}" stays in use upstream')


def drop_slot_later(coord, source: CatalogItem, task: asyncio.Task | None) -> None:
    """DROP SOURCE: once the ingestion task has stopped, drop its slot upstream (best effort, as
    Materialize: an unreachable upstream keeps the slot, which its administrator then drops)."""
    cfg = json.loads(source.definition)
    connection = coord.catalog.secrets.connection(cfg["connection"])
    if connection is None:
        return
    params = upstream.connect_params(coord.catalog, connection)

    async def run() -> None:
        if task is not None:
            await asyncio.wait([task], timeout=10)
        try:
            conn = await upstream.connect(params)
            try:
                await drop_slot(conn, cfg["slot"])
            finally:
                await conn.close()
        except Exception as e:  # noqa: BLE001 - logged: the slot stays upstream
            log.warning("DROP SOURCE %s: could not drop replication slot %s upstream: %s",
                        source.name, cfg["slot"], e)

    asyncio.ensure_future(run())


__all__ = ["Decoder", "Ingestion", "Progress", "Txn", "csv_columns", "drop_slot", "drop_slot_later",
           "run_postgres"]
