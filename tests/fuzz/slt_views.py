"""The sqllogictest corpus as materialized views: every `query` record that can be a view is
created as one on Slipstream, the tables it reads get random inserts, updates and deletes (the
same statement on Slipstream and on a real PostgreSQL), and after every change the view's rows
must equal PostgreSQL's answer to the query (multisets; floats within tests/fuzz/compare.py's
tolerance; a view has no order, so ORDER BY is not compared).

    run_file(path, ss_conn, pg_conn, seed=1, changes=5, sample=None) -> FileReport

A file's statements run on both systems in order (its CREATE MATERIALIZED VIEW is a plain view on
PostgreSQL, which is what a maintained view must equal). Query records next to each other (no
statement between them) are tested together: their views are created, then the changes are
applied and every view is compared after each one. The tables are not restored afterwards: the
next records run on whatever both systems now hold (their answers are compared with PostgreSQL's,
not with the file's expected results).

Skipped query records, each counted by reason (nothing is dropped silently): records expecting an
error, records meant for one system (skipif/onlyif), statements that are not a query (EXECUTE,
SHOW ...), queries calling volatile or time-dependent functions, queries reading no table of the
file (constant queries, catalogs, generate_series: changes cannot reach them), queries with
LIMIT/OFFSET/FETCH (ties make the answer ambiguous), queries inside an open transaction block,
and queries PostgreSQL itself rejects at that point. A view Slipstream refuses with 0A000 is
counted as refused, neither pass nor failure.

Random changes need no per-file code: the rows of a table are read from PostgreSQL in a fixed
order as typed literals (`quote_nullable(c::text) || '::' || format_type(...)`), a seeded
random.Random picks a row and a change: DELETE the rows equal to it (per column IS NOT DISTINCT
FROM), INSERT a copy of it (or of a row seen earlier, maybe deleted since) with one column taken
from another row or NULL, or UPDATE one column of the rows equal to it. Each change runs on
PostgreSQL first inside a transaction: when PostgreSQL rejects it (a constraint) it is rolled back
and not sent to Slipstream; when Slipstream then fails it PostgreSQL rolls back too, so the two
never drift apart. A difference names the seed, file, line, query, the change sequence and both
answers, enough to replay it with `scripts/slt_views --seed S FILE`.
"""

from __future__ import annotations

import random
import re
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import pq

from tests.fuzz.compare import (float_abs_tolerance, multiset_eq, rel_tolerances, show_rows)
from tests.fuzz.slt import Record, parse, prefixer

VOLATILE = re.compile(
    r"\b(now|random|setseed|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|"
    r"pg_backend_pid|gen_random_uuid|uuid_generate_v4|txid_current|nextval|currval|lastval|"
    r"mz_now|pg_sleep|pg_postmaster_start_time|pg_conf_load_time|inet_client_addr|"
    r"inet_client_port|inet_server_addr|inet_server_port|pg_current_xact_id|age)\s*\(|"
    r"\b(current_timestamp|current_date|current_time|localtime|localtimestamp|current_user|"
    r"session_user|current_role|user|current_schema|current_database|current_catalog)\b"
    r"(?!\s*\()|\bcurrent_(schema|database|user|setting)\s*\(|\bversion\s*\(", re.I)
LIMIT = re.compile(r"\b(limit|offset|fetch\s+(first|next))\b", re.I)
QUERY_START = re.compile(r"^\s*\(*\s*(select|with|values|table)\b", re.I)
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
STRING = re.compile(r"'(?:[^']|'')*'")


@dataclass
class Difference:
    file: str
    line: int
    query: str
    changes: list[str]
    kind: str                 # view | create | change | tables
    slipstream: str
    postgres: str
    seed: int

    def report(self) -> str:
        ch = "\n".join(f"    {i + 1}. {c}" for i, c in enumerate(self.changes)) or "    (none)"
        return (f"{self.file}:{self.line} ({self.kind}, seed {self.seed})\n  query: {self.query}\n"
                f"  changes:\n{ch}\n  Slipstream: {self.slipstream}\n"
                f"  PostgreSQL: {self.postgres}")


