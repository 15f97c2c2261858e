"""The webhook endpoint: `POST /api/webhook/<database>/<schema>/<source>` (aiohttp, on the
server's event loop, uvloop included).

    curl -X POST http://localhost:6876/api/webhook/slipstream/public/events \\
         -H 'content-type: application/json' -d '{"kind": "signup", "n": 1}'

Answers, as Materialize's endpoint does (status, then a plain-text message):

    200  the request's rows are durable in the source (appended, fsynced, visible to reads)
    400  the body does not decode as the BODY FORMAT, or the CHECK is not true / fails
    401  a header name appears more than once
    404  no webhook source at that path (or it was dropped meanwhile)
    405  a method other than POST (with `Allow: POST`)
    413  a body over 2 MB
    429  more than 500 requests in flight at once
    500  the write failed (nothing was acknowledged)

aiohttp parses HTTP/1.1 (keep-alive, Content-Length and chunked bodies) and answers malformed
requests with 400 itself; nothing a client sends reaches past a handler's `except`. The work
itself (decoding, CHECK, group commit) is `storage/sources/webhook_ingest.py`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from aiohttp import web

from storage.sources.webhook import (MAX_BODY_BYTES, MAX_CONCURRENT_REQUESTS, WebhookError,
                                     collect_headers)
from storage.sources.webhook_ingest import WebhookIngest

log = logging.getLogger("slipstream.http")

PATH = "/api/webhook/{database}/{schema}/{name}"


def make_app(ingest: WebhookIngest, max_in_flight: int = MAX_CONCURRENT_REQUESTS) -> web.Application:
    in_flight = 0

    async def handle(request: web.Request) -> web.Response:
        nonlocal in_flight
        if request.method != "POST":
            return web.Response(status=405, text="method not allowed: POST a request to the source",
                                headers={"Allow": "POST"})
        if in_flight >= max_in_flight:
            return web.Response(status=429, text="too many requests")
        in_flight += 1
        try:
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:
                raise WebhookError(413, f"request body exceeds the maximum allowed size of {MAX_BODY_BYTES} bytes")
            headers = collect_headers(request.headers.items())
            m = request.match_info
            item = ingest.lookup(m["database"], m["schema"], m["name"])
            await ingest.submit(item, body, headers)
            return web.Response(status=200)
        except WebhookError as e:
            return web.Response(status=e.status, text=e.message)
        except Exception as e:  # noqa: BLE001 - a request must never take the server down
            log.exception("webhook request failed")
            return web.Response(status=500, text=f"internal failure: {e}")
        finally:
            in_flight -= 1

    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_route("*", PATH, handle)
    return app


@dataclass
class HttpServer:
    """The HTTP listener; `port` 0 picks a free one (then `port` is the one bound)."""

    ingest: WebhookIngest
    host: str
    port: int
    _runner: web.AppRunner | None = field(default=None, repr=False)

    async def start(self) -> None:
        self._runner = web.AppRunner(make_app(self.ingest), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True, backlog=1024)
        await site.start()
        if self.port == 0:
            self.port = self._runner.addresses[0][1]

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
