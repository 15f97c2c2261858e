"""The interval type: PostgreSQL's three fields, its text input and output, and its ordering.

An interval is (months, days, microseconds), kept apart because a month has no fixed length
(`'2024-01-31' + '1 mon'` is Feb 29) and a day has 23-25 hours across DST changes. In Arrow it
is `month_day_nano_interval` (nanoseconds = microseconds * 1000); in Python `pa.MonthDayNano`.

Two intervals compare by their *span*, months counted as 30 days and days as 24 hours, as in
PostgreSQL: `'1 mon' = '30 days'` is true (and `span_key` gives that order).

>>> fmt(parse("1 year 2 mons 3 days 04:05:06.5"))
'1 year 2 mons 3 days 04:05:06.5'
>>> fmt(parse("-1 day +2 hours")), fmt(parse("P1DT2H")), fmt(parse("1.5 days")), fmt(parse("90 minutes ago"))
('-1 days +02:00:00', '1 day 02:00:00', '1 day 12:00:00', '-01:30:00')
"""

from __future__ import annotations

import copyreg
import re
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState

USECS_PER_SEC = 1_000_000
USECS_PER_DAY = 86_400 * USECS_PER_SEC
ARROW = pa.month_day_nano_interval()

# Unit words PostgreSQL accepts -> (field, multiplier): month counts months, day counts days,
# us counts microseconds.
_UNITS: dict[str, tuple[str, int]] = {}
for _names, _unit in (
        (("microsecond", "microseconds", "us", "usec", "usecs", "microsecon"), ("us", 1)),
        (("millisecond", "milliseconds", "ms", "msec", "msecs", "millisecon"), ("us", 1000)),
        (("second", "seconds", "s", "sec", "secs"), ("us", USECS_PER_SEC)),
        (("minute", "minutes", "m", "min", "mins"), ("us", 60 * USECS_PER_SEC)),
        (("hour", "hours", "h", "hr", "hrs"), ("us", 3600 * USECS_PER_SEC)),
        (("day", "days", "d"), ("day", 1)),
        (("week", "weeks", "w"), ("day", 7)),
        (("month", "months", "mon", "mons"), ("month", 1)),
        (("year", "years", "y", "yr", "yrs"), ("month", 12)),
        (("decade", "decades", "dec", "decs"), ("month", 120)),
        (("century", "centuries", "c", "cent"), ("month", 1200)),
        (("millennium", "millennia", "mil", "mils", "millenniums"), ("month", 12000))):
    for _n in _names:
        _UNITS[_n] = _unit

_TIME = re.compile(r"^([+-]?)(\d+):(\d+)(?::(\d+(?:\.\d*)?))?$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)$")
_ISO = re.compile(r"^P(?:(-?[\d.]+)Y)?(?:(-?[\d.]+)M)?(?:(-?[\d.]+)W)?(?:(-?[\d.]+)D)?"
                  r"(?:T(?:(-?[\d.]+)H)?(?:(-?[\d.]+)M)?(?:(-?[\d.]+)S)?)?$", re.I)


def bad_interval(text: str) -> SqlError:
    return SqlError(SqlState.INVALID_DATETIME_FORMAT, f'invalid input syntax for type interval: "{text}"')


def out_of_range() -> SqlError:
    return SqlError("22008", "interval out of range")


class _Acc:
    """Fields being summed while reading; fractions spill into the smaller fields as PostgreSQL
    does (1.5 months = 1 month 15 days, 1.5 days = 1 day 12 hours)."""

    def __init__(self) -> None:
        self.months = 0
        self.days = 0
        self.us = Decimal(0)

    def add(self, value: Decimal, field: str, mult: int) -> None:
        v = value * mult
        if field == "month":
            whole = int(v)
            self.months += whole
            days = (v - whole) * 30
            whole_days = int(days)
            self.days += whole_days
            self.us += (days - whole_days) * USECS_PER_DAY
        elif field == "day":
            whole = int(v)
            self.days += whole
            self.us += (v - whole) * USECS_PER_DAY
        else:
            self.us += v


def parse(text: str) -> pa.MonthDayNano:
    """PostgreSQL's interval input (postgres, sql-standard time fields, ISO 8601 'P...' forms)."""
    s = text.strip().lower()
    if not s:
        raise bad_interval(text)
    acc = _Acc()
    m = _ISO.match(s)
    if s.startswith("p") and m:
        for value, (field, mult) in zip(m.groups(), (("month", 12), ("month", 1), ("day", 7), ("day", 1),
                                                     ("us", 3600 * USECS_PER_SEC), ("us", 60 * USECS_PER_SEC),
                                                     ("us", USECS_PER_SEC))):
            if value is not None:
                acc.add(_decimal(value, text), field, mult)
        return _finish(acc, text)
    tokens = s.replace(",", " ").split()
    ago = False
    if tokens and tokens[-1] == "ago":
        ago = True
        tokens = tokens[:-1]
    if tokens and tokens[0] == "@":
        tokens = tokens[1:]
    i = 0
    seen: set[str] = set()

    def once(unit: str) -> None:
        # PostgreSQL refuses a unit given twice ('1 day 1 day').
        if unit in seen:
            raise bad_interval(text)
        seen.add(unit)

    while i < len(tokens):
        tok = tokens[i]
        t = _TIME.match(tok)
        if t:
            once("time")
            sign = -1 if t.group(1) == "-" else 1
            us = (int(t.group(2)) * 3600 + int(t.group(3)) * 60) * USECS_PER_SEC
            if t.group(4):
                us += Decimal(t.group(4)) * USECS_PER_SEC
            acc.us += sign * Decimal(us)
            i += 1
            continue
        # A number glued to its unit ("3days", "10m") or followed by it.
        glued = re.match(r"^([+-]?(?:\d+\.?\d*|\.\d+))([a-z]+)$", tok)
        if glued:
            value, unit = glued.group(1), glued.group(2)
            i += 1
        elif _NUMBER.match(tok):
            value = tok
            unit = tokens[i + 1] if i + 1 < len(tokens) else None
            i += 2 if unit is not None and unit in _UNITS else 1
            if unit is None or unit not in _UNITS:
                # A bare number is seconds (PostgreSQL reads '5' as 5 seconds).
                if unit is not None:
                    raise bad_interval(text)
                unit = "second"
        else:
            raise bad_interval(text)
        if unit not in _UNITS:
            raise bad_interval(text)
        field, mult = _UNITS[unit]
        once(f"{field}{mult}")
        acc.add(_decimal(value, text), field, mult)
    out = _finish(acc, text)
    if ago:
        return pa.MonthDayNano([-out.months, -out.days, -out.nanoseconds])
    return out