@dataclass
class FileReport:
    path: str
    queries: int = 0            # query records in the file
    views: int = 0              # created as views on Slipstream
    refused: Counter = field(default_factory=Counter)      # 0A000 message -> count
    skipped: Counter = field(default_factory=Counter)      # reason -> count
    changes: int = 0
    changes_rejected: int = 0   # rejected by PostgreSQL (constraints): not sent to Slipstream
    changes_refused: Counter = field(default_factory=Counter)  # Slipstream's 0A000 on a change
    comparisons: int = 0
    skipped_restore_errors: int = 0
    # Mismatches PostgreSQL itself answers two ways (the same rows read in another physical
    # order): ties in an ORDER BY of DISTINCT ON / a window / an ordered aggregate, or an
    # aggregate without ORDER BY. Not a difference: no single right answer exists.
    ambiguous: int = 0
    ambiguous_unmatched: int = 0    # of those: Slipstream's answer is none PostgreSQL gave
    differences: list[Difference] = field(default_factory=list)
    seconds: float = 0.0


# ---- plumbing ----------------------------------------------------------------------------------


@dataclass
class Answer:
    rows: list[tuple] | None = None
    oids: list[int] = field(default_factory=list)
    sqlstate: str | None = None
    message: str = ""
    status: str = ""

    @property
    def ok(self) -> bool:
        return self.sqlstate is None

    def show(self) -> str:
        if not self.ok:
            return f"ERROR {self.sqlstate}: {self.message}"
        return show_rows(self.rows) if self.rows is not None else self.status


TIMEOUT = 60.0     # seconds; a statement still running then is cancelled (SQLSTATE 57014)


def run(conn: psycopg.Connection, sql: str, params=None) -> Answer:
    timer = threading.Timer(TIMEOUT, conn.cancel)
    timer.start()
    try:
        cur = conn.execute(sql, params)
        if cur.description is None:
            return Answer(status=cur.statusmessage or "")
        return Answer(rows=[tuple(r) for r in cur.fetchall()],
                      oids=[d.type_code for d in cur.description], status=cur.statusmessage or "")
    except psycopg.Error as e:
        state = e.sqlstate or ("57014" if isinstance(e, psycopg.errors.QueryCanceled) else "CONN")
        return Answer(sqlstate=state, message=str(e).splitlines()[0] if str(e) else type(e).__name__)
    finally:
        timer.cancel()


def text_json(conn: psycopg.Connection) -> None:
    """json and jsonb as their text: how PostgreSQL prints them is part of the answer."""
    from psycopg.types.string import TextLoader
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)


def for_postgres(sql: str) -> str:
    return re.sub(r"\bCREATE\s+MATERIALIZED\s+VIEW\b", "CREATE VIEW", sql, flags=re.I)


def runs_on_postgres(rec: Record) -> bool:
    c = " ".join(rec.conditions)
    return "onlyif slipstream" not in c and "skipif postgres" not in c and \
        not re.search(r"onlyif (?!postgres)", c)


def names_in(sql: str) -> set[str]:
    return {m.group(0).lower() for m in IDENT.finditer(STRING.sub("''", sql))}


# ---- random changes ----------------------------------------------------------------------------


@dataclass
class Column:
    name: str
    type: str
    writable: bool      # not generated / identity ALWAYS
    comparable: bool    # has an equality operator (json has none: compared as text)


