"""to_char(interval, template): PostgreSQL 15's date/time templates applied to an interval,
ported from formatting.c (parse_format with its DCH keyword table, DCH_to_char with
is_interval = true, interval_to_char) and the calendar helpers it calls (date2j, date2isoweek,
date2isoyear, date2isoyearday from datetime.c / timestamp.c).

The interval is split as interval2itm splits it, with C's truncating division: years = months / 12,
months % 12, days, hours (any number: HH24 of '27 hours' is 27), minutes, seconds, microseconds;
a negative part prints with its sign ('-04', width one more than a positive one). Patterns that
name a calendar date (Month, Mon, Day, Dy, D, ID, AD/BC, TZ, OF, ...) are 22007 "invalid format
specification for an interval value", as in PostgreSQL; the other date patterns print what
PostgreSQL prints for these fields (DDD is the span in days of 30-day months, J/IW/IYYY treat the
fields as a date, Q is empty for zero months).

>>> to_char_interval(0, 1, 3 * 3600 * 10**6, 'HH24:MI "and" DD "days"')
'03:00 and 01 days'
>>> to_char_interval(0, 0, -(27 * 3600 + 5 * 60) * 10**6, 'HH24:MI:SS FMHH12th')
'-27:-05:00 -3rd'
"""

from __future__ import annotations

from functools import lru_cache

from dataflow.errors import SqlError, SqlState

