"""time with time zone (timetz): a time of day (0 to 24:00:00, microseconds) and a fixed zone
offset, kept as one int64 *key* in an Arrow duration("us") column.

The key is (time + zone) * 2**17 + (zone + 2**16), where zone is PostgreSQL's offset in seconds
WEST of UTC (|zone| <= 15:59:59 = 57599 s) and time + zone is the UTC-adjusted time of day in
microseconds. Ordering keys as integers is PostgreSQL's timetz_cmp exactly: first the UTC time,
then the zone, so '12:00+02' and '11:00+01' (the same instant) are different values and
'12:00+02' < '11:00+01'. Equality, hashing, joins, GROUP BY, DISTINCT, ORDER BY and
consolidation therefore need nothing special, and the key fits easily in 63 bits
(|time + zone| < 2**38). The distinct Arrow type (duration, used by no other SQL type) lets
type-dispatching code (casts to text) recognise the column. A value outside Arrow, e.g. in a
Literal or a bound parameter, is the key as a `datetime.timedelta(microseconds=key)`, which is
what Arrow's duration gives back.

>>> fmt(parse("12:00+02")), fmt(parse("04:05:06.5 PST")), fmt(parse("24:00:00-05:30:15"))
('12:00:00+02', '04:05:06.5-08', '24:00:00-05:30:15')
>>> parse("12:00+02") == parse("11:00+01"), parse("12:00+02") < parse("11:00+01")
(False, True)
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState, unsupported

ARROW = pa.duration("us")
US_PER_SEC = 1_000_000
US_PER_DAY = 86_400 * US_PER_SEC
ZONE_LIMIT = 15 * 3600 + 59 * 60 + 59  # PostgreSQL's largest offset, 15:59:59
_SHIFT = 17
_BIAS = 1 << 16
_MASK = (1 << _SHIFT) - 1
NAME = "time with time zone"


# --------------------------------------------------------------------------------------------
# one value

def encode(time_us: int, zone: int) -> int:
    """The key of a time of day (microseconds) at `zone` seconds west of UTC."""
    return ((time_us + zone * US_PER_SEC) << _SHIFT) + (zone + _BIAS)


def decode(key: int) -> tuple[int, int]:
    """(time of day in microseconds, zone in seconds west of UTC) of a key."""
    zone = (key & _MASK) - _BIAS
    return (key >> _SHIFT) - zone * US_PER_SEC, zone


def key_of(value: dt.timedelta | int) -> int:
    if isinstance(value, dt.timedelta):
        return (value.days * 86_400 + value.seconds) * US_PER_SEC + value.microseconds
    return int(value)


def value_of(key: int) -> dt.timedelta:
    return dt.timedelta(microseconds=key)


def zone_text(zone: int) -> str:
    """PostgreSQL's EncodeTimezone: '+02', '-08:30', '+05:30:15' (zone is west of UTC)."""
    sign = "+" if zone <= 0 else "-"
    z = abs(zone)
    h, m, s = z // 3600, z // 60 % 60, z % 60
    if s:
        return f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if m:
        return f"{sign}{h:02d}:{m:02d}"
    return f"{sign}{h:02d}"


def time_of_day_text(us: int) -> str:
    """'HH:MM:SS[.ffffff]' without trailing zeros of the fraction; 24:00:00 as such."""
    secs, frac = divmod(us, US_PER_SEC)
    h, rest = divmod(secs, 3600)
    text = f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}"
    if frac:
        text += f".{frac:06d}".rstrip("0")
    return text


def fmt(value: dt.timedelta | int) -> str:
    """A timetz as PostgreSQL prints it: '12:00:00+02', '00:00:00.5-08:30'."""
    time_us, zone = decode(key_of(value))
    return time_of_day_text(time_us) + zone_text(zone)