class Changer:
    """Random DML for any table, from its rows as PostgreSQL's typed literals."""

    def __init__(self, pg: psycopg.Connection, rng: random.Random):
        self.pg, self.rng = pg, rng
        self.seen: dict[str, list[tuple]] = {}     # table -> literal rows seen so far

    def columns(self, table: str) -> list[Column]:
        a = run(self.pg, "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
                         "a.attgenerated <> '' OR a.attidentity = 'a', "
                         "t.typname IN ('json', 'xml', 'point', 'line', 'polygon', 'box', 'circle')"
                         " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                         "WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
                         "AND NOT a.attisdropped ORDER BY a.attnum", (table,))
        return [Column(n, t, not gen, not nocmp) for n, t, gen, nocmp in (a.rows or [])]

    def rows(self, table: str, cols: list[Column]) -> list[tuple]:
        lits = ", ".join(f"CASE WHEN {q(c.name)} IS NULL THEN 'NULL' ELSE "
                         f"quote_literal({q(c.name)}::text) || '::' || {lit(c.type)} END"
                         for c in cols)
        a = run(self.pg, f"SELECT {lits} FROM {table} ORDER BY 1" +
                "".join(f", {i + 1}" for i in range(1, len(cols))))
        return a.rows or []

    def pick(self, table: str) -> str | None:
        cols = self.columns(table)
        if not cols:
            return None
        rows = self.rows(table, cols)
        seen = self.seen.setdefault(table, [])
        for r in rows:
            if r not in seen:
                seen.append(r)
        writable = [i for i, c in enumerate(cols) if c.writable]
        kinds = ["insert"] if not rows else ["insert", "delete", "update"]
        kind = self.rng.choice(kinds) if seen else None
        if kind is None or not writable:
            return None
        if kind == "insert":
            base = list(self.rng.choice(seen))
            j = self.rng.choice(writable)
            base[j] = self.other_value(seen, j)
            names = ", ".join(q(cols[i].name) for i in writable)
            vals = ", ".join(base[i] for i in writable)
            return f"INSERT INTO {table} ({names}) VALUES ({vals})"
        row = self.rng.choice(rows)
        cond = " AND ".join(
            f"{q(c.name)} IS NOT DISTINCT FROM {v}" if c.comparable else
            f"{q(c.name)}::text IS NOT DISTINCT FROM ({v})::text"
            for c, v in zip(cols, row))
        if kind == "delete":
            return f"DELETE FROM {table} WHERE {cond}"
        j = self.rng.choice(writable)
        return f"UPDATE {table} SET {q(cols[j].name)} = {self.other_value(seen, j)} WHERE {cond}"

    def other_value(self, seen: list[tuple], j: int) -> str:
        values = sorted({r[j] for r in seen})
        return "NULL" if self.rng.random() < 0.2 else self.rng.choice(values)


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


# ---- the runner --------------------------------------------------------------------------------


def classify(rec: Record, created: set[str], views_sql: dict[str, str]) -> str | None:
    """Why a query record cannot be tested as a view (None: it can)."""
    if rec.expect_error:
        return "expects an error"
    if rec.skip or rec.conditions:
        return "skipif/onlyif"
    if not QUERY_START.match(rec.sql):
        return "not a query"
    # The query and the definitions of the file's views it reads (`SELECT * FROM v`).
    bare = STRING.sub("''", " ".join([rec.sql] + view_defs(rec.sql, created, views_sql)))
    if VOLATILE.search(bare):
        return "volatile or time-dependent function"
    if LIMIT.search(bare):
        return "LIMIT/OFFSET (ties ambiguous)"
    if not base_tables(rec.sql, created, views_sql):
        return "reads no table of the file"
    return None


def view_defs(sql: str, created: set[str], views_sql: dict[str, str], depth: int = 0) -> list[str]:
    out = []
    for n in sorted(names_in(sql) & set(views_sql)):
        out.append(views_sql[n])
        if depth < 10:
            out += view_defs(views_sql[n], created, views_sql, depth + 1)
    return out


def base_tables(sql: str, created: set[str], views_sql: dict[str, str], depth: int = 0) -> set[str]:
    out = set()
    for n in names_in(sql) & created:
        if n in views_sql and depth < 10:
            out |= base_tables(views_sql[n], created, views_sql, depth + 1)
        elif n not in views_sql:
            out.add(n)
    return out


