"""PostgreSQL's date/time formatting templates (to_char) and their parsing (to_timestamp,
to_date), for the template patterns analysts use.

Patterns: HH24 HH12 HH MI SS MS US AM PM A.M. P.M. (any case) YYYY YYY YY Y IYYY MM Mon MON mon
Month MONTH month Dy DY dy Day DAY day DD DDD D ID IW WW Q J TZ tz OF, the FM prefix (no
padding), TH/th suffixes, "quoted text" and backslash escapes. Anything else is copied.

>>> import datetime as dt
>>> to_char(dt.datetime(2024, 3, 5, 14, 7, 9, 120000), 'YYYY-MM-DD HH24:MI:SS.MS Dy FMMonth DDth')
'2024-03-05 14:07:09.120 Tue March 05th'
>>> parse('05 Mar 2024 2:07 PM', 'DD Mon YYYY HH12:MI AM')
datetime.datetime(2024, 3, 5, 14, 7)
"""

from __future__ import annotations

import datetime as dt
import re

from dataflow.errors import SqlError, SqlState

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

# Longest first, so HH24 wins over HH and MONTH over MON and MM.
_PATTERNS = sorted([
    "HH24", "HH12", "HH", "MI", "SS", "MS", "US", "AM", "PM", "am", "pm", "A.M.", "P.M.", "a.m.", "p.m.",
    "YYYY", "YYY", "YY", "Y", "IYYY", "MM", "MONTH", "Month", "month", "MON", "Mon", "mon",
    "DAY", "Day", "day", "DY", "Dy", "dy", "DDD", "DD", "D", "ID", "IW", "WW", "Q", "J", "TZ", "tz", "OF",
    "W", "CC", "Y,YYY", "SSSS", "SSSSS", "AD", "BC", "ad", "bc", "A.D.", "B.C.", "a.d.", "b.c.",
], key=len, reverse=True)


# Patterns PostgreSQL also reads in lower case (`yyyy-mm-dd hh24:mi`); names (Month, Day, AM)
# are listed in each case they print in.
_ANY_CASE = {"HH24", "HH12", "HH", "MI", "SS", "MS", "US", "YYYY", "YYY", "YY", "Y", "IYYY", "MM",
             "DDD", "DD", "D", "ID", "IW", "WW", "Q", "J", "W", "CC", "Y,YYY", "SSSS", "SSSSS"}


def _tokens(fmt: str) -> list[tuple[str, str, bool, str]]:
    """(kind, text, fill_mode, suffix): kind 'pat' for a pattern, 'lit' for literal text."""
    out = []
    i = 0
    while i < len(fmt):
        if fmt[i] == '"':
            j = fmt.find('"', i + 1)
            j = len(fmt) if j < 0 else j
            out.append(("lit", fmt[i + 1:j], False, ""))
            i = j + 1
            continue
        if fmt[i] == "\\" and i + 1 < len(fmt):
            out.append(("lit", fmt[i + 1], False, ""))
            i += 2
            continue
        fm = False
        if fmt.startswith(("FM", "fm"), i):
            fm, i = True, i + 2
        if fmt.startswith(("TM", "tm"), i) and any(fmt.startswith(p, i + 2) for p in _PATTERNS):
            # Translation mode: the C locale's English names, not blank-padded.
            i += 2
            fm = fm or fmt[i:i + 3].upper() in ("MON", "DAY")
        for p in _PATTERNS:
            if fmt.startswith(p, i) or (p in _ANY_CASE and fmt[i:i + len(p)].upper() == p):
                i += len(p)
                suffix = ""
                if fmt.startswith(("TH", "th"), i):
                    suffix, i = fmt[i:i + 2], i + 2
                out.append(("pat", p, fm, suffix))
                break
        else:
            if fm:
                continue
            out.append(("lit", fmt[i], False, ""))
            i += 1
    return out


def _ordinal(n: int, upper: bool) -> str:
    s = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return s.upper() if upper else s


def _case(word: str, pattern: str) -> str:
    if pattern.isupper():
        return word.upper()
    if pattern.islower():
        return word.lower()
    return word


