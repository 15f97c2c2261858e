"""A small sqllogictest runner: files of `statement` and `query` records, run against a server,
answers compared with the expected results written in the file.

Record format (the original sqllogictest's, one value per line):

    statement ok
    CREATE TABLE t (a int, b text)

    statement error [regex]
    SELECT 1/0

    query IT rowsort [label]
    SELECT a, b FROM t
    ----
    1
    x

`onlyif slipstream` marks a record of Slipstream's own behaviour (e.g. what a materialized view
refuses): `complete` keeps it as written instead of asking PostgreSQL.

Types (`?` in a file to complete: derive them from the answer): I integer, R float/numeric (printed with 3 decimals), T anything else (text, bool as
true/false, dates). NULL prints as NULL, the empty string as (empty). Sort modes: nosort (the
default: rows in the order returned), rowsort, valuesort. `# ...` lines are comments; `halt`
stops the file. `skipif slipstream` / `onlyif postgres` before a record skip it on Slipstream.

Table and view names created in a file are prefixed when it runs, so files can share a server.

    python -m tests.fuzz.slt run FILE... [--dsn DSN]        # run against a server
    python -m tests.fuzz.slt complete FILE... [--dsn DSN]   # (re)write the expected results
                                                             # from PostgreSQL (starts one when
                                                             # no --dsn is given)
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
import sys
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg


@dataclass
class Record:
    kind: str                       # statement | query
    sql: str
    line: int
    expect_error: bool = False
    error_regex: str | None = None
    types: str = ""
    sort: str = "nosort"
    label: str | None = None
    expected: list[str] | None = None
    skip: bool = False               # skipif slipstream / onlyif <other>
    header: str = ""
    conditions: list[str] = field(default_factory=list)  # its skipif/onlyif lines, as written
    raw: str = ""                    # the record as written (kept by `complete` when not run)


def parse(text: str) -> list[Record]:
    lines = text.split("\n")
    records: list[Record] = []
    i = 0
    skip = False
    conditions: list[str] = []
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        words = stripped.split()
        if words[0] == "halt":
            break
        if words[0] in ("skipif", "onlyif"):
            engine = words[1] if len(words) > 1 else ""
            skip = skip or (words[0] == "skipif" and engine == "slipstream") or \
                (words[0] == "onlyif" and engine != "slipstream")
            conditions.append(stripped)
            i += 1
            continue
        start = i + 1
        header = stripped
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        sql = "\n".join(body)
        if words[0] == "statement":
            rec = Record("statement", sql, start, header=header)
            if len(words) > 1 and words[1] == "error":
                rec.expect_error = True
                rec.error_regex = stripped.split(None, 2)[2] if len(words) > 2 else None
        elif words[0] == "query":
            rec = Record("query", sql, start, header=header)
            if len(words) > 1 and words[1] == "error":
                rec.expect_error = True
                rec.error_regex = stripped.split(None, 2)[2] if len(words) > 2 else None
            else:
                rec.types = words[1] if len(words) > 1 else ""
                rec.sort = words[2] if len(words) > 2 else "nosort"
                rec.label = words[3] if len(words) > 3 else None
                rec.expected = []
                if i < len(lines) and lines[i].strip() == "----":
                    i += 1
                    while i < len(lines) and lines[i] != "":
                        rec.expected.append(lines[i])
                        i += 1
        else:
            raise ValueError(f"line {start}: unknown record {header!r}")
        rec.skip = skip
        rec.conditions = conditions
        rec.raw = "\n".join(lines[start - 1:i]).rstrip("\n")
        skip = False
        conditions = []
        records.append(rec)
    return records


def format_value(v: Any, t: str) -> str:
    if v is None:
        return "NULL"
    if t == "I":
        if isinstance(v, bool):
            return str(int(v))
        if isinstance(v, (float, Decimal)):
            return str(int(v)) if not (isinstance(v, float) and not math.isfinite(v)) else str(v)
        return str(v)
    if t == "R":
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, float) and math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        if isinstance(v, Decimal) and not v.is_finite():
            return "NaN" if v.is_nan() else ("Infinity" if v > 0 else "-Infinity")
        if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
            return f"{float(v):.3f}" if isinstance(v, float) else \
                str(Decimal(v).quantize(Decimal("0.001")))
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v if v != "" else "(empty)"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    return str(v)


def type_letter(oid: int) -> str:
    return "I" if oid in (20, 21, 23) else ("R" if oid in (700, 701, 1700) else "T")


def format_rows(rows: list[tuple], types: str, sort: str) -> list[str]:
    width = max(len(types), max((len(r) for r in rows), default=0))
    types = types.ljust(width, "T")
    values = [[format_value(v, types[j]) for j, v in enumerate(r)] for r in rows]
    if sort == "rowsort":
        values.sort()
    flat = [v for r in values for v in r]
    if sort == "valuesort":
        flat.sort()
    return flat


CREATED = re.compile(r"\bCREATE\s+(?:MATERIALIZED\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                     r"([A-Za-z_][A-Za-z_0-9]*)", re.I)


def prefixer(records: list[Record], prefix: str):
    names = sorted({m.group(1) for r in records for m in CREATED.finditer(r.sql)}, key=len,
                   reverse=True)
    if not names or not prefix:
        return (lambda sql: sql), names
    rx = re.compile(r"(?<![A-Za-z_0-9.'])(" + "|".join(map(re.escape, names)) + r")\b")

    def apply(sql: str) -> str:
        # Leave string literals alone: rename only outside quotes.
        parts = re.split(r"('(?:[^']|'')*')", sql)
        return "".join(p if p.startswith("'") else rx.sub(lambda m: prefix + m.group(1), p)
                       for p in parts)
    return apply, names


@dataclass
class Outcome:
    record: Record
    ok: bool
    message: str = ""


@dataclass
class FileResult:
    path: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]


def run_records(conn: psycopg.Connection, records: list[Record], path: str = "",
                prefix: str | None = None) -> FileResult:
    prefix = f"slt_{uuid.uuid4().hex[:6]}_" if prefix is None else prefix
    apply, names = prefixer(records, prefix)
    res = FileResult(path)
    try:
        for rec in records:
            if rec.skip:
                continue
            sql = apply(rec.sql)
            try:
                cur = conn.execute(sql)
                rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
                error = None
            except psycopg.Error as e:
                rows, error = None, e
            where = f"{path}:{rec.line}"
            if rec.expect_error:
                if error is None:
                    res.outcomes.append(Outcome(rec, False, f"{where}: expected an error, got "
                                                            f"{rows!r}\n  {rec.sql}"))
                elif rec.error_regex and not re.search(rec.error_regex, str(error)):
                    res.outcomes.append(Outcome(rec, False, f"{where}: error {error} does not "
                                                            f"match {rec.error_regex!r}"))
                else:
                    res.outcomes.append(Outcome(rec, True))
                continue
            if error is not None:
                res.outcomes.append(Outcome(rec, False, f"{where}: {error.sqlstate} "
                                                        f"{str(error).splitlines()[0]}\n  {rec.sql}"))
                continue
            if rec.kind == "statement":
                res.outcomes.append(Outcome(rec, True))
                continue
            got = format_rows(rows or [], rec.types, rec.sort)
            if got != rec.expected:
                res.outcomes.append(Outcome(rec, False, f"{where}: results differ\n  {rec.sql}\n"
                                                        f"  expected: {rec.expected}\n"
                                                        f"  got:      {got}"))
            else:
                res.outcomes.append(Outcome(rec, True))
    finally:
        for name in names:
            for kind in ("MATERIALIZED VIEW", "VIEW", "TABLE"):
                try:
                    conn.execute(f"DROP {kind} IF EXISTS {prefix}{name} CASCADE")
                except psycopg.Error:
                    pass
    return res


def run_file(conn: psycopg.Connection, path: Path) -> FileResult:
    return run_records(conn, parse(path.read_text()), str(path))


def complete_file(conn: psycopg.Connection, path: Path) -> str:
    """Rewrite the file's expected results (and error expectations) from `conn`'s answers."""
    text = path.read_text()
    records = parse(text)
    prefix = f"slt_{uuid.uuid4().hex[:6]}_"
    apply, names = prefixer(records, prefix)
    out_blocks = []
    lines = text.split("\n")

    def comments_above(rec: Record) -> str:
        """The comment lines right above a record (kept with it)."""
        j = rec.line - 2 - len(rec.conditions)
        out = []
        while j >= 0 and lines[j].startswith("#"):
            out.insert(0, lines[j])
            j -= 1
        return "".join(c + "\n" for c in out)

    try:
        for k, rec in enumerate(records):
            cond = (comments_above(rec) if k else "") + "".join(c + "\n" for c in rec.conditions)
            if "onlyif slipstream" in rec.conditions:
                out_blocks.append(cond + rec.raw)  # Slipstream's own behaviour: kept as written
                continue
            sql = apply(rec.sql)
            # PostgreSQL's materialized views are snapshots: a plain view recomputed at every
            # read is what a maintained view must equal.
            sql = re.sub(r"\bCREATE\s+MATERIALIZED\s+VIEW\b", "CREATE VIEW", sql, flags=re.I)
            try:
                cur = conn.execute(sql)
                rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
                error = None
            except psycopg.Error as e:
                rows, error = None, e
            regex = f" {rec.error_regex}" if rec.error_regex else ""
            if rec.kind == "statement":
                head = "statement ok" if error is None else f"statement error{regex}"
                out_blocks.append(f"{cond}{head}\n{rec.sql}")
            elif error is not None:
                out_blocks.append(f"{cond}query error{regex}\n{rec.sql}")
            else:
                types = rec.types if rec.types and rec.types != "?" else \
                    "".join(type_letter(d.type_code) for d in cur.description)
                head = f"query {types} {rec.sort}" + (f" {rec.label}" if rec.label else "")
                body = "\n".join(format_rows(rows or [], types, rec.sort))
                out_blocks.append(f"{cond}{head}\n{rec.sql}\n----" + (f"\n{body}" if body else ""))
    finally:
        for name in names:
            for kind in ("VIEW", "TABLE"):
                try:
                    conn.execute(f"DROP {kind} IF EXISTS {prefix}{name} CASCADE")
                except psycopg.Error:
                    pass
    # Keep the file's leading comment block.
    lead = []
    for line in text.split("\n"):
        if line.startswith("#") or not line.strip():
            lead.append(line)
        else:
            break
    return "\n".join(lead).rstrip("\n") + ("\n\n" if lead else "") + "\n\n".join(out_blocks) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.slt")
    p.add_argument("action", choices=["run", "complete"])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--dsn")
    args = p.parse_args(argv)
    oracle = None
    dsn = args.dsn
    if dsn is None:
        if args.action == "run":
            p.error("run needs --dsn")
        from tests.support.pg_oracle import PgOracle
        oracle = PgOracle.start()
        dsn = oracle.dsn
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            failed = 0
            for f in args.files:
                if args.action == "complete":
                    f.write_text(complete_file(conn, f))
                    print(f"completed {f}")
                else:
                    r = run_file(conn, f)
                    for o in r.failures:
                        print(o.message)
                    failed += len(r.failures)
                    print(f"{f}: {len(r.outcomes) - len(r.failures)}/{len(r.outcomes)} records ok")
            return 1 if failed else 0
    finally:
        if oracle is not None:
            oracle.stop()


if __name__ == "__main__":
    sys.exit(main())
