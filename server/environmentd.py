"""environmentd: wires the coordinator, the adapter and the pgwire server into one process."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

from server.adapter import SlipstreamAdapter
from server.coordinator import Coordinator, CoordinatorConfig
from server.pgwire.server import PgServer

log = logging.getLogger("slipstream")


async def serve(host: str, port: int, config: CoordinatorConfig) -> None:
    coordinator = Coordinator(config)
    log.info("starting: data in %s, %d workers", config.data_dir, config.workers)
    await coordinator.start()
    server = PgServer(SlipstreamAdapter(coordinator), host=host, port=port)
    await server.start()
    log.info("listening for pgwire on %s:%d", host, server.port)
    print(f"slipstream: ready for connections on {host}:{server.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.ensure_future(server.serve_forever())
    await stop.wait()
    log.info("shutting down")
    serving.cancel()
    await server.close()
    await coordinator.close()


def run(host: str, port: int, data_dir: Path, workers: int, spark_master: str | None,
        advertise_host: str) -> None:
    try:
        import uvloop
        uvloop.install()
    except ImportError:  # uvloop is a dependency; fall back only where it cannot build
        pass
    config = CoordinatorConfig(data_dir=data_dir.resolve(), workers=workers, spark_master=spark_master,
                               advertise_host=advertise_host)
    asyncio.run(serve(host, port, config))
