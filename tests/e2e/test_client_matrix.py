"""The per-client end-to-end matrix (issue 9): every common client runs one scenario, the same way
against Slipstream and against a real PostgreSQL 15 (`pg_oracle`), and the answers must be equal.

Clients: psycopg 3, psycopg2, asyncpg, pg8000, SQLAlchemy 2 (+ pandas), node-postgres
(tests/e2e/node/matrix.js), pgJDBC (tests/e2e/jdbc/Matrix.java) and psql. Steps (the columns of
the matrix in docs/clients/README.md):

- connect: with SCRAM-SHA-256 over TLS (sslmode=require) to the run's auth/TLS server
  (tests/e2e/conftest.py `auth_tls_server`, shared with test_auth_tls.py);
- DDL, parameterised inserts of every common type (ALL_TYPES), a materialized view that reflects
  a later insert (PostgreSQL's is REFRESHed first: Slipstream keeps its own current), a
  parameterised SELECT, the client's own introspection, COPY in and out, cursor FETCH;
- SUBSCRIBE with cancel (Slipstream only: PostgreSQL has no SUBSCRIBE), checked against the rows
  the table holds.

One shared server; every object is named with the test's unique prefix and dropped at the end.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import os
import shutil
import signal
import ssl
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import asyncpg
import psycopg
import pytest
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb

from tests.support.auth_server import DEFAULT_PASSWORD
from tests.support.clients import psql, psql_argv
from tests.support.subscribe import PsqlCopyReader, parse_copy_text
from tests.support.jdbc import pgjdbc_jar

psycopg2 = pytest.importorskip("psycopg2")
psycopg2_extras = pytest.importorskip("psycopg2.extras")
pg8000 = pytest.importorskip("pg8000.native")
sa = pytest.importorskip("sqlalchemy")
pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.e2e

E2E = Path(__file__).parent
JAR = pgjdbc_jar()

# Every common type, one column each.
COLUMNS = [("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("n", "numeric(12,3)"), ("f4", "float4"),
           ("f8", "float8"), ("b", "bool"), ("t", "text"), ("vc", "varchar(10)"), ("c", "char(4)"),
           ("by", "bytea"), ("d", "date"), ("tm", "time"), ("ts", "timestamp"), ("tz", "timestamptz"),
           ("iv", "interval"), ("u", "uuid"), ("j", "jsonb"), ("ia", "int[]"), ("ta", "text[]")]
DDL = "CREATE TABLE {p}all (" + ", ".join(f"{n} {t}" for n, t in COLUMNS) + ")"
UTC = dt.timezone.utc
ROWS = [
    (1, 100000, 2 ** 40, Decimal("12345.678"), 1.5, 2.25, True, "text é", "varchar", "ab", b"\x00\xff",
     dt.date(2024, 2, 29), dt.time(12, 34, 56, 789000), dt.datetime(2024, 1, 2, 3, 4, 5, 6),
     dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), dt.timedelta(days=1, seconds=3),
     uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), {"a": [1, None], "b": "x"}, [1, None, 3], ["a b", None, ""]),
    (2, -2147483648, -(2 ** 63), Decimal("-0.001"), -0.25, 1e300, False, "", "v", "abcd", b"",
     dt.date(1999, 12, 31), dt.time(0, 0), dt.datetime(1999, 12, 31, 23, 59, 59),
     dt.datetime(2000, 6, 1, 12, 0, tzinfo=UTC), dt.timedelta(0), uuid.UUID(int=0), [], [], []),
]
LATER = (-32768, 3) + (None,) * (len(COLUMNS) - 2)  # inserted after the view: NULL but i2, i4
MV = "CREATE MATERIALIZED VIEW {p}mv AS SELECT count(*) AS n, count(t) AS nt, sum(i8) AS s, max(i4) AS m FROM {p}all"
VIEW = "CREATE VIEW {p}v AS SELECT i4, t, j FROM {p}all"
MV_AFTER = (3, 2, Decimal(2 ** 40 - 2 ** 63), 100000)
SELECT = "SELECT * FROM {p}all WHERE i4 >= {a} AND (u = {b} OR d = {c} OR t IS NULL) ORDER BY i4"
SELECT_ARGS = (-2147483648, uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), dt.date(1999, 12, 31))
COPY_OUT = "COPY (SELECT * FROM {p}all ORDER BY i4) TO STDOUT"
DROP = ["DROP MATERIALIZED VIEW IF EXISTS {p}mv", "DROP VIEW IF EXISTS {p}v", "DROP TABLE IF EXISTS {p}all",
        "DROP TABLE IF EXISTS {p}cin"]


@dataclass(frozen=True)
class Target:
    """One server as a client sees it."""
    name: str  # "slipstream" or "postgres"
    host: str
    port: int
    user: str
    database: str

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def is_postgres(self) -> bool:
        return self.name == "postgres"


@pytest.fixture(scope="module")
def targets(slipstream, pg_oracle):
    return (Target("slipstream", slipstream.host, slipstream.port, "slipstream", "slipstream"),
            Target("postgres", pg_oracle.host, pg_oracle.port, pg_oracle.user, "postgres"))


def both(targets, scenario, *args):
    """Run `scenario(target, *args)` against Slipstream and PostgreSQL; (ours, theirs)."""
    return tuple(scenario(t, *args) for t in targets)


def assert_same(ours, theirs):
    if ours != theirs:
        keys = ours.keys() if isinstance(ours, dict) else [None]
        for k in keys:
            a, b = (ours[k], theirs.get(k)) if k is not None else (ours, theirs)
            assert a == b, f"step {k!r} differs:\nslipstream: {a!r}\npostgres:   {b!r}"
    assert ours == theirs


def insert_later_thread(target: Target, sql: str, delay: float = 0.5) -> threading.Timer:
    def run():
        with psycopg.connect(target.dsn, autocommit=True) as conn:
            conn.execute(sql)
    timer = threading.Timer(delay, run)
    timer.start()
    return timer


# ---------------------------------------------------------------------------------------------
# connect: SCRAM-SHA-256 over TLS (sslmode=require) to the auth/TLS server


CURRENT = "SELECT current_user, 6 * 7"


def _tls_psycopg(server) -> tuple:
    with psycopg.connect(host="localhost", port=server.port, user="slipstream", password=DEFAULT_PASSWORD,
                         dbname="slipstream", sslmode="require", connect_timeout=10) as conn:
        assert conn.pgconn.ssl_in_use
        return conn.execute(CURRENT).fetchone()


def _tls_psycopg2(server) -> tuple:
    conn = psycopg2.connect(host="localhost", port=server.port, user="slipstream", password=DEFAULT_PASSWORD,
                            dbname="slipstream", sslmode="require", connect_timeout=10)
    try:
        assert conn.info.ssl_in_use
        cur = conn.cursor()
        cur.execute(CURRENT)
        return cur.fetchone()
    finally:
        conn.close()


def _no_verify() -> ssl.SSLContext:
    ctx = ssl.create_default_context()  # sslmode=require: encrypted, certificate not checked
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _tls_asyncpg(server) -> tuple:
    async def run():
        conn = await asyncpg.connect(host="localhost", port=server.port, user="slipstream",
                                     password=DEFAULT_PASSWORD, database="slipstream", ssl="require", timeout=30)
        try:
            assert conn.get_server_pid() > 0
            return tuple(await conn.fetchrow(CURRENT))
        finally:
            await conn.close()
    return asyncio.run(run())


def _tls_pg8000(server) -> tuple:
    conn = pg8000.Connection("slipstream", host="localhost", port=server.port, database="slipstream",
                             password=DEFAULT_PASSWORD, ssl_context=_no_verify(), timeout=30)
    try:
        return tuple(conn.run(CURRENT)[0])
    finally:
        conn.close()


def _tls_sqlalchemy(server) -> tuple:
    url = sa.engine.URL.create("postgresql+psycopg", username="slipstream", password=DEFAULT_PASSWORD,
                               host="localhost", port=server.port, database="slipstream",
                               query={"sslmode": "require"})
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            return tuple(conn.execute(sa.text(CURRENT)).one())
    finally:
        eng.dispose()


def _tls_psql(server) -> tuple:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGPASSWORD"] = DEFAULT_PASSWORD
    done = subprocess.run(["psql", "-X", "-w", "-At", "-F", "|", "-c", CURRENT, "-c", r"\conninfo",
                           f"host=localhost port={server.port} user=slipstream dbname=slipstream sslmode=require"],
                          capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    answer, conninfo = done.stdout.strip().split("\n", 1)
    assert "SSL connection (protocol: TLS" in conninfo, conninfo
    user, n = answer.split("|")
    return user, int(n)


TLS_CLIENTS = {"psycopg": _tls_psycopg, "psycopg2": _tls_psycopg2, "asyncpg": _tls_asyncpg,
               "pg8000": _tls_pg8000, "sqlalchemy": _tls_sqlalchemy, "psql": _tls_psql}


@pytest.mark.parametrize("client", list(TLS_CLIENTS))
def test_connect_scram_over_tls(auth_tls_server, client):
    assert TLS_CLIENTS[client](auth_tls_server) == ("slipstream", 42)


# ---------------------------------------------------------------------------------------------
# psycopg 3


def _psycopg_row(row):
    return tuple(Jsonb(v) if i == 17 and v is not None else v for i, v in enumerate(row))


def _psycopg3(target: Target, p: str) -> dict:
    out: dict = {}
    ph = ", ".join(["%s"] * len(COLUMNS))
    with psycopg.connect(target.dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(DDL.format(p=p))
        conn.execute(VIEW.format(p=p))
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {p}all VALUES ({ph})", [_psycopg_row(r) for r in ROWS])
        conn.execute(MV.format(p=p))
        conn.execute(f"INSERT INTO {p}all VALUES ({ph})", _psycopg_row(LATER))
        if target.is_postgres:
            conn.execute(f"REFRESH MATERIALIZED VIEW {p}mv")
        out["mv"] = conn.execute(f"SELECT * FROM {p}mv").fetchall()
        sel = SELECT.format(p=p, a="%s", b="%s", c="%s")
        out["select_text"] = conn.execute(sel, SELECT_ARGS).fetchall()
        out["select_binary"] = conn.execute(sel, SELECT_ARGS, binary=True).fetchall()
        out["typeinfo"] = [None if (i := TypeInfo.fetch(conn, name)) is None else (i.name, i.oid, i.array_oid, i.delimiter)
                           for name in ("int2", "numeric", "jsonb", "uuid", "interval", "text[]", "character varying",
                                        "no_such_type")]
        with conn.cursor().copy(COPY_OUT.format(p=p)) as copy:
            out["copy_out"] = b"".join(bytes(b) for b in copy).decode()
        conn.execute(DDL.format(p=p).replace(f"{p}all", f"{p}cin"))
        with conn.cursor().copy(f"COPY {p}cin FROM STDIN") as copy:
            for row in ROWS + [LATER]:
                copy.write_row(_psycopg_row(row))
        out["copy_in"] = conn.execute(f"SELECT * FROM {p}cin ORDER BY i4").fetchall()
        with conn.transaction():
            with conn.cursor(name="mx_srv") as cur:  # a server-side cursor: DECLARE + FETCH
                cur.itersize = 1
                cur.execute(f"SELECT i4, t, ia FROM {p}all ORDER BY i4")
                out["cursor"] = [cur.fetchone(), cur.fetchmany(1), cur.fetchall()]
        for stmt in DROP:
            conn.execute(stmt.format(p=p))
    return out


def test_psycopg3(targets, unique_prefix):
    ours, theirs = both(targets, _psycopg3, unique_prefix)
    assert ours["mv"] == [MV_AFTER]
    assert_same(ours, theirs)


def test_psycopg3_stream_subscribe_and_cancel(slipstream, unique_prefix):
    """`cursor.stream()` of a bare SUBSCRIBE: rows arrive as they happen; closing the generator
    cancels the statement and the connection stays usable."""
    p = unique_prefix
    with psycopg.connect(slipstream.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {p}s (id int, name text)")
        conn.execute(f"INSERT INTO {p}s VALUES (1, 'a'), (2, 'b')")
        target = Target("slipstream", slipstream.host, slipstream.port, "slipstream", "slipstream")
        timer = insert_later_thread(target, f"INSERT INTO {p}s VALUES (3, 'c')", delay=0.5)
        got = []
        cur = conn.cursor()
        stream = cur.stream(f"SUBSCRIBE {p}s")
        for row in stream:
            got.append(row)
            if len(got) == 3:
                break
        stream.close()
        timer.join()
        assert conn.execute("SELECT count(*) FROM " + f"{p}s").fetchone() == (3,)
        conn.execute(f"DROP TABLE {p}s")
    assert [d for d in (r[1] for r in got)] == [1, 1, 1]
    assert sorted(r[2:] for r in got[:2]) == [(1, "a"), (2, "b")] and got[2][2:] == (3, "c")
    assert got[0][0] == got[1][0] < got[2][0]


# ---------------------------------------------------------------------------------------------
# psycopg2


def _pg2_row(row):
    return tuple(psycopg2_extras.Json(v) if i == 17 and v is not None else v for i, v in enumerate(row))


def _psycopg2(target: Target, p: str) -> dict:
    psycopg2_extras.register_uuid()
    out: dict = {}
    ph = ", ".join(["%s"] * len(COLUMNS))
    conn = psycopg2.connect(target.dsn, connect_timeout=10)
    try:
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute(DDL.format(p=p))
        cur.execute(VIEW.format(p=p))
        cur.executemany(f"INSERT INTO {p}all VALUES ({ph})", [_pg2_row(r) for r in ROWS])
        cur.execute(MV.format(p=p))
        cur.execute(f"INSERT INTO {p}all VALUES ({ph})", _pg2_row(LATER))
        if target.is_postgres:
            cur.execute(f"REFRESH MATERIALIZED VIEW {p}mv")
        cur.execute(f"SELECT * FROM {p}mv")
        out["mv"] = cur.fetchall()
        cur.execute(SELECT.format(p=p, a="%s", b="%s", c="%s"), SELECT_ARGS)
        out["select"] = cur.fetchall()
        cur.execute(f"SELECT i4 FROM {p}all WHERE i4 = ANY(%s) AND t <> ALL(%s) ORDER BY i4",
                    ([1, 3, 5, -2147483648], ["nope"]))
        out["any_list"] = cur.fetchall()
        buf = io.StringIO()
        cur.copy_expert(COPY_OUT.format(p=p), buf)
        out["copy_out"] = buf.getvalue()
        buf = io.StringIO()
        cur.copy_expert(f"COPY (SELECT i4, t, by, j FROM {p}all ORDER BY i4) TO STDOUT WITH (FORMAT csv, HEADER)", buf)
        out["copy_out_csv"] = buf.getvalue()
        cur.execute(DDL.format(p=p).replace(f"{p}all", f"{p}cin"))
        cur.copy_expert(f"COPY {p}cin FROM STDIN", io.StringIO(out["copy_out"]))
        cur.execute(f"SELECT * FROM {p}cin ORDER BY i4")
        out["copy_in"] = cur.fetchall()
        conn.autocommit = False
        named = conn.cursor("mx_named")  # DECLARE "mx_named" CURSOR WITHOUT HOLD ... FETCH FORWARD n
        named.itersize = 1
        named.execute(f"SELECT i4, t, ia FROM {p}all ORDER BY i4")
        out["named_cursor"] = [named.fetchone(), named.fetchmany(1), list(named)]
        named.close()
        conn.rollback()
        conn.autocommit = True
        for stmt in DROP:
            cur.execute(stmt.format(p=p))
    finally:
        conn.close()
    return out


def test_psycopg2(targets, unique_prefix):
    ours, theirs = both(targets, _psycopg2, unique_prefix)
    assert ours["mv"] == [MV_AFTER]
    assert_same(ours, theirs)


def _declare_fetch_subscribe(fetch_all, execute, insert):
    """DECLARE ... CURSOR FOR SUBSCRIBE inside BEGIN, FETCH until the snapshot and one later change
    arrived, then CLOSE and COMMIT. `fetch_all(sql)` returns rows as tuples."""
    execute("BEGIN")
    execute(f"DECLARE mx_sub CURSOR FOR SUBSCRIBE {insert.table}")
    rows: list[tuple] = []
    deadline = time.monotonic() + 60
    inserted = False
    while len(rows) < 3:
        assert time.monotonic() < deadline, f"SUBSCRIBE did not deliver; got {rows}"
        rows.extend(tuple(r) for r in fetch_all("FETCH ALL mx_sub WITH (timeout = '1s')"))
        if len(rows) >= 2 and not inserted:
            insert()
            inserted = True
    execute("CLOSE mx_sub")
    execute("COMMIT")
    return rows


class _LaterInsert:
    def __init__(self, server, table: str):
        self.server, self.table = server, table

    def __call__(self):
        with psycopg.connect(self.server.dsn, autocommit=True) as conn:
            conn.execute(f"INSERT INTO {self.table} VALUES (3, 'c')")


def _check_subscribe_rows(rows):
    assert [int(r[1]) for r in rows] == [1, 1, 1], rows
    assert sorted(tuple(r[2:]) for r in rows[:2]) == [(1, "a"), (2, "b")] and tuple(rows[2][2:]) == (3, "c")
    assert rows[0][0] == rows[1][0] < rows[2][0]


@pytest.fixture
def sub_table(slipstream, unique_prefix):
    table = f"{unique_prefix}s"
    with psycopg.connect(slipstream.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (id int, name text)")
        conn.execute(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')")
    yield table
    with psycopg.connect(slipstream.dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {table}")


def test_psycopg2_declare_fetch_subscribe(slipstream, sub_table):
    conn = psycopg2.connect(slipstream.dsn)
    conn.autocommit = True
    cur = conn.cursor()

    def fetch_all(sql):
        cur.execute(sql)
        return cur.fetchall()

    try:
        rows = _declare_fetch_subscribe(fetch_all, cur.execute, _LaterInsert(slipstream, sub_table))
    finally:
        conn.close()
    _check_subscribe_rows(rows)


# ---------------------------------------------------------------------------------------------
# asyncpg: binary everything, its type introspection (int[], text[], jsonb, uuid ...), cursors,
# binary COPY in (copy_records_to_table), COPY out (copy_from_query)


def _apg_row(row):
    return tuple(json.dumps(v) if i == 17 and v is not None else v for i, v in enumerate(row))


async def _asyncpg_async(target: Target, p: str) -> dict:
    out: dict = {}
    ph = ", ".join(f"${i + 1}" for i in range(len(COLUMNS)))
    conn = await asyncpg.connect(target.dsn, timeout=30, statement_cache_size=0)
    try:
        await conn.execute(DDL.format(p=p))
        await conn.execute(VIEW.format(p=p))
        await conn.executemany(f"INSERT INTO {p}all VALUES ({ph})", [_apg_row(r) for r in ROWS])
        await conn.execute(MV.format(p=p))
        await conn.execute(f"INSERT INTO {p}all VALUES ({ph})", *_apg_row(LATER))
        if target.is_postgres:
            await conn.execute(f"REFRESH MATERIALIZED VIEW {p}mv")
        out["mv"] = [tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}mv")]
        out["select"] = [tuple(r) for r in await conn.fetch(SELECT.format(p=p, a="$1", b="$2", c="$3"), *SELECT_ARGS)]
        # Introspection of types without a preloaded codec (arrays of int2/uuid/interval/jsonb).
        out["introspect"] = tuple(await conn.fetchrow(
            "SELECT $1::int2[], $2::uuid[], $3::interval[], $4::jsonb[], $5::varchar[]",
            [1, None], [uuid.UUID(int=5)], [dt.timedelta(hours=1)], ['{"k": 1}'], ["x"]))
        stmt = await conn.prepare(f"SELECT * FROM {p}all")
        out["attributes"] = [(a.name, a.type.name, a.type.kind, a.type.schema) for a in stmt.get_attributes()]
        out["parameters"] = [(t.name, t.kind) for t in
                             (await conn.prepare(f"SELECT i4 FROM {p}all WHERE ia = $1 AND ta = $2")).get_parameters()]
        buf = io.BytesIO()
        await conn.copy_from_query(f"SELECT * FROM {p}all ORDER BY i4", output=buf)  # COPY (query) TO STDOUT
        out["copy_out"] = buf.getvalue().decode()
        await conn.execute(DDL.format(p=p).replace(f"{p}all", f"{p}cin"))
        out["copy_in_status"] = await conn.copy_records_to_table(f"{p}cin", records=[_apg_row(r) for r in ROWS + [LATER]])
        out["copy_in"] = [tuple(r) for r in await conn.fetch(f"SELECT * FROM {p}cin ORDER BY i4")]
        async with conn.transaction():
            cur = await conn.cursor(f"SELECT i4, t, ia FROM {p}all ORDER BY i4")  # Execute with max_rows
            out["cursor"] = [[tuple(r) for r in await cur.fetch(1)], tuple(await cur.fetchrow()),
                             [tuple(r) for r in await cur.fetch(5)]]
            out["cursor_iter"] = [tuple(r) async for r in conn.cursor(f"SELECT i4 FROM {p}all ORDER BY i4",
                                                                       prefetch=1)]
        for s in DROP:
            await conn.execute(s.format(p=p))
    finally:
        await conn.close()
    return out


def _asyncpg(target: Target, p: str) -> dict:
    return asyncio.run(asyncio.wait_for(_asyncpg_async(target, p), 120))


def test_asyncpg(targets, unique_prefix):
    ours, theirs = both(targets, _asyncpg, unique_prefix)
    assert ours["mv"] == [MV_AFTER]
    assert_same(ours, theirs)


def test_asyncpg_declare_fetch_subscribe_and_cancel(slipstream, sub_table):
    """DECLARE ... FOR SUBSCRIBE + FETCH, then a bare SUBSCRIBE cancelled by cancelling its task."""
    async def run():
        conn = await asyncpg.connect(slipstream.dsn, timeout=30, statement_cache_size=0)
        try:
            async def fetch_all(sql):
                return await conn.fetch(sql)
            await conn.execute("BEGIN")
            await conn.execute(f"DECLARE mx_sub CURSOR FOR SUBSCRIBE {sub_table}")
            rows: list[tuple] = []
            deadline = time.monotonic() + 60
            while len(rows) < 3:
                assert time.monotonic() < deadline, rows
                rows.extend(tuple(r) for r in await fetch_all("FETCH ALL mx_sub WITH (timeout = '1s')"))
                if len(rows) == 2:
                    await asyncio.to_thread(_LaterInsert(slipstream, sub_table))
            await conn.execute("CLOSE mx_sub")
            await conn.execute("COMMIT")
            task = asyncio.ensure_future(conn.fetch(f"SUBSCRIBE {sub_table}"))
            await asyncio.sleep(1.0)
            task.cancel()  # asyncpg sends a CancelRequest
            with pytest.raises(asyncio.CancelledError):
                await task
            return rows, await conn.fetchval(f"SELECT count(*) FROM {sub_table}")
        finally:
            await conn.close()

    rows, count = asyncio.run(asyncio.wait_for(run(), 120))
    _check_subscribe_rows(rows)
    assert count == 3


# ---------------------------------------------------------------------------------------------
# pg8000 (native API: named parameters; types sent from Python values)


def _pg8000(target: Target, p: str) -> dict:
    out: dict = {}
    names = [n for n, _ in COLUMNS]
    conn = pg8000.Connection(target.user, host=target.host, port=target.port, database=target.database, timeout=30)
    try:
        conn.run(DDL.format(p=p))
        conn.run(VIEW.format(p=p))
        ins = f"INSERT INTO {p}all VALUES (" + ", ".join(f":{n}" for n in names) + ")"
        for row in ROWS:
            conn.run(ins, **{n: (json.dumps(v) if n == "j" and v is not None else v) for n, v in zip(names, row)})
        conn.run(MV.format(p=p))
        conn.run(ins, **dict(zip(names, LATER)))
        if target.is_postgres:
            conn.run(f"REFRESH MATERIALIZED VIEW {p}mv")
        out["mv"] = conn.run(f"SELECT * FROM {p}mv")
        out["select"] = conn.run(SELECT.format(p=p, a=":a", b=":b", c=":c"),
                                 **dict(zip("abc", SELECT_ARGS)))
        out["columns"] = [(c["name"], c["type_oid"]) for c in conn.columns]
        stream = io.BytesIO()
        conn.run(COPY_OUT.format(p=p), stream=stream)
        out["copy_out"] = stream.getvalue().decode()
        conn.run(DDL.format(p=p).replace(f"{p}all", f"{p}cin"))
        conn.run(f"COPY {p}cin FROM STDIN", stream=io.BytesIO(stream.getvalue()))
        out["copy_in_count"] = conn.row_count
        out["copy_in"] = conn.run(f"SELECT * FROM {p}cin ORDER BY i4")
        conn.run("START TRANSACTION READ ONLY")
        conn.run(f"DECLARE mx_c CURSOR FOR SELECT i4, t FROM {p}all ORDER BY i4")
        out["cursor"] = [conn.run("FETCH 1 FROM mx_c"), conn.run("FETCH FORWARD 5 FROM mx_c")]
        conn.run("CLOSE mx_c")
        conn.run("COMMIT")
        for s in DROP:
            conn.run(s.format(p=p))
    finally:
        conn.close()
    return out


def test_pg8000(targets, unique_prefix):
    ours, theirs = both(targets, _pg8000, unique_prefix)
    assert ours["mv"] == [list(MV_AFTER)]
    assert_same(ours, theirs)


def test_pg8000_declare_fetch_subscribe(slipstream, sub_table):
    conn = pg8000.Connection("slipstream", host=slipstream.host, port=slipstream.port, database="slipstream")
    try:
        rows = _declare_fetch_subscribe(conn.run, conn.run, _LaterInsert(slipstream, sub_table))
    finally:
        conn.close()
    _check_subscribe_rows(rows)


# ---------------------------------------------------------------------------------------------
# SQLAlchemy 2 + pandas


def _sqlalchemy(target: Target, p: str) -> dict:
    out: dict = {}
    eng = sa.create_engine(f"postgresql+psycopg://{target.user}@{target.host}:{target.port}/{target.database}")
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(DDL.format(p=p)))
            conn.execute(sa.text(VIEW.format(p=p)))
        md = sa.MetaData()
        table = sa.Table(f"{p}all", md, autoload_with=eng)  # reflection: Inspector.get_columns & co
        out["reflected"] = [(c.name, str(c.type), c.nullable) for c in table.columns]
        with eng.begin() as conn:
            conn.execute(table.insert(), [dict(zip((n for n, _ in COLUMNS), r)) for r in ROWS])
            conn.execute(sa.text(MV.format(p=p)))
            conn.execute(table.insert(), dict(zip((n for n, _ in COLUMNS), LATER)))
            if target.is_postgres:
                conn.execute(sa.text(f"REFRESH MATERIALIZED VIEW {p}mv"))
        with eng.connect() as conn:
            out["mv"] = [tuple(r) for r in conn.execute(sa.text(f"SELECT * FROM {p}mv"))]
            q = sa.select(table).where(table.c.i4 >= sa.bindparam("a"),
                                       sa.or_(table.c.u == sa.bindparam("b"), table.c.d == sa.bindparam("c"),
                                              table.c.t.is_(None))).order_by(table.c.i4)
            out["select"] = [tuple(r) for r in conn.execute(q, dict(zip("abc", SELECT_ARGS)))]
        with eng.connect() as conn:  # stream_results: a server-side cursor (DECLARE + FETCH) read in steps
            result = conn.execution_options(stream_results=True, max_row_buffer=1).execute(
                sa.select(table.c.i4, table.c.t, table.c.ia).order_by(table.c.i4))
            out["stream_results"] = [[tuple(r) for r in part] for part in result.partitions(1)]
        insp = sa.inspect(eng)
        out["tables"] = sorted(n for n in insp.get_table_names() if n.startswith(p))
        out["views"] = sorted(n for n in insp.get_view_names() if n.startswith(p))
        out["mvs"] = sorted(n for n in insp.get_materialized_view_names() if n.startswith(p))
        out["columns"] = {rel: [(c["name"], str(c["type"]), c["nullable"], c["default"]) for c in insp.get_columns(rel)]
                          for rel in (f"{p}all", f"{p}v", f"{p}mv")}
        out["pk"] = insp.get_pk_constraint(f"{p}all")["constrained_columns"]
        out["view_definition_exists"] = bool(insp.get_view_definition(f"{p}v"))
        # pandas: read_sql of a parameterised query, to_sql of a frame (reflects, creates, inserts)
        frame = pd.read_sql(sa.text(f"SELECT i4, f8, t, ts FROM {p}all WHERE i4 > :x ORDER BY i4"), eng,
                            params={"x": 0})
        out["read_sql"] = frame.astype(object).where(frame.notna(), None).to_dict("records")
        out["to_sql_count"] = frame.to_sql(f"{p}cin", eng, index=False)
        back = pd.read_sql_table(f"{p}cin", eng)
        out["to_sql"] = (list(back.columns), [str(t) for t in back.dtypes], len(back))
        with eng.begin() as conn:
            for s in DROP:
                conn.execute(sa.text(s.format(p=p)))
    finally:
        eng.dispose()
    return out


def test_sqlalchemy_and_pandas(targets, unique_prefix):
    ours, theirs = both(targets, _sqlalchemy, unique_prefix)
    assert ours["mv"] == [MV_AFTER]
    assert ours["mvs"] == [f"{unique_prefix}mv"]
    assert_same(ours, theirs)


# ---------------------------------------------------------------------------------------------
# node-postgres (tests/e2e/node/matrix.js) and pgJDBC (tests/e2e/jdbc/Matrix.java)


@pytest.fixture(scope="module")
def node_matrix():
    node_dir = E2E / "node"
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are not installed")
    if not all((node_dir / "node_modules" / package).is_dir() for package in ("pg", "pg-copy-streams")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=node_dir, check=True,
                       timeout=300, capture_output=True)
    return ["node", str(node_dir / "matrix.js")]


def _external(cmd: list[str], *args: str, env: dict | None = None) -> dict:
    done = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_node_postgres(targets, node_matrix, unique_prefix):
    ours, theirs = (_external(node_matrix, "scenario", t.host, str(t.port), t.user, t.database, unique_prefix,
                              "1" if t.is_postgres else "0") for t in targets)
    assert ours["mv"] == [{"n": "3", "nt": "2", "s": str(MV_AFTER[2]), "m": MV_AFTER[3]}]
    # information_schema.tables lists materialized views as Materialize does (PostgreSQL omits them)
    assert {"table_name": f"{unique_prefix}mv", "table_type": "MATERIALIZED VIEW"} in ours["tables"]
    ours["tables"].remove({"table_name": f"{unique_prefix}mv", "table_type": "MATERIALIZED VIEW"})
    assert_same(ours, theirs)


def test_node_postgres_tls_and_subscribe(auth_tls_server, slipstream, node_matrix, sub_table):
    got = _external(node_matrix, "tls", "localhost", str(auth_tls_server.port), "slipstream", "slipstream", "",
                    "0", env={"PGPASSWORD": DEFAULT_PASSWORD})
    assert got == {"user": "slipstream", "ssl": True}
    got = _external(node_matrix, "subscribe", slipstream.host, str(slipstream.port), "slipstream", "slipstream",
                    sub_table, "0")  # it inserts (3, 'c') itself once the snapshot arrived
    _check_subscribe_rows([tuple(r) for r in got["declare"]])
    assert got["cancelled"] == "57014" and got["after"] == 3


@pytest.fixture(scope="module")
def jdbc_matrix(tmp_path_factory):
    if not JAR or not shutil.which("javac"):
        pytest.skip("pgjdbc jar or javac not on this machine")
    out = tmp_path_factory.mktemp("jdbc_matrix")
    subprocess.run(["javac", "-cp", JAR, "-d", str(out), str(E2E / "jdbc" / "Matrix.java")],
                   check=True, timeout=120)
    return [shutil.which("java") or "java", "-cp", f"{JAR}{os.pathsep}{out}", "Matrix"]


def test_pgjdbc(targets, jdbc_matrix, unique_prefix):
    ours, theirs = (_external(jdbc_matrix, "scenario", f"jdbc:postgresql://{t.host}:{t.port}/{t.database}?sslmode=disable",
                              t.user, "", unique_prefix, "1" if t.is_postgres else "0") for t in targets)
    assert ours["mv"] == ["3|2|" + str(MV_AFTER[2]) + "|" + str(MV_AFTER[3])]
    assert_same(ours, theirs)


def test_pgjdbc_tls_and_subscribe(auth_tls_server, slipstream, pg_oracle, jdbc_matrix, sub_table):
    url = f"jdbc:postgresql://localhost:{auth_tls_server.port}/slipstream?sslmode=require"
    assert _external(jdbc_matrix, "tls", url, "slipstream", DEFAULT_PASSWORD, "", "0") == \
        {"user": "slipstream", "ssl": True}
    ss_url = f"jdbc:postgresql://{slipstream.host}:{slipstream.port}/slipstream?sslmode=disable"
    got = _external(jdbc_matrix, "subscribe", ss_url, "slipstream", "", sub_table, "0")  # inserts (3, 'c') itself
    _check_subscribe_rows([tuple(r) for r in got["declare"]])
    # CopyOut.cancelCopy() of COPY (SUBSCRIBE ...), compared with cancelling a long COPY in
    # PostgreSQL: the same answers to the statements that follow (see Matrix.copyCancel).
    ours = _external(jdbc_matrix, "copycancel", ss_url, "slipstream", "", f"COPY (SUBSCRIBE {sub_table}) TO STDOUT", "0")
    theirs = _external(jdbc_matrix, "copycancel", f"jdbc:postgresql://{pg_oracle.host}:{pg_oracle.port}/postgres",
                       pg_oracle.user, "", "COPY (SELECT generate_series(1, 300000000)) TO STDOUT", "1")
    assert ours == theirs == {"reads": 3, "after": ["57014", "41", "42"]}


# ---------------------------------------------------------------------------------------------
# psql: the \d family compared with PostgreSQL holding the same objects, COPY in/out, and
# COPY (SUBSCRIBE ...) TO STDOUT stopped by a cancel (SIGINT makes psql send a CancelRequest)


PSQL_OBJECTS = ["CREATE TABLE mxq_t (a int NOT NULL, b text DEFAULT 'x', c numeric(8,2), d jsonb)",
                "CREATE VIEW mxq_v AS SELECT a, b FROM mxq_t",
                "CREATE MATERIALIZED VIEW mxq_mv AS SELECT a, count(*) AS n FROM mxq_t GROUP BY a",
                "CREATE INDEX mxq_ti ON mxq_t (a)",
                "CREATE INDEX mxq_mvi ON mxq_mv (n)"]


@pytest.fixture(scope="module")
def psql_objects(slipstream, pg_oracle):
    with psycopg.connect(slipstream.dsn, autocommit=True) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for stmt in PSQL_OBJECTS:
            ss.execute(stmt)
            pg.execute(stmt)
    yield
    with psycopg.connect(slipstream.dsn, autocommit=True) as ss, psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        for conn in (ss, pg):
            conn.execute("DROP MATERIALIZED VIEW mxq_mv CASCADE")
            conn.execute("DROP VIEW mxq_v")
            conn.execute("DROP TABLE mxq_t CASCADE")  # its index: Slipstream wants CASCADE (Materialize)


def _psql_both(targets, command: str, *args: str) -> tuple[list[str], list[str]]:
    out = []
    for t in targets:
        text = psql(t, command, "-F", "|", *args, user=t.user, database=t.database)
        out.append([line.replace(t.user, "OWNER") for line in text.splitlines()])
    return out[0], out[1]


@pytest.mark.parametrize("command", [r"\dm mxq_*", r"\di mxq_*", r"\d+ mxq_mv", r"\dv+ mxq_*", r"\dt mxq_*",
                                     r"\d mxq_mvi", r"\dtvmi mxq_*"])
def test_psql_describe_like_postgres(targets, psql_objects, command):
    ours, theirs = _psql_both(targets, command)
    assert ours and ours == theirs


def test_psql_describe_view_plus(targets, psql_objects):
    r"""`\d+ view`: equal to PostgreSQL's, the definition in PostgreSQL's deparsed form
    (planner/deparse.py)."""
    ours, theirs = _psql_both(targets, r"\d+ mxq_v", "-P", "tuples_only=off")
    assert ours == theirs
    assert ours[ours.index("View definition:") + 1:] == [" SELECT mxq_t.a,", "    mxq_t.b", "   FROM mxq_t;"]


def test_psql_lists_schemas_databases_roles_functions(targets, psql_objects):
    r"""\dn, \l, \du, \df. Each server's database and superuser are named after the server
    (slipstream / postgres), so owners print as OWNER. Known differences, by design (see
    docs/clients/README.md): `\dn` also lists Materialize's mz_catalog and public is owned by the
    superuser (PostgreSQL 15: pg_database_owner); the superuser has no Replication attribute
    (Slipstream has no replication protocol); there are no template databases, and a database's
    access privileges are Materialize's."""
    ours, theirs = _psql_both(targets, r"\dn")
    assert ours == ["mz_catalog|OWNER", "public|OWNER"] and theirs == ["public|pg_database_owner"]
    ours, theirs = _psql_both(targets, r"\l")
    # Name, owner, encoding, collate, ctype, ICU locale, provider equal; the access privileges
    # are Materialize's (USAGE, 'U', for PUBLIC) where PostgreSQL's are the NULL default.
    assert [line.split("|")[:7] for line in ours[:1]] == [theirs[0].split("|")[:7]] == \
        [["OWNER", "OWNER", "UTF8", "C", "C", "", "libc"]]
    assert not any(line.startswith("template") for line in ours)
    ours, theirs = _psql_both(targets, r"\du")
    assert ours == [line.replace("Replication, ", "") for line in theirs] and len(ours) == 1
    for command in (r"\df mxq_*", r"\df pg_catalog.to_hex", r"\df pg_catalog.gcd", r"\df pg_catalog.split_part"):
        ours, theirs = _psql_both(targets, command)
        assert ours == theirs, command
    # \df+: the same functions and signatures; the rest (language, source, description) is
    # PostgreSQL's implementation and not reproduced.
    ours, theirs = _psql_both(targets, r"\df+ pg_catalog.md5")
    assert [line.split("|")[:5] for line in ours] == [line.split("|")[:5] for line in theirs] and len(ours) == 2


