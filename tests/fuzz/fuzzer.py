"""The differential fuzzer: rounds of (random schema and data, random queries), each query run on
Slipstream and PostgreSQL; ternary-logic-partitioning checks on Slipstream alone; materialized
views over the queries kept up to date under random INSERT/UPDATE/DELETE; failures shrunk.

    fz = Fuzzer(ss_dsn, pg_dsn, seed=1)
    summary = fz.run(seconds=60)
    print(summary.report())
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
import random
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

from tests.fuzz.compare import multiset_eq, rel_tolerances
from tests.fuzz.engine import Endpoint, Result, Verdict, judge, normalize_message
from tests.fuzz.gen import Features, QueryGen, join_kinds, referenceable
from tests.fuzz.schema import Schema, Table, pick_value, random_row, random_schema
from tests.fuzz.sqlast import (BOOL, Expr, Lit, Names, Op, Query, Select, SetOp, TableRef,
                               base_type, kind, orderable, replace_at, size, walk_slots)

# ---- cases: everything needed to reproduce one failure from scratch ---------------------------


@dataclass
class Dml:
    table: str
    template: str          # '{T}' stands for the table's real name

    def render(self, n: Names) -> str:
        return self.template.replace("{T}", n.table(self.table))


@dataclass
class Case:
    mode: str                          # query | tlp-where | tlp-having | tlp-agg | mv
    schema: Schema
    query: Query
    pred: Expr | None = None           # TLP partitioning predicate
    agg: str | None = None             # TLP aggregate: count | sum | min | max
    dml: list[Dml] = field(default_factory=list)

    def tables_used(self) -> set[str]:
        used = set()
        for node in [self.query] + ([self.pred] if self.pred is not None else []):
            for _, n in walk_slots(node):
                if isinstance(n, TableRef) and not n.is_cte:
                    used.add(n.table)
        return used | {d.table for d in self.dml}

    def script(self) -> str:
        """The self-contained SQL of the case (logical table names)."""
        n = Names()
        lines = []
        for t in self.schema.tables:
            if t.name in self.tables_used():
                lines.append(t.ddl(n) + ";")
                if t.rows:
                    lines.append(t.insert(n) + ";")
        if self.mode == "setup":
            return "\n".join(f"{t.ddl(n)};\n{t.insert(n) or '-- (no rows)'};"
                             for t in self.schema.tables)
        if self.mode == "mv":
            lines.append(f"CREATE MATERIALIZED VIEW v AS {self.query.render(n)};")
            for d in self.dml:
                lines.append(d.render(n) + ";")
            lines.append("SELECT * FROM v;")
        elif self.mode.startswith("tlp"):
            orig, combined = tlp_sql(self, n)
            lines.append(f"{orig};  -- must equal:")
            lines.append(f"{combined};")
        else:
            lines.append(self.query.render(n) + ";")
        return "\n".join(lines)


# ---- TLP ---------------------------------------------------------------------------------------

def _and(a: Expr | None, b: Expr) -> Expr:
    return b if a is None else Op("({0}) AND ({1})", [a, b], BOOL)


def tlp_parts(p: Expr) -> list[Expr]:
    return [p, Op("NOT ({0})", [p], BOOL), Op("({0}) IS NULL", [p], BOOL)]


def tlp_sql(case: Case, n: Names) -> tuple[str, str]:
    """(original query, its ternary-logic partitioning) for a TLP case."""
    q = case.query
    base = copy.copy(q)
    base.order_by, base.limit, base.offset = [], None, None
    ctes = ""
    if q.ctes:
        ctes = "WITH " + ", ".join(f"{name} AS ({c.render(n)})" for name, c in q.ctes) + " "
    body = copy.copy(base)
    body.ctes = []
    parts = []
    for part in tlp_parts(case.pred):
        pq = copy.copy(body)
        if case.mode == "tlp-having":
            pq.having = _and(body.having, part)
        else:
            pq.where = _and(body.where, part)
        parts.append(f"({pq.render(n)})")
    orig = base.render(n)
    if case.mode == "tlp-agg":
        outer = {"count": "sum", "sum": "sum", "min": "min", "max": "max"}[case.agg]
        keys = [a for _, a in q.items[:-1]]
        sel = ", ".join(keys + [f"{outer}(tlp.{q.items[-1][1]})"])
        union = " UNION ALL ".join(parts)
        combined = f"{ctes}SELECT {sel} FROM ({union}) AS tlp" + \
            (f" GROUP BY {', '.join(keys)}" if keys else "")
    else:
        joiner = " UNION " if q.distinct else " UNION ALL "
        combined = ctes + joiner.join(parts)
    return orig, combined


# ---- results -----------------------------------------------------------------------------------


@dataclass
class Failure:
    mode: str
    kind: str
    where: str             # seed / round / query index
    detail: str
    original_sql: str
    case: Case
    ss: str = ""
    pg: str = ""
    shrink_steps: int = 0
    count: int = 1

    prekey: str | None = None   # errors: kind + message, known before shrinking

    def signature(self) -> str:
        """Same signature: most likely the same bug. Errors: the error message; otherwise the
        set of SQL constructs in the minimised query."""
        if self.prekey:
            return self.prekey
        sql = self.case.query.render(Names())
        if self.case.pred is not None:
            sql += " " + self.case.pred.render(Names())
        tokens = fingerprint(sql)
        if self.kind == "types":   # the function or operator whose result type is wrong
            tokens = [t for t in tokens if t not in _TYPE_NOISE]
        return f"{self.mode}/{self.kind}/{' '.join(tokens)}"

    def to_slt(self) -> str:
        """The case as sqllogictest records, expected results still to be filled in (from
        PostgreSQL: python -m tests.fuzz.slt complete FILE)."""
        c, n = self.case, Names()
        head = [f"# [{self.mode}/{self.kind}] {self.detail}",
                f"# found by the fuzzer: {self.where}",
                f"# Slipstream: {self.ss}", f"# PostgreSQL: {self.pg}", ""]
        recs = []
        for t in c.schema.tables:
            if t.name in c.tables_used():
                recs.append(f"statement ok\n{t.ddl(n)}")
                if t.rows:
                    recs.append(f"statement ok\n{t.insert(n)}")
        sort = "nosort" if c.query.order_by and c.query.total_order() else "rowsort"
        if c.mode == "mv":
            recs.append(f"statement ok\nCREATE MATERIALIZED VIEW v AS {c.query.render(n)}")
            for d in c.dml:
                recs.append(f"statement ok\n{d.render(n)}")
            recs.append("query ? rowsort\nSELECT * FROM v")
        elif c.mode.startswith("tlp"):
            orig, combined = tlp_sql(c, n)
            recs.append(f"query ? rowsort\n{orig}")
            recs.append(f"query ? rowsort\n{combined}")
        else:
            recs.append(f"query ? {sort}\n{c.query.render(n)}")
        return "\n".join(head) + "\n" + "\n\n".join(recs) + "\n"

    def report(self) -> str:
        return (f"[{self.mode}/{self.kind}] {self.detail} ({self.where}; seen {self.count}x)\n"
                f"{indent(self.case.script())}\n"
                f"  Slipstream: {self.ss}\n  PostgreSQL: {self.pg}\n")


_TOKEN = re.compile(r"'(?:[^']|'')*'|\b\d+(?:\.\d+)?(?:e\d+)?\b|[A-Za-z_][A-Za-z_0-9]*|!~~\*?|~~\*?|"
                    r"\|\||<>|!=|<=|>=|::|[-+*/%<>=,]")


_TYPE_NOISE = {"SELECT", "FROM", "CAST", "NULL", "::", "BIGINT", "SMALLINT", "INTEGER", "REAL", "DOUBLE",
               "PRECISION", "NUMERIC", "TEXT", "BOOLEAN", "DATE", "TIMESTAMP", "FLOAT4", "FLOAT8",
               "INT2", "INT4", "INT8", "BOOL", "VARCHAR", "TRUE", "FALSE", "WHERE", "GROUP", "BY",
               "WITH", "JOIN", "INNER", "CROSS", "ON", "=", "DISTINCT", "ORDER", "LIMIT", "OFFSET"}


def fingerprint(sql: str) -> list[str]:
    """The constructs of a query: keywords, functions and operators, no names or literals."""
    out = set()
    for tok in _TOKEN.findall(sql):
        if tok[0] in "'0123456789" or re.fullmatch(r"[a-z]+\d+", tok) or tok in ("AS", ","):
            continue
        out.add(tok.upper())
    return sorted(out)


def indent(s: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in s.splitlines())


@dataclass
class Summary:
    seed: int
    features: Features
    rounds: int = 0
    queries: int = 0              # generated queries run on both systems
    ok: int = 0
    both_error: int = 0
    tlp_checks: int = 0
    tlp_invalid: int = 0           # partitions PostgreSQL does not agree with (fuzzer-side)
    mv_views: int = 0
    mv_checks: int = 0
    dml: int = 0
    statements: int = 0
    seconds: float = 0.0
    ss_seconds: float = 0.0
    pg_seconds: float = 0.0
    shrink_seconds: float = 0.0
    refusals: Counter = field(default_factory=Counter)
    documented: Counter = field(default_factory=Counter)
    internal_both: Counter = field(default_factory=Counter)
    pg_unsupported: Counter = field(default_factory=Counter)
    eval_order: Counter = field(default_factory=Counter)
    replica_restarts: int = 0
    failures: list[Failure] = field(default_factory=list)

    def add_failure(self, f: Failure) -> bool:
        sig = f.signature()
        for g in self.failures:
            if g.signature() == sig:
                g.count += 1
                return False
        self.failures.append(f)
        return True

    def report(self) -> str:
        out = [f"slipstream fuzz: seed {self.seed}, {self.rounds} rounds in {self.seconds:.0f}s",
               f"  queries executed on both systems: {self.queries} "
               f"(both ok {self.ok}, both error {self.both_error}, "
               f"refused {sum(self.refusals.values())}, documented {sum(self.documented.values())})",
               f"  TLP checks: {self.tlp_checks} (skipped as invalid: {self.tlp_invalid})",
               f"  materialized views: {self.mv_views}, DML statements {self.dml}, "
               f"view checks {self.mv_checks}",
               f"  SQL statements sent in total: {self.statements} (time in Slipstream "
               f"{self.ss_seconds:.0f}s, in PostgreSQL {self.pg_seconds:.0f}s, shrinking "
               f"{self.shrink_seconds:.0f}s)",
               f"  Slipstream compute replica restarts seen: {self.replica_restarts}",
               f"  differences found: {len(self.failures)} distinct"]
        if self.refusals:
            out.append("  refusals (0A000) by message:")
            out += [f"    {c:5d}  {m}" for m, c in self.refusals.most_common()]
        if self.documented:
            out.append("  documented refusals:")
            out += [f"    {c:5d}  {m}" for m, c in self.documented.most_common()]
        if self.pg_unsupported:
            out.append("  not comparable (PostgreSQL refuses or times out):")
            out += [f"    {c:5d}  {m}" for m, c in self.pg_unsupported.most_common()]
        if self.eval_order:
            out.append("  data errors only one system raises, let pass (--lenient-errors):")
            out += [f"    {c:5d}  {m}" for m, c in self.eval_order.most_common()]
        if self.internal_both:
            out.append("  internal errors (XX000) where PostgreSQL errored too:")
            out += [f"    {c:5d}  {m}" for m, c in self.internal_both.most_common()]
        for i, f in enumerate(self.failures, 1):
            out.append(f"\n--- difference {i} ---\n{f.report()}")
        return "\n".join(out)


# ---- the fuzzer --------------------------------------------------------------------------------


class Fuzzer:
    def __init__(self, ss_dsn: str, pg_dsn: str, seed: int, features: Features | None = None,
                 queries_per_round: int = 60, mv_per_round: int = 4, mv_changes: int = 4,
                 tlp_rate: float = 0.3, shrink_seconds: float = 30.0, check_types: bool = True,
                 max_failures: int | None = None, log: Callable[[str], None] = print,
                 max_rows: int = 10, lenient_errors: bool = False, check_scale: bool = False):
        self.ss = Endpoint(ss_dsn, "slipstream")
        self.pg = Endpoint(pg_dsn, "postgres")
        self.seed = seed
        self.features = features or Features()
        self.queries_per_round = queries_per_round
        self.mv_per_round = mv_per_round
        self.mv_changes = mv_changes
        self.tlp_rate = tlp_rate
        self.shrink_seconds = shrink_seconds
        self.check_types = check_types
        self.max_failures = max_failures
        self.log = log
        self.max_rows = max_rows
        self.lenient_errors = lenient_errors
        self.check_scale = check_scale
        self.run_id = uuid.uuid4().hex[:6]
        self.fresh = 0
        self.summary = Summary(seed, self.features)
        self.hard_deadline: float | None = None   # shrinking stops here too (bounded runs)
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fuzz-pg")

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.ss.close()
        self.pg.close()

    # ---- plumbing --------------------------------------------------------------------------

    def both(self, sql: str, pg_sql: str | None = None) -> tuple[Result, Result]:
        """Run on both systems at once (each waits on its own server: two cores, two servers)."""
        pg = self.pool.submit(self.pg.run, pg_sql if pg_sql is not None else sql)
        ss = self.ss.run(sql)
        return ss, pg.result()

    def fresh_names(self) -> Names:
        self.fresh += 1
        return Names(f"fz{self.run_id}_{self.fresh}_")

    def install(self, schema: Schema, n: Names) -> str | None:
        """Create and fill the tables on both systems; rows PostgreSQL rejects are dropped from
        the schema. Returns a description of a difference, or None."""
        for t in schema.tables:
            for sql in (f"DROP TABLE IF EXISTS {n.table(t.name)} CASCADE", t.ddl(n)):
                ss, pg = self.both(sql)
                if not pg.ok:
                    raise RuntimeError(f"PostgreSQL rejects {sql}: {pg.message}")
                if not ss.ok:
                    return f"{sql}: Slipstream {ss.sqlstate} {ss.message}"
            if not t.rows:
                continue
            pg = self.pg.run(t.insert(n))
            if not pg.ok:
                kept = [r for r in t.rows if self.pg.run(t.insert(n, [r])).ok]
                t.rows = kept
                if not kept:
                    continue
            ss = self.ss.run(t.insert(n))
            if not ss.ok:
                return f"{t.insert(n)}: Slipstream {ss.sqlstate} {ss.message}"
        return None

    def drop(self, schema: Schema, n: Names) -> None:
        for sql in schema.drop_sql(n):
            self.both(sql)

    # ---- main loop -------------------------------------------------------------------------

    def run(self, seconds: float | None = None, rounds: int | None = None,
            max_queries: int | None = None) -> Summary:
        t0 = time.monotonic()
        deadline = t0 + seconds if seconds else None
        self.hard_deadline = deadline
        r = 0
        try:
            while True:
                if rounds is not None and r >= rounds:
                    break
                if deadline and time.monotonic() >= deadline:
                    break
                if max_queries and self.summary.queries >= max_queries:
                    break
                if self.max_failures is not None and len(self.summary.failures) >= self.max_failures:
                    break
                self.round(r, deadline)
                r += 1
                self.summary.rounds = r
        finally:
            self.summary.seconds = time.monotonic() - t0
            self.summary.statements = self.ss.statements + self.pg.statements
            self.summary.ss_seconds, self.summary.pg_seconds = self.ss.seconds, self.pg.seconds
            self.summary.replica_restarts = self.ss.replica_restarts
        return self.summary

    def round(self, r: int, deadline: float | None = None, only_query: int | None = None) -> None:
        rng = random.Random(f"{self.seed}-{r}")
        schema = random_schema(rng, self.max_rows, new_types=self.features.new_types)
        n = self.fresh_names()
        problem = self.install(schema, n)
        if problem is None:
            problem = self.compare_tables(schema, n)
        if problem is not None:
            f = Failure("setup", "data", f"seed {self.seed} round {r}", problem, "",
                        Case("setup", copy.deepcopy(schema), Select(items=[(Lit("1", "integer"), "x0")])))
            f.prekey = "setup/data/" + normalize_message(problem.splitlines()[0])
            f.ss = f.pg = "(see above)"
            self.record(f, shrink=False)
            self.drop(schema, n)
            return
        mv_candidates: list[Query] = []
        try:
            for i in range(self.queries_per_round):
                if only_query is not None and i != only_query:
                    continue
                if deadline and time.monotonic() >= deadline:
                    break
                if self.max_failures is not None and len(self.summary.failures) >= self.max_failures:
                    break
                gen = QueryGen(random.Random(f"{self.seed}-{r}-{i}"), schema, self.features)
                q = gen.query()
                where = f"seed {self.seed} round {r} query {i}"
                v = self.check_query(schema, n, q, where)
                if v.status == "ok":
                    if random.Random(f"{self.seed}-{r}-{i}-tlp").random() < self.tlp_rate:
                        self.check_tlp(schema, n, q, gen, where)
                    if (q.limit is None and q.offset is None) or (q.order_by and q.total_order()):
                        mv_candidates.append(q)
            if self.mv_per_round and mv_candidates and (not deadline or time.monotonic() < deadline):
                picks = rng.sample(mv_candidates, min(self.mv_per_round, len(mv_candidates)))
                self.check_views(schema, n, picks, rng, f"seed {self.seed} round {r}")
        finally:
            self.drop(schema, n)

    def compare_tables(self, schema: Schema, n: Names) -> str | None:
        for t in schema.tables:
            sql = f"SELECT * FROM {n.table(t.name)}"
            ss, pg = self.both(sql)
            v = self._judge(None, ss, pg)
            if v.failed:
                return f"table {t.name} after INSERT: {v.detail}\n  Slipstream: {ss.show()}\n" \
                       f"  PostgreSQL: {pg.show()}"
        return None

    # ---- the differential check ------------------------------------------------------------

    def tally(self, v: Verdict, ss: Result, pg: Result) -> None:
        s = self.summary
        s.queries += 1
        if v.status == "ok":
            s.ok += 1
        elif v.status == "both_error":
            s.both_error += 1
            if ss.sqlstate == "XX000":
                s.internal_both[normalize_message(ss.message or "")] += 1
        elif v.status == "refused":
            s.refusals[normalize_message(v.detail)] += 1
        elif v.status == "documented":
            s.documented[v.detail] += 1
        elif v.status == "eval_order":
            s.eval_order[normalize_message(v.detail)] += 1
        elif v.status == "pg_unsupported":
            s.pg_unsupported[normalize_message(v.detail)] += 1

    def _judge(self, q, ss: Result, pg: Result, **kw) -> Verdict:
        return judge(q, ss, pg, self.check_types, lenient_errors=self.lenient_errors,
                     check_scale=self.check_scale, **kw)

    def judge_sql(self, q: Query, sql: str, ss: Result, pg: Result, **kw) -> Verdict:
        v = self._judge(q, ss, pg, **kw)
        if v.failed and v.kind.startswith("pg_error_only:22"):
            # PostgreSQL folds constant subexpressions while planning (even in CASE branches it
            # may never take, or in CTEs nobody reads); if EXPLAIN fails too, that is where the
            # error comes from, and Slipstream's evaluating only what it needs is no bug.
            if not self.pg.run(f"EXPLAIN {sql}").ok:
                return Verdict("pg_unsupported", detail="PostgreSQL raises it while planning "
                                                        f"(constant folding): {pg.message}")
        return v

    def check_query(self, schema: Schema, n: Names, q: Query, where: str) -> Verdict:
        sql = q.render(n)
        ss, pg = self.both(sql)
        v = self.judge_sql(q, sql, ss, pg)
        self.tally(v, ss, pg)
        if v.failed:
            case = Case("query", copy.deepcopy(schema), q)
            self.record(Failure("query", v.kind, where, v.detail, sql, case), n=n, ss=ss, pg=pg)
        return v

    # ---- TLP ---------------------------------------------------------------------------------

    def check_tlp(self, schema: Schema, n: Names, q: Query, gen: QueryGen, where: str) -> None:
        if not isinstance(q, Select) or not q.from_ or getattr(q, "has_window", False):
            return   # (a partition's WHERE would change the rows a window function sees)
        if not self.features.where_outer and any(join_kinds(f) & {"RIGHT", "FULL"} for f in q.from_):
            return   # adding a WHERE over RIGHT/FULL joins meets the known pushdown bug
        scope = getattr(q, "scope", None)
        if not scope:
            return
        atoms = referenceable(scope)
        agg_atoms = getattr(q, "agg_atoms", None)
        rng = gen.rng
        choice = rng.random()
        if agg_atoms is not None and q.group_by and choice < 0.5:
            case = Case("tlp-having", schema, q, pred=gen.expr("bool", agg_atoms, 2))
        elif choice < 0.7 and agg_atoms is None:
            case = Case("tlp-where", schema, q, pred=gen.expr("bool", atoms, rng.randint(1, 3)))
        else:
            agg = rng.choice(["count", "sum", "min", "max"])
            k = rng.choice(["int", "numeric", "float"]) if agg == "sum" else \
                rng.choice(["int", "numeric", "float", "text", "date"])
            arg = gen.expr(k, atoms, 1)
            if agg == "count":
                call = Lit("count(*)", "bigint") if rng.random() < 0.4 else Op("count({0})", [arg], "bigint")
            else:
                call = Op(f"{agg}({{0}})", [arg], base_type(arg.typ))
            keys = [rng.choice(atoms)] if rng.random() < 0.4 else []
            aq = Select(items=[(e, f"x{i}") for i, e in enumerate(keys + [call])], from_=q.from_,
                        where=q.where, group_by=list(keys), ctes=q.ctes)
            case = Case("tlp-agg", schema, aq, pred=gen.expr("bool", atoms, rng.randint(1, 3)), agg=agg)
        self.summary.tlp_checks += 1
        outcome = self.tlp_outcome(case, n)
        if outcome is not None and outcome.failed:
            orig, combined = tlp_sql(case, n)
            case.schema = copy.deepcopy(schema)
            self.record(Failure(case.mode, outcome.kind, where, outcome.detail, combined, case), n=n)

    def tlp_outcome(self, case: Case, n: Names, count_invalid: bool = True) -> Verdict | None:
        """Slipstream's answer to the query must equal the union of its partitions. None when
        the check does not apply (errors), Verdict('ok') when it holds."""
        orig, combined = tlp_sql(case, n)
        ss_o, ss_c = self.ss.run(orig), self.ss.run(combined)
        if not ss_o.ok or not ss_c.ok:
            if ss_o.ok and ss_c.sqlstate not in ("0A000",):
                pg_c = self.pg.run(combined)
                if pg_c.ok:   # the partitions fail on Slipstream only: a plain difference
                    return Verdict("fail", f"ss_error:{ss_c.sqlstate}",
                                   f"partitioned query errors on Slipstream only: {ss_c.show()}")
            return None
        rels = rel_tolerances(ss_o.oids, ss_c.oids, len(ss_o.oids))
        if multiset_eq(ss_o.rows, ss_c.rows, rels):
            return Verdict("ok")
        # Make sure the partitioning itself is right: PostgreSQL must agree.
        pg_o, pg_c = self.pg.run(orig), self.pg.run(combined)
        if not (pg_o.ok and pg_c.ok and multiset_eq(pg_o.rows, pg_c.rows,
                                                    rel_tolerances(pg_o.oids, pg_c.oids, len(pg_o.oids)))):
            if count_invalid:
                self.summary.tlp_invalid += 1
            return None
        return Verdict("fail", "tlp", f"query: {ss_o.show()} / partitions: {ss_c.show()}")

    # ---- materialized views ------------------------------------------------------------------

    def check_views(self, schema: Schema, n: Names, queries: list[Query], rng: random.Random,
                    where: str) -> None:
        s = self.summary
        views: list[tuple[str, Query]] = []
        for j, q in enumerate(queries):
            name = f"{n.prefix}mv{j}"
            sql = q.render(n)
            ss = self.ss.run(f"CREATE MATERIALIZED VIEW {name} AS {sql}")
            pg = self.pg.run(f"CREATE VIEW {name} AS {sql}")
            if not ss.ok:
                if pg.ok and ss.sqlstate == "0A000":
                    s.refusals[normalize_message("materialized view: " + (ss.message or ""))] += 1
                elif pg.ok:
                    self.record(Failure("mv", "create", where, f"CREATE MATERIALIZED VIEW fails: "
                                        f"{ss.show()}", sql, Case("mv", schema, q)), shrink=False)
                continue
            if not pg.ok:
                continue
            s.mv_views += 1
            views.append((name, q))
        if not views:
            return
        initial = copy.deepcopy(schema)
        history: list[Dml] = []
        broken: set[str] = set()
        for step in range(self.mv_changes + 1):
            if step > 0:
                d = random_dml(rng, schema)
                history.append(d)
                s.dml += 1
                ss, pg = self.both(d.render(n))
                problem = None
                if ss.ok != pg.ok and ss.sqlstate != "0A000":
                    problem = f"{d.render(Names())}: Slipstream {ss.show()} / PostgreSQL {pg.show()}"
                elif ss.ok and pg.ok and ss.status != pg.status:
                    problem = f"{d.render(Names())}: Slipstream {ss.status} / PostgreSQL {pg.status}"
                elif not ss.ok and ss.sqlstate == "0A000":
                    s.refusals[normalize_message("DML: " + (ss.message or ""))] += 1
                    return
                if problem is None:
                    problem = self.compare_tables(schema, n)
                if problem is not None:
                    case = Case("mv", initial, views[0][1], dml=list(history))
                    self.record(Failure("dml", "mismatch", f"{where} change {step}", problem, "",
                                        case), shrink=False)
                    return
            for name, q in views:
                if name in broken:
                    continue
                s.mv_checks += 1
                ss, pg = self.both(f"SELECT * FROM {name}")
                v = self._judge(q, ss, pg, order=[], limit=False)
                if v.status in ("refused", "documented", "both_error", "eval_order", "pg_unsupported"):
                    self.tally(v, ss, pg)
                    s.queries -= 1
                if v.failed:
                    broken.add(name)
                    case = Case("mv", initial, q, dml=list(history))
                    self.record(Failure("mv", v.kind, f"{where} change {step}", v.detail,
                                        q.render(n), case))

    def mv_outcome(self, case: Case) -> Verdict:
        """Replay an MV case from scratch: fail if the view differs at any step."""
        n = self.fresh_names()
        schema = copy.deepcopy(case.schema)
        try:
            problem = self.install(schema, n)
            if problem:
                return Verdict("ok")
            name = f"{n.prefix}mv"
            sql = case.query.render(n)
            ss, pg = self.ss.run(f"CREATE MATERIALIZED VIEW {name} AS {sql}"), \
                self.pg.run(f"CREATE VIEW {name} AS {sql}")
            if not ss.ok or not pg.ok:
                return Verdict("ok")
            for step in range(len(case.dml) + 1):
                if step:
                    ss, pg = self.both(case.dml[step - 1].render(n))
                    if ss.ok != pg.ok:
                        return Verdict("ok")
                ss, pg = self.both(f"SELECT * FROM {name}")
                v = self._judge(case.query, ss, pg, order=[], limit=False)
                if v.failed:
                    # Only a view-maintenance difference if the plain query agrees now.
                    ss_q = self.ss.run(case.query.render(n))
                    plain = self._judge(case.query, ss_q, pg, order=[], limit=False)
                    return Verdict("fail", v.kind, v.detail + ("" if plain.failed else
                                   " (the plain SELECT agrees: view maintenance)"))
            return Verdict("ok")
        finally:
            self.drop(schema, n)

    # ---- failures and shrinking ------------------------------------------------------------

    def record(self, f: Failure, n: Names | None = None, shrink: bool = True,
               ss: Result | None = None, pg: Result | None = None) -> None:
        if f.kind.startswith("ss_error") and ss is not None:
            f.prekey = f"{f.mode}/{f.kind}/{normalize_message(ss.message or '')}"
        elif f.kind.startswith("pg_error_only") and pg is not None:
            f.prekey = f"{f.mode}/{f.kind}/{normalize_message(pg.message or '')}"
        if f.prekey:
            for g in self.summary.failures:
                if g.prekey == f.prekey:
                    g.count += 1
                    self.log(f"(seen before) [{f.mode}/{f.kind}] {f.where}")
                    return
        if shrink:
            t0 = time.monotonic()
            try:
                self.shrink(f, n)
            except Exception as e:  # a shrinker problem must not hide the failure
                f.detail += f" (shrinking stopped: {e!r})"
            self.summary.shrink_seconds += time.monotonic() - t0
        if not f.ss and f.case is not None and f.mode != "setup":
            self.describe(f)
        if self.summary.add_failure(f):
            self.log(f"NEW DIFFERENCE {f.report()}")
        else:
            self.log(f"(seen before) [{f.mode}/{f.kind}] {f.where}")

    def outcome(self, case: Case, n: Names) -> Verdict | None:
        if case.mode == "query":
            sql = case.query.render(n)
            ss, pg = self.both(sql)
            return self.judge_sql(case.query, sql, ss, pg)
        if case.mode.startswith("tlp"):
            return self.tlp_outcome(case, n, count_invalid=False)
        return self.mv_outcome(case)

    def describe(self, f: Failure) -> None:
        """Fill in both systems' answers for the (minimised) case."""
        n = self.fresh_names()
        case = f.case
        if case.mode == "mv":
            f.ss, f.pg = self.mv_answers(case)
            return
        schema = copy.deepcopy(case.schema)
        try:
            if self.install(schema, n):
                return
            if case.mode == "query":
                ss, pg = self.both(case.query.render(n))
                ordered = bool(case.query.order_by)
                f.ss, f.pg = ss.show(ordered), pg.show(ordered)
            else:
                orig, combined = tlp_sql(case, n)
                f.ss = f"query {self.ss.run(orig).show()} / partitions {self.ss.run(combined).show()}"
                f.pg = f"query {self.pg.run(orig).show()} / partitions {self.pg.run(combined).show()}"
        finally:
            self.drop(schema, n)

    def mv_answers(self, case: Case) -> tuple[str, str]:
        n = self.fresh_names()
        schema = copy.deepcopy(case.schema)
        try:
            self.install(schema, n)
            name = f"{n.prefix}mv"
            sql = case.query.render(n)
            c = self.ss.run(f"CREATE MATERIALIZED VIEW {name} AS {sql}")
            if not c.ok:
                return c.show(), ""
            for d in case.dml:
                self.both(d.render(n))
            return self.ss.run(f"SELECT * FROM {name}").show(), self.pg.run(sql).show()
        finally:
            self.drop(schema, n)

    def shrink(self, f: Failure, n: Names | None) -> None:
        """Greedy: try smaller variants of the query, the predicate, the changes and the data,
        keep any that fails the same way, until nothing smaller fails or time runs out."""
        deadline = time.monotonic() + self.shrink_seconds
        if self.hard_deadline is not None:
            deadline = min(deadline, max(self.hard_deadline, time.monotonic() + 2))
        case = f.case
        same = lambda v: v is not None and v.failed and v.kind == f.kind  # noqa: E731
        installed: dict[str, Names] = {}

        def names_for(c: Case) -> Names | None:
            if c.mode == "mv":
                return None
            key = repr(c.schema)
            if key not in installed:
                for old_key, old in list(installed.items()):
                    self.drop(schema_of[old_key], old)
                    del installed[old_key]
                nn = self.fresh_names()
                sc = copy.deepcopy(c.schema)
                if self.install(sc, nn) is not None:
                    self.drop(sc, nn)
                    return None
                installed[key] = nn
                schema_of[key] = sc
            return installed[key]

        schema_of: dict[str, Schema] = {}
        try:
            # First confirm that it reproduces on freshly created tables.
            nn = names_for(case)
            if case.mode != "mv" and nn is None:
                return
            first = self.outcome(case, nn)
            if not same(first):
                f.detail += (" (did not reproduce on freshly created tables: "
                             f"{first.status + ' ' + first.kind if first else 'not applicable'})")
                return
            improved = True
            while improved and time.monotonic() < deadline:
                improved = False
                # Most aggressive reductions first: the greedy search then converges quickly.
                for cand in sorted(candidates(case), key=case_size):
                    if time.monotonic() >= deadline:
                        break
                    nn = names_for(cand)
                    if cand.mode != "mv" and nn is None:
                        continue
                    if same(self.outcome(cand, nn)):
                        case = cand
                        f.shrink_steps += 1
                        improved = True
                        break
        finally:
            for key, old in installed.items():
                self.drop(schema_of[key], old)
            f.case = case


