"""The webhook endpoint in-process: the real aiohttp listener on loopback, a real HTTP client, and
the coordinator's real write path (catalog, persist, timestamp oracle; the compute replica
stubbed as in tests/storage/test_source_controller.py). Status codes of good and bad requests,
rows durable in the source's shard before the 200, concurrent requests sharing commits (group
commit), DROP SOURCE taking the endpoint away, a reopened coordinator finding every
acknowledged row, and malformed HTTP answered without harming the server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp

from dataflow.batch import consolidate
from planner.parse import parse
from planner.planning import plan_statement
from server.http.webhook import HttpServer, make_app
from tests.storage.test_source_controller import open_coordinator


async def create(coord, sql: str):
    return await coord.sources.create(plan_statement(coord.catalog, parse(sql)[0]))


def shard_rows(coord, item) -> list[dict]:
    snap = coord.storage.snapshot(item.id)
    if snap is None:
        return []
    out = []
    for r in consolidate(snap).to_pylist():
        assert r["diff"] > 0
        out += [r] * r["diff"]
    return out


async def serve(coord) -> tuple[HttpServer, str]:
    http = HttpServer(coord.sources.webhooks, "127.0.0.1", 0)
    await http.start()
    return http, f"http://127.0.0.1:{http.port}/api/webhook/slipstream/public"


def test_requests_status_codes_and_durability(tmp_path: Path):
    async def main():
        coord = open_coordinator(tmp_path)
        src = await create(coord, "CREATE SOURCE events FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADER 'x-kind' AS kind")
        signed = await create(coord, "CREATE SOURCE signed FROM WEBHOOK BODY FORMAT TEXT "
                                     "CHECK (WITH (HEADERS) constant_time_eq(headers->'x-api-key', 'token'))")
        http, base = await serve(coord)
        try:
            async with aiohttp.ClientSession() as s:
                async with s.post(f"{base}/events", data=b'{"n": 1}', headers={"x-kind": "a"}) as r:
                    assert r.status == 200, await r.text()
                # Durable before the answer: the row is in the source's persist shard.
                assert [(json.loads(r["c0"]), r["c1"]) for r in shard_rows(coord, src)] == [({"n": 1}, "a")]
                async with s.post(f"{base}/events", data=b'{"n": 2}\n{"n": 3}') as r:
                    assert r.status == 200
                async with s.post(f"{base}/events", data=b'{"n": ') as r:
                    assert r.status == 400 and "failed to deserialize body as jsonb" in await r.text()
                async with s.post(f"{base}/nope", data=b"{}") as r:
                    assert r.status == 404 and "'slipstream.public.nope'" in await r.text()
                async with s.post(f"{base.replace('/public', '/other')}/events", data=b"{}") as r:
                    assert r.status == 404
                async with s.get(f"{base}/events") as r:
                    assert r.status == 405 and r.headers["Allow"] == "POST"
                async with s.put(f"{base}/events", data=b"{}") as r:
                    assert r.status == 405
                async with s.post(f"{base}/events", data=b"x" * (2 * 1024 * 1024 + 1)) as r:
                    assert r.status == 413
                async with s.post(f"{base}/signed", data=b"hi", headers={"x-api-key": "token"}) as r:
                    assert r.status == 200
                async with s.post(f"{base}/signed", data=b"no", headers={"x-api-key": "wrong"}) as r:
                    assert r.status == 400 and await r.text() == "failed to validate the request"
                async with s.post(f"{base}/signed", data=b"no") as r:
                    assert r.status == 400
                # A header given twice (aiohttp's client merges them: a raw request).
                reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
                writer.write(b"POST /api/webhook/slipstream/public/signed HTTP/1.1\r\nHost: x\r\nx-api-key: token\r\n"
                             b"X-Api-Key: token\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
                answer = await reader.read()
                writer.close()
                assert answer.startswith(b"HTTP/1.1 401") and b"x-api-key provided more than once" in answer
                async with s.post(f"{base.rsplit('/api', 1)[0]}/elsewhere", data=b"{}") as r:
                    assert r.status == 404
            assert sorted(json.loads(r["c0"])["n"] for r in shard_rows(coord, src)) == [1, 2, 3]
            assert [r["c0"] for r in shard_rows(coord, signed)] == ["hi"]
            stats = coord.sources.webhooks.stats[src.id]
            assert (stats.messages_received, stats.updates_committed, stats.offset_committed) == (3, 3, 2)
            assert stats in coord.sources.statistics()
            # DROP SOURCE: the endpoint is gone.
            await coord.drop([src.id], cascade=False)
            async with aiohttp.ClientSession() as s:
                async with s.post(f"{base}/events", data=b"{}") as r:
                    assert r.status == 404
        finally:
            await http.close()
            coord.catalog.close()

        # Reopened (as after a restart): the catalog entry and every acknowledged row are there.
        coord = open_coordinator(tmp_path)
        http, base = await serve(coord)
        try:
            again = coord.catalog.resolve(("signed",))
            assert [r["c0"] for r in shard_rows(coord, again)] == ["hi"]
            async with aiohttp.ClientSession() as s:
                async with s.post(f"{base}/signed", data=b"back", headers={"x-api-key": "token"}) as r:
                    assert r.status == 200
            assert sorted(r["c0"] for r in shard_rows(coord, again)) == ["back", "hi"]
        finally:
            await http.close()
            coord.catalog.close()

    asyncio.run(main())


def test_concurrent_requests_share_commits(tmp_path: Path):
    async def main():
        coord = open_coordinator(tmp_path)
        src = await create(coord, "CREATE SOURCE batch FROM WEBHOOK BODY FORMAT JSON ARRAY")
        http, base = await serve(coord)
        n_clients, per_client = 16, 20
        try:
            async def client(k: int, s: aiohttp.ClientSession) -> int:
                ok = 0
                for i in range(per_client):
                    body = json.dumps([{"c": k, "i": i}, {"c": k, "i": i, "dup": True}]).encode()
                    async with s.post(f"{base}/batch", data=body) as r:
                        ok += r.status == 200
                return ok
            async with aiohttp.ClientSession() as s:
                oks = await asyncio.gather(*(client(k, s) for k in range(n_clients)))
            assert oks == [per_client] * n_clients
            rows = shard_rows(coord, src)
            got = sorted((d["c"], d["i"], "dup" in d) for d in (json.loads(r["c0"]) for r in rows))
            assert got == sorted((k, i, dup) for k in range(n_clients) for i in range(per_client) for dup in (False, True))
            # Group commit: far fewer timestamps (writes) than requests.
            times = {r["time"] for r in rows}
            assert len(times) < n_clients * per_client / 2, len(times)
        finally:
            await http.close()
            coord.catalog.close()

    asyncio.run(main())


def test_too_many_requests_in_flight_is_429(tmp_path: Path):
    async def main():
        from aiohttp import web
        coord = open_coordinator(tmp_path)
        await create(coord, "CREATE SOURCE t FROM WEBHOOK BODY FORMAT TEXT")
        runner = web.AppRunner(make_app(coord.sources.webhooks, max_in_flight=1))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            # The first request holds the only slot: its body has not all arrived.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST /api/webhook/slipstream/public/t HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
            await writer.drain()
            await asyncio.sleep(0.2)
            async with aiohttp.ClientSession() as s:
                async with s.post(f"http://127.0.0.1:{port}/api/webhook/slipstream/public/t", data=b"x") as r:
                    assert r.status == 429
            writer.write(b"cd")
            await writer.drain()
            assert (await reader.readline()).startswith(b"HTTP/1.1 200")
            writer.close()
            async with aiohttp.ClientSession() as s:  # the slot is free again
                async with s.post(f"http://127.0.0.1:{port}/api/webhook/slipstream/public/t", data=b"y") as r:
                    assert r.status == 200
            assert sorted(r["c0"] for r in shard_rows(coord, coord.catalog.resolve(("t",)))) == ["abcd", "y"]
        finally:
            await runner.cleanup()
            coord.catalog.close()

    asyncio.run(main())


def test_malformed_http_does_not_harm_the_server(tmp_path: Path):
    async def main():
        coord = open_coordinator(tmp_path)
        await create(coord, "CREATE SOURCE t FROM WEBHOOK BODY FORMAT TEXT")
        http, base = await serve(coord)
        try:
            garbage = [b"\x00\xff\r\n\r\n", b"POST /api/webhook/slipstream/public/t HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                       b"POST /api/webhook/slipstream/public/t HTTP/1.1\r\nContent-Length: 10\r\n\r\nab",
                       b"NOTAMETHOD / HTTP/9.9\r\n\r\n", b"GET " + b"a" * 100_000 + b" HTTP/1.1\r\n\r\n",
                       b"POST /api/webhook/slipstream/public/t HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 20_000 + b"\r\n"]
            for g in garbage:
                reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
                writer.write(g)
                await writer.drain()
                writer.write_eof()
                try:
                    answer = await asyncio.wait_for(reader.read(200), 5)
                except (ConnectionError, asyncio.TimeoutError):
                    answer = b""
                writer.close()
                assert not answer.startswith(b"HTTP/1.1 200"), (g[:40], answer)
            # Keep-alive: several requests on one connection, then the server still answers.
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            for text in (b"one", b"two"):
                writer.write(b"POST /api/webhook/slipstream/public/t HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(text), text))
                await writer.drain()
                status = await reader.readline()
                assert status.startswith(b"HTTP/1.1 200"), status
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
            writer.close()
            async with aiohttp.ClientSession() as s:
                async with s.post(f"{base}/t", data=b"three") as r:
                    assert r.status == 200
            item = coord.catalog.resolve(("t",))
            assert sorted(r["c0"] for r in shard_rows(coord, item)) == ["one", "three", "two"]
        finally:
            await http.close()
            coord.catalog.close()

    asyncio.run(main())
