"""Appending webhook requests: CHECK, then group commit through the coordinator's write path.

A request is decoded by its handler (`storage/sources/webhook.py`; a bad body is answered at
once), then queued. One committer task drains the queue: it evaluates every queued request's
CHECK in one vectorised pass per source (the engine's own kernels over an Arrow batch of the
requests: `planner/webhook_check.py`), then, under the coordinator's write lock, appends the
accepted rows of *every* queued request with one `Coordinator.write_locked`: one oracle
timestamp, one persist append (fsync) per source shard, then the workers. Only after that
returns is each request answered 200. Requests that arrive while a commit is on disk wait for the
next one, so concurrent clients share fsyncs instead of paying one each, and no request is
acknowledged before it is durable:

    8 clients posting at once  ->  queue [r1..r8]  ->  one write at ts  ->  8 x 200

A source dropped while its requests were queued answers them 404 (checked under the write lock,
so nothing is written to a dropped shard). A failed write answers its requests 500; nothing of
it was acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import pyarrow as pa

from catalog.items import CatalogItem, ItemKind
from dataflow.errors import SqlError
from dataflow.jsonb import canonical
from dataflow.types import BYTEA, TEXT
from storage.sources.base import SourceStatistics
from storage.sources.retention import RetentionState, expired
from storage.sources.webhook import DecodedRequest, WebhookError, WebhookSpec, decode_request, rows_batch

if TYPE_CHECKING:
    from server.coordinator import Coordinator

log = logging.getLogger("slipstream.webhook")


@dataclass
class _Queued:
    source: str
    spec: WebhookSpec
    check: "_Check | None"
    decoded: DecodedRequest
    body: bytes
    headers: dict[str, str]
    future: asyncio.Future


@dataclass
class _Check:
    """A source's compiled CHECK: the option kinds in column order and the evaluator."""

    options: list[dict]
    evaluate: Callable[[pa.Table], pa.Array]