def candidates(case: Case):
    """Smaller variants of a case, most promising first."""
    # Query (and predicate) structure.
    for attr in ("query", "pred"):
        root = getattr(case, attr)
        if root is None:
            continue
        for path, node in list(walk_slots(root)):
            for v in node.shrinks():
                if v is None:
                    continue
                new_root = replace_at(root, path, v)
                if attr == "query" and case.mode == "tlp-agg" and not _agg_shape_ok(new_root):
                    continue
                yield replace(case, **{attr: new_root})
    # Changes (materialized views).
    for i in range(len(case.dml)):
        yield replace(case, dml=case.dml[:i] + case.dml[i + 1:])
    # Data: unused tables, then halves of the rows, then single rows.
    used = case.tables_used()
    unused = [t for t in case.schema.tables if t.name not in used]
    if unused:
        yield replace(case, schema=Schema([t for t in case.schema.tables if t.name in used]))
    for ti, t in enumerate(case.schema.tables):
        nrows = len(t.rows)
        chunks = [(0, nrows)] if nrows > 1 else []
        if nrows >= 4:
            chunks += [(0, nrows // 2), (nrows // 2, nrows)]
        chunks += [(i, i + 1) for i in range(nrows)]
        for lo, hi in chunks:
            tables = list(case.schema.tables)
            tables[ti] = Table(t.name, list(t.columns), t.rows[:lo] + t.rows[hi:])
            yield replace(case, schema=Schema(tables))
    # Columns nobody references.
    text = case.query.render(Names()) + (case.pred.render(Names()) if case.pred is not None else "")
    text += " ".join(d.template for d in case.dml)
    if case.mode != "mv" and "*" not in text:
        for ti, t in enumerate(case.schema.tables):
            if len(t.columns) > 1:
                for ci, (c, _) in enumerate(t.columns):
                    if not re.search(rf"\b{c}\b", text):
                        tables = list(case.schema.tables)
                        tables[ti] = Table(t.name, t.columns[:ci] + t.columns[ci + 1:],
                                           [r[:ci] + r[ci + 1:] for r in t.rows])
                        yield replace(case, schema=Schema(tables))


def case_size(c: Case) -> int:
    n = size(c.query) + (size(c.pred) if c.pred is not None else 0) + 3 * len(c.dml)
    return n + sum(len(t.rows) + len(t.columns) for t in c.schema.tables)


def _agg_shape_ok(q) -> bool:
    return isinstance(q, Select) and q.star is None and len(q.items) >= 1 and \
        len(q.items) == len(q.group_by) + 1


# ---- random changes -----------------------------------------------------------------------------


def random_dml(rng: random.Random, schema: Schema) -> Dml:
    t = rng.choice(schema.tables)
    c = rng.random()

    def cond() -> str:
        col, typ = rng.choice(t.columns)
        known = [r[t.columns.index((col, typ))] for r in t.rows if r]
        v = rng.choice(known) if known and rng.random() < 0.7 else pick_value(rng, typ)
        form = rng.random()
        if v == "NULL" or form < 0.15:
            return f"{col} IS NULL"
        if form < 0.6:
            return f"{col} = {v}"
        if form < 0.9 and kind(typ) != "bool" and orderable(typ):
            return f"{col} {rng.choice(['<', '>', '<=', '>=', '<>'])} {v}"
        return "true"

    if c < 0.45 or not t.rows:
        rows = []
        for _ in range(rng.randint(1, 3)):
            if t.rows and rng.random() < 0.3:
                rows.append(list(rng.choice(t.rows)))
            else:
                rows.append(random_row(rng, t, 0.2))
        t.rows.extend(rows)
        values = ", ".join("(" + ", ".join(r) + ")" for r in rows)
        return Dml(t.name, f"INSERT INTO {{T}} VALUES {values}")
    if c < 0.75:
        col, typ = rng.choice(t.columns)
        v = "NULL" if rng.random() < 0.15 else pick_value(rng, typ, rare_ok=False)
        return Dml(t.name, f"UPDATE {{T}} SET {col} = {v} WHERE {cond()}")
    return Dml(t.name, f"DELETE FROM {{T}} WHERE {cond()}")