def run_file(path: Path, ss: psycopg.Connection, pg: psycopg.Connection, seed: int = 1,
             changes: int = 5, sample: int | None = None, group: int = 8,
             log=lambda s: None) -> FileReport:
    t0 = time.monotonic()
    rel = str(path)
    records = parse(path.read_text())
    rep = FileReport(rel)
    rng = random.Random(f"{seed}:{path.name}")
    prefix = f"slv_{uuid.uuid4().hex[:6]}_"
    apply, names = prefixer(records, prefix)
    created = {n.lower() for n in names}
    views_sql = {}
    for r in records:
        m = re.match(r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:MATERIALIZED\s+)?VIEW\s+"
                     r"(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z_0-9]*)", r.sql, re.I)
        if m:
            views_sql[m.group(1).lower()] = r.sql
    for c in (ss, pg):
        text_json(c)
    reasons = {}
    for i, r in enumerate(records):
        if r.kind == "query":
            rep.queries += 1
            reasons[i] = classify(r, created, views_sql)
    eligible = [i for i, why in reasons.items() if why is None]
    chosen = set(eligible) if sample is None or len(eligible) <= sample else \
        set(rng.sample(eligible, sample))
    for i, why in reasons.items():
        if why is not None:
            rep.skipped[why] += 1
        elif i not in chosen:
            rep.skipped["not in this sample"] += 1
    changer = Changer(pg, rng)
    strip = (lambda s: s.replace(prefix, ""))
    try:
        pending: list[int] = []
        for i, r in enumerate(records):
            if r.kind == "query":
                if i in chosen:
                    pending.append(i)
                if len(pending) >= group:
                    _test_group(records, pending, apply, prefix, created, views_sql, ss, pg,
                                changer, rng, changes, rep, seed, strip, log)
                    pending = []
                continue
            if pending:
                _test_group(records, pending, apply, prefix, created, views_sql, ss, pg, changer,
                            rng, changes, rep, seed, strip, log)
                pending = []
            sql = apply(r.sql)
            if not r.skip:
                run(ss, sql)
            if runs_on_postgres(r):
                run(pg, for_postgres(sql))
        if pending:
            _test_group(records, pending, apply, prefix, created, views_sql, ss, pg, changer,
                        rng, changes, rep, seed, strip, log)
    except Stuck:
        pass    # reported as a "timeout" difference; the server may not answer more
    finally:
        for c in (ss, pg):
            if c.info.transaction_status != pq.TransactionStatus.IDLE:
                run(c, "ROLLBACK")
            for n in names:
                for kind in ("MATERIALIZED VIEW", "VIEW", "TABLE"):
                    run(c, f"DROP {kind} IF EXISTS {prefix}{n} CASCADE")
        rep.seconds = time.monotonic() - t0
    return rep