def _decimal(value: str, text: str) -> Decimal:
    try:
        return Decimal(value)
    except ArithmeticError:
        raise bad_interval(text) from None


def _finish(acc: _Acc, text: str) -> pa.MonthDayNano:
    us = int(acc.us.to_integral_value(rounding="ROUND_HALF_EVEN"))
    if not (-2 ** 31 <= acc.months < 2 ** 31 and -2 ** 31 <= acc.days < 2 ** 31 and -2 ** 63 <= us < 2 ** 63):
        raise SqlError("22015", f'interval field value out of range: "{text}"')
    return make(acc.months, acc.days, us)


def make(months: int, days: int, us: int) -> pa.MonthDayNano:
    return pa.MonthDayNano([int(months), int(days), int(us) * 1000])


def _restore(months: int, days: int, ns: int) -> pa.MonthDayNano:
    return pa.MonthDayNano([months, days, ns])


# Interval constants travel inside plans to the workers: teach pickle Arrow's value type.
copyreg.pickle(pa.MonthDayNano, lambda v: (_restore, (v.months, v.days, v.nanoseconds)))


def fields(v: pa.MonthDayNano) -> tuple[int, int, int]:
    """(months, days, microseconds)."""
    return v.months, v.days, v.nanoseconds // 1000


def _ctrunc(a: int, b: int) -> tuple[int, int]:
    """C's integer division and remainder (toward zero), as PostgreSQL computes fields."""
    q = abs(a) // b
    q = q if a >= 0 else -q
    return q, a - q * b


def fmt(v: pa.MonthDayNano) -> str:
    """PostgreSQL's output with IntervalStyle postgres: '1 year 2 mons -3 days +04:05:06.5'."""
    months, days, us = fields(v)
    year, mon = _ctrunc(months, 12)
    parts: list[str] = []
    is_before = False
    for value, unit in ((year, "year"), (mon, "mon"), (days, "day")):
        if value == 0:
            continue
        plus = "+" if is_before and value > 0 else ""
        parts.append(f"{plus}{value} {unit}{'' if value == 1 else 's'}")
        is_before = value < 0
    if not parts or us != 0:
        hour, rest = _ctrunc(us, 3600 * USECS_PER_SEC)
        minute, rest = _ctrunc(rest, 60 * USECS_PER_SEC)
        sec, frac = _ctrunc(rest, USECS_PER_SEC)
        minus = us < 0
        sign = "-" if minus else ("+" if is_before else "")
        text = f"{sign}{abs(hour):02d}:{abs(minute):02d}:{abs(sec):02d}"
        if frac:
            text += f".{abs(frac):06d}".rstrip("0")
        parts.append(text)
    return " ".join(parts)


def span_key(arr: pa.Array) -> np.ndarray:
    """Each interval's span in microseconds (months as 30 days, days as 24 hours) as float64
    keys for ordering; exact below 2**53 microseconds (285 years), which keeps PostgreSQL's
    order for any interval a query is likely to hold. NULLs get 0 (callers mask them)."""
    months, days, us = split(arr)
    return (months.astype(np.float64) * 30 + days) * USECS_PER_DAY + us


_LAYOUT = np.dtype([("months", "<i4"), ("days", "<i4"), ("ns", "<i8")])  # Arrow's 16-byte value


def split(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three fields as int64 NumPy arrays (0 for NULL), read straight from Arrow's buffer."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if n == 0 or arr.null_count == n:
        z = np.zeros(n, np.int64)
        return z, z.copy(), z.copy()
    rec = np.frombuffer(arr.buffers()[1], dtype=_LAYOUT, count=arr.offset + n)[arr.offset:]
    months, days, us = rec["months"].astype(np.int64), rec["days"].astype(np.int64), rec["ns"] // 1000
    if arr.null_count:
        null = ~valid_mask(arr)
        months[null] = days[null] = us[null] = 0
    return months, days, us


def join(months: np.ndarray, days: np.ndarray, us: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """An interval array from its fields (NULL where `valid` is False); 22008 if a field
    does not fit."""
    n = len(months)
    ok = np.ones(n, bool) if valid is None else np.asarray(valid, bool)
    if (np.abs(months[ok]) >= 2 ** 31).any() or (np.abs(days[ok]) >= 2 ** 31).any() or \
            (np.abs(us[ok]) >= 2 ** 63 // 1000).any():
        raise out_of_range()
    rec = np.zeros(n, _LAYOUT)
    rec["months"] = np.where(ok, months, 0)
    rec["days"] = np.where(ok, days, 0)
    rec["ns"] = np.where(ok, us, 0) * 1000
    bitmap = None if ok.all() else pa.array(ok, pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(ARROW, n, [bitmap, pa.py_buffer(rec.tobytes())],
                                 null_count=int(n - ok.sum()))


def valid_mask(arr: pa.Array) -> np.ndarray:
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)