# Zone abbreviations with a fixed offset (seconds EAST of UTC), from PostgreSQL's Default
# timezone_abbreviations set. Abbreviations PostgreSQL resolves through a zone's history
# (DYNAMIC) depend on the current date for a timetz and are refused.
ABBREVIATIONS = {
    "acdt": 37800, "acsst": 37800, "acst": 34200, "act": -18000, "acwst": 31500, "adt": -10800,
    "aedt": 39600, "aesst": 39600, "aest": 36000, "aft": 16200, "akdt": -28800, "akst": -32400,
    "almst": 25200, "almt": 21600, "amt": -14400, "ast": -14400, "awsst": 32400, "awst": 28800,
    "azost": 0, "azot": -3600, "bdst": 7200, "bdt": 21600, "bnt": 28800, "bort": 28800, "bot": -14400,
    "bra": -10800, "brst": -7200, "brt": -10800, "bst": 3600, "btt": 21600, "cadt": 37800,
    "cast": 34200, "cct": 28800, "cdt": -18000, "cest": 7200, "cet": 3600, "cetdst": 7200,
    "chadt": 49500, "chast": 45900, "chut": 36000, "clst": -10800, "cot": -18000, "cst": -21600,
    "cxt": 25200, "ddut": 36000, "eat": 10800, "edt": -14400, "eest": 10800, "eet": 7200,
    "eetdst": 10800, "egst": 0, "egt": -3600, "est": -18000, "fet": 10800, "fjst": 46800, "fjt": 43200,
    "fnst": -3600, "fnt": -7200, "galt": -21600, "gamt": -32400, "gft": -10800, "gilt": 43200,
    "gmt": 0, "hkt": 28800, "hst": -36000, "ict": 25200, "idt": 10800, "irt": 12600, "ist": 7200,
    "jayt": 32400, "jst": 32400, "kdt": 36000, "kgst": 21600, "kst": 32400, "lhst": 37800,
    "ligt": 36000, "mart": -34200, "mdt": -21600, "mest": 7200, "mesz": 7200, "met": 3600,
    "metdst": 7200, "mez": 3600, "mht": 43200, "mmt": 23400, "mpt": 36000, "msd": 14400, "mst": -25200,
    "must": 18000, "mut": 14400, "mvt": 18000, "myt": 28800, "ndt": -9000, "nft": -12600, "npt": 20700,
    "nst": -12600, "nzdt": 46800, "nzst": 43200, "nzt": 43200, "pdt": -25200, "pet": -18000,
    "pgt": 36000, "pht": 28800, "pkst": 21600, "pkt": 18000, "pmdt": -7200, "pmst": -10800,
    "pont": 39600, "pst": -28800, "pwt": 32400, "pyst": -10800, "ret": 14400, "sadt": 37800,
    "sast": 7200, "sct": 14400, "taht": -36000, "tft": 18000, "tjt": 18000, "tot": 46800,
    "trut": 36000, "tvt": 43200, "uct": 0, "ulast": 32400, "ut": 0, "utc": 0, "uyst": -7200,
    "uyt": -10800, "uzst": 21600, "uzt": 18000, "vut": 39600, "wadt": 28800, "wakt": 43200,
    "wast": 25200, "wat": 3600, "wdt": 32400, "wet": 0, "wetdst": 3600, "wft": 43200, "wgst": -7200,
    "wgt": -10800, "xjt": 21600, "yapt": 36000, "yekst": 21600, "z": 0, "zulu": 0,
}
DYNAMIC = {
    "amst", "anast", "anat", "arst", "art", "azst", "azt", "ckt", "clt", "davt", "easst", "east",
    "fkst", "fkt", "gest", "get", "gyt", "iot", "irkst", "irkt", "kgt", "kost", "krast", "krat",
    "lhdt", "lint", "lkt", "magst", "magt", "mawt", "msk", "novst", "novt", "nut", "omsst", "omst",
    "petst", "pett", "pyt", "sgt", "tkt", "tmt", "ulat", "vet", "vlast", "vlat", "volt", "yakst",
    "yakt", "yekt",
}

_TIME = re.compile(
    r"(?:(?P<date>\d{4,}-\d{1,2}-\d{1,2})\s+)?"
    r"(?:(?P<h>\d{1,2}):(?P<m>\d{1,2})(?::(?P<s>\d{1,2})(?P<f>\.\d*)?)?|(?P<compact>\d{4}|\d{6})(?P<cf>\.\d*)?)"
    r"\s*(?:(?P<ampm>am|pm)(?![a-z])\s*)?"
    r"(?:(?P<sign>[+-])\s*(?P<zone>\d+(?::\d+(?::\d+)?)?)|(?P<abbrev>[a-z]+))?",
    re.I)


def _bad(text: str) -> SqlError:
    return SqlError(SqlState.INVALID_DATETIME_FORMAT, f'invalid input syntax for type {NAME}: "{text}"')


def _range(text: str) -> SqlError:
    return SqlError(SqlState.DATETIME_FIELD_OVERFLOW, f'date/time field value out of range: "{text}"')


def _displacement(text: str) -> SqlError:
    return SqlError("22009", f'time zone displacement out of range: "{text}"')


def zone_of_numeric(digits: str, text: str) -> int:
    """Seconds EAST of UTC of the digits after the sign ('5', '05:30', '0530', '05:30:15'), by
    PostgreSQL's DecodeTimezone: run-together digits past two are hours and minutes."""
    parts = digits.split(":")
    sec = 0
    if len(parts) > 1:
        hr, mi = int(parts[0]), int(parts[1])
        if len(parts) > 2:
            sec = int(parts[2])
    elif len(digits) > 2:
        hr, mi = divmod(int(digits), 100)
    else:
        hr, mi = int(digits), 0
    if hr > 15 or mi >= 60 or sec >= 60:
        raise _displacement(text)
    return (hr * 60 + mi) * 60 + sec


