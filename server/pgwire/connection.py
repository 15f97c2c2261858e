"""One client connection: startup, then the simple and extended query state machine.

The connection reads one frontend message at a time and runs a statement (Query, Execute,
FunctionCall) as a separate task (`_run_cancellable`), so that a CancelRequest arriving on
another connection, or the client going away, can stop a statement that never ends on its own
(COPY (SUBSCRIBE ...) TO STDOUT); Parse, Bind, Describe and Close run inline (`_run_inline`).
A cancelled statement ends with ErrorResponse 57014 and the session stays usable.

Message flow (extended protocol): Parse -> Bind -> Describe -> Execute -> Sync; after an error,
every message up to the next Sync is skipped, then ReadyForQuery.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import secrets
import struct
from collections import deque
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Iterator

from dataflow.errors import SqlError, SqlState, too_deeply_nested
from dataflow.types import Column, SqlType
from server.api import (Adapter, CommandComplete, CopyIn, CopyOut, EmptyQuery, Rows, RowStream,
                        Session, StatementDescription)
from server import limits
from server.pgwire import protocol as p
from server.pgwire.auth import AuthConfig, Authenticator, hba_refusal
from server.pgwire.codec import CodecContext, decode_param, has_binary_output
from server.pgwire.copy_format import CopyFormatter
from server.pgwire.datarow import RowEncoder, expand_formats
from server.pgwire.protocol import BodyReader, ConnectionClosed, ProtocolViolation
from server.pgwire.startup import parse_startup_parameters
from server.pgwire.stream import WireStream

log = logging.getLogger(__name__)

_FLUSH_THRESHOLD = 256 * 1024
_ROWS_PER_SLICE = 2048
_FRONTEND_TYPES = frozenset(b"QPBDECSHXdcfF")
_QUERY_CANCELED = "canceling statement due to user request"


@dataclass
class PreparedStatement:
    sql: str
    declared_oids: list[int]
    description: StatementDescription
    empty: bool = False


@dataclass
class PortalRows:
    """A row-returning result being sent, possibly across several Execute messages."""

    encoder: RowEncoder
    buffered: deque
    batches: AsyncIterator | None
    tag: str | None
    sent: int = 0


@dataclass
class Portal:
    statement: PreparedStatement
    params: list[Any]
    result_formats: list[int]
    rows: PortalRows | None = None
    done_tag: str | None = None  # set once the portal ran to completion


def _aiter(batches) -> AsyncIterator:
    if hasattr(batches, "__anext__"):
        return batches
    if hasattr(batches, "__aiter__"):
        return batches.__aiter__()

    async def gen():
        for b in batches:
            yield b
    return gen()


async def _aclose(it) -> None:
    close = getattr(it, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception:  # noqa: BLE001 - a failing generator must not break cleanup
            log.debug("closing a result iterator failed", exc_info=True)


def _resolved_oid(oid: int) -> int:
    """A parameter still typed `unknown` is sent as text, which every client can bind."""
    return 25 if oid in (0, 705) else oid


def _strip_end_of_data_marker(data: bytes) -> bytes:
    """psql still sends the old `\\.` end-of-data line; it is not data, so the adapter never sees it."""
    for marker in (b"\\.\n", b"\\.\r\n", b"\\."):
        if data.endswith(marker) and (len(data) == len(marker) or data[-len(marker) - 1:-len(marker)] == b"\n"):
            return data[:-len(marker)]
    return data


class CancelRegistry:
    """pid -> connection, so a CancelRequest on a new connection can find its target. It also
    counts the client connections past their startup packet, for max_connections."""

    def __init__(self) -> None:
        self._by_pid: dict[int, "Connection"] = {}
        self._next_pid = 10_000
        self.clients = 0

    def register(self, conn: "Connection") -> tuple[int, int]:
        pid = self._next_pid
        self._next_pid += 1
        self._by_pid[pid] = conn
        return pid, secrets.randbits(32)

    def unregister(self, pid: int) -> None:
        self._by_pid.pop(pid, None)

    def cancel(self, pid: int, secret_key: int) -> None:
        conn = self._by_pid.get(pid)
        if conn is not None and conn.session is not None and conn.session.secret_key == secret_key:
            conn.cancel_running()

    def connections(self) -> list["Connection"]:
        return list(self._by_pid.values())


# Extended-protocol messages whose work may wait (on a peek, a write, a function's result) and
# so can be cancelled or time out: each runs as a task (`_run_cancellable`); the others inline.
_CANCELLABLE = frozenset({ord("E"), ord("F")})


@contextlib.contextmanager
def _client_errors() -> Iterator[None]:
    """A message's failure as the client sees it: SQL errors, a lost connection, a protocol
    violation and cancellation as they are; a statement nested too deeply as 54001; anything
    else (an adapter bug) logged and sent as an internal error, never a crash of the session."""
    try:
        yield
    except (SqlError, ConnectionClosed, ProtocolViolation, asyncio.CancelledError):
        raise
    except RecursionError:  # a statement nested too deeply to parse or plan
        raise too_deeply_nested() from None
    except Exception as e:  # noqa: BLE001 - an adapter bug is the client's error, not a crash
        log.exception("statement failed with an internal error")
        raise SqlError(SqlState.INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}") from None


class Connection:
    def __init__(self, adapter: Adapter, registry: CancelRegistry, stream: WireStream,
                 auth: AuthConfig | None = None, roles=None) -> None:
        self.adapter = adapter
        self.auth = auth or AuthConfig()
        self.roles = roles
        self.registry = registry
        self.stream = stream
        self.session: Session | None = None
        self._out: list[bytes] = []
        self._out_size = 0
        self._running: asyncio.Task | None = None
        self._cancel_requested = False
        self._lost = False
        self._skip_until_sync = False
        self._statements: dict[str, PreparedStatement] = {}
        self._portals: dict[str, Portal] = {}
        self._started = False
        self._counted = False
        self._timed_out = False
        stream.on_lost = self._on_lost

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        try:
            if await self._startup():
                await self._message_loop()
        except ConnectionClosed:
            pass
        except ProtocolViolation as e:
            await self._fatal(SqlError(SqlState.PROTOCOL_VIOLATION, str(e)))
        except asyncio.CancelledError:
            if not self._lost:
                await self._fatal(SqlError(SqlState.ADMIN_SHUTDOWN,
                                           "terminating connection due to administrator command"))
            raise
        except Exception as e:  # noqa: BLE001 - one broken connection must not take the server down
            log.exception("pgwire connection failed")
            await self._fatal(SqlError(SqlState.INTERNAL_ERROR, f"internal error: {e}"))
        finally:
            await self._cleanup()

    async def _cleanup(self) -> None:
        if self._counted:
            self._counted = False
            self.registry.clients -= 1
        for portal in list(self._portals.values()):
            await self._drop_portal(portal)
        self._portals.clear()
        if self.session is not None:
            self.registry.unregister(self.session.pid)
        if self._started:
            self._started = False
            try:
                await asyncio.shield(self.adapter.close_session(self.session))
            except asyncio.CancelledError:
                # The server is shutting down: the shielded close goes on by itself.
                self.stream.close()
                raise
            except Exception:  # noqa: BLE001 - cleanup is best effort
                log.exception("adapter.close_session failed")
        self.stream.close()

    async def _fatal(self, err: SqlError) -> None:
        if self.stream.closed:
            return
        try:
            self._send(p.error_response(err, "FATAL"))
            self.stream.write(b"".join(self._out))
            self._out.clear()
        except ConnectionClosed:
            pass

    def _on_lost(self) -> None:
        self._lost = True
        if self._running is not None and not self._running.done():
            self._running.cancel()

    def cancel_running(self) -> None:
        """CancelRequest: stop the statement that is running now (no-op when idle)."""
        if self._running is not None and not self._running.done():
            self._cancel_requested = True
            self._running.cancel()

    # ------------------------------------------------------------------ output

    def _send(self, data: bytes) -> None:
        self._out.append(data)
        self._out_size += len(data)

    async def _flush(self) -> None:
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            self._out_size = 0
            self.stream.write(data)
        await self.stream.drain()

    async def _maybe_flush(self) -> None:
        if self._out_size >= _FLUSH_THRESHOLD:
            await self._flush()

    def _send_pending_notices(self) -> None:
        s = self.session
        if s is not None and s.pending_notices:
            for sqlstate, msg in s.pending_notices:
                self._send(p.notice_response(sqlstate, msg))
            s.pending_notices.clear()

    def _send_ready(self) -> None:
        s = self.session
        self._send_pending_notices()
        if s.pending_parameter_status:
            for name, value in s.pending_parameter_status:
                self._send(p.parameter_status(name, value))
            s.pending_parameter_status.clear()
        self._send(p.ready_for_query(s.transaction_status or "I"))

    def _codec_context(self) -> CodecContext:
        reg_names = getattr(self.adapter, "reg_names", None)
        return CodecContext.from_vars(self.session.vars, reg_names(self.session) if reg_names else None)

    # ------------------------------------------------------------------ startup

    async def _read_int32(self) -> int:
        return struct.unpack(">i", await self.stream.read_exactly(4))[0]

    async def _startup(self) -> bool:
        while True:
            length = await self._read_int32()
            if length < 8 or length > p.MAX_STARTUP_LENGTH:
                raise ProtocolViolation("invalid length of startup packet")
            body = BodyReader(await self.stream.read_exactly(length - 4))
            code = body.int32()
            if code == p.SSL_REQUEST and self.auth.tls is not None and not self.stream.tls:
                if self.stream.buffered:
                    # Bytes sent before the handshake would be read as if they had been encrypted
                    # (CVE-2021-23214): PostgreSQL refuses them too.
                    raise ProtocolViolation("received unencrypted data after SSL request")
                self.stream.write(b"S")
                await self.stream.start_tls(self.auth.tls)
                continue
            if code in (p.SSL_REQUEST, p.GSSENC_REQUEST) and not self.stream.tls:
                self.stream.write(b"N")  # no TLS / GSS encryption; the client continues in plain
                continue
            if code == p.CANCEL_REQUEST:
                pid, key = body.int32(), body.uint32()
                self.registry.cancel(pid, key)
                return False
            break
        if code >> 16 != 3:
            await self._fatal(SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                                       f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: "
                                       "server supports 3.0"))
            return False
        try:
            startup = parse_startup_parameters(body)
        except SqlError as e:
            await self._fatal(e)
            return False
        if (code & 0xFFFF) > 0 or startup.unrecognized:
            self._send(p.negotiate_protocol_version(0, startup.unrecognized))
        # max_connections, checked where PostgreSQL checks it: after the startup packet, before
        # authentication (server/limits.py).
        if self.registry.clients >= limits.max_connections():
            await self._fatal(SqlError(limits.TOO_MANY_CONNECTIONS, limits.TOO_MANY_CONNECTIONS_MESSAGE))
            return False
        self.registry.clients += 1
        self._counted = True
        if self.auth.tls_require and not self.stream.tls:
            peer = self.stream.transport.get_extra_info("peername") if self.stream.transport else None
            await self._fatal(hba_refusal(peer[0] if peer else "[local]", startup.user, startup.database))
            return False
        await self._flush()
        try:
            role = await Authenticator(self.auth, self.roles, self.stream, startup.user, self.stream.tls).run()
        except SqlError as e:
            await self._fatal(e)
            return False
        self._send(p.AUTHENTICATION_OK)
        if role is not None and not role.login:
            await self._fatal(SqlError("28000", f'role "{role.name}" is not permitted to log in'))
            return False
        if role is not None and not role.superuser:
            startup.vars["is_superuser"] = "off"
        self.session = Session(user=startup.user, database=startup.database, pid=0, secret_key=0,
                               vars=startup.vars)
        self.session.pid, self.session.secret_key = self.registry.register(self)
        try:
            await self.adapter.startup(self.session)
        except SqlError as e:
            await self._fatal(e)
            return False
        self._started = True
        s = self.session
        for name, value in startup_parameter_status(s):
            self._send(p.parameter_status(name, value))
        s.pending_parameter_status = [kv for kv in s.pending_parameter_status
                                      if kv[0] not in dict(startup_parameter_status(s))]
        self._send(p.backend_key_data(s.pid, s.secret_key))
        self._send_ready()
        await self._flush()
        return True

    # ------------------------------------------------------------------ message loop

    async def _read_message(self) -> tuple[int, bytes]:
        header = await self.stream.read_exactly(5)
        kind = header[0]
        if kind not in _FRONTEND_TYPES:
            raise ProtocolViolation(f"invalid frontend message type {kind}")
        length = struct.unpack(">i", header[1:])[0]
        if length < 4 or length > p.MAX_MESSAGE_LENGTH:
            raise ProtocolViolation(f"invalid message length {length}")
        return kind, await self.stream.read_exactly(length - 4)

    async def _message_loop(self) -> None:
        handlers: dict[int, Callable] = {
            ord("P"): self._parse, ord("B"): self._bind, ord("D"): self._describe,
            ord("E"): self._execute, ord("C"): self._close, ord("F"): self._function_call,
        }
        while True:
            idle_limit = (limits.idle_in_transaction_timeout(self.session.vars)
                          if self.session.transaction_status in ("T", "E") else None)
            if idle_limit:
                try:
                    kind, body = await asyncio.wait_for(self._read_message(), idle_limit)
                except asyncio.TimeoutError:
                    await self._fatal(SqlError(limits.IDLE_IN_TRANSACTION_TIMEOUT, limits.IDLE_IN_TRANSACTION_MESSAGE))
                    return
            else:
                kind, body = await self._read_message()
            if kind == ord("X"):
                return
            if kind in (ord("d"), ord("c"), ord("f")):
                continue  # COPY data after a failed COPY: ignored, as PostgreSQL does
            if self._skip_until_sync and kind != ord("S"):
                continue  # after an extended-protocol error everything up to Sync is discarded
            if kind == ord("Q"):
                try:
                    await self._run_cancellable(self._simple_query(body))
                except SqlError as e:
                    self._send_error(e)
                self._send_ready()
                await self._flush()
                continue
            if kind == ord("S"):
                self._skip_until_sync = False
                if self.session.transaction_status == "I":
                    # The implicit transaction ended: its portals go with it.
                    for portal in list(self._portals.values()):
                        await self._drop_portal(portal)
                    self._portals.clear()
                self._send_ready()
                await self._flush()
                continue
            if kind == ord("H"):
                await self._flush()
                continue
            try:
                if kind in _CANCELLABLE:
                    await self._run_cancellable(handlers[kind](BodyReader(body)))
                else:
                    await self._run_inline(handlers[kind](BodyReader(body)))
            except SqlError as e:
                self._send_error(e)
                self._skip_until_sync = True
                await self._flush()  # like PostgreSQL: errors go out at once, not at Sync
                continue
            await self._maybe_flush()

    def _send_error(self, e: SqlError) -> None:
        self._send_pending_notices()
        self._send(p.error_response(e))

    async def _run_inline(self, coro) -> Any:
        """Run a message's work that has nothing to cancel (Parse, Bind, Describe, Close: they
        plan or bind without waiting on anything) in the message loop itself, with the errors
        mapped as for a statement: a task per message cost a task and an event-loop turn for
        each of a point read's three messages."""
        with _client_errors():
            return await coro

    async def _run_cancellable(self, coro) -> Any:
        """Run one message's work as a task that CancelRequest / disconnect can cancel."""
        task = asyncio.ensure_future(coro)
        self._running = task
        timeout = limits.statement_timeout(self.session.vars) if self.session is not None else None
        timer = asyncio.get_running_loop().call_later(timeout, self._statement_timed_out) if timeout else None
        try:
            with _client_errors():
                try:
                    return await task
                except asyncio.CancelledError:
                    me = asyncio.current_task()
                    if self._lost:
                        raise ConnectionClosed() from None
                    if self._cancel_requested and (me is None or not me.cancelling()):
                        if self._timed_out:
                            raise SqlError(SqlState.QUERY_CANCELED, limits.STATEMENT_TIMEOUT_MESSAGE) from None
                        raise SqlError(SqlState.QUERY_CANCELED, _QUERY_CANCELED) from None
                    raise
        finally:
            if timer is not None:
                timer.cancel()
            self._running = None
            self._cancel_requested = False
            self._timed_out = False

    def _statement_timed_out(self) -> None:
        """statement_timeout: cancel the running statement as a CancelRequest would."""
        if self._running is not None and not self._running.done():
            self._timed_out = True
            self.cancel_running()

    # ------------------------------------------------------------------ simple query

    async def _simple_query(self, body: bytes) -> None:
        sql = BodyReader(body).cstring()
        if not sql.strip():
            self._send(p.EMPTY_QUERY_RESPONSE)
            return
        outcomes = self.adapter.execute(self.session, sql)
        if inspect.isawaitable(outcomes):
            outcomes = await outcomes
        outcomes = _aiter(outcomes)
        try:
            async for outcome in outcomes:
                await self._send_outcome(outcome, None, 0)
        finally:
            await _aclose(outcomes)

    async def _send_outcome(self, outcome, portal: Portal | None, max_rows: int) -> None:
        """Send one outcome. portal=None means simple query (RowDescription included, text)."""
        self._send_pending_notices()
        if isinstance(outcome, CommandComplete):
            self._send(p.command_complete(outcome.tag))
            if portal is not None:
                portal.done_tag = outcome.tag
        elif isinstance(outcome, (Rows, RowStream)):
            columns = outcome.columns
            if portal is None:
                formats = [0] * len(columns)
                self._send(p.row_description(columns, formats))
            else:
                formats = expand_formats(portal.result_formats, len(columns))
            enc = RowEncoder(columns, formats, self._codec_context())
            if isinstance(outcome, Rows):
                result = PortalRows(enc, deque(outcome.rows), None, outcome.tag)
            else:
                result = PortalRows(enc, deque(), _aiter(outcome.batches), outcome.tag)
            if portal is not None:
                portal.rows = result
            try:
                await self._send_rows(result, max_rows, portal)
            finally:
                if portal is None and result.batches is not None:
                    await _aclose(result.batches)
        elif isinstance(outcome, CopyOut):
            await self._copy_out(outcome)
            if portal is not None:
                portal.done_tag = "COPY 0"
        elif isinstance(outcome, CopyIn):
            await self._copy_in(outcome)
            if portal is not None:
                portal.done_tag = "COPY 0"
        elif isinstance(outcome, EmptyQuery):
            self._send(p.EMPTY_QUERY_RESPONSE)
            if portal is not None:
                portal.done_tag = ""
        else:
            raise SqlError(SqlState.INTERNAL_ERROR, f"unknown outcome {type(outcome).__name__}")

    async def _send_rows(self, result: PortalRows, max_rows: int, portal: Portal | None) -> None:
        """Send rows until the result ends (CommandComplete) or max_rows (PortalSuspended)."""
        budget = max_rows if max_rows > 0 else -1
        buffered = result.buffered
        encode = result.encoder.encode
        while True:
            while buffered and budget != 0:
                # In slices, so that a huge result is flushed (with backpressure) as it goes.
                n = min(len(buffered) if budget < 0 else budget, len(buffered), _ROWS_PER_SLICE)
                chunk = [buffered.popleft() for _ in range(n)]
                self._send(b"".join([encode(r) for r in chunk]))
                result.sent += n
                if budget > 0:
                    budget -= n
                await self._maybe_flush()
            if budget == 0 and (buffered or result.batches is not None):
                self._send(p.PORTAL_SUSPENDED)
                return
            if result.batches is None:
                break
            await self._flush()  # streaming: the client sees each batch as soon as it exists
            try:
                batch = await result.batches.__anext__()
            except StopAsyncIteration:
                result.batches = None
                break
            buffered.extend(batch)
        tag = result.tag if result.tag is not None else f"SELECT {result.sent}"
        self._send(p.command_complete(tag))
        if portal is not None:
            portal.rows = None
            portal.done_tag = "SELECT 0" if result.tag is None else tag.split(" ")[0] + " 0"

    # ------------------------------------------------------------------ COPY

    async def _copy_out(self, outcome: CopyOut) -> None:
        fmt = CopyFormatter(outcome.columns, outcome.format, self._codec_context())
        self._send(p.copy_response(b"H", len(outcome.columns), False))
        if outcome.header:  # PostgreSQL 15 allows HEADER for text as well as CSV
            self._send(p.copy_data(fmt.header()))
        batches = _aiter(outcome.batches)
        count = 0
        row = fmt.row
        copy_data = p.copy_data
        try:
            await self._flush()
            async for batch in batches:
                self._send(b"".join([copy_data(row(r)) for r in batch]))
                count += len(batch)
                await self._flush()
        finally:
            await _aclose(batches)
        self._send(p.COPY_DONE)
        self._send(p.command_complete(f"COPY {count}"))

    async def _copy_in(self, outcome: CopyIn) -> None:
        binary = outcome.format == "binary"
        self._send(p.copy_response(b"G", len(outcome.columns), binary))
        await self._flush()
        chunks: list[bytes] = []
        while True:
            kind, body = await self._read_message()
            if kind == ord("d"):
                chunks.append(body)
            elif kind == ord("c"):
                break
            elif kind == ord("f"):
                reason = BodyReader(body).cstring() if body else ""
                raise SqlError(SqlState.QUERY_CANCELED, f"COPY from stdin failed: {reason}")
            elif kind in (ord("H"), ord("S")):
                continue  # PostgreSQL ignores Flush/Sync during COPY IN
            elif kind == ord("X"):
                raise ConnectionClosed()
            else:
                raise ProtocolViolation(f"unexpected message type {chr(kind)!r} during COPY from stdin")
        data = b"".join(chunks)
        if not binary:
            data = _strip_end_of_data_marker(data)
        tag = await outcome.finish(data)
        self._send(p.command_complete(tag))

    # ------------------------------------------------------------------ extended protocol

    async def _parse(self, r: BodyReader) -> None:
        name = r.cstring()
        sql = r.cstring()
        n = r.int16()
        if n < 0:
            raise ProtocolViolation("invalid parameter count")
        oids = [r.uint32() for _ in range(n)]
        if name and name in self._statements:
            raise SqlError("42P05", f'prepared statement "{name}" already exists')
        if not sql.strip():
            stmt = PreparedStatement(sql, oids, StatementDescription([], None), empty=True)
        else:
            desc = await self.adapter.describe(self.session, sql, oids)
            stmt = PreparedStatement(sql, oids, desc)
        self._statements[name] = stmt
        self._send(p.PARSE_COMPLETE)

    def _statement(self, name: str) -> PreparedStatement:
        stmt = self._statements.get(name)
        if stmt is None:
            what = f'prepared statement "{name}"' if name else "unnamed prepared statement"
            raise SqlError(SqlState.INVALID_SQL_STATEMENT_NAME, f"{what} does not exist")
        return stmt

    def _param_oid(self, stmt: PreparedStatement, i: int) -> int:
        declared = stmt.declared_oids[i] if i < len(stmt.declared_oids) else 0
        if declared:
            return declared
        return stmt.description.param_types[i].oid

    async def _bind(self, r: BodyReader) -> None:
        portal_name = r.cstring()
        stmt = self._statement(r.cstring())
        param_formats = [r.int16() for _ in range(max(r.int16(), 0))]
        nparams = r.int16()
        raw: list[bytes | None] = []
        for _ in range(max(nparams, 0)):
            length = r.int32()
            raw.append(None if length == -1 else r.bytes(length))
        result_formats = [r.int16() for _ in range(max(r.int16(), 0))]
        expected = len(stmt.description.param_types)
        if nparams != expected:
            raise SqlError(SqlState.PROTOCOL_VIOLATION,
                           f"bind message supplies {nparams} parameters, but prepared statement "
                           f"requires {expected}")
        pformats = expand_formats(param_formats, nparams, "parameter")
        params = [decode_param(v, self._param_oid(stmt, i), pformats[i] == 1)
                  for i, v in enumerate(raw)]
        columns = stmt.description.columns
        if columns is not None:
            formats = expand_formats(result_formats, len(columns))
            for col, f in zip(columns, formats):
                if f == 1 and not has_binary_output(col.type.oid):
                    raise SqlError(SqlState.UNDEFINED_FUNCTION,
                                   f"no binary output function available for type {col.type.name}")
        if portal_name in self._portals:
            if portal_name:
                raise SqlError(SqlState.DUPLICATE_CURSOR, f'cursor "{portal_name}" already exists')
            await self._drop_portal(self._portals.pop(portal_name))
        self._portals[portal_name] = Portal(stmt, params, result_formats)
        self._send(p.BIND_COMPLETE)

    async def _describe(self, r: BodyReader) -> None:
        what = r.byte()
        name = r.cstring()
        if what == b"S":
            stmt = self._statement(name)
            desc = stmt.description
            self._send(p.parameter_description([_resolved_oid(self._param_oid(stmt, i))
                                                for i in range(len(desc.param_types))]))
            self._send_columns(desc.columns, [])
        elif what == b"P":
            portal = self._portals.get(name)
            if portal is not None:
                self._send_columns(portal.statement.description.columns, portal.result_formats)
                return
            # Not a protocol portal: maybe an SQL cursor (DECLARE), which clients such as
            # psycopg's server-side cursors describe by name. Its columns are FETCH's columns.
            try:
                quoted = name.replace('"', '""')
                desc = await self.adapter.describe(self.session, f'FETCH ALL FROM "{quoted}"', [])
            except SqlError:
                raise SqlError(SqlState.INVALID_CURSOR_NAME, f'portal "{name}" does not exist') from None
            self._send_columns(desc.columns, [])
        else:
            raise ProtocolViolation(f"invalid DESCRIBE message subtype {what!r}")

    def _send_columns(self, columns: list[Column] | None, result_formats: list[int]) -> None:
        if columns is None:
            self._send(p.NO_DATA)
        else:
            self._send(p.row_description(columns, expand_formats(result_formats, len(columns))))

    async def _execute(self, r: BodyReader) -> None:
        name = r.cstring()
        max_rows = r.int32()
        portal = self._portals.get(name)
        if portal is None:
            raise SqlError(SqlState.INVALID_CURSOR_NAME, f'portal "{name}" does not exist')
        if portal.rows is not None:
            await self._send_rows(portal.rows, max_rows, portal)
            return
        if portal.done_tag is not None:
            self._send(p.EMPTY_QUERY_RESPONSE if portal.statement.empty
                       else p.command_complete(portal.done_tag))
            return
        if portal.statement.empty:
            portal.done_tag = ""
            self._send(p.EMPTY_QUERY_RESPONSE)
            return
        stmt = portal.statement
        param_types: list[SqlType] = list(stmt.description.param_types)
        outcome = await self.adapter.execute_one(self.session, stmt.sql, portal.params, param_types)
        await self._send_outcome(outcome, portal, max_rows)

    async def _close(self, r: BodyReader) -> None:
        what = r.byte()
        name = r.cstring()
        if what == b"S":
            self._statements.pop(name, None)
        elif what == b"P":
            portal = self._portals.pop(name, None)
            if portal is not None:
                await self._drop_portal(portal)
        else:
            raise ProtocolViolation(f"invalid CLOSE message subtype {what!r}")
        self._send(p.CLOSE_COMPLETE)

    async def _function_call(self, r: BodyReader) -> None:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "the fastpath function call protocol is not supported")

    async def _drop_portal(self, portal: Portal) -> None:
        if portal.rows is not None and portal.rows.batches is not None:
            await _aclose(portal.rows.batches)
        portal.rows = None


def startup_parameter_status(s: Session) -> list[tuple[str, str]]:
    """The ParameterStatus messages sent after authentication."""
    return [
        ("server_version", "15.0"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("TimeZone", s.vars.get("timezone", "UTC")),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("IntervalStyle", "postgres"),
        ("is_superuser", s.vars.get("is_superuser", "on")),
        ("session_authorization", s.user),
        ("application_name", s.vars.get("application_name", "")),
        ("default_transaction_read_only", "off"),
        ("in_hot_standby", "off"),
    ]