def test_psql_copy_in_out_and_parameters(targets, unique_prefix):
    """psql's \\copy (COPY FROM STDIN / TO STDOUT through the client) and its :'variables'."""
    p = unique_prefix
    outs = []
    for t in targets:
        script = "\n".join([
            DDL.format(p=p) + ";",
            f"INSERT INTO {p}all (i4, t, n, ts, j, ia) VALUES (1, 'a', 1.5, '2024-01-02 03:04:05', '{{\"k\": [1]}}', '{{1,NULL}}');",
            f"\\copy (SELECT * FROM {p}all) TO STDOUT",
            f"\\copy {p}all (i4, t, ta) FROM STDIN",
            "2\tb\t{x,\"y z\"}",
            "\\.",
            r"\set lim 1",
            f"SELECT i4, t, ta FROM {p}all WHERE i4 > :lim ORDER BY i4;",
            f"DROP TABLE {p}all;",
        ])
        done = subprocess.run(psql_argv(t, "-F", "|", user=t.user, database=t.database), input=script,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]


def test_psql_copy_subscribe_stopped_by_cancel(slipstream, sub_table):
    reader = PsqlCopyReader(psql_argv(slipstream, "-c", f"COPY (SUBSCRIBE {sub_table}) TO STDOUT"))
    try:
        rows = [parse_copy_text(line) for line in reader.read_lines(2)]
        _LaterInsert(slipstream, sub_table)()
        rows += [parse_copy_text(line) for line in reader.read_lines(1)]
        reader.proc.send_signal(signal.SIGINT)  # psql sends a CancelRequest, as on ^C
        assert reader.proc.wait(timeout=30) == 1
        assert "canceling statement due to user request" in reader.proc.stderr.read().decode()
    finally:
        reader.close()
    _check_subscribe_rows([(int(r[0]), int(r[1]), int(r[2]), r[3]) for r in rows])