def _test_group(records, pending, apply, prefix, created, views_sql, ss, pg, changer, rng,
                changes, rep: FileReport, seed, strip, log) -> None:
    if ss.info.transaction_status != pq.TransactionStatus.IDLE or \
            pg.info.transaction_status != pq.TransactionStatus.IDLE:
        rep.skipped["inside a transaction block"] += len(pending)
        return
    live: list[tuple[Record, str, str]] = []     # record, view name, query as run on PostgreSQL
    tables: set[str] = set()
    for i in pending:
        r = records[i]
        sql = apply(r.sql)
        want = run(pg, sql)
        if not want.ok:
            rep.skipped["PostgreSQL rejects it here"] += 1
            continue
        view = f"{prefix}view{i}"
        # Its own column names: a query may name two columns alike ("?column?"), which a view
        # (PostgreSQL's too) refuses.
        cols = ", ".join(f"c{k + 1}" for k in range(len(want.oids)))
        made = run(ss, f"CREATE MATERIALIZED VIEW {view} ({cols}) AS {sql}")
        if not made.ok:
            if made.sqlstate == "0A000":
                rep.refused[re.sub(r"\d+", "N", made.message)[:120]] += 1
            else:
                rep.differences.append(Difference(
                    rep.path, r.line, r.sql, [], "create", made.show(), want.show(), seed))
                log("DIFFERENCE " + rep.differences[-1].report())
            continue
        rep.views += 1
        live.append((r, view, sql))
        tables |= {prefix + t for t in base_tables(r.sql, created, views_sql)}
    history: list[str] = []
    broken: set[str] = set()
    table_list = sorted(tables)
    snapshot = {t: (changer.columns(t), None) for t in table_list}
    snapshot = {t: (cols, changer.rows(t, cols)) for t, (cols, _) in snapshot.items()}
    file_views = [apply(r.sql) for r in records[:pending[0]]
                  if r.kind == "statement" and not r.expect_error and runs_on_postgres(r)
                  and re.match(r"\s*CREATE\s+(OR\s+REPLACE\s+)?(MATERIALIZED\s+)?VIEW", r.sql, re.I)]
    log(f"  {rep.path}: lines {', '.join(str(records[i].line) for i in pending)}: "
        f"{len(live)} views")
    try:
        for step in range(changes + 1):
            if step > 0 and table_list:
                stmt = _change(changer, rng, table_list, ss, pg, rep, history, strip, seed, live, log)
                if stmt is None:
                    break
            for r, view, sql in live:
                if view in broken:
                    continue
                got, want = run(ss, f"SELECT * FROM {view}"), run(pg, sql)
                rep.comparisons += 1
                if got.sqlstate == "57014" and want.ok:
                    rep.differences.append(Difference(
                        rep.path, r.line, r.sql, list(history), "timeout",
                        f"no answer within {TIMEOUT:.0f} s (cancelled)", want.show(), seed))
                    log("DIFFERENCE " + rep.differences[-1].report())
                    raise Stuck(rep.differences[-1].report())
                defs = " ".join([r.sql] + view_defs(r.sql, created, views_sql))
                if _same(got, want, defs):
                    continue
                verdict = _pg_ambiguous(pg, sql, got, want, table_list, file_views, defs)
                if verdict is not None:
                    rep.ambiguous += 1
                    if verdict == "varies":
                        rep.ambiguous_unmatched += 1
                        log("AMBIGUOUS " + Difference(rep.path, r.line, r.sql, list(history),
                                                      "ambiguous", got.show(),
                                                      want.show(), seed).report())
                    continue
                broken.add(view)
                kind, got_s, want_s = "view", got.show(), want.show()
                for t in base_tables(r.sql, created, views_sql):
                    a, b = run(ss, f"SELECT * FROM {prefix}{t}"), run(pg, f"SELECT * FROM {prefix}{t}")
                    if not _same(a, b, ""):   # the tables themselves differ: a DML bug
                        kind = "tables"
                        got_s += f"\n    table {t}: {a.show()}"
                        want_s += f"\n    table {t}: {b.show()}"
                rep.differences.append(Difference(rep.path, r.line, r.sql, list(history), kind,
                                                  got_s, want_s, seed))
                log("DIFFERENCE " + rep.differences[-1].report())
    finally:
        for _, view, _ in live:
            run(ss, f"DROP MATERIALIZED VIEW IF EXISTS {view} CASCADE")
        if history:
            _restore(snapshot, ss, pg, rep, log)


def _restore(snapshot, ss, pg, rep: FileReport, log) -> None:
    """Put the tables back as the file left them, so the changes of one group of views do not
    pile up into the data later records read (which may then tie where the file's rows do not)."""
    for t, (cols, rows) in snapshot.items():
        w = [i for i, c in enumerate(cols) if c.writable]
        stmts = [f"DELETE FROM {t}"] + [
            f"INSERT INTO {t} ({', '.join(q(cols[i].name) for i in w)}) VALUES " +
            ", ".join("(" + ", ".join(r[i] for i in w) + ")" for r in rows[k:k + 200])
            for k in range(0, len(rows), 200)]
        for stmt in stmts:
            for c, name in ((pg, "PostgreSQL"), (ss, "Slipstream")):
                a = run(c, stmt)
                if not a.ok:
                    rep.skipped_restore_errors += 1
                    log(f"  restoring {t} failed on {name}: {a.show()}")


def _pg_ambiguous(pg, sql: str, got: Answer, want: Answer, tables: list[str],
                  file_views: list[str], defs: str) -> str | None:
    """Does PostgreSQL answer `sql` differently when the same rows are stored in another order
    (so there is no one right answer), or give Slipstream's answer then? The tables (and the
    file's views over them) are copied into a scratch schema with their rows reversed or
    shuffled by a hash, and the query is run there again. "matches": Slipstream's answer is
    one of PostgreSQL's; "varies": PostgreSQL answers several ways but none of them was
    Slipstream's (counted apart); None: PostgreSQL answers one way, a real difference."""
    verdict = None
    for order in ["ctid DESC"] + [f"md5(ctid::text || '{k}')" for k in range(7)]:
        run(pg, "DROP SCHEMA IF EXISTS slv_reorder CASCADE")
        run(pg, "CREATE SCHEMA slv_reorder")
        try:
            for t in tables:
                run(pg, f"CREATE TABLE slv_reorder.{t} AS SELECT * FROM public.{t} ORDER BY {order}")
            run(pg, "SET search_path = slv_reorder, public")
            for v in file_views:
                run(pg, for_postgres(v))
            other = run(pg, sql)
        finally:
            run(pg, "RESET search_path")
            run(pg, "DROP SCHEMA IF EXISTS slv_reorder CASCADE")
        if _same(other, got, defs):
            return "matches"
        if not _same(other, want, defs):
            verdict = "varies"
    return verdict


