"""A test-only in-memory adapter that understands a handful of statements, enough to drive the
real pgwire server with real clients:

  SELECT <literal or $n[::type]> [AS name], ...      one row of values
  SELECT * FROM all_types                            one row with every supported type
  SELECT * FROM generate(n)                          n rows (i bigint, s text)
  SELECT 1/0                                         SqlError 22012
  SUBSCRIBE endless                                  RowStream: 3 batches, then waits forever
  COPY (SUBSCRIBE endless) TO STDOUT                 CopyOut: the same, endless
  COPY (SELECT * FROM generate(n)) TO STDOUT [WITH (FORMAT CSV, HEADER)]
  COPY sink FROM STDIN                               CopyIn into `self.copied`
  BEGIN / COMMIT / ROLLBACK, SET x = v, SHOW x, NOTICE
  DECLARE c CURSOR FOR SELECT * FROM generate(n); FETCH [FORWARD] n FROM c; CLOSE c
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

from dataflow.errors import SqlError, SqlState
from dataflow.types import (BOOL, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, NUMERIC, TEXT, TIMESTAMP,
                            TIMESTAMPTZ, VARCHAR, Column, SqlType, numeric)
from server.api import (CommandComplete, CopyIn, CopyOut, EmptyQuery, Outcome, Rows, RowStream,
                        Session, StatementDescription)

TYPES_BY_NAME = {"bool": BOOL, "boolean": BOOL, "int2": INT2, "smallint": INT2, "int4": INT4,
                 "int": INT4, "integer": INT4, "int8": INT8, "bigint": INT8, "float4": FLOAT4,
                 "real": FLOAT4, "float8": FLOAT8, "numeric": NUMERIC, "text": TEXT,
                 "varchar": VARCHAR, "timestamp": TIMESTAMP, "timestamptz": TIMESTAMPTZ,
                 "date": DATE}
TYPES_BY_OID = {t.oid: t for t in TYPES_BY_NAME.values()}

ALL_TYPES_COLUMNS = [
    Column("b", BOOL), Column("i2", INT2), Column("i4", INT4), Column("i8", INT8),
    Column("f4", FLOAT4), Column("f8", FLOAT8), Column("n", numeric(12, 3)), Column("t", TEXT),
    Column("v", VARCHAR), Column("ts", TIMESTAMP), Column("tstz", TIMESTAMPTZ), Column("d", DATE),
]
ALL_TYPES_ROW = (True, -2, 123456, -9876543210, 1.5, 0.1, Decimal("-12345.678"), "héllo\tworld",
                 "v", datetime(2024, 2, 29, 12, 34, 56, 789000),
                 datetime(1999, 12, 31, 23, 59, 59, 500000, tzinfo=timezone.utc), date(2024, 1, 2))
GENERATE_COLUMNS = [Column("i", INT8), Column("s", TEXT)]
SUBSCRIBE_COLUMNS = [Column("mz_timestamp", NUMERIC), Column("mz_diff", INT8), Column("x", TEXT)]

_ITEM = re.compile(r"""\s*(?P<val>\$\d+|'(?:[^']|'')*'|-?\d+(?:\.\d+)?|true|false|null)
                       (?:::(?P<cast>\w+))?(?:\s+as\s+(?P<name>\w+))?\s*$""", re.I | re.X)


def _generate(n: int) -> list[tuple]:
    return [(i, f"row {i}") for i in range(n)]


async def _endless_batches(start: int = 1):
    for k in range(3):
        yield [(Decimal(1000 + k), 1, f"v{k}")]
        await asyncio.sleep(0.02)
    await asyncio.Event().wait()  # never ends: only a cancel stops it


@dataclass
class FakeState:
    cursors: dict[str, list[tuple]] = field(default_factory=dict)


class FakeAdapter:
    def __init__(self) -> None:
        self.copied: list[bytes] = []
        self.closed_sessions: list[int] = []
        self.started_sessions: list[Session] = []

    async def startup(self, session: Session) -> None:
        if session.database == "nope":
            raise SqlError("3D000", 'database "nope" does not exist')
        session.state = FakeState()
        self.started_sessions.append(session)

    async def close_session(self, session: Session) -> None:
        self.closed_sessions.append(session.pid)

    async def execute(self, session: Session, sql: str):
        for stmt in [s for s in sql.split(";")]:
            if not stmt.strip():
                continue
            yield await self._run(session, stmt.strip(), [], None)

    async def describe(self, session: Session, sql: str, param_oids: list[int]) -> StatementDescription:
        columns, param_types = self._shape(session, sql.strip().rstrip(";"), param_oids)
        return StatementDescription(param_types, columns)

    async def execute_one(self, session: Session, sql: str, params: list[Any],
                          param_types: list[SqlType]) -> Outcome:
        return await self._run(session, sql.strip().rstrip(";"), params, param_types)

    # ------------------------------------------------------------------ statement shapes

    def _select_items(self, sql: str, param_oids: list[int]):
        body = sql[len("select"):].strip()
        items = []
        for i, part in enumerate(body.split(",")):
            m = _ITEM.match(part)
            if not m:
                raise SqlError(SqlState.SYNTAX_ERROR, f"syntax error at or near {part.strip()!r}")
            val, cast, name = m.group("val"), m.group("cast"), m.group("name")
            if cast:
                t = TYPES_BY_NAME[cast.lower()]
            elif val.startswith("$"):
                k = int(val[1:]) - 1
                oid = param_oids[k] if k < len(param_oids) else 0
                t = TYPES_BY_OID.get(oid, TEXT)
            elif val.startswith("'"):
                t = TEXT
            elif val.lower() in ("true", "false"):
                t = BOOL
            elif "." in val:
                t = NUMERIC
            else:
                t = INT4 if abs(int(val)) < 2**31 else INT8
            items.append((val, t, name or "?column?"))
        return items

    def _shape(self, session: Session, sql: str, param_oids: list[int]):
        low = sql.lower()
        if low == "select * from all_types":
            return ALL_TYPES_COLUMNS, []
        if low.startswith("select * from generate"):
            return GENERATE_COLUMNS, []
        if low == "select 1/0":
            return [Column("?column?", INT4)], []
        if low.startswith("select"):
            items = self._select_items(sql, param_oids)
            nparams = len({v for v, _, _ in items if v.startswith("$")})
            types = {int(v[1:]): t for v, t, _ in items if v.startswith("$")}
            return [Column(n, t) for _, t, n in items], [types[k + 1] for k in range(nparams)]
        if low.startswith("subscribe"):
            return SUBSCRIBE_COLUMNS, []
        if low.startswith("fetch"):
            name = low.split()[-1].strip('"')
            if name not in session.state.cursors:
                raise SqlError(SqlState.INVALID_CURSOR_NAME, f'cursor "{name}" does not exist')
            return GENERATE_COLUMNS, []
        if low == "show application_name":
            return [Column("application_name", TEXT)], []
        if low.startswith("boom"):
            raise SqlError(SqlState.UNDEFINED_TABLE, 'relation "boom" does not exist')
        return None, []

    async def _run(self, session: Session, sql: str, params: list[Any], param_types) -> Outcome:
        low = sql.lower()
        st: FakeState = session.state
        if session.transaction_status == "E" and low not in ("rollback", "commit"):
            raise SqlError(SqlState.IN_FAILED_SQL_TRANSACTION, "current transaction is aborted, "
                           "commands ignored until end of transaction block")
        try:
            return await self._run_inner(session, st, sql, low, params)
        except SqlError:
            if session.transaction_status == "T":
                session.transaction_status = "E"
            raise

    async def _run_inner(self, session, st, sql, low, params) -> Outcome:
        if low in ("begin", "start transaction"):
            session.transaction_status = "T"
            return CommandComplete("BEGIN")
        if low in ("commit", "rollback"):
            tag = "ROLLBACK" if low == "rollback" or session.transaction_status == "E" else "COMMIT"
            session.transaction_status = "I"
            st.cursors.clear()
            return CommandComplete(tag)
        if low == "select 1/0":
            raise SqlError(SqlState.DIVISION_BY_ZERO, "division by zero")
        if low == "select * from all_types":
            return Rows(ALL_TYPES_COLUMNS, [ALL_TYPES_ROW])
        if m := re.fullmatch(r"select \* from generate\((\d+)\)", low):
            return Rows(GENERATE_COLUMNS, _generate(int(m.group(1))))
        if low.startswith("select"):
            items = self._select_items(sql, [])
            values = []
            for val, t, _ in items:
                if val.startswith("$"):
                    values.append(params[int(val[1:]) - 1])
                elif val.lower() == "null":
                    values.append(None)
                elif val.startswith("'"):
                    values.append(val[1:-1].replace("''", "'"))
                elif val.lower() in ("true", "false"):
                    values.append(val.lower() == "true")
                elif t is NUMERIC:
                    values.append(Decimal(val))
                else:
                    values.append(int(val))
            cols, _ = self._shape(session, sql, [t.oid for _, t, _ in items])
            return Rows(cols, [tuple(values)])
        if low == "subscribe endless":
            return RowStream(SUBSCRIBE_COLUMNS, _endless_batches())
        if low == "copy (subscribe endless) to stdout":
            return CopyOut(SUBSCRIBE_COLUMNS, _endless_batches())
        if m := re.fullmatch(r"copy \(select \* from generate\((\d+)\)\) to stdout(.*)", low):
            opts = m.group(2)
            return CopyOut(GENERATE_COLUMNS, _once(_generate(int(m.group(1)))),
                           format="csv" if "csv" in opts else "text", header="header" in opts)
        if re.match(r"copy \"?sink\"?", low):
            async def finish(data: bytes) -> str:
                self.copied.append(data)
                return "COPY %d" % data.count(b"\n")
            return CopyIn([Column("a", INT4), Column("b", TEXT)], finish)
        if m := re.fullmatch(r"set (\w+)\s*(?:=|to)\s*'?([^']*)'?", low):
            session.vars[m.group(1)] = m.group(2)
            if m.group(1) == "application_name":
                session.pending_parameter_status.append(("application_name", m.group(2)))
            return CommandComplete("SET")
        if low == "show application_name":
            return Rows([Column("application_name", TEXT)], [(session.vars.get("application_name", ""),)])
        if low == "notice":
            session.pending_notices.append(("00000", "hello from the adapter"))
            return CommandComplete("NOTICE")
        if m := re.fullmatch(r'declare "?(\w+)"? cursor .*for select \* from generate\((\d+)\)', low):
            st.cursors[m.group(1)] = _generate(int(m.group(2)))
            return CommandComplete("DECLARE CURSOR")
        if m := re.fullmatch(r'fetch (?:forward )?(\d+|all) from "?(\w+)"?', low):
            rows = st.cursors.get(m.group(2))
            if rows is None:
                raise SqlError(SqlState.INVALID_CURSOR_NAME, f'cursor "{m.group(2)}" does not exist')
            n = len(rows) if m.group(1) == "all" else int(m.group(1))
            out, st.cursors[m.group(2)] = rows[:n], rows[n:]
            return Rows(GENERATE_COLUMNS, out, tag=f"FETCH {len(out)}")
        if m := re.fullmatch(r'close "?(\w+)"?', low):
            st.cursors.pop(m.group(1), None)
            return CommandComplete("CLOSE CURSOR")
        if low.startswith("boom"):
            raise SqlError(SqlState.UNDEFINED_TABLE, 'relation "boom" does not exist')
        if low == "crash":
            raise RuntimeError("adapter bug")
        if low == ";":
            return EmptyQuery()
        raise SqlError(SqlState.SYNTAX_ERROR, f"fake adapter does not understand: {sql}")


async def _once(rows: list[tuple]):
    yield rows
