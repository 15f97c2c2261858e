"""Protocol and statement fuzzing of a running server: it must never crash or hang, a bad
connection gets an error or is closed, and other sessions keep working.

    stats = fuzz_server(host, port, seconds=20, seed=1)      # tests/fuzz/test_protocol_fuzz.py
    scripts/protocol_fuzz --seconds 600 --seed 7             # the long run (own server)

Each round opens a session and does one of: a statement mutated from a corpus of valid ones
(truncated, tokens dropped, doubled, swapped or replaced, deep nesting, odd characters) sent as
a simple query and through the extended protocol; random bytes; a message cut short; a length
field far larger than what follows; extended-protocol messages out of order (Execute of a portal
never bound, Bind to an unknown statement, wrong parameter counts, COPY data outside COPY, ...).
After a statement the same session must still answer `SELECT 1` (a SQL error never ends a
session); after a protocol violation the server may close it. Every few rounds a separate
health session checks a table's contents. Internal errors (SQLSTATE XX000) are collected: a
malformed statement deserves a user error, so each one is a defect to fix.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from dataclasses import dataclass, field

from tests.pgwire.pgwire_raw_client import RawClient

CORPUS = (
    "SELECT 1",
    "SELECT a, b FROM fz WHERE a > 1 ORDER BY a LIMIT 3",
    "SELECT count(*), sum(a), avg(b::numeric) FROM fz GROUP BY a % 3 HAVING count(*) > 0",
    "SELECT * FROM fz a JOIN fz b ON a.a = b.a LEFT JOIN fz c USING (a)",
    "SELECT a FROM fz WHERE a IN (SELECT a FROM fz WHERE b IS NOT NULL) OR EXISTS (SELECT 1)",
    "WITH x AS (SELECT a FROM fz) SELECT * FROM x UNION ALL SELECT 2 EXCEPT SELECT 3",
    "SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM fz",
    "SELECT 'text'::text || lower('X'), '{1,2}'::int[], '{\"k\": 1}'::jsonb -> 'k', now()",
    "SELECT CASE WHEN a > 0 THEN 'p' ELSE NULL END, coalesce(b, 0), a::float8 / 3 FROM fz",
    "SELECT date_trunc('day', timestamp '2024-01-02 03:04:05'), interval '1 day' * 2",
    "SELECT substring('hello' FROM 2 FOR 3), 1.5e3::numeric(10, 2), -2147483648::int4",
    "INSERT INTO fz VALUES (1, 2), (3, NULL)",
    "UPDATE fz SET b = b + 1 WHERE a = 1",
    "DELETE FROM fz WHERE a = 3",
    "CREATE TABLE fz_t (x int, y text)",
    "CREATE VIEW fz_v AS SELECT a, count(*) AS n FROM fz GROUP BY a",
    "CREATE MATERIALIZED VIEW fz_m AS SELECT a, sum(b) AS s FROM fz GROUP BY a",
    "CREATE INDEX fz_i ON fz (a)",
    "DROP VIEW IF EXISTS fz_v",
    "DROP TABLE IF EXISTS fz_t CASCADE",
    "EXPLAIN SELECT * FROM fz WHERE a = 1",
    "SHOW ALL", "SHOW TABLES", "SET search_path = public", "SET statement_timeout = '2s'",
    "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT s", "PREPARE p AS SELECT $1::int", "EXECUTE p(1)",
    "DECLARE c CURSOR FOR SELECT 1", "FETCH ALL c",
    "SUBSCRIBE (SELECT 1) UP TO 0", "COPY (SELECT 1) TO STDOUT",
    "SELECT pg_catalog.format_type(23, NULL), current_setting('server_version')",
    "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace",
    "SELECT * FROM generate_series(1, 5) AS g WHERE g % 2 = 0",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
)
_WORDS = ("SELECT", "FROM", "WHERE", "(", ")", ",", "'", '"', "::", "NULL", "AS", "JOIN", "ON",
          "GROUP BY", "ORDER BY", "UNION", "*", "-", "+", "/", "%", "||", "[", "]", "$1", "$99",
          "E'\\x'", "1e999", "9223372036854775808", "--", "/*", "ARRAY[", "ROW(", "\x00", "é", "\U0001f600",
          "CAST(", "INTERVAL", "TABLE", "VALUES", "LATERAL", "OVER (", "FILTER", ";")
STATEMENT_WAIT_SECONDS = 30  # the server under test runs with a shorter statement_timeout


def _msg(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack(">i", len(body) + 4) + body


def _cstr(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass").replace(b"\x00", b"") + b"\x00"


def mutate(rng: random.Random, sql: str) -> str:
    """A statement near a valid one."""
    tokens = sql.split(" ")
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        i = rng.randrange(len(tokens))
        if op == 0:
            return " ".join(tokens)[: rng.randrange(len(sql) + 1)]      # cut short
        if op == 1 and len(tokens) > 1:
            del tokens[i]
        elif op == 2:
            tokens.insert(i, tokens[i])
        elif op == 3:
            j = rng.randrange(len(tokens))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == 4:
            tokens[i] = rng.choice(_WORDS)
        elif op == 5:
            tokens.insert(i, rng.choice(_WORDS))
        elif op == 6:
            depth = rng.choice((50, 500, 5000))
            tokens.insert(i, "(" * depth + "1" + ")" * depth)
        else:
            tokens[i] = tokens[i] * rng.randint(2, 200)
    return " ".join(tokens)


@dataclass
class FuzzStats:
    rounds: int = 0
    statements: int = 0
    protocol_rounds: int = 0
    closed_by_server: int = 0
    errors: int = 0
    internal_errors: list[str] = field(default_factory=list)
    health_checks: int = 0


class _Session(RawClient):
    """A raw protocol session that also gets through COPY and closes politely."""

    def until_ready(self) -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            kind, body = self.read_message()
            if kind == b"d":   # COPY TO STDOUT data: not kept
                continue
            out.append((kind, body))
            if kind == b"Z":
                return out
            if kind == b"G":   # COPY FROM STDIN: refuse it
                self.send(_msg(b"f", _cstr("fuzz")))

    def close(self) -> None:
        try:
            self.send(_msg(b"X"))
        except OSError:
            pass
        super().close()


def _sqlstates(messages: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    out = []
    for kind, body in messages:
        if kind == b"E":
            fields = {chr(p[0]): p[1:].decode("utf-8", "replace") for p in body.split(b"\x00") if p}
            out.append((fields.get("C", ""), fields.get("M", "")))
    return out


def _protocol_noise(rng: random.Random) -> bytes:
    choice = rng.randrange(6)
    if choice == 0:
        return rng.randbytes(rng.randint(1, 512))
    if choice == 1:   # cut short: the length promises more than follows, then the session ends
        return _msg(b"Q", _cstr("SELECT 1"))[: rng.randint(1, 8)]
    if choice == 2:   # a length far beyond any message
        return rng.choice((b"Q", b"P", b"B", b"d")) + struct.pack(">i", rng.choice((2 ** 31 - 1, 1 << 30, -5, 2)))
    if choice == 3:   # an unknown message type
        return _msg(bytes([rng.choice(b"AaGgIJjLlMNORTUVWYyZz\x00\xff")]), rng.randbytes(rng.randint(0, 32)))
    if choice == 4:   # a parameter count that does not match the data
        return _msg(b"P", _cstr("s") + _cstr("SELECT $1") + struct.pack(">h", 3) + struct.pack(">i", 23)) + _msg(b"S")
    return _msg(b"B", _cstr("") + _cstr("s") + struct.pack(">hh", 0, 5) + struct.pack(">i", 100) + b"x") + _msg(b"S")


def _out_of_order(rng: random.Random) -> bytes:
    """Well-formed messages in an order the protocol does not allow; ends with Sync."""
    parts = [
        _msg(b"E", _cstr("nope") + struct.pack(">i", 0)),
        _msg(b"B", _cstr("") + _cstr("unknown") + struct.pack(">hhh", 0, 0, 0)),
        _msg(b"D", b"S" + _cstr("unknown")), _msg(b"D", b"X" + _cstr("")), _msg(b"C", b"P" + _cstr("nope")),
        _msg(b"d", rng.randbytes(16)), _msg(b"c"), _msg(b"f", _cstr("x")), _msg(b"H"),
        _msg(b"F", struct.pack(">i", 1234) + struct.pack(">hh", 0, 0) + struct.pack(">h", 0)),
        _msg(b"P", _cstr("") + _cstr(rng.choice(CORPUS)) + struct.pack(">h", 1) + struct.pack(">i", rng.randrange(1 << 31))),
    ]
    rng.shuffle(parts)
    return b"".join(parts[: rng.randint(1, len(parts))]) + _msg(b"S")


def _statement_round(rng, session: _Session, stats: FuzzStats) -> bool:
    """One statement and the session's check; False when the session cannot be used further."""
    sql = mutate(rng, rng.choice(CORPUS)) if rng.random() < 0.85 else rng.choice(CORPUS)
    stats.statements += 1
    if rng.random() < 0.5:
        session.send(_msg(b"Q", _cstr(sql)))
    else:   # the extended protocol: parse, describe, bind with no parameters, execute
        session.send(_msg(b"P", _cstr("") + _cstr(sql) + struct.pack(">h", 0)) + _msg(b"D", b"S" + _cstr(""))
                     + _msg(b"B", _cstr("") + _cstr("") + struct.pack(">hhh", 0, 0, 0))
                     + _msg(b"E", _cstr("") + struct.pack(">i", 0)) + _msg(b"S"))
    try:
        replies = session.until_ready()
    except socket.timeout:
        if "SUBSCRIBE" in sql.upper():
            return False   # a subscription without an end streams until the session closes
        raise AssertionError(f"no answer within {STATEMENT_WAIT_SECONDS} s to {sql[:200]!r}") from None
    for code, message in _sqlstates(replies):
        stats.errors += 1
        if code == "XX000":
            stats.internal_errors.append(f"{message} <- {sql[:300]!r}")
    # The session survives a SQL error of any kind.
    session.send(_msg(b"Q", _cstr("ROLLBACK")) + _msg(b"Q", _cstr("SELECT 1")))
    session.until_ready()
    answer = session.until_ready()
    assert any(kind == b"D" for kind, _ in answer), f"the session stopped answering after {sql[:200]!r}"
    return True