class Stuck(Exception):
    """Slipstream did not answer a view's SELECT in time: the rest of the file is not run."""


def _same(got: Answer, want: Answer, sql: str) -> bool:
    if not (got.ok and want.ok):
        return not got.ok and not want.ok and got.sqlstate == want.sqlstate
    rels = rel_tolerances(got.oids, want.oids, len(want.oids))
    return multiset_eq(got.rows or [], want.rows or [], rels, float_abs_tolerance(sql))


def _change(changer: Changer, rng, tables, ss, pg, rep: FileReport, history, strip, seed,
            live, log) -> str | None:
    """One change applied to both systems (tries a few before giving up); None if none applied."""
    for _ in range(6):
        table = rng.choice(tables)
        stmt = changer.pick(table)
        if stmt is None:
            continue
        run(pg, "BEGIN")
        p = run(pg, stmt)
        if not p.ok:
            run(pg, "ROLLBACK")
            rep.changes_rejected += 1
            continue
        s = run(ss, stmt)
        if not s.ok or s.status != p.status:
            run(pg, "ROLLBACK")
            if s.sqlstate == "0A000":
                rep.changes_refused[re.sub(r"\d+", "N", s.message)[:120]] += 1
                continue
            r = live[0][0] if live else None
            rep.differences.append(Difference(
                rep.path, r.line if r else 0, r.sql if r else "", history + [strip(stmt)],
                "change", s.show(), p.show(), seed))
            log("DIFFERENCE " + rep.differences[-1].report())
            if s.ok:    # applied on Slipstream only: the two have drifted apart, stop here
                return None
            continue
        run(pg, "COMMIT")
        rep.changes += 1
        history.append(strip(stmt))
        return stmt
    return None


# ---- summaries ---------------------------------------------------------------------------------


def summarize(reports: list[FileReport]) -> dict:
    skipped, refused, crefused = Counter(), Counter(), Counter()
    for r in reports:
        skipped.update(r.skipped)
        refused.update(r.refused)
        crefused.update(r.changes_refused)
    return {
        "files": len(reports),
        "query_records": sum(r.queries for r in reports),
        "views": sum(r.views for r in reports),
        "refused_0A000": sum(refused.values()),
        "refused_by_message": dict(refused.most_common()),
        "skipped": sum(skipped.values()),
        "skipped_by_reason": dict(skipped.most_common()),
        "changes": sum(r.changes for r in reports),
        "changes_rejected_by_postgres": sum(r.changes_rejected for r in reports),
        "changes_refused_0A000": dict(crefused.most_common()),
        "comparisons": sum(r.comparisons for r in reports),
        "ambiguous_in_postgres": sum(r.ambiguous for r in reports),
        "ambiguous_slipstream_answer_not_seen_in_postgres":
            sum(r.ambiguous_unmatched for r in reports),
        "restore_errors": sum(r.skipped_restore_errors for r in reports),
        "differences": sum(len(r.differences) for r in reports),
        "difference_reports": [d.report() for r in reports for d in r.differences],
        "seconds": round(sum(r.seconds for r in reports), 1),
        "per_file": {r.path: {"queries": r.queries, "views": r.views,
                              "refused": sum(r.refused.values()), "changes": r.changes,
                              "comparisons": r.comparisons, "ambiguous": r.ambiguous,
                              "ambiguous_unmatched": r.ambiguous_unmatched,
                              "differences": len(r.differences),
                              "seconds": round(r.seconds, 1)} for r in reports},
    }


