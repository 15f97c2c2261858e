"""environmentd: wires the coordinator, the adapter and the pgwire server into one process."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from pathlib import Path

from catalog.roles import DEFAULT_ROLE, scram_secret
from server.adapter import SlipstreamAdapter
from server.coordinator import Coordinator, CoordinatorConfig
from server.pgwire.auth import AuthConfig
from server.pgwire.server import PgServer

log = logging.getLogger("slipstream")


def apply_default_password(catalog, password: str | None, method: str) -> None:
    """Give the default role `password` (stored as a SCRAM secret) unless it already has it;
    warn when a password method is configured and the default role has no password."""
    role = catalog.role(DEFAULT_ROLE)
    if password:
        if role.secret is None or not role.verify_password(password):
            catalog.role_store.alter(DEFAULT_ROLE, secret=scram_secret(password))
            log.info("the password of role %s was set from the server's configuration", DEFAULT_ROLE)
    elif method != "trust" and role.secret is None:
        log.warning("--auth %s, but role %s has no password: set SLIPSTREAM_DEFAULT_PASSWORD "
                    "(or --default-password-file) to log in as it", method, DEFAULT_ROLE)


async def serve(host: str, port: int, config: CoordinatorConfig, auth: AuthConfig | None = None,
                default_password: str | None = None, http_host: str | None = None,
                http_port: int = 6876) -> None:
    auth = auth or AuthConfig()
    coordinator = Coordinator(config)
    log.info("starting: data in %s, %d workers", config.data_dir, config.workers)
    await coordinator.start()
    apply_default_password(coordinator.catalog, default_password, auth.method)
    server = PgServer(SlipstreamAdapter(coordinator), host=host, port=port, auth=auth,
                      roles=coordinator.catalog.role_store)
    log.info("authentication: %s; TLS: %s", auth.method,
             "required" if auth.tls_require else "offered" if auth.tls is not None else "off")
    await server.start()
    log.info("listening for pgwire on %s:%d", host, server.port)
    from server.http.webhook import HttpServer
    http = HttpServer(coordinator.sources.webhooks, http_host or host, http_port)
    await http.start()
    log.info("listening for HTTP (webhook sources: POST /api/webhook/<database>/<schema>/<source>) on %s:%d",
             http.host, http.port)
    # What is loaded by now (modules, the catalog, Spark's py4j objects) lives as long as the
    # process: the cyclic GC need not scan it again. A full collection under load took ~50 ms,
    # a stall for every session; ~6 ms after this.
    gc.freeze()
    print(f"slipstream: ready for connections on {host}:{server.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.ensure_future(server.serve_forever())
    await stop.wait()
    log.info("shutting down")
    serving.cancel()
    await http.close()
    await server.close()
    await coordinator.close()


def run(host: str, port: int, data_dir: Path, workers: int, spark_master: str | None,
        advertise_host: str, auth: AuthConfig | None = None, default_password: str | None = None,
        replica_memory_bytes: int | None = None, http_host: str | None = None, http_port: int = 6876) -> None:
    try:
        import uvloop
        uvloop.install()
    except ImportError:  # uvloop is a dependency; fall back only where it cannot build
        pass
    config = CoordinatorConfig(data_dir=data_dir.resolve(), workers=workers, spark_master=spark_master,
                               advertise_host=advertise_host, replica_memory_bytes=replica_memory_bytes)
    asyncio.run(serve(host, port, config, auth, default_password, http_host, http_port))
