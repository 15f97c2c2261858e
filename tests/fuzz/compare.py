"""Comparing result sets: multisets (or sequences) of rows, floats and numerics with a small
tolerance, NaN equal to NaN, ints never equal to booleans."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from decimal import Decimal
from typing import Any, Sequence

FLOAT4_OID = 700
FLOAT4_REL = 1e-6
FLOAT8_REL = 1e-9
NUMERIC_REL = Decimal("1e-12")
# PostgreSQL gives numeric division results >= 16 significant digits (often 20); Slipstream keeps
# 16 fractional digits. Anything within this absolute distance is the same value.
NUMERIC_ABS = Decimal("1e-15")

# Type OIDs that are the same thing to a client comparing answers (varchar, bpchar, name and
# their arrays are text).
_SAME_OID = {1043: 25, 705: 25, 19: 25, 1042: 25, 1015: 1009, 1014: 1009, 1003: 1009}
# A number written in text (concat, format, ::text of a numeric).
_NUMBER_IN_TEXT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+")


def norm_oid(oid: int) -> int:
    return _SAME_OID.get(oid, oid)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def value_eq(a: Any, b: Any, rel: float = FLOAT8_REL, abs_tol: float = 1e-300) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) or isinstance(b, float):
            fa, fb = float(a), float(b)
            if math.isnan(fa) or math.isnan(fb):
                return math.isnan(fa) and math.isnan(fb)
            if math.isinf(fa) or math.isinf(fb):
                return fa == fb
            return math.isclose(fa, fb, rel_tol=rel, abs_tol=abs_tol)
        da, db = Decimal(a), Decimal(b)
        if da.is_nan() or db.is_nan():
            return da.is_nan() and db.is_nan()
        if da == db:
            return True
        diff = abs(da - db)
        return diff <= NUMERIC_ABS or diff <= NUMERIC_REL * max(abs(da), abs(db))
    if type(a) is not type(b):
        return False
    if a == b:
        return True
    if isinstance(a, str):
        return numeric_text_eq(a, b)
    return False


def numeric_text_eq(a: str, b: str) -> bool:
    """Texts equal but for how numerics print in them (docs/sql-semantics.md, known differences:
    unconstrained numeric shows its value's own digits, `1.50 + 1` is `2.5` where PostgreSQL
    shows `2.50`, and keeps 16 fractional digits where a division shows up to 20): the same
    words around numbers whose values agree as numerics do."""
    if not (any(ch.isdigit() for ch in a) and any(ch.isdigit() for ch in b)):
        return False
    if _NUMBER_IN_TEXT.sub("#", a) != _NUMBER_IN_TEXT.sub("#", b):
        return False
    for x, y in zip(_NUMBER_IN_TEXT.findall(a), _NUMBER_IN_TEXT.findall(b)):
        if x == y:
            continue
        if "." not in x and "." not in y:
            return False          # integers (and dates, times) print one way only
        try:
            if not value_eq(Decimal(x), Decimal(y)):
                return False
        except ArithmeticError:
            return False
    return True


def row_eq(r1: Sequence, r2: Sequence, rels: Sequence[float], abs_tol: float = 1e-300) -> bool:
    return len(r1) == len(r2) and all(value_eq(a, b, rel, abs_tol) for a, b, rel in zip(r1, r2, rels))


def rel_tolerances(oids_a: Sequence[int], oids_b: Sequence[int], width: int) -> list[float]:
    out = []
    for i in range(width):
        oa = oids_a[i] if i < len(oids_a) else 0
        ob = oids_b[i] if i < len(oids_b) else 0
        out.append(FLOAT4_REL if FLOAT4_OID in (oa, ob) else FLOAT8_REL)
    return out


def _coarse(v: Any):
    """A sort key under which values equal within tolerance almost always sort together."""
    if v is None:
        return (0, 0)
    if isinstance(v, bool):
        return (1, int(v))
    if _is_num(v):
        f = float(v)
        if math.isnan(f):
            return (2, math.inf, 1)
        if f == 0 or math.isinf(f):
            return (2, f, 0)
        return (2, float(f"{f:.5e}"), 0)
    return (3, type(v).__name__, str(v))


def _exact_part(row: Sequence) -> tuple:
    return tuple(("n",) if _is_num(v) else
                 ("str", _NUMBER_IN_TEXT.sub("#", v)) if isinstance(v, str) else
                 (type(v).__name__, repr(v)) for v in row)


def multiset_eq(a: list[tuple], b: list[tuple], rels: Sequence[float], abs_tol: float = 1e-300) -> bool:
    if len(a) != len(b):
        return False
    key = lambda r: tuple(_coarse(v) for v in r)  # noqa: E731
    sa, sb = sorted(a, key=key), sorted(b, key=key)
    if all(row_eq(x, y, rels, abs_tol) for x, y in zip(sa, sb)):
        return True
    # Values near a rounding boundary of the coarse key can sort differently: match greedily
    # within groups of rows equal on their non-numeric columns.
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    for r in b:
        groups[_exact_part(r)].append(r)
    for r in a:
        cands = groups.get(_exact_part(r))
        if not cands:
            return False
        for i, c in enumerate(cands):
            if row_eq(r, c, rels, abs_tol):
                del cands[i]
                break
        else:
            return False
    return True


def sequence_eq(a: list[tuple], b: list[tuple], rels: Sequence[float], abs_tol: float = 1e-300) -> bool:
    return len(a) == len(b) and all(row_eq(x, y, rels, abs_tol) for x, y in zip(a, b))


# docs/sql-semantics.md: double precision variance and stddev are the exact value rounded once
# here, PostgreSQL's running sums may differ in the last bits (7e-17 where the exact answer is
# 0): queries computing them compare floats within this absolute distance too.
_FLOAT_MOMENTS = re.compile(r"\b(stddev|stddev_samp|stddev_pop|variance|var_samp|var_pop)\(", re.I)
MOMENTS_ABS = 1e-9


def float_abs_tolerance(sql: str) -> float:
    return MOMENTS_ABS if _FLOAT_MOMENTS.search(sql) else 1e-300


def max_fraction_digits(rows: list[tuple]) -> int:
    """The largest number of fractional digits of any numeric value in `rows`."""
    best = 0
    for r in rows:
        for v in r:
            if isinstance(v, Decimal) and v.is_finite():
                best = max(best, -v.as_tuple().exponent)
    return best


def show_rows(rows: list[tuple] | None, limit: int = 12) -> str:
    if rows is None:
        return "(none)"
    shown = sorted(rows, key=lambda r: tuple(_coarse(v) for v in r))[:limit]
    body = "; ".join("(" + ", ".join(_show(v) for v in r) + ")" for r in shown)
    more = f" ... ({len(rows)} rows)" if len(rows) > limit else ""
    return f"{len(rows)} row(s): {body}{more}" if rows else "0 rows"


def _show(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        return repr(v)
    return str(v)