def fuzz_server(host: str, port: int, seconds: float, seed: int, user: str = "slipstream",
                database: str = "slipstream", health=None) -> FuzzStats:
    """Fuzz for `seconds`; `health()` (a separate session's check) runs every 20 rounds and at the
    end. Raises AssertionError when the server stops answering."""
    rng = random.Random(seed)
    stats = FuzzStats()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        stats.rounds += 1
        session = _Session(host, port, timeout=STATEMENT_WAIT_SECONDS)
        try:
            session.startup(user=user, database=database)
            if rng.random() < 0.6:
                for _ in range(rng.randint(1, 5)):
                    if not _statement_round(rng, session, stats):
                        break
            else:
                stats.protocol_rounds += 1
                session.send(_out_of_order(rng) if rng.random() < 0.5 else _protocol_noise(rng))
                try:
                    session.sock.settimeout(5)
                    session.until_ready()
                except EOFError:
                    stats.closed_by_server += 1
                except (socket.timeout, ConnectionResetError):
                    pass   # still waiting for the rest of a message it was promised: fine
        except (EOFError, ConnectionResetError, BrokenPipeError) as e:
            raise AssertionError(f"the server closed a session after a statement (round {stats.rounds}): {e}")
        finally:
            session.close()
        if health is not None and stats.rounds % 20 == 0:
            health()
            stats.health_checks += 1
    if health is not None:
        health()
        stats.health_checks += 1
    return stats