def to_char(v: dt.datetime | dt.date, fmt: str) -> str:
    if not isinstance(v, dt.datetime):
        v = dt.datetime(v.year, v.month, v.day)
    parts = []
    iso = v.isocalendar()
    for kind, p, fm, suffix in _tokens(fmt):
        if kind == "lit":
            parts.append(p)
            continue
        num: int | None = None
        width = 0
        text = None
        up = p.upper()
        if up == "HH24":
            num, width = v.hour, 2
        elif up in ("HH12", "HH"):
            num, width = (v.hour % 12) or 12, 2
        elif up == "MI":
            num, width = v.minute, 2
        elif up == "SS":
            num, width = v.second, 2
        elif up == "MS":
            num, width = v.microsecond // 1000, 3
        elif up == "US":
            num, width = v.microsecond, 6
        elif up in ("AM", "PM"):
            text = _case("PM" if v.hour >= 12 else "AM", p)
        elif up in ("A.M.", "P.M."):
            text = _case("P.M." if v.hour >= 12 else "A.M.", p)
        elif up in ("AD", "BC"):   # the era (Python's dates have no BC years)
            text = _case("AD", p)
        elif up in ("A.D.", "B.C."):
            text = _case("A.D.", p)
        elif up == "YYYY":
            num, width = v.year, 4
        elif up == "YYY":
            num, width = v.year % 1000, 3
        elif up == "YY":
            num, width = v.year % 100, 2
        elif up == "Y":
            num, width = v.year % 10, 1
        elif up == "IYYY":
            num, width = iso[0], 4
        elif up == "MM":
            num, width = v.month, 2
        elif up == "MONTH":
            name = _case(_MONTHS[v.month - 1], p)
            text = name if fm else name.ljust(9)
        elif up == "MON":
            text = _case(_MONTHS[v.month - 1][:3], p)
        elif up == "DAY":
            name = _case(_DAYS[(v.weekday() + 1) % 7], p)
            text = name if fm else name.ljust(9)
        elif up == "DY":
            text = _case(_DAYS[(v.weekday() + 1) % 7][:3], p)
        elif up == "DDD":
            num, width = v.timetuple().tm_yday, 3
        elif up == "DD":
            num, width = v.day, 2
        elif up == "D":
            num, width = (v.weekday() + 1) % 7 + 1, 1
        elif up == "ID":
            num, width = iso[2], 1
        elif up == "IW":
            num, width = iso[1], 2
        elif up == "WW":
            num, width = (v.timetuple().tm_yday - 1) // 7 + 1, 2
        elif up == "W":  # week of the month (1-5), days 1-7 are week 1
            num, width = (v.day - 1) // 7 + 1, 1
        elif up == "CC":
            num, width = (v.year + 99) // 100, 2
        elif up == "Y,YYY":
            text = f"{v.year // 1000},{v.year % 1000:03d}"
        elif up in ("SSSS", "SSSSS"):  # seconds past midnight
            num, width = v.hour * 3600 + v.minute * 60 + v.second, 1
        elif up == "Q":
            num, width = (v.month - 1) // 3 + 1, 1
        elif up == "J":
            num, width = v.toordinal() + 1721425, 1
        elif up == "TZ":
            text = _case("UTC", p) if v.tzinfo is not None else ""
        elif up == "OF":
            text = "+00" if v.tzinfo is not None else ""
        if num is not None:
            text = str(num) if fm else str(num).zfill(width)
            if suffix:
                text += _ordinal(num, suffix == "TH")
        parts.append(text or "")
    return "".join(parts)


_STRFTIME = {("YYYY", False): "%Y", ("MM", False): "%m", ("DD", False): "%d", ("HH24", False): "%H",
             ("HH12", False): "%I", ("HH", False): "%I", ("MI", False): "%M", ("SS", False): "%S",
             ("Mon", False): "%b", ("Dy", False): "%a", ("Month", True): "%B", ("Day", True): "%A",
             ("AM", False): "%p", ("PM", False): "%p", ("DDD", False): "%j"}


def strftime_format(fmt: str) -> str | None:
    """The template as a C strftime format when every pattern in it has an exact strftime
    equivalent (so Arrow can format a whole column at once), else None."""
    out = []
    for kind, p, fm, suffix in _tokens(fmt):
        if kind == "lit":
            out.append(p.replace("%", "%%"))
            continue
        code = _STRFTIME.get((p, fm))
        if code is None or suffix:
            return None
        out.append(code)
    return "".join(out)


def _bad(value: str, fmt: str, what: str) -> SqlError:
    return SqlError(SqlState.INVALID_DATETIME_FORMAT, f'invalid value "{value}" for "{what}"')


