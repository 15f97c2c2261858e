"""Running SQL on both systems and judging the answers.

`Endpoint` wraps one psycopg connection (reconnecting when it breaks, cancelling statements
that run too long); `judge` decides whether Slipstream's answer to a query matches
PostgreSQL's.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

import psycopg

from tests.fuzz.compare import (float_abs_tolerance, max_fraction_digits, multiset_eq, norm_oid,
                                rel_tolerances, sequence_eq, show_rows)
from tests.fuzz.sqlast import Names
from tests.fuzz.sqlast import Query


@dataclass
class Result:
    rows: list[tuple] | None = None
    oids: list[int] = field(default_factory=list)
    sqlstate: str | None = None
    message: str | None = None
    status: str | None = None       # command tag, for DML

    @property
    def ok(self) -> bool:
        return self.sqlstate is None

    def show(self, ordered: bool = False) -> str:
        if not self.ok:
            return f"ERROR {self.sqlstate}: {self.message}"
        if self.rows is None:
            return self.status or "OK"
        if ordered:
            from tests.fuzz.compare import _show
            body = "; ".join("(" + ", ".join(_show(v) for v in r) + ")" for r in self.rows[:12])
            return f"{len(self.rows)} row(s) in order: {body}" + (" ..." if len(self.rows) > 12 else "")
        return show_rows(self.rows)


class Endpoint:
    """One connection to Slipstream or PostgreSQL."""

    def __init__(self, dsn: str, name: str, timeout: float = 60.0):
        self.dsn, self.name, self.timeout = dsn, name, timeout
        self.conn: psycopg.Connection | None = None
        self.statements = 0
        self.seconds = 0.0
        self.replica_restarts = 0

    def connect(self) -> psycopg.Connection:
        if self.conn is None or self.conn.closed:
            self.conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=15,
                                        prepare_threshold=None)
            # json and jsonb as their text: PostgreSQL's output form is part of the answer
            # (psycopg would parse them into dicts, hiding how numbers and keys print).
            from psycopg.types.string import TextLoader
            for name in ("json", "jsonb"):
                self.conn.adapters.register_loader(name, TextLoader)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def run(self, sql: str) -> Result:
        r = self._run(sql)
        if r.sqlstate == "XX000" and "replica restarted" in (r.message or ""):
            # Some statement (maybe this one) crashed the compute replica: every statement in
            # flight fails. Wait for the new replica and try once more; a statement that
            # crashes it again is the culprit and keeps its error.
            self.replica_restarts += 1
            time.sleep(3)
            r = self._run(sql)
        return r

    def _run(self, sql: str) -> Result:
        conn = self.connect()
        timer = threading.Timer(self.timeout, conn.cancel)
        timer.start()
        t0 = time.monotonic()
        self.statements += 1
        try:
            cur = conn.execute(sql)
            if cur.description is None:
                return Result(status=cur.statusmessage)
            rows = [tuple(r) for r in cur.fetchall()]
            return Result(rows=rows, oids=[d.type_code for d in cur.description],
                          status=cur.statusmessage)
        except psycopg.Error as e:
            state = e.sqlstate or ("57014" if isinstance(e, psycopg.errors.QueryCanceled) else "CONN")
            msg = (e.diag.message_primary if e.diag and e.diag.message_primary else str(e)).strip()
            if conn.closed or state == "CONN":
                self.close()
                state = state if state != "CONN" else "08000"
            return Result(sqlstate=state, message=msg.splitlines()[0] if msg else "")
        except (UnicodeDecodeError, ValueError, OverflowError) as e:   # undecodable value
            return Result(sqlstate="XXDEC", message=f"client could not decode the result: {e}")
        finally:
            timer.cancel()
            self.seconds += time.monotonic() - t0


@dataclass
class Verdict:
    status: str            # ok | both_error | refused | documented | fail
    kind: str = ""         # for fail: mismatch | types | width | ss_error | pg_error_only | ...
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "fail"


_DECIMAL_TEXT = re.compile(r"-?\d+\.\d*0")


def _without_display_scale(rows):
    """Rows with every text value that is a decimal number with trailing zeros (or a list of
    such) written without them: `'14.0000'` as `'14'`."""
    def strip(v):
        if isinstance(v, str) and _DECIMAL_TEXT.fullmatch(v):
            return v.rstrip("0").rstrip(".")
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return [tuple(strip(v) for v in r) for r in rows] if rows else rows


# A Slipstream refusal of a numeric result it cannot represent (more than 16 fractional
# digits): documented, see the brief in tests/fuzz/README.md.
NUMERIC_DIGITS = 16


def judge(q: Query | None, ss: Result, pg: Result, check_types: bool = True,
          order: list | None = None, limit: bool | None = None, total: bool | None = None,
          lenient_errors: bool = False, check_scale: bool = False) -> Verdict:
    """Compare Slipstream's result `ss` with PostgreSQL's `pg` for query q (its ORDER BY and
    LIMIT decide how: ordered on a total order, else as multisets, else only the row count)."""
    if not ss.ok and not pg.ok:
        return Verdict("both_error")
    if not ss.ok:
        if ss.sqlstate == "0A000":
            return Verdict("refused", detail=ss.message or "")
        if ss.sqlstate == "22003" and pg.rows and max_fraction_digits(pg.rows) > NUMERIC_DIGITS:
            return Verdict("documented", detail=f"numeric with more than {NUMERIC_DIGITS} "
                                                "fractional digits")
        if ss.sqlstate == "22003" and ss.message == "value overflows numeric format":
            # docs/sql-semantics.md: numeric holds 38 digits, PostgreSQL's many more.
            return Verdict("documented", detail="numeric beyond 38 digits")
        if lenient_errors and ss.sqlstate.startswith("22"):
            # Evaluation order: Slipstream evaluates column-wise what PostgreSQL may skip
            # (docs/sql-semantics.md); counted, not failed, when asked to be lenient.
            return Verdict("eval_order", detail=f"{ss.sqlstate} {ss.message}")
        return Verdict("fail", f"ss_error:{ss.sqlstate}", "Slipstream errors, PostgreSQL does not")
    if not pg.ok:
        if pg.sqlstate in ("57014", "0A000"):
            # PostgreSQL timed out, or cannot run it (FULL JOIN on a condition that is not
            # merge- or hash-joinable): nothing to compare against.
            return Verdict("pg_unsupported", detail=pg.message or "")
        if pg.sqlstate.startswith("22") and not ss.rows:
            # PostgreSQL evaluates constant subexpressions while planning, so `1/0` errors
            # there even over no rows; Slipstream evaluates per row.
            return Verdict("pg_unsupported", detail="PostgreSQL folds a failing constant "
                                                   f"({pg.sqlstate}), Slipstream has no rows")
        if lenient_errors and pg.sqlstate.startswith("22"):
            # The other direction: PostgreSQL's plan evaluated an expression on a row that
            # Slipstream filtered out first.
            return Verdict("eval_order", detail=f"PostgreSQL only: {pg.sqlstate} {pg.message}")
        return Verdict("fail", f"pg_error_only:{pg.sqlstate}", "PostgreSQL errors, Slipstream does not")
    if ss.rows is None or pg.rows is None:
        return Verdict("ok")
    width = len(pg.oids)
    if len(ss.oids) != width:
        return Verdict("fail", "width", f"{len(ss.oids)} columns vs {width}")
    rels = rel_tolerances(ss.oids, pg.oids, width)
    tol = float_abs_tolerance(q.render(Names())) if q is not None else 1e-300
    if order is None:
        order = q.order_by if q is not None else []
    if limit is None:
        limit = q is not None and (q.limit is not None or q.offset is not None)
    if total is None:
        total = q is not None and q.total_order()
    if order and total:
        if not sequence_eq(ss.rows, pg.rows, rels, tol):
            return Verdict("fail", "mismatch", "ordered results differ")
    else:
        if order:
            idx = [k.pos - 1 for k in order]
            keys = lambda rows: [tuple(r[i] for i in idx) for r in rows]  # noqa: E731
            if not sequence_eq(keys(ss.rows), keys(pg.rows), [rels[i] for i in idx], tol):
                return Verdict("fail", "order", "ORDER BY keys differ (order or values)")
        if limit:
            if len(ss.rows) != len(pg.rows):
                return Verdict("fail", "mismatch", f"{len(ss.rows)} rows vs {len(pg.rows)}")
        elif not multiset_eq(ss.rows, pg.rows, rels, tol):
            if multiset_eq(_without_display_scale(ss.rows), _without_display_scale(pg.rows), rels, tol):
                # docs/sql-semantics.md, "Numeric display scale": a numeric shown as text
                # (`(x / 0.5)::text` inside an array) has no trailing zeros here
                return Verdict("documented", detail="numeric display scale in text")
            return Verdict("fail", "mismatch", "results differ")
    if check_types:
        a, b = [norm_oid(o) for o in ss.oids], [norm_oid(o) for o in pg.oids]
        if a != b:
            return Verdict("fail", "types", f"column types {ss.oids} vs {pg.oids}")
        col = scale_difference(ss.rows, pg.rows) if check_scale and not limit else None
        if col is not None:
            return Verdict("fail", "scale", f"numeric scales (digits shown after the point) of "
                                            f"column {col + 1} differ")
    return Verdict("ok")


def scale_difference(ss_rows: list[tuple], pg_rows: list[tuple]) -> int | None:
    """The first column whose numeric values print with different numbers of fractional digits
    (1.50 vs 1.5), ignoring columns where PostgreSQL shows more than Slipstream can keep."""
    from collections import Counter
    from decimal import Decimal
    width = len(pg_rows[0]) if pg_rows else 0
    for j in range(width):
        pg_scales = Counter(-r[j].as_tuple().exponent for r in pg_rows
                            if isinstance(r[j], Decimal) and r[j].is_finite())
        if not pg_scales or max(pg_scales) > NUMERIC_DIGITS:
            continue
        ss_scales = Counter(-r[j].as_tuple().exponent for r in ss_rows
                            if isinstance(r[j], Decimal) and r[j].is_finite())
        if ss_scales != pg_scales:
            return j
    return None


_NORM = [(re.compile(r"'[^']*'"), "'…'"), (re.compile(r'"[^"]*"'), '"…"'),
         (re.compile(r"\b\d+\b"), "N")]


def normalize_message(msg: str) -> str:
    for rx, rep in _NORM:
        msg = rx.sub(rep, msg)
    return msg
