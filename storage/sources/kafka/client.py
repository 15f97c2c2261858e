"""Talking to a Kafka / Redpanda broker and a Confluent-compatible schema registry: the client
settings a connection's options make (secrets read at the moment of use, never stored
elsewhere), and the checks CREATE CONNECTION runs (as Materialize: it connects unless WITH
(VALIDATE = false)). Every network call has a bound (`TIMEOUT_S`), so an unreachable broker is
a clean error (08001), never a hang.

The Kafka client is aiokafka (asyncio, on the server's event loop); the registry is plain HTTP
(aiohttp): `GET /subjects/<subject>/versions/latest` at CREATE SOURCE, `GET /schemas/ids/<id>`
for each writer schema a message names, `POST /subjects/<subject>/versions` for a sink's schema.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from dataflow.errors import SqlError

UNABLE_TO_CONNECT = "08001"
TIMEOUT_S = 10.0


def _secret(catalog, options: dict, key: str) -> str | None:
    ref = options.get(f"{key}_secret")
    if ref is not None:
        return catalog.secrets.secret_value(ref)
    value = options.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class KafkaParams:
    brokers: tuple[str, ...]
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None

    def __repr__(self) -> str:  # never show the password (logs, errors)
        return f"KafkaParams(brokers={self.brokers!r}, security_protocol={self.security_protocol!r})"

    def client_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"bootstrap_servers": list(self.brokers), "security_protocol": self.security_protocol,
                              "request_timeout_ms": int(TIMEOUT_S * 1000), "retry_backoff_ms": 200}
        if self.security_protocol == "SASL_PLAINTEXT":
            kw.update(sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.sasl_username,
                      sasl_plain_password=self.sasl_password)
        return kw


def kafka_params(catalog, options: dict) -> KafkaParams:
    return KafkaParams(tuple(options["brokers"]), options.get("security_protocol", "PLAINTEXT"),
                       options.get("sasl_mechanism"), _secret(catalog, options, "sasl_username"),
                       _secret(catalog, options, "sasl_password"))


@dataclass(frozen=True)
class RegistryParams:
    url: str
    username: str | None = None
    password: str | None = None

    def __repr__(self) -> str:
        return f"RegistryParams(url={self.url!r})"


def registry_params(catalog, options: dict) -> RegistryParams:
    return RegistryParams(options["url"], _secret(catalog, options, "username"), _secret(catalog, options, "password"))


def _unreachable(what: str, where: str, e: BaseException) -> SqlError:
    detail = str(e) or "no answer"
    if detail.startswith("KafkaConnectionError: "):
        detail = detail[len("KafkaConnectionError: "):]
    if isinstance(e, asyncio.TimeoutError):
        detail = f"no answer within {TIMEOUT_S:g} s"
    return SqlError(UNABLE_TO_CONNECT, f"cannot connect to {what} at {where}: {detail}",
                    hint="Check the address and that it is reachable from Slipstream, or create the connection "
                         "WITH (VALIDATE = false).")


async def validate_kafka(params: KafkaParams) -> None:
    """Connect and fetch the cluster's metadata (08001 if that fails within TIMEOUT_S)."""
    from aiokafka import AIOKafkaClient
    client = AIOKafkaClient(**params.client_kwargs())
    try:
        await asyncio.wait_for(client.bootstrap(), TIMEOUT_S)
    except Exception as e:  # noqa: BLE001 - reported in the user's words
        raise _unreachable("the Kafka broker", ", ".join(params.brokers), e) from None
    finally:
        try:
            await asyncio.wait_for(client.close(), TIMEOUT_S)
        except Exception:  # noqa: BLE001 - closing a client that never connected
            pass


class Registry:
    """A schema registry client (HTTP, bounded waits), caching schemas by id."""

    def __init__(self, params: RegistryParams) -> None:
        self.params = params
        self.by_id: dict[int, str] = {}

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        import aiohttp
        auth = aiohttp.BasicAuth(self.params.username, self.params.password or "") if self.params.username else None
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT_S), auth=auth) as s:
                async with s.request(method, self.params.url + path, json=body,
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"}) as r:
                    payload = await r.json(content_type=None)
                    if r.status == 404:
                        return None
                    if r.status >= 400:
                        message = payload.get("message") if isinstance(payload, dict) else payload
                        raise SqlError(UNABLE_TO_CONNECT if r.status in (401, 403) else "XX000",
                                       f"schema registry answered {r.status}: {message}")
                    return payload
        except SqlError:
            raise
        except Exception as e:  # noqa: BLE001 - reported in the user's words
            raise _unreachable("the schema registry", self.params.url, e) from None

    async def validate(self) -> None:
        await self._request("GET", "/subjects")

    async def latest(self, subject: str) -> tuple[int, str] | None:
        """(id, schema text) of a subject's latest version, or None if it has none."""
        found = await self._request("GET", f"/subjects/{subject}/versions/latest")
        if found is None:
            return None
        self.by_id[int(found["id"])] = found["schema"]
        return int(found["id"]), found["schema"]

    async def schema(self, id: int) -> str:
        if id not in self.by_id:
            found = await self._request("GET", f"/schemas/ids/{id}")
            if found is None:
                raise SqlError("XX000", f"schema id {id} is not in the schema registry")
            self.by_id[id] = found["schema"]
        return self.by_id[id]

    async def register(self, subject: str, schema: str) -> int:
        found = await self._request("POST", f"/subjects/{subject}/versions", {"schema": schema})
        return int(found["id"])