def parse(text: str, fmt: str) -> dt.datetime:
    """to_timestamp(text, template): fields read in template order; separators and literal text
    match any single non-alphanumeric character or themselves, as PostgreSQL does loosely."""
    fields = {"year": 1, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "us": 0}
    pm = None
    hour12 = False
    pos = 0
    s = text
    tokens = _tokens(fmt)
    for k, (kind, p, fm, suffix) in enumerate(tokens):
        # A number right before another pattern takes exactly its width ('YYYYMMDD').
        glued = k + 1 < len(tokens) and tokens[k + 1][0] == "pat"
        if kind == "lit":
            if p.isspace():
                while pos < len(s) and s[pos].isspace():
                    pos += 1
            elif pos < len(s) and (s[pos] == p or not s[pos].isalnum()):
                pos += 1
            continue
        while pos < len(s) and s[pos].isspace() and p.upper() not in ("AM", "PM"):
            pos += 1
        up = p.upper()
        if up in ("MONTH", "MON"):
            for k, name in enumerate(_MONTHS):
                cand = name if up == "MONTH" else name[:3]
                if s[pos:pos + len(cand)].lower() == cand.lower():
                    fields["month"] = k + 1
                    pos += len(cand)
                    break
            else:
                raise _bad(s[pos:pos + 9].strip(), fmt, p)
            continue
        if up in ("DAY", "DY"):
            m = re.match(r"[A-Za-z]+", s[pos:])
            pos += m.end() if m else 0
            continue
        if up in ("AM", "PM", "A.M.", "P.M."):
            m = re.match(r"(?i)(a\.?m\.?|p\.?m\.?)", s[pos:])
            if not m:
                raise _bad(s[pos:pos + 4], fmt, p)
            pm = m.group(0).lower().startswith("p")
            pos += m.end()
            continue
        if up in ("AD", "BC", "A.D.", "B.C."):
            m = re.match(r"(?i)(a\.?d\.?|b\.?c\.?)", s[pos:])
            if not m:
                raise _bad(s[pos:pos + 4], fmt, p)
            if m.group(0).lower().startswith("b"):
                from dataflow.errors import unsupported
                raise unsupported("dates before the year 1 (BC)")
            pos += m.end()
            continue
        width = {"YYYY": 4, "IYYY": 4, "YYY": 3, "YY": 2, "Y": 1, "MM": 2, "DD": 2, "DDD": 3, "HH24": 2,
                 "HH12": 2, "HH": 2, "MI": 2, "SS": 2, "MS": 3, "US": 6, "D": 1, "ID": 1, "IW": 2,
                 "WW": 2, "Q": 1, "J": 7}.get(up)
        if width is None:  # TZ / OF: not read
            continue
        m = re.match(r"\d{1,%d}" % (width if up not in ("YYYY", "J") or glued else 9), s[pos:])
        if not m:
            raise SqlError(SqlState.INVALID_DATETIME_FORMAT,
                           f'invalid value "{s[pos:pos + width]}" for "{p}"',
                           detail="Value must be an integer.")
        n = int(m.group(0))
        digits = m.group(0)
        pos += m.end()
        if suffix:
            pos += 2
        if up in ("YYYY", "IYYY"):
            fields["year"] = n
        elif up in ("YYY", "YY", "Y"):
            fields["year"] = n + (2000 if n < 70 else 1900) if up == "YY" else n + 2000 if up == "Y" else n + 1000 if n >= 100 else n + 2000
        elif up == "MM":
            fields["month"] = n
        elif up == "DD":
            fields["day"] = n
        elif up == "DDD":
            fields["doy"] = n
        elif up == "HH24":
            fields["hour"] = n
        elif up in ("HH12", "HH"):
            fields["hour"], hour12 = n, True
        elif up == "MI":
            fields["minute"] = n
        elif up == "SS":
            fields["second"] = n
        elif up == "MS":
            fields["us"] = int(digits.ljust(3, "0")) * 1000
        elif up == "US":
            fields["us"] = int(digits.ljust(6, "0"))
        elif up == "J":
            d = dt.date.fromordinal(n - 1721425)
            fields["year"], fields["month"], fields["day"] = d.year, d.month, d.day
    if pm is not None or hour12:
        h = fields["hour"]
        if not 1 <= h <= 12:
            raise SqlError(SqlState.INVALID_DATETIME_FORMAT, f'hour "{h}" is invalid for the 12-hour clock',
                           hint="Use the 24-hour clock, or give an hour between 1 and 12.")
        fields["hour"] = (h % 12) + (12 if pm else 0)
    try:
        if "doy" in fields:
            base = dt.datetime(fields["year"], 1, 1) + dt.timedelta(days=fields["doy"] - 1)
            return base.replace(hour=fields["hour"], minute=fields["minute"], second=fields["second"],
                                microsecond=fields["us"])
        return dt.datetime(fields["year"], fields["month"], fields["day"], fields["hour"], fields["minute"],
                           fields["second"], fields["us"])
    except ValueError:
        raise SqlError("22008", f'date/time field value out of range: "{text}"') from None