def prepare(dsn: str):
    """Create the tables the corpus reads; returns the health check (a separate session reads a
    table no fuzzed statement writes)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE fz (a int, b int)")
        conn.execute("CREATE TABLE fz_health (k int)")
        conn.execute("INSERT INTO fz_health SELECT generate_series(1, 100)")

    def health() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            assert c.execute("SELECT count(*), sum(k) FROM fz_health").fetchone() == (100, 5050)
    return health


def main(argv: list[str] | None = None) -> int:
    """scripts/protocol_fuzz: the long run, against a server of its own."""
    import argparse
    import dataclasses
    import json
    import tempfile
    from pathlib import Path

    from tests.support.slipstream_server import SlipstreamServer

    ap = argparse.ArgumentParser(description="Protocol and statement fuzzing of a Slipstream server.")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="protocol_fuzz_"))
    server = SlipstreamServer.start(data_dir=workdir / "data", log_file=workdir / "server.log",
                                    extra_args=("--statement-timeout", "10s"))
    try:
        stats = fuzz_server(server.host, server.port, args.seconds, args.seed, health=prepare(server.dsn))
        print(json.dumps({"seed": args.seed, **dataclasses.asdict(stats)}, indent=2))
        return 1 if stats.internal_errors or server.process.poll() is not None else 0
    except AssertionError as e:
        print(f"FAILED (seed {args.seed}): {e}\nserver log: {workdir / 'server.log'}")
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
