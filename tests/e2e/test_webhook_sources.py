"""Webhook sources over real sockets: concurrent HTTP clients (http.client, keep-alive) post JSON
to `/api/webhook/<db>/<schema>/<source>`; every request answered 200 is in the source exactly
once, a materialized view over it equals the same aggregation computed here from what was sent,
and SUBSCRIBE delivers it; bad requests get Materialize's status codes; SHOW SOURCES, mz_sources
and the statistics show it; DROP SOURCE takes the endpoint away; and a kill -9 in the middle of
the posting keeps every acknowledged request (and nothing twice)."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import signal
import threading
import time
from collections import Counter, defaultdict
from urllib.parse import urlparse

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.sources import wait_for
from tests.support.subscribe import Reconstruction, psycopg_fetch_until

pytestmark = pytest.mark.e2e

KINDS = ("signup", "login", "purchase", "refund", "logout")


def post(server, path: str, body: bytes, headers: dict | None = None, method: str = "POST",
         conn: http.client.HTTPConnection | None = None) -> tuple[int, str]:
    own = conn is None
    if own:
        u = urlparse(server.http_url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        if own:
            conn.close()


def event(client: int, i: int) -> dict:
    return {"id": f"{client}-{i}", "kind": KINDS[(client * 7 + i) % len(KINDS)], "amount": (client * 31 + i) % 17}


def run_clients(server, path: str, clients: int, per_client: int, stop: threading.Event | None = None) -> list[dict]:
    """`clients` threads, each on its own keep-alive connection, posting `per_client` events;
    returns the events answered 200 (a thread stops at its first connection error)."""
    acked: list[list[dict]] = [[] for _ in range(clients)]

    def work(k: int) -> None:
        u = urlparse(server.http_url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        try:
            for i in range(per_client):
                if stop is not None and stop.is_set():
                    return
                e = event(k, i)
                try:
                    status, text = post(server, path, json.dumps(e).encode(),
                                        {"content-type": "application/json", "x-client": str(k)}, conn=conn)
                except (OSError, http.client.HTTPException):
                    return  # the server went away (the crash test)
                assert status == 200, (status, text)
                acked[k].append(e)
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [e for a in acked for e in a]


def aggregate(events: list[dict]) -> list[tuple]:
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in events:
        by[e["kind"]][0] += 1
        by[e["kind"]][1] += e["amount"]
    return sorted((k, n, total) for k, (n, total) in by.items())


def test_concurrent_posts_view_subscribe_and_status_codes(slipstream, unique_prefix):
    p = unique_prefix
    src, path = f"{p}hook", f"/api/webhook/slipstream/public/{p}hook"
    with psycopg_connect(slipstream) as conn, psycopg_connect(slipstream) as sub:
        conn.execute(f"CREATE SOURCE {src} IN CLUSTER quickstart FROM WEBHOOK BODY FORMAT JSON "
                     "INCLUDE HEADER 'x-client' AS client")
        try:
            conn.execute(f"CREATE MATERIALIZED VIEW {p}by_kind AS SELECT body->>'kind' AS kind, count(*) AS n, "
                         f"sum((body->>'amount')::int) AS total FROM {src} GROUP BY 1")
            sub.execute("BEGIN")
            sub.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {p}by_kind WITH (PROGRESS)")
            view = Reconstruction()

            sent = run_clients(slipstream, path, clients=8, per_client=200)
            assert len(sent) == 1600
            # Every acknowledged request exactly once, with its header column.
            got = conn.execute(f"SELECT body->>'id', client, (body->>'amount')::int FROM {src}").fetchall()
            assert Counter(got) == Counter((e["id"], e["id"].split("-")[0], e["amount"]) for e in sent)
            expected = aggregate(sent)
            assert sorted(conn.execute(f"SELECT kind, n, total FROM {p}by_kind").fetchall()) == expected
            view.apply(psycopg_fetch_until(sub, "c", lambda rows: _rebuilt(rows) == expected), progress=True)
            assert view.rows() == sorted((tuple(r) for r in expected), key=repr)

            # Bad requests and their status codes.
            assert post(slipstream, path, b'{"id": ')[0] == 400
            assert post(slipstream, path, b'\xff')[0] == 400
            assert post(slipstream, f"/api/webhook/slipstream/public/{p}nope", b"{}")[0] == 404
            assert post(slipstream, path, b"", method="GET")[0] == 405
            assert post(slipstream, "/elsewhere", b"{}")[0] == 404
            assert conn.execute(f"SELECT count(*) FROM {src}").fetchone()[0] == 1600

            shown = {r[0]: r[1:] for r in conn.execute("SHOW SOURCES").fetchall()}
            assert shown[src] == ("webhook", "quickstart", "")
            assert conn.execute(f"SELECT type FROM mz_sources WHERE name = '{src}'").fetchall() == [("webhook",)]
            stats = conn.execute(
                "SELECT s.messages_received, s.updates_committed, s.bytes_received, t.status, t.type "
                "FROM mz_internal.mz_source_statistics s JOIN mz_internal.mz_source_statuses t ON s.id = t.id "
                f"WHERE t.name = '{src}'").fetchone()
            assert stats[0] == 1602 and stats[1] == 1600 and stats[2] > 1600 * 40 and stats[3:] == ("running", "webhook")
            assert [c[0] for c in conn.execute(f"SELECT * FROM {src} LIMIT 0").description] == ["body", "client"]
            sub.execute("ROLLBACK")
        finally:
            conn.execute(f"DROP SOURCE IF EXISTS {src} CASCADE")
        assert post(slipstream, path, b"{}")[0] == 404  # DROP SOURCE removed the endpoint


def _rebuilt(rows: list) -> list[tuple]:
    probe = Reconstruction()
    probe.apply(rows, progress=True)
    return sorted(probe.rows())


def test_check_and_json_array(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SOURCE {p}signed FROM WEBHOOK BODY FORMAT JSON ARRAY INCLUDE HEADERS (NOT 'x-api-key') "
                     "CHECK (WITH (HEADERS, BODY AS request_body) constant_time_eq(headers->'x-api-key', 'token'))")
        try:
            path = f"/api/webhook/slipstream/public/{p}signed"
            assert post(slipstream, path, b'[{"a": 1}, {"a": 2}]', {"x-api-key": "token", "x-ev": "e"})[0] == 200
            assert post(slipstream, path, b'{"a": 3}', {"x-api-key": "wrong"}) == (400, "failed to validate the request")
            assert post(slipstream, path, b'{"a": 4}')[0] == 400
            rows = conn.execute(f"SELECT body->>'a', headers->>'x-ev', headers ? 'x-api-key' FROM {p}signed "
                                "ORDER BY 1").fetchall()
            assert rows == [("1", "e", False), ("2", "e", False)]
            with pytest.raises(psycopg.errors.UndefinedObject):
                conn.execute(f"CREATE SOURCE {p}s2 FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (SECRET {p}nope) true)")
            with pytest.raises(psycopg.errors.DuplicateTable):
                conn.execute(f"CREATE SOURCE {p}signed FROM WEBHOOK BODY FORMAT TEXT")
            conn.execute(f"CREATE SOURCE IF NOT EXISTS {p}signed FROM WEBHOOK BODY FORMAT TEXT")  # a notice
            with pytest.raises(psycopg.errors.WrongObjectType):
                conn.execute(f"INSERT INTO {p}signed VALUES ('{{}}')")
        finally:
            conn.execute(f"DROP SOURCE IF EXISTS {p}signed")


def test_check_with_a_secret(slipstream, unique_prefix):
    """WITH (SECRET s): the secret's current value (ALTER SECRET applies to the next request);
    an HMAC of the body signed with it, as Materialize documents; DROP SECRET needs CASCADE."""
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE SECRET {p}key AS 'token'")
        conn.execute(f"CREATE SOURCE {p}hooked FROM WEBHOOK BODY FORMAT JSON CHECK (WITH (HEADERS, BODY AS b, "
                     f"SECRET {p}key) decode(headers->'x-signature', 'hex') = hmac(b, {p}key, 'sha256'))")
        path = f"/api/webhook/slipstream/public/{p}hooked"

        def signed(body: bytes, key: bytes) -> dict:
            return {"x-signature": hmac.new(key, body, hashlib.sha256).hexdigest()}
        try:
            assert post(slipstream, path, b'{"n": 1}', signed(b'{"n": 1}', b"token"))[0] == 200
            assert post(slipstream, path, b'{"n": 2}', signed(b'{"n": 2}', b"other"))[0] == 400
            conn.execute(f"ALTER SECRET {p}key AS 'other'")
            assert post(slipstream, path, b'{"n": 3}', signed(b'{"n": 3}', b"other"))[0] == 200
            assert post(slipstream, path, b'{"n": 4}', signed(b'{"n": 4}', b"token"))[0] == 400
            assert conn.execute(f"SELECT body->>'n' FROM {p}hooked ORDER BY 1").fetchall() == [("1",), ("3",)]
            with pytest.raises(psycopg.errors.DependentObjectsStillExist):
                conn.execute(f"DROP SECRET {p}key")
            conn.execute(f"DROP SECRET {p}key CASCADE")
            assert post(slipstream, path, b"{}")[0] == 404  # the source went with it
        finally:
            conn.execute(f"DROP SOURCE IF EXISTS {p}hooked")
            conn.execute(f"DROP SECRET IF EXISTS {p}key")


def test_kill_9_keeps_every_acknowledged_request(fresh_slipstream):
    server = fresh_slipstream
    path = "/api/webhook/slipstream/public/crashy"
    with psycopg_connect(server) as conn:
        conn.execute("CREATE SOURCE crashy FROM WEBHOOK BODY FORMAT JSON")
    result: list[dict] = []
    poster = threading.Thread(target=lambda: result.extend(run_clients(server, path, clients=4, per_client=5000)))
    poster.start()
    deadline = time.monotonic() + 30
    with psycopg_connect(server) as conn:
        wait_for(conn, "SELECT count(*) FROM crashy", lambda n: n >= 200 or time.monotonic() > deadline)
    server.kill(signal.SIGKILL)  # in the middle of the posting
    poster.join()
    assert 200 <= len(result) < 20_000
    server.restart()
    with psycopg_connect(server) as conn:
        ids = [r[0] for r in conn.execute("SELECT body->>'id' FROM crashy").fetchall()]
        counts = Counter(ids)
        assert all(n == 1 for n in counts.values())  # nothing twice
        assert {e["id"] for e in result} <= set(counts)  # every acknowledged request
        # At most the requests in flight at the crash (one per client) beyond those acknowledged.
        assert len(counts) - len(result) <= 4
        assert post(server, path, json.dumps({"id": "after"}).encode())[0] == 200  # the endpoint is back
        assert conn.execute("SELECT count(*) FROM crashy WHERE body->>'id' = 'after'").fetchone()[0] == 1
