"""The pgwire listener: accepts connections and runs one `Connection` task per client.

    server = PgServer(adapter, host="127.0.0.1", port=0)   # auth=AuthConfig.build(...), roles=...
    await server.start()          # listening now; server.port is the bound port
    await server.serve_forever()  # or keep the loop running some other way
    await server.close()          # stop accepting, end every connection (adapter.close_session)
"""

from __future__ import annotations

import asyncio
import logging

from server.api import Adapter
from server.pgwire.auth import AuthConfig
from server.pgwire.connection import CancelRegistry, Connection
from server.pgwire.stream import WireStream

log = logging.getLogger(__name__)


class PgServer:
    def __init__(self, adapter: Adapter, host: str = "0.0.0.0", port: int = 6875,
                 auth: AuthConfig | None = None, roles=None) -> None:
        self.adapter = adapter
        self.auth = auth or AuthConfig()
        self.roles = roles  # role lookups for authentication (catalog.roles.RoleStore)
        self.host = host
        self.port = port
        self._registry = CancelRegistry()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    def _connected(self, stream: WireStream) -> None:
        conn = Connection(self.adapter, self._registry, stream, self.auth, self.roles)
        task = asyncio.get_running_loop().create_task(conn.run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: WireStream(self._connected),
                                                self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("pgwire listening on %s:%d", self.host, self.port)

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        await self._server.serve_forever()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