# ---- command line (scripts/slt_views) ----------------------------------------------------------

_TESTS = Path(__file__).resolve().parent.parent
CORPUS = sorted((_TESTS / "fuzz" / "slt").glob("*.slt")) + sorted((_TESTS / "slt").glob("*.slt"))


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import sys
    import tempfile
    p = argparse.ArgumentParser(prog="scripts/slt_views", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", type=Path, help="default: the whole corpus")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--changes", type=int, default=8, help="changes per group of views")
    p.add_argument("--sample", type=int, default=None, help="query records per file (all)")
    p.add_argument("--out", type=Path, default=Path("bench/results/slt_views.json"))
    p.add_argument("--ss-dsn", help="use this Slipstream instead of starting one")
    p.add_argument("--pg-dsn", help="use this PostgreSQL instead of starting one")
    p.add_argument("--verbose", action="store_true", help="a line per group of views")
    args = p.parse_args(argv)
    files = args.files or CORPUS
    servers = []
    reports: list[FileReport] = []
    try:
        pg_dsn, ss_dsn = args.pg_dsn, args.ss_dsn
        if pg_dsn is None:
            from tests.support.pg_oracle import PgOracle
            print("[slt_views] starting PostgreSQL", flush=True)
            servers.append(PgOracle.start())
            pg_dsn = servers[-1].dsn
        if ss_dsn is None:
            from tests.support.slipstream_server import SlipstreamServer
            base = Path(tempfile.mkdtemp(prefix="slipstream-slt-views-"))
            print(f"[slt_views] starting Slipstream (log: {base / 'server.log'})", flush=True)
            servers.append(SlipstreamServer.start(data_dir=base / "data",
                                                  log_file=base / "server.log"))
            ss_dsn = servers[-1].dsn
        print(f"[slt_views] seed {args.seed}, {args.changes} changes per group, "
              f"{len(files)} files", flush=True)
        with psycopg.connect(ss_dsn, autocommit=True) as ss, \
                psycopg.connect(pg_dsn, autocommit=True) as pg:
            for f in files:
                r = run_file(f, ss, pg, seed=args.seed, changes=args.changes, sample=args.sample,
                             log=lambda s: (args.verbose or s.startswith(("DIFFERENCE",
                                                                          "AMBIGUOUS"))) and
                             print(s, flush=True))
                reports.append(r)
                _write(args, reports, partial=True)
                print(f"{f}: {r.queries} queries, {r.views} views, "
                      f"{sum(r.refused.values())} refused, {r.changes} changes, "
                      f"{r.comparisons} comparisons, {r.ambiguous} ambiguous "
                      f"({r.ambiguous_unmatched} not matched), "
                      f"{len(r.differences)} differences "
                      f"({r.seconds:.0f} s)", flush=True)
    finally:
        for s in reversed(servers):
            s.stop()
    summary = _write(args, reports, partial=False)
    print("\n== summary ==")
    for k in ("files", "query_records", "views", "refused_0A000", "skipped", "changes",
              "changes_rejected_by_postgres", "comparisons", "ambiguous_in_postgres",
              "ambiguous_slipstream_answer_not_seen_in_postgres",
              "restore_errors", "differences", "seconds"):
        print(f"  {k}: {summary[k]}")
    print("  skipped by reason:")
    for k, v in summary["skipped_by_reason"].items():
        print(f"    {v:5d}  {k}")
    print("  refused (0A000) by message:")
    for k, v in summary["refused_by_message"].items():
        print(f"    {v:5d}  {k}")
    for k, v in summary["changes_refused_0A000"].items():
        print(f"    {v:5d}  change refused: {k}")
    for d in summary["difference_reports"]:
        print("\nDIFFERENCE " + d)
    print(f"\n[slt_views] summary written to {args.out}")
    return 1 if summary["differences"] else 0


def _write(args, reports: list[FileReport], partial: bool) -> dict:
    """The summary as JSON (rewritten after every file, so a long run leaves its figures)."""
    import json
    summary = summarize(reports)
    summary.update(seed=args.seed, changes_per_group=args.changes, sample=args.sample,
                   partial=partial)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