@dataclass
class WebhookIngest:
    coord: "Coordinator"
    stats: dict[str, SourceStatistics] = field(default_factory=dict)
    _pending: list[_Queued] = field(default_factory=list)
    _committer: asyncio.Task | None = None
    _specs: dict[str, tuple[WebhookSpec, _Check | None]] = field(default_factory=dict)
    _retention: dict[str, asyncio.Task] = field(default_factory=dict)  # RETENTION WINDOW passes

    # -- the endpoint's view of the catalog ---------------------------------------------------

    def lookup(self, database: str, schema: str, name: str) -> CatalogItem:
        """The webhook source at /api/webhook/<database>/<schema>/<name>, else 404."""
        item = self.coord.catalog.try_resolve((database, schema, name))
        if item is None or item.kind is not ItemKind.SOURCE or not _is_webhook(item):
            raise WebhookError(404, f"no object was found at the path '{database}.{schema}.{name}'")
        return item

    def spec(self, item: CatalogItem) -> tuple[WebhookSpec, _Check | None]:
        found = self._specs.get(item.id)
        if found is None:
            import json
            spec = WebhookSpec.from_json(json.loads(item.definition))
            found = self._specs[item.id] = (spec, self._compile_check(spec))
        return found

    def _compile_check(self, spec: WebhookSpec) -> _Check | None:
        if spec.check is None:
            return None
        from dataflow.scalar import compile_expr
        from planner.webhook_check import lower_check
        return _Check(spec.check["options"], compile_expr(lower_check(spec.check, self.coord.catalog)))

    def statistics(self, id: str) -> SourceStatistics:
        s = self.stats.get(id)
        if s is None:
            from storage.sources.controller import now_ms
            s = self.stats[id] = SourceStatistics(id, status="running", last_status_change_ms=now_ms(),
                                                  snapshot_committed=True)
        return s

    def start(self) -> None:
        """At environmentd start: every webhook source is running (its shard was imported with
        the tables'; requests find it by name), shown so before its first request."""
        for item in self.coord.catalog.items():
            if item.kind is ItemKind.SOURCE and _is_webhook(item):
                self.statistics(item.id)
                self._start_retention(item)

    def forget(self, id: str) -> None:
        self.stats.pop(id, None)
        self._specs.pop(id, None)
        task = self._retention.pop(id, None)
        if task is not None:
            task.cancel()

    def close(self) -> None:
        for task in self._retention.values():
            task.cancel()
        self._retention.clear()

    # -- RETENTION WINDOW ---------------------------------------------------------------------------

    def _start_retention(self, item: CatalogItem) -> None:
        from storage.sources.controller import source_config
        window = source_config(item).get("retention_ms")
        if window is not None and item.id not in self._retention:
            state = RetentionState(window, self.coord.read_ts())
            self._retention[item.id] = asyncio.ensure_future(self._retention_loop(item.id, state))

    async def _retention_loop(self, id: str, state: RetentionState) -> None:
        """Retract the rows older than the window (storage/sources/retention.py), one pass at a
        time, each one write through the coordinator like a request's."""
        coord = self.coord
        while True:
            await asyncio.sleep(state.poll_seconds())
            try:
                cut = state.due(coord.read_ts())
                if cut is None:
                    continue
                async with coord.write_lock:
                    if not _alive(coord, id):
                        return
                    gone = await asyncio.to_thread(expired, coord.storage, id, cut)
                    if gone is None:
                        continue
                    state.last_write_ts = await coord.write_locked({id: gone})
                state.retracted_rows += gone.num_rows
                stats = self.statistics(id)
                stats.updates_staged += gone.num_rows
                stats.updates_committed += gone.num_rows
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - retried at the next look; requests are unaffected
                log.exception("webhook source %s: retention pass failed", id)

    # -- DDL ------------------------------------------------------------------------------------

    async def create(self, plan) -> CatalogItem:
        """CREATE SOURCE ... FROM WEBHOOK (planner/webhook_syntax.py): the source's catalog item
        (its definition is the WebhookSpec) and its shard, imported by the workers like a
        table's. Requests are accepted from the moment this returns."""
        import json
        from storage.sources.controller import _word
        coord = self.coord
        async with coord.write_lock:
            existing = coord.catalog.try_resolve((plan.database, plan.schema, plan.name))
            if existing is not None:
                raise SqlError("42P07", f'{_word(existing)} "{plan.name}" already exists')
            item = coord.catalog.create(ItemKind.SOURCE, plan.schema, plan.name, plan.columns, plan.create_sql,
                                        database=plan.database, definition=json.dumps(plan.config))
            types = tuple(c.type for c in plan.columns)
            await asyncio.to_thread(coord.storage.open, item.id, types)
            coord.compute.import_collection(item.id, types, coord.read_ts() + 1)
        self.statistics(item.id)
        self._start_retention(item)
        return item

    # -- requests -------------------------------------------------------------------------------

    async def submit(self, item: CatalogItem, body: bytes, headers: dict[str, str]) -> None:
        """Append one request's rows; returns once they are durable. Raises WebhookError."""
        stats = self.statistics(item.id)
        stats.messages_received += 1
        stats.bytes_received += len(body)
        spec, check = self.spec(item)
        decoded = decode_request(spec, body, headers)
        future = asyncio.get_running_loop().create_future()
        self._pending.append(_Queued(item.id, spec, check, decoded, body, headers, future))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.ensure_future(self._commit_loop())
        await future

    async def _commit_loop(self) -> None:
        while self._pending:
            group, self._pending = self._pending, []
            try:
                accepted = self._checked(group)
                await self._commit(accepted)
            except BaseException as e:  # noqa: BLE001 - every waiting request learns of it
                log.exception("webhook commit failed")
                for q in group:
                    if not q.future.done():
                        q.future.set_exception(WebhookError(500, f"internal failure: {e}"))
                if isinstance(e, asyncio.CancelledError):
                    raise

    def _checked(self, group: list[_Queued]) -> list[_Queued]:
        """The requests whose source's CHECK holds; the others are answered 400."""
        by_source: dict[str, list[_Queued]] = {}
        for q in group:
            by_source.setdefault(q.source, []).append(q)
        accepted: list[_Queued] = []
        for id, qs in by_source.items():
            check = qs[0].check
            if check is None:
                accepted.extend(qs)
                continue
            for q, ok in zip(qs, _evaluate(check, qs, self.coord.catalog)):
                if ok is True:
                    accepted.append(q)
                elif not q.future.done():
                    q.future.set_exception(ok if isinstance(ok, WebhookError)
                                           else WebhookError(400, "failed to validate the request"))
        return accepted

    async def _commit(self, accepted: list[_Queued]) -> None:
        if not accepted:
            return
        coord = self.coord
        async with coord.write_lock:
            live: list[_Queued] = []
            for q in accepted:
                if _alive(coord, q.source):
                    live.append(q)
                elif not q.future.done():
                    q.future.set_exception(WebhookError(404, "the source was dropped"))
            by_source: dict[str, list[_Queued]] = {}
            for q in live:
                by_source.setdefault(q.source, []).append(q)
            writes = {id: rows_batch(qs[0].spec, [q.decoded for q in qs]) for id, qs in by_source.items()}
            for id, batch in writes.items():
                self.statistics(id).updates_staged += batch.num_rows
            ts = await coord.write_locked(writes) if writes else None
        for id, qs in by_source.items():
            s = self.statistics(id)
            s.updates_committed += writes[id].num_rows
            s.offset_known = s.offset_committed = s.offset_committed + len(qs)
            s.write_frontier = ts + 1
        for q in live:
            if not q.future.done():
                q.future.set_result(None)


