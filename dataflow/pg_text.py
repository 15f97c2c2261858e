"""PostgreSQL's text forms of floats and timestamps, shared by the wire codec (result output) and
the engine's casts to text, so `x::text` and the value a client receives are the same string.

Floats print their shortest round-trip digits (PostgreSQL's Ryu output, extra_float_digits >= 1):
fixed notation when -4 <= exponent < 15 (float8) or 6 (float4), else d.ddde+XX.

>>> float8_text(1e-05), float8_text(123456789012345.6), float4_text(12345679.0)
('1e-05', '123456789012345.6', '1.2345679e+07')
>>> timestamp_text(dt.datetime(2024, 1, 2, 3, 4, 5, 500000))
'2024-01-02 03:04:05.5'
"""

from __future__ import annotations

import re

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import numpy as np


def _shortest_exponent_form(s: str, max_fixed_exp: int) -> str:
    """Shortest round-trip digits `s` laid out as PostgreSQL does: fixed notation when
    -4 <= exponent < max_fixed_exp, else d.ddde+XX with at least two exponent digits."""
    sign, digits, exp = Decimal(s).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e10 = exp + len(ds) - 1  # decimal exponent of the first digit
    prefix = "-" if sign else ""
    if -4 <= e10 < max_fixed_exp:
        if exp >= 0:
            return prefix + ds + "0" * exp
        point = len(ds) + exp
        if point > 0:
            return prefix + ds[:point] + "." + ds[point:]
        return prefix + "0." + "0" * (-point) + ds
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{prefix}{mant}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"


def special_float_text(v: float) -> str | None:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return None


def float8_text(v: Any) -> str:
    v = float(v)
    if v == 0.0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    a = abs(v)
    if 1e-4 <= a < 1e15:  # Python's repr is already fixed-point here, like PostgreSQL's
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    special = special_float_text(v)
    if special is not None:
        return special
    return _shortest_exponent_form(repr(v), 15)


def float4_text(v: Any) -> str:
    v = float(v)
    special = special_float_text(v)
    if special is not None:
        return special
    if v == 0.0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    return _shortest_exponent_form(_float4_digits(np.float32(v)), 6)


def _float4_digits(a: np.float32) -> str:
    """The shortest decimal that reads back as `a` without relying on a tie: PostgreSQL's Ryu
    excludes the rounding interval's bounds, so 8999999488 (whose shortest digits '9e+09' lie
    exactly halfway to the next float) prints as 8.999999e+09."""
    s = np.format_float_scientific(a, unique=True, trim="-")
    with np.errstate(over="ignore"):
        neighbours = np.nextafter(a, np.float32(-np.inf)), np.nextafter(a, np.float32(np.inf))
    exact = Decimal(float(a))
    bounds = {(exact + Decimal(float(n))) / 2 for n in neighbours if np.isfinite(n)}
    precision = len(s.split("e")[0].replace("-", "").replace(".", "")) - 1
    while Decimal(s) in bounds and precision < 9:
        precision += 1
        s = np.format_float_scientific(a, unique=False, precision=precision, trim="-")
    return s


def trim_fraction(s: str) -> str:
    """'12:00:00.500000' -> '12:00:00.5' (PostgreSQL drops trailing zeros of the fraction)."""
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def timestamp_text(v: dt.datetime) -> str:
    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return trim_fraction(v.isoformat(sep=" "))


def time_text(v: dt.time) -> str:
    """A time of day as PostgreSQL prints it: '10:20:30', '10:20:30.5'."""
    return trim_fraction(v.isoformat())


_TIME_TEXT = re.compile(r"^\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?\s*$")


def parse_time(text: str) -> dt.time | None:
    """PostgreSQL's time input 'HH:MM[:SS[.frac]]' (24:00:00 is the end of the day, kept as
    00:00 of the next: PostgreSQL keeps 24:00:00 itself, which Python cannot); None if it does
    not read."""
    m = _TIME_TEXT.match(text)
    if not m:
        return None
    h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    frac = m.group(4) or ""
    us = int(round(float("0" + frac) * 1_000_000)) if frac else 0
    if us == 1_000_000:
        sec, us = sec + 1, 0
    if h > 23 or mi > 59 or sec > 59:
        return None
    return dt.time(h, mi, sec, us)


def timestamptz_text_utc(v: dt.datetime) -> str:
    """A timestamptz in the UTC session zone: '2024-01-02 03:04:05+00'."""
    if v.tzinfo is not None and v.tzinfo is not dt.timezone.utc:
        v = v.astimezone(dt.timezone.utc)
    return trim_fraction(v.replace(tzinfo=None).isoformat(sep=" ")) + "+00"


_LOOSE_DATE = re.compile(r"^\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:([ T])(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?)?(.*?)\s*$")


_ERA = re.compile(r"(?i)(?<![a-z])\s*(bc|ad)\s*$")


def without_era(text: str) -> str:
    """A date or timestamp text without a trailing era: AD is the default; BC (years before 1,
    which Python's dates cannot hold) is refused with 0A000 instead of read as the same year AD
    (`'4713-01-01 BC'::date` was 4713-01-01)."""
    m = _ERA.search(text)
    if m is None:
        return text
    if m.group(1).lower().startswith("b"):
        from dataflow.errors import unsupported
        raise unsupported("dates before the year 1 (BC)")
    return text[:m.start()]


def normalize_datetime_text(text: str) -> tuple[str, int] | None:
    """A date or timestamp text as ISO 8601 with two-digit fields (PostgreSQL reads '2024-1-5'
    and '24:00:00', the midnight that ends the day), plus the days to add (1 for 24:00:00);
    None when the text does not have that shape. A trailing era is read by `without_era`."""
    m = _LOOSE_DATE.match(without_era(text))
    if not m:
        return None
    y, mo, d, sep, hh, mi, ss, frac, rest = m.groups()
    out = f"{int(y):04d}-{int(mo):02d}-{int(d):02d}"
    extra = 0
    if hh is not None:
        h = int(hh)
        if h == 24 and int(mi) == 0 and int(ss or 0) == 0 and not (frac or "").strip(".0"):
            h, extra = 0, 1
        out += f" {h:02d}:{int(mi):02d}:{int(ss or 0):02d}{frac or ''}"
    return out + (rest or ""), extra


def parse_date_text(text: str) -> dt.date:
    """A date's text as PostgreSQL reads it: ISO with one- or two-digit fields, an era (AD; BC is
    refused, `without_era`), and a time of day (and zone), which must be valid but is ignored
    ('2024-01-01 24:00' is that day). Raises ValueError for anything else: text after the date
    that is not a time ('2024-01-01 B.C.') was ignored before."""
    st = text.strip()
    loose = normalize_datetime_text(st)
    if loose is None:
        return dt.date.fromisoformat(st)
    norm = loose[0]
    if len(norm) > 10:
        dt.datetime.fromisoformat(norm)  # (validates the time part)
    return dt.date.fromisoformat(norm[:10])
