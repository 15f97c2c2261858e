"""Order-insensitive multiset comparison of a view's rows with PostgreSQL's answer.

Numerics are compared exactly, as docs/sql-semantics.md documents them: values that PostgreSQL
computes exactly (sums, products, counts) must be equal as numbers (display scale aside:
`2.50` = `2.5`); quotients and averages, which PostgreSQL rounds to a scale of its own and
Slipstream to 16 fractional digits, must agree once rounded (half away from zero) to the
shorter of the two scales.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def _frac_digits(d: Decimal) -> int:
    return max(0, -d.as_tuple().exponent)


def numeric_equal(a: Decimal, b: Decimal) -> bool:
    if a == b:
        return True
    scale = min(_frac_digits(a), _frac_digits(b))
    q = Decimal(1).scaleb(-scale)
    return a.quantize(q, ROUND_HALF_UP) == b.quantize(q, ROUND_HALF_UP)


def _sort_key(row):
    # Numerics rounded well above any scale difference so matching rows sort alike.
    return tuple((0, "") if v is None else
                 (1, f"{v:.6f}") if isinstance(v, Decimal) else (1, repr(v)) for v in row)


def diff_rows(got: list[tuple], want: list[tuple], limit: int = 5) -> str | None:
    """None when the multisets match, else a short description of the difference."""
    if len(got) != len(want):
        g, w = set(map(_sort_key, got)), set(map(_sort_key, want))
        return (f"{len(got)} rows, PostgreSQL has {len(want)}; only here: "
                f"{sorted(g - w)[:limit]}; only in PostgreSQL: {sorted(w - g)[:limit]}")
    got_s, want_s = sorted(got, key=_sort_key), sorted(want, key=_sort_key)
    bad = []
    for g, w in zip(got_s, want_s):
        same = len(g) == len(w) and all(
            numeric_equal(x, y) if isinstance(x, Decimal) and isinstance(y, Decimal) else x == y
            for x, y in zip(g, w))
        if not same:
            bad.append((g, w))
    if bad:
        return f"{len(bad)} rows differ, e.g. (here, PostgreSQL): {bad[:limit]}"
    return None