def parse(text: str, session_zone: int = 0) -> int:
    """PostgreSQL's timetz input: [date ]HH:MM[:SS[.frac]] or HHMM[SS] [am|pm] [zone], the zone
    '+HH', '-HH:MM', '+HHMM', '+HH:MM:SS', 'Z' or a fixed abbreviation (PST, CET, UTC); no zone
    is the session's (UTC). 'allballs' is midnight UTC. Returns the key."""
    s = text.strip()
    if s.lower() == "allballs":
        return encode(0, 0)
    m = _TIME.fullmatch(s)
    if not m:
        raise _bad(text)
    if m.group("compact"):
        c = m.group("compact")
        h, mi, sec = int(c[:2]), int(c[2:4]), int(c[4:6] or 0)
        frac = m.group("cf") or ""
    else:
        h, mi, sec = int(m.group("h")), int(m.group("m")), int(m.group("s") or 0)
        frac = m.group("f") or ""
    if m.group("date"):
        y, mo, d = (int(x) for x in m.group("date").split("-"))
        try:
            dt.date(y, mo, d)
        except ValueError:
            raise _range(text) from None
    ampm = (m.group("ampm") or "").lower()
    if ampm:
        if h > 12:
            raise _range(text)
        h = (0 if h == 12 else h) + (12 if ampm == "pm" else 0)
    if mi > 59 or sec > 60 or h > 24:
        raise _range(text)
    us = int(round(float("0" + frac) * US_PER_SEC)) if len(frac) > 1 else 0
    total = ((h * 60 + mi) * 60 + sec) * US_PER_SEC + us
    if total > US_PER_DAY:
        raise _range(text)
    if m.group("sign"):
        east = zone_of_numeric(m.group("zone"), text)
        if m.group("sign") == "-":
            east = -east
    elif m.group("abbrev"):
        name = m.group("abbrev").lower()
        if name in ABBREVIATIONS:
            east = ABBREVIATIONS[name]
        elif name in DYNAMIC:
            raise unsupported(f'time zone abbreviation "{m.group("abbrev")}" (its offset depends on the date) '
                              f"in {NAME} input")
        else:
            raise _bad(text)
    else:
        east = -session_zone
    return encode(total, -east)


# --------------------------------------------------------------------------------------------
# whole columns (vectorised)

def split(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time of day us, zone s west, valid) of a timetz column; NULLs read as 00:00+00."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    keys = pc.fill_null(arr.view(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    zone = (keys & _MASK) - _BIAS
    return (keys >> _SHIFT) - zone * US_PER_SEC, zone, valid


def join(time_us: np.ndarray, zone: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A timetz column from times of day (taken modulo a day unless exactly 24:00:00 is
    wanted: the caller wraps) and zones (seconds west of UTC)."""
    time_us = np.asarray(time_us, np.int64)
    zone = np.asarray(zone, np.int64)
    keys = ((time_us + zone * US_PER_SEC) << _SHIFT) + (zone + _BIAS)
    mask = None if valid is None or valid.all() else ~valid
    return pa.array(np.where(valid, keys, 0) if mask is not None else keys, pa.int64(), mask=mask).view(ARROW)


def keys(arr: pa.Array) -> pa.Array:
    """The keys as int64 (min/max aggregate over them; the order is timetz's)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.view(pa.int64()) if arr.type == ARROW else arr.cast(pa.int64())


def from_keys(arr: pa.Array) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.int64()).view(ARROW)


def text_array(arr: pa.Array) -> pa.Array:
    """PostgreSQL's output text of a timetz column (each distinct value formatted once)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    uniq = pc.unique(arr)
    texts = pa.array([None if v is None else fmt(v) for v in uniq.to_pylist()], pa.string())
    return texts.take(pc.index_in(arr, uniq))


_POSIX = re.compile(r"\s*(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::(\d{1,2}))?(?::(\d{1,2}))?\s*", re.I)


def fixed_zone(name: str) -> int:
    """Seconds EAST of UTC of a zone given to AT TIME ZONE for a timetz, as PostgreSQL's
    timetz_zone reads it: a fixed abbreviation ('PST', 'UTC'), a POSIX offset ('+05' is five
    hours WEST, as in PostgreSQL), or a zone name whose offset never changes (Etc/GMT+3,
    Asia/Kolkata). A zone with daylight saving time (or a dynamic abbreviation) is refused:
    PostgreSQL takes its offset on the current date."""
    low = name.strip().lower()
    if low in ABBREVIATIONS:
        return ABBREVIATIONS[low]
    m = _POSIX.fullmatch(name)
    if m:
        secs = (int(m.group(2)) * 60 + int(m.group(3) or 0)) * 60 + int(m.group(4) or 0)
        return -secs if m.group(1) == "+" else secs
    if low in DYNAMIC:
        raise unsupported(f'AT TIME ZONE "{name}" for {NAME} (its offset depends on the current date)')
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        zone = ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'time zone "{name}" not recognized') from None
    offsets = {dt.datetime(y, mo, 1, tzinfo=zone).utcoffset() for y in range(1990, 2038) for mo in (1, 4, 7, 10)}
    if len(offsets) != 1:
        raise unsupported(f'AT TIME ZONE "{name}" for {NAME} (its offset depends on the current date)')
    return int(offsets.pop().total_seconds())