# formatting.c's DCH_keywords, in its order (grouped by first character, longest first).
_KEYWORDS = [
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
    "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY",
    "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.", "PM", "Q",
    "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY",
    "Y", "a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d", "ff1",
    "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw", "iyyy",
    "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm", "sssss",
    "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
]
# Keywords whose lower-case spelling is the same action (formatting.c maps "dd" to DCH_DD, ...).
_SAME_IN_LOWER = {"CC", "DDD", "DD", "D", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12",
                  "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MS", "OF", "Q",
                  "SSSSS", "SSSS", "SS", "TZH", "TZM", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y"}
_FIRST: dict[str, int] = {}
for _i, _k in enumerate(_KEYWORDS):
    _FIRST.setdefault(_k[0], _i)
_PREFIXES = ("FM", "fm", "TM", "tm")
_POSTFIXES = ("TH", "th", "SP")

# Calendar-date patterns: refused for intervals.
_NOT_FOR_INTERVAL = {"A.D.", "B.C.", "AD", "BC", "a.d.", "b.c.", "ad", "bc", "MONTH", "Month", "month",
                     "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy", "dy", "D", "ID", "TZ", "tz",
                     "TZH", "TZM", "OF"}

_RM_UPPER = ["XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"]


def _action(name: str) -> str:
    """The keyword's action (its upper-case spelling for the patterns that do not care)."""
    up = name.upper()
    if up in _SAME_IN_LOWER:
        return up
    return name


@lru_cache(maxsize=256)
def parse(fmt: str) -> tuple[tuple, ...]:
    """Nodes: ('k', action, fill_mode, th) for a keyword ('TH', 'th' or '' for th),
    ('c', text) for literal text."""
    nodes = []
    i, n = 0, len(fmt)
    while i < n:
        fm = False
        for p in _PREFIXES:
            if fmt.startswith(p, i):
                fm = p in ("FM", "fm")
                i += 2
                break
        if i >= n:
            break
        name = None
        start = _FIRST.get(fmt[i])
        if start is not None:
            for k in _KEYWORDS[start:]:
                if k[0] != fmt[i]:
                    break
                if fmt.startswith(k, i):
                    name = k
                    break
        if name is not None:
            i += len(name)
            th = ""
            if i < n:
                for p in _POSTFIXES:
                    if fmt.startswith(p, i):
                        th = p if p != "SP" else ""
                        i += 2
                        break
            nodes.append(("k", _action(name), fm, th))
        elif fmt[i] == '"':
            i += 1
            while i < n:
                if fmt[i] == '"':
                    i += 1
                    break
                if fmt[i] == "\\" and i + 1 < n:
                    i += 1
                nodes.append(("c", fmt[i]))
                i += 1
        else:
            if fmt[i] == "\\" and i + 1 < n and fmt[i + 1] == '"':
                i += 1
            nodes.append(("c", fmt[i]))
            i += 1
    return tuple(nodes)


# C arithmetic: division and remainder truncate toward zero.
def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _mod(a: int, b: int) -> int:
    return a - _div(a, b) * b


def _i32(v: int) -> int:
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def date2j(year: int, month: int, day: int) -> int:
    if month > 2:
        month += 1
        year += 4800
    else:
        month += 13
        year += 4799
    century = _div(year, 100)
    julian = year * 365 - 32167
    julian += _div(year, 4) - century + _div(century, 4)
    julian += _div(7834 * month, 256) + day
    return _i32(julian)


def _j2day(d: int) -> int:
    d = _mod(_i32(d + 1), 7)
    return d + 7 if d < 0 else d


def date2isoweek(year: int, mon: int, mday: int) -> int:
    dayn = date2j(year, mon, mday)
    day4 = date2j(year, 1, 4)
    day0 = _j2day(day4 - 1)
    if dayn < day4 - day0:
        day4 = date2j(year - 1, 1, 4)
        day0 = _j2day(day4 - 1)
    result = _div(dayn - (day4 - day0), 7) + 1
    if result >= 52:
        day4 = date2j(year + 1, 1, 4)
        day0 = _j2day(day4 - 1)
        if dayn >= day4 - day0:
            result = _div(dayn - (day4 - day0), 7) + 1
    return result


def date2isoyear(year: int, mon: int, mday: int) -> int:
    dayn = date2j(year, mon, mday)
    day4 = date2j(year, 1, 4)
    day0 = _j2day(day4 - 1)
    if dayn < day4 - day0:
        day4 = date2j(year - 1, 1, 4)
        day0 = _j2day(day4 - 1)
        year -= 1
    result = _div(dayn - (day4 - day0), 7) + 1
    if result >= 52:
        day4 = date2j(year + 1, 1, 4)
        day0 = _j2day(day4 - 1)
        if dayn >= day4 - day0:
            year += 1
    return year


def _isoweek2j(year: int, week: int) -> int:
    day4 = date2j(year, 1, 4)
    day0 = _j2day(day4 - 1)
    return (week - 1) * 7 + (day4 - day0)


def date2isoyearday(year: int, mon: int, mday: int) -> int:
    return date2j(year, mon, mday) - _isoweek2j(date2isoyear(year, mon, mday), 1) + 1


def _th(num: str, upper: bool) -> str:
    last = num[-1]
    if len(num) > 1 and num[-2] == "1":
        last = "0"
    s = {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return s.upper() if upper else s


def _pad(v: int, width: int) -> str:
    """C's "%0*d": zero padding to `width` characters, the sign included."""
    return f"{v:0{width}d}" if width else str(v)


def to_char_interval(months: int, days: int, micros: int, fmt: str) -> str | None:
    """interval_to_char: None (NULL) for an empty template."""
    if not fmt:
        return None
    year, mon = _div(months, 12), _mod(months, 12)
    mday = days
    hour = _div(micros, 3_600_000_000)
    rest = micros - hour * 3_600_000_000
    minute = _div(rest, 60_000_000)
    rest -= minute * 60_000_000
    sec = _div(rest, 1_000_000)
    fsec = rest - sec * 1_000_000
    yday = (year * 12 + mon) * 30 + mday
    out = []
    for node in parse(fmt):
        if node[0] == "c":
            out.append(node[1])
            continue
        _, k, fm, th = node
        if k in _NOT_FOR_INTERVAL:
            raise SqlError(SqlState.INVALID_DATETIME_FORMAT, "invalid format specification for an interval value",
                           hint="Intervals are not tied to specific calendar dates.")
        s: str | None = None
        numeric = True
        if k in ("A.M.", "P.M.", "AM", "PM", "a.m.", "p.m.", "am", "pm"):
            pm = _mod(hour, 24) >= 12
            s = {"A.M.": ("A.M.", "P.M."), "P.M.": ("A.M.", "P.M."), "AM": ("AM", "PM"), "PM": ("AM", "PM"),
                 "a.m.": ("a.m.", "p.m."), "p.m.": ("a.m.", "p.m."), "am": ("am", "pm"),
                 "pm": ("am", "pm")}[k][pm]
            numeric = False
        elif k in ("HH", "HH12"):
            h = _mod(hour, 12)
            s = _pad(12 if h == 0 else h, 0 if fm else (2 if hour >= 0 else 3))
        elif k == "HH24":
            s = _pad(hour, 0 if fm else (2 if hour >= 0 else 3))
        elif k == "MI":
            s = _pad(minute, 0 if fm else (2 if minute >= 0 else 3))
        elif k == "SS":
            s = _pad(sec, 0 if fm else (2 if sec >= 0 else 3))
        elif k in ("FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "MS", "US"):
            digits = 3 if k == "MS" else 6 if k == "US" else int(k[2])
            s = _pad(_div(fsec, 10 ** (6 - digits)), digits)
        elif k in ("SSSS", "SSSSS"):
            s = str(hour * 3600 + minute * 60 + sec)
        elif k == "MM":
            s = _pad(mon, 0 if fm else (2 if mon >= 0 else 3))
        elif k in ("DDD", "IDDD"):
            s = _pad(yday if k == "DDD" else date2isoyearday(year, mon, mday), 0 if fm else 3)
        elif k == "DD":
            s = _pad(mday, 0 if fm else 2)
        elif k == "WW":
            s = _pad(_div(yday - 1, 7) + 1, 0 if fm else 2)
        elif k == "IW":
            s = _pad(date2isoweek(year, mon, mday), 0 if fm else 2)
        elif k == "Q":
            if not mon:
                continue
            s = str(_div(mon - 1, 3) + 1)
        elif k == "CC":
            i = _div(year, 100)
            s = _pad(i, 0 if fm else (2 if i >= 0 else 3)) if -99 <= i <= 99 else str(i)
        elif k == "Y,YYY":
            i = _div(year, 1000)
            s = f"{i},{_pad(year - i * 1000, 3)}"
        elif k in ("YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I"):
            y = year if k[0] == "Y" else date2isoyear(year, mon, mday)
            width = len(k)
            if width < 4:
                y = _mod(y, 10 ** width)
            s = str(y) if width == 1 else _pad(y, 0 if fm else (width if year >= 0 else width + 1))
        elif k in ("RM", "rm"):
            if not mon and not year:
                continue
            if mon == 0:
                idx = 0 if year >= 0 else 11
            elif mon < 0:
                idx = -(mon + 1)
            else:
                idx = 12 - mon
            name = _RM_UPPER[idx] if k == "RM" else _RM_UPPER[idx].lower()
            s = name if fm else name.ljust(4)
            numeric = False
        elif k == "W":
            s = str(_div(mday - 1, 7) + 1)
        elif k == "J":
            s = str(date2j(year, mon, mday))
        elif k == "FX":
            continue
        if s is None:
            continue
        if th and numeric:
            s += _th(s, th == "TH")
        out.append(s)
    return "".join(out)