def _is_webhook(item: CatalogItem) -> bool:
    import json
    try:
        return json.loads(item.definition or "{}").get("type") == "webhook"
    except ValueError:
        return False


def _alive(coord, id: str) -> bool:
    try:
        coord.catalog.get(id)
        return True
    except SqlError:
        return False


def _columns(check: _Check, qs: list[_Queued], catalog) -> pa.Table:
    """One row per request: the CHECK's WITH items (body as text or bytea, headers as jsonb)."""
    arrays = []
    for o in check.options:
        if o["kind"] == "headers":
            arrays.append(pa.array([canonical(dict(sorted(q.headers.items()))) for q in qs], pa.string()))
        elif o["kind"] == "body" and o["bytes"]:
            arrays.append(pa.array([q.body for q in qs], BYTEA.arrow))
        elif o["kind"] == "body":
            values = []
            for q in qs:
                try:
                    values.append(q.body.decode("utf-8"))
                except UnicodeDecodeError:
                    raise WebhookError(400, "error occurred while running validation") from None
            arrays.append(pa.array(values, TEXT.arrow))
        else:  # WITH (SECRET s): its current value, the same for every request
            from planner.webhook_check import secret_value
            try:
                value = secret_value(catalog, o)
            except SqlError:
                raise WebhookError(404, "the required auth could not be found") from None
            arrays.append(pa.array([value.encode() if o["bytes"] else value] * len(qs),
                                   BYTEA.arrow if o["bytes"] else TEXT.arrow))
    return pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])


def _evaluate(check: _Check, qs: list[_Queued], catalog) -> list:
    """Per request: True (accepted), False/None (CHECK not true), or a WebhookError. All at
    once; if that fails (one request's value errs), each alone, so one bad request fails only
    itself."""
    try:
        return check.evaluate(_columns(check, qs, catalog)).to_pylist()
    except (SqlError, WebhookError):
        if len(qs) == 1:
            return [WebhookError(400, "error occurred while running validation")]
    return [_evaluate(check, [q], catalog)[0] for q in qs]
