"""Kernels of the date and time functions (signatures: `planner.functions.datetime`).

Timestamps are int64 microseconds since 1970-01-01 (timestamptz in UTC); dates are int32 days.
Calendar work is vectorised with NumPy's datetime64 (months via datetime64[M], so adding a month
to Jan 31 clamps to the last day of February, as PostgreSQL does); intervals are split into
their three fields (`dataflow.interval.split`) and rebuilt with `interval.join`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import interval, timetz
from dataflow.decimal_util import from_unscaled_i64
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call
from dataflow.types import TypeKind

US_PER_DAY = interval.USECS_PER_DAY
_EPOCH_JULIAN = 2440588  # Julian day of 1970-01-01


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _valid(*arrs: pa.Array) -> np.ndarray:
    ok = np.ones(len(arrs[0]), bool)
    for a in arrs:
        if a.null_count:
            ok &= pc.is_valid(a).to_numpy(zero_copy_only=False)
    return ok


def _micros(a: pa.Array) -> np.ndarray:
    """Timestamps (or dates, as midnight) as int64 microseconds, 0 for NULL."""
    a = _arr(a)
    if pa.types.is_date(a.type):
        days = pc.fill_null(a.cast(pa.int32()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        return days * US_PER_DAY
    return pc.fill_null(a.cast(pa.timestamp("us", tz=a.type.tz)).view(pa.int64()), 0).to_numpy(
        zero_copy_only=False)


def _timestamps(us: np.ndarray, ok: np.ndarray, out: pa.DataType) -> pa.Array:
    arr = pa.array(us, pa.int64(), mask=~ok if not ok.all() else None)
    if pa.types.is_date(out):
        return pa.array((us // US_PER_DAY).astype(np.int32), mask=~ok if not ok.all() else None).cast(out)
    return arr.view(pa.timestamp("us", tz=out.tz)).cast(out) if out.tz else arr.view(pa.timestamp("us")).cast(out)


def _numbers(a: pa.Array, dtype=np.int64) -> np.ndarray:
    return pc.fill_null(_arr(a), 0).to_numpy(zero_copy_only=False).astype(dtype)


def _out_of_range() -> SqlError:
    return SqlError("22008", "timestamp out of range")


# ---- arithmetic -------------------------------------------------------------------------------

def add_months(us: np.ndarray, months: np.ndarray) -> np.ndarray:
    """Timestamps plus whole months, the day clamped to the new month's length."""
    if not months.any():
        return us
    days = us // US_PER_DAY
    tod = us - days * US_PER_DAY
    d = days.astype("datetime64[D]")
    m = d.astype("datetime64[M]")
    dom = (d - m.astype("datetime64[D]")).astype(np.int64)
    m2 = m + months.astype("timedelta64[M]")
    dim = ((m2 + np.timedelta64(1, "M")).astype("datetime64[D]") - m2.astype("datetime64[D]")).astype(np.int64)
    new_days = m2.astype("datetime64[D]").astype(np.int64) + np.minimum(dom, dim - 1)
    return new_days * US_PER_DAY + tod


def shift(us: np.ndarray, months: np.ndarray, days: np.ndarray, micros: np.ndarray, sign: int) -> np.ndarray:
    """timestamp + sign * interval: months first, then days, then the time, as PostgreSQL does."""
    return add_months(us, sign * months) + sign * days * US_PER_DAY + sign * micros


def _ts_interval(sign: int, interval_first: bool = False):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        ts, iv = (vals[1], vals[0]) if interval_first else (vals[0], vals[1])
        ts, iv = _arr(ts), _arr(iv)
        ok = _valid(ts, iv)
        months, days, micros = interval.split(iv)
        return _timestamps(shift(_micros(ts), months, days, micros, sign), ok, expr.type.arrow)
    return run


def _ts_sub_ts(vals: list[pa.Array], expr: Call) -> pa.Array:
    """timestamp - timestamp: days and time (whole days moved out of the time, signs alike)."""
    a, b = _arr(vals[0]), _arr(vals[1])
    ok = _valid(a, b)
    diff = _micros(a) - _micros(b)
    days = np.where(diff >= 0, diff // US_PER_DAY, -((-diff) // US_PER_DAY))
    return interval.join(np.zeros(len(diff), np.int64), days, diff - days * US_PER_DAY, ok)


def _time_us(a: pa.Array) -> np.ndarray:
    return pc.fill_null(_arr(a).cast(pa.int64()), 0).to_numpy(zero_copy_only=False)


def _times(us: np.ndarray, ok: np.ndarray) -> pa.Array:
    return pa.array(np.mod(us, US_PER_DAY), pa.int64(), mask=~ok if not ok.all() else None).cast(pa.time64("us"))


def _time_interval(sign: int, interval_first: bool = False):
    """time ± interval: the interval's time part, wrapping around midnight (months and days
    do not move a time of day), as PostgreSQL does."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        t, iv = (vals[1], vals[0]) if interval_first else (vals[0], vals[1])
        t, iv = _arr(t), _arr(iv)
        _, _, micros = interval.split(iv)
        return _times(_time_us(t) + sign * micros, _valid(t, iv))
    return run


def _time_sub_time(vals: list[pa.Array], expr: Call) -> pa.Array:
    a, b = _arr(vals[0]), _arr(vals[1])
    ok = _valid(a, b)
    zero = np.zeros(len(a), np.int64)
    return interval.join(zero, zero.copy(), _time_us(a) - _time_us(b), ok)


def _date_time(time_first: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        d, t = (_arr(vals[1]), _arr(vals[0])) if time_first else (_arr(vals[0]), _arr(vals[1]))
        return _timestamps(_micros(d) + _time_us(t), _valid(d, t), pa.timestamp("us"))
    return run


def _timetz_key(vals: list[pa.Array], expr: Call) -> pa.Array:
    return timetz.keys(_arr(vals[0]))


def _timetz_from_key(vals: list[pa.Array], expr: Call) -> pa.Array:
    return timetz.from_keys(_arr(vals[0]))


def _timetz_interval(sign: int, interval_first: bool = False):
    """timetz ± interval: the interval's time part, wrapping at midnight; the zone is kept
    (PostgreSQL's timetz_pl_interval)."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        t, iv = (vals[1], vals[0]) if interval_first else (vals[0], vals[1])
        t, iv = _arr(t), _arr(iv)
        tod, zone, _ = timetz.split(t)
        _, _, micros = interval.split(iv)
        return timetz.join(np.mod(tod + sign * micros, US_PER_DAY), zone, _valid(t, iv))
    return run


def _date_timetz(time_first: bool):
    """date + timetz: the instant of that local time at the value's zone (a timestamptz)."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        d, t = (_arr(vals[1]), _arr(vals[0])) if time_first else (_arr(vals[0]), _arr(vals[1]))
        tod, zone, _ = timetz.split(t)
        return _timestamps(_micros(d) + tod + zone * 1_000_000, _valid(d, t), pa.timestamp("us", tz="UTC"))
    return run


def _timetz_at_zone(vals: list[pa.Array], expr: Call) -> pa.Array:
    """timezone(zone, timetz): the same instant's time of day at a fixed-offset zone (a number,
    UTC, a fixed abbreviation, or an interval's time). A named zone is refused: PostgreSQL takes
    its offset on the current date."""
    zones, t = _arr(vals[0]), _arr(vals[1])
    tod, zone, ok = timetz.split(t)
    ok = ok & zones.is_valid().to_numpy(zero_copy_only=False)
    if zones.type == interval.ARROW:
        m, d, us = interval.split(zones)
        if ((m != 0) | (d != 0))[ok].any():
            bad = zones[int(np.flatnonzero(((m != 0) | (d != 0)) & ok)[0])].as_py()
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f'interval time zone "{interval.fmt(bad)}" must not include months or days')
        new = -(us // 1_000_000)
    else:
        offsets = {z: timetz.fixed_zone(z) for z in pc.unique(zones).drop_null().to_pylist()}
        names = zones.to_pylist()
        new = np.array([0 if n is None else -offsets[n] for n in names], np.int64)
    utc = tod + zone * 1_000_000
    return timetz.join(np.mod(utc - new * 1_000_000, US_PER_DAY), new, ok)


def _date_days(sign: int, days_first: bool = False):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        d, n = (vals[1], vals[0]) if days_first else (vals[0], vals[1])
        d, n = _arr(d), _arr(n)
        ok = _valid(d, n)
        out = _numbers(d.cast(pa.int32())) + sign * _numbers(n)
        if (np.abs(out[ok]) > 2_147_483_647 - 2_440_588).any():
            raise SqlError("22008", "date out of range")
        return pa.array(out.astype(np.int32), mask=~ok if not ok.all() else None).cast(pa.date32())
    return run


def _date_sub_date(vals: list[pa.Array], expr: Call) -> pa.Array:
    a, b = _arr(vals[0]), _arr(vals[1])
    ok = _valid(a, b)
    out = _numbers(a.cast(pa.int32())) - _numbers(b.cast(pa.int32()))
    return pa.array(out.astype(np.int32), mask=~ok if not ok.all() else None)


def _interval_op(sign: int):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        a, b = _arr(vals[0]), _arr(vals[1])
        ok = _valid(a, b)
        am, ad, au = interval.split(a)
        bm, bd, bu = interval.split(b)
        return interval.join(am + sign * bm, ad + sign * bd, au + sign * bu, ok)
    return run


def _interval_neg(vals: list[pa.Array], expr: Call) -> pa.Array:
    a = _arr(vals[0])
    m, d, u = interval.split(a)
    return interval.join(-m, -d, -u, _valid(a))


def _interval_scale(vals: pa.Array, factor: np.ndarray, ok: np.ndarray, divide: bool) -> pa.Array:
    """PostgreSQL 15's interval_mul / interval_div step by step (in doubles, C truncation): the
    fraction of the months becomes days (30 a month), the fraction of the days seconds; both
    round those remainders to microseconds first (TSROUND): '-1 mon 27 days -4 hours' *
    0.8999999999999999 is '-3 days +03:36:00' in PostgreSQL 15."""
    m, d, u = interval.split(_arr(vals))
    f = np.where(ok, factor, 1.0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        months_f = m / f if divide else m * f
        days_f = d / f if divide else d * f
        if not (np.isfinite(months_f[ok]).all() and np.isfinite(days_f[ok]).all()) or \
                (np.abs(months_f[ok]) >= 2 ** 31).any() or (np.abs(days_f[ok]) >= 2 ** 31).any():
            raise interval.out_of_range()
        months = np.trunc(months_f)
        days = np.trunc(days_f)
        month_rem_days = (months_f - months) * 30
        month_rem_days = np.rint(month_rem_days * 1e6) / 1e6  # TSROUND, in both
        sec_rem = (days_f - days + month_rem_days - np.trunc(month_rem_days)) * 86_400
        sec_rem = np.rint(sec_rem * 1e6) / 1e6
        spill = np.where(np.abs(sec_rem) >= 86_400, np.trunc(sec_rem / 86_400), 0)
        days = days + spill
        sec_rem = sec_rem - spill * 86_400
        days = days + np.trunc(month_rem_days)
        us = np.rint((u / f if divide else u * f) + sec_rem * 1e6)
    if not np.isfinite(us[ok]).all() or (np.abs(us[ok]) >= 2 ** 62).any():
        raise interval.out_of_range()
    z = ok.astype(np.int64)
    return interval.join(months.astype(np.int64) * z, days.astype(np.int64) * z, us.astype(np.int64) * z, ok)


def _interval_mul(factor_first: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        iv, f = (vals[1], vals[0]) if factor_first else (vals[0], vals[1])
        iv, f = _arr(iv), _arr(f)
        return _interval_scale(iv, _numbers(f, np.float64), _valid(iv, f), divide=False)
    return run


def _interval_div(vals: list[pa.Array], expr: Call) -> pa.Array:
    iv, f = _arr(vals[0]), _arr(vals[1])
    ok = _valid(iv, f)
    factor = _numbers(f, np.float64)
    if (factor[ok] == 0).any():
        raise SqlError(SqlState.DIVISION_BY_ZERO, "division by zero")
    return _interval_scale(iv, factor, ok, divide=True)


# ---- date_trunc, extract ----------------------------------------------------------------------

def _unit(expr: Call) -> str:
    return expr.args[0].value


def _trunc_micros(us: np.ndarray, unit: str) -> np.ndarray:
    step = {"microseconds": 1, "milliseconds": 1000, "second": 10 ** 6, "minute": 60 * 10 ** 6,
            "hour": 3600 * 10 ** 6, "day": US_PER_DAY}.get(unit)
    if step is not None:
        return us // step * step
    days = (us // US_PER_DAY).astype("datetime64[D]")
    if unit == "week":  # ISO weeks start on Monday; 1970-01-01 was a Thursday
        dn = days.astype(np.int64)
        return (dn - (dn + 3) % 7) * US_PER_DAY
    month = days.astype("datetime64[M]").astype(np.int64)  # months since 1970-01
    year = days.astype("datetime64[Y]").astype(np.int64) + 1970
    if unit == "month":
        start = month
    elif unit == "quarter":
        start = month - month % 3
    else:
        # PostgreSQL: decade 2020 starts 2020; century 21 starts 2001; millennium 3 starts 2001.
        if unit == "year":
            y0 = year
        elif unit == "decade":
            y0 = year - np.mod(year, 10)
        elif unit == "century":
            y0 = np.where(year > 0, (year - 1) // 100 * 100 + 1, -((-year) // 100 * 100 + 99))
        else:  # millennium
            y0 = np.where(year > 0, (year - 1) // 1000 * 1000 + 1, -((-year) // 1000 * 1000 + 999))
        start = (y0 - 1970) * 12
    return start.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) * US_PER_DAY


def _date_trunc(vals: list[pa.Array], expr: Call) -> pa.Array:
    unit = _unit(expr)
    src = _arr(vals[1])
    ok = _valid(src)
    if src.type == interval.ARROW:
        m, d, u = interval.split(src)
        if unit in ("year", "decade", "century", "millennium", "quarter"):
            per = {"year": 12, "decade": 120, "century": 1200, "millennium": 12000, "quarter": 3}[unit]
            m = np.trunc(m / per).astype(np.int64) * per
            return interval.join(m, np.zeros_like(d), np.zeros_like(u), ok)
        if unit == "month":
            return interval.join(m, np.zeros_like(d), np.zeros_like(u), ok)
        if unit == "day":
            return interval.join(m, d, np.zeros_like(u), ok)
        if unit == "week":
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, 'unit "week" not supported for type interval')
        step = {"microseconds": 1, "milliseconds": 1000, "second": 10 ** 6, "minute": 60 * 10 ** 6,
                "hour": 3600 * 10 ** 6}[unit]
        return interval.join(m, d, np.trunc(u / step).astype(np.int64) * step, ok)
    return _timestamps(_trunc_micros(_micros(src), unit), ok, expr.type.arrow)


class _Calendar:
    """Calendar fields of timestamps (microseconds), each computed only when asked for."""

    def __init__(self, us: np.ndarray) -> None:
        self.us = us
        self.days = us // US_PER_DAY
        self._d = None

    @property
    def d(self):
        if self._d is None:
            self._d = self.days.astype("datetime64[D]")
        return self._d

    def __getitem__(self, field: str) -> np.ndarray:
        d = self.d
        if field == "days":
            return self.days
        if field == "tod":
            return self.us - self.days * US_PER_DAY
        if field == "year":
            return d.astype("datetime64[Y]").astype(np.int64) + 1970
        if field == "month":
            return d.astype("datetime64[M]").astype(np.int64) % 12 + 1
        if field == "day":
            return (d - d.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64) + 1
        if field == "doy":
            return (d - d.astype("datetime64[Y]").astype("datetime64[D]")).astype(np.int64) + 1
        if field == "dow":
            return (self.days + 4) % 7  # 0 = Sunday
        if field == "isodow":
            dow = (self.days + 4) % 7
            return np.where(dow == 0, 7, dow)
        # ISO year and week: the week's Thursday decides the year.
        thursday = self.days - (self["isodow"] - 1) + 3
        th = thursday.astype("datetime64[D]")
        if field == "isoyear":
            return th.astype("datetime64[Y]").astype(np.int64) + 1970
        if field == "week":
            return (thursday - th.astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)) // 7 + 1
        raise KeyError(field)

    def __contains__(self, field: str) -> bool:
        return field in ("days", "tod", "year", "month", "day", "doy", "dow", "isodow", "isoyear", "week")


def _calendar(us: np.ndarray) -> _Calendar:
    return _Calendar(us)


def _interval_epoch_us(year: np.ndarray, month: np.ndarray, day: np.ndarray, us: np.ndarray) -> np.ndarray:
    """An interval's epoch in microseconds: int64, or exact Python ints (an object array) where
    that would overflow (`interval '178000000 years'` wrapped around to a negative epoch)."""
    bound = (np.abs(year).astype(np.float64) * 31_557_600_000_000 + np.abs(month) * 2_592_000_000_000
             + np.abs(day).astype(np.float64) * US_PER_DAY + np.abs(us).astype(np.float64))
    if not len(bound) or bound.max() < 2.0 ** 62:
        return year * 31_557_600_000_000 + month * 2_592_000_000_000 + day.astype(np.int64) * US_PER_DAY + us
    return np.array([int(y) * 31_557_600_000_000 + int(mo) * 2_592_000_000_000 + int(d) * US_PER_DAY + int(u)
                     for y, mo, d, u in zip(year, month, day, us)], dtype=object)


def _field_values(src: pa.Array, field: str) -> tuple[np.ndarray, int]:
    """The field as exact integers scaled by 10**scale (scale 6 for seconds and epoch)."""
    if src.type == interval.ARROW:
        m, d, u = interval.split(src)
        year = np.trunc(m / 12).astype(np.int64)
        vals = {"year": (year, 0), "month": (m - year * 12, 0), "day": (d, 0),
                "quarter": (np.trunc((m - year * 12) / 3).astype(np.int64) + 1, 0),
                "decade": (np.trunc(year / 10).astype(np.int64), 0),
                "century": (np.trunc(year / 100).astype(np.int64), 0),
                "millennium": (np.trunc(year / 1000).astype(np.int64), 0),
                "hour": (np.trunc(u / 3_600_000_000).astype(np.int64), 0),
                "minute": (np.trunc((u % np.where(u < 0, -3_600_000_000, 3_600_000_000)) / 60_000_000).astype(np.int64), 0),
                "second": (np.fmod(u, 60_000_000), 6), "milliseconds": (np.fmod(u, 60_000_000), 3),
                "microseconds": (np.fmod(u, 60_000_000), 0),
                # epoch: 365.25 days a year, 30 days a month, as PostgreSQL counts.
                "epoch": (_interval_epoch_us(year, m - year * 12, d, u), 6)}
        return vals[field]
    if src.type == timetz.ARROW:  # the clock fields, the zone's, and epoch (UTC-adjusted)
        tod, zone, _ = timetz.split(src)
        east = -zone
        vals = {"hour": (tod // 3_600_000_000, 0), "minute": (tod // 60_000_000 % 60, 0),
                "second": (tod % 60_000_000, 6), "milliseconds": (tod % 60_000_000, 3),
                "microseconds": (tod % 60_000_000, 0), "epoch": (tod + zone * 1_000_000, 6),
                "timezone": (east, 0),
                # C's truncating division, as PostgreSQL: -05:30 is hour -5, minute -30.
                "timezone_hour": (np.sign(east) * (np.abs(east) // 3600), 0),
                "timezone_minute": (np.sign(east) * (np.abs(east) // 60 % 60), 0)}
        return vals[field]
    if pa.types.is_time(src.type):  # a time of day: the clock fields and epoch only
        tod = _time_us(src)
        return {"hour": (tod // 3_600_000_000, 0), "minute": (tod // 60_000_000 % 60, 0),
                "second": (tod % 60_000_000, 6), "milliseconds": (tod % 60_000_000, 3),
                "microseconds": (tod % 60_000_000, 0), "epoch": (tod, 6)}[field]
    us = _micros(src)
    c = _calendar(us)
    if field in c and field not in ("days", "tod"):
        if field != "year":
            return c[field], 0
        year = c["year"]
        return np.where(year > 0, year, year - 1), 0  # no year 0: 1 BC is -1
    tod = c["tod"]
    year = c["year"] if field in ("quarter", "decade", "century", "millennium") else None
    if field == "quarter":
        return (c["month"] - 1) // 3 + 1, 0
    if field == "decade":
        return np.floor_divide(year, 10), 0
    if field == "century":
        return np.where(year > 0, (year + 99) // 100, -((99 - (year - 1)) // 100)), 0
    if field == "millennium":
        return np.where(year > 0, (year + 999) // 1000, -((999 - (year - 1)) // 1000)), 0
    if field == "hour":
        return tod // 3_600_000_000, 0
    if field == "minute":
        return tod // 60_000_000 % 60, 0
    if field == "second":
        return tod % 60_000_000, 6
    if field == "milliseconds":
        return tod % 60_000_000, 3
    if field == "microseconds":
        return tod % 60_000_000, 0
    if field == "epoch":
        return us, 6
    if field == "julian":
        return (c["days"] + _EPOCH_JULIAN) * US_PER_DAY + tod, 6 + 4  # days + fraction of a day
    if field in ("timezone", "timezone_hour", "timezone_minute"):
        return np.zeros(len(us), np.int64), 0  # the session's zone is UTC
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f'unit "{field}" not supported')


def _extract(as_float: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        field = _unit(expr)
        src = _arr(vals[1])
        ok = _valid(src)
        if pa.types.is_date(src.type) and field in ("hour", "minute", "second", "milliseconds", "microseconds"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f'unit "{field}" not supported for type date')
        v, scale = _field_values(src, field)
        if field == "julian":
            # Julian day with the fraction of the day: days + tod / day (exact as a decimal).
            days = v // US_PER_DAY
            frac = v - days * US_PER_DAY
            if as_float:
                out = days + frac / US_PER_DAY
                return pa.array(out, pa.float64(), mask=~ok if not ok.all() else None)
            return _decimal_ratio(days, frac, US_PER_DAY, ok, expr)
        if as_float:
            return pa.array(v / 10 ** scale, pa.float64(), mask=~ok if not ok.all() else None)
        # numeric: PostgreSQL prints seconds with 6 digits, milliseconds with 3, epoch of a
        # date with none: the scale is part of the value.
        if pa.types.is_date(src.type) and field == "epoch":
            v, scale = v // 10 ** 6, 0
        if v.dtype == object:  # exact Python ints past int64 (an interval's epoch)
            from decimal import Decimal
            return pa.array([Decimal(int(x)).scaleb(-scale) if o else None for x, o in zip(v, ok)],
                            pa.decimal128(38, scale))
        return from_unscaled_i64(v, ok, scale)
    return run


def _decimal_ratio(days: np.ndarray, frac: np.ndarray, per: int, ok: np.ndarray, expr: Call) -> pa.Array:
    from decimal import Decimal
    q = Decimal(1).scaleb(-16)
    vals = [(Decimal(int(d)) + Decimal(int(f)) / Decimal(per)).quantize(q) if o else None
            for d, f, o in zip(days, frac, ok)]
    return pa.array(vals, pa.decimal128(38, 16))


# ---- constructors and the rest ----------------------------------------------------------------

def _make_date(vals: list[pa.Array], expr: Call) -> pa.Array:
    y, m, d = (_arr(v) for v in vals)
    ok = _valid(y, m, d)
    Y, M, D = _numbers(y), _numbers(m), _numbers(d)
    return _date_from_parts(Y, M, D, ok, "date")


def _date_from_parts(Y: np.ndarray, M: np.ndarray, D: np.ndarray, ok: np.ndarray, what: str) -> pa.Array:
    bad = ok & ((Y == 0) | (M < 1) | (M > 12) | (D < 1) | (D > 31))
    ystore = np.where(Y < 0, Y + 1, Y)  # year -1 is 1 BC, stored as year 0
    month0 = ((ystore - 1970) * 12 + np.clip(M, 1, 12) - 1).astype("datetime64[M]")
    dim = ((month0 + np.timedelta64(1, "M")).astype("datetime64[D]") - month0.astype("datetime64[D]")).astype(np.int64)
    bad |= ok & (D > dim)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        if Y[i] == 0:
            raise SqlError("22008", f"{what} field value out of range: {Y[i]}-{M[i]:02d}-{D[i]:02d}")
        raise SqlError("22008", f"{what} field value out of range: {Y[i]}-{M[i]:02d}-{D[i]:02d}")
    if (ok & ((Y < 1) | (Y > 9999))).any():
        # Dates are read and printed through Python's datetime (years 1 to 9999).
        raise unsupported("dates before year 1 (BC) or after year 9999")
    days = month0.astype("datetime64[D]").astype(np.int64) + np.clip(D, 1, 31) - 1
    return pa.array(np.where(ok, days, 0).astype(np.int32), mask=~ok if not ok.all() else None).cast(pa.date32())


def _pg_g(x: float) -> str:
    """C's %02g as PostgreSQL's snprintf prints it (NaN, Infinity spelled out)."""
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return f"{x:02g}"


def _time_fields_us(h: np.ndarray, mi: np.ndarray, sec: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Microseconds of hour:min:sec, checked as PostgreSQL's float_time_overflows does (seconds
    rounded to microseconds first; 24:00:00 is the latest time)."""
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = np.rint(sec * 1e6)
        bad = ok & ((h < 0) | (h > 24) | (mi < 0) | (mi > 59) | np.isnan(sec) | ~(rounded >= 0) |
                    ~(rounded <= 60e6))
        total = (h * 3600 + mi * 60) * 10 ** 6 + np.where(bad | ~ok, 0, rounded).astype(np.int64)
    bad |= ok & (total > US_PER_DAY)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SqlError("22008", f"time field value out of range: {h[i]}:{mi[i]:02d}:{_pg_g(sec[i])}")
    return total


def _local_timestamp_us(arrs: list[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
    """make_timestamp's (microseconds, valid) from year, month, day, hour, min, sec."""
    ok = _valid(*arrs)
    Y, M, D, h, mi = (_numbers(a) for a in arrs[:5])
    sec = _numbers(arrs[5], np.float64)
    days = _numbers(_date_from_parts(Y, M, D, ok, "date").cast(pa.int32()))
    return days * US_PER_DAY + _time_fields_us(h, mi, sec, ok), ok


def _make_timestamp(vals: list[pa.Array], expr: Call) -> pa.Array:
    us, ok = _local_timestamp_us([_arr(v) for v in vals])
    return _timestamps(us, ok, pa.timestamp("us"))


def _make_time(vals: list[pa.Array], expr: Call) -> pa.Array:
    """make_time(hour, min, sec): 24:00:00 (which PostgreSQL keeps as the end of the day) is
    refused, as the time type refuses it everywhere here."""
    arrs = [_arr(v) for v in vals]
    ok = _valid(*arrs)
    us = _time_fields_us(_numbers(arrs[0]), _numbers(arrs[1]), _numbers(arrs[2], np.float64), ok)
    if (ok & (us == US_PER_DAY)).any():
        raise unsupported("the time 24:00:00")
    return _times(np.where(ok, us, 0), ok)


_ISO_OFFSET = None


def _zone_offset_east(zone: str) -> int | None:
    """Seconds east of UTC of make_timestamptz's zone when it is fixed: a numeric offset in
    ISO's sign convention ('+05' is UTC+5, as PostgreSQL's DecodeTimezone reads it) or a fixed
    abbreviation; None for a zone name (looked up by date)."""
    import re
    global _ISO_OFFSET
    if _ISO_OFFSET is None:
        _ISO_OFFSET = re.compile(r"([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?")
    if zone[:1].isdigit():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                       f'invalid input syntax for type numeric time zone: "{zone}"',
                       hint='Numeric time zones must have "-" or "+" as first character.')
    m = _ISO_OFFSET.fullmatch(zone)
    if m:
        h, mi, s = int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0)
        if h > 15 or mi > 59 or s > 59:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'numeric time zone "{zone}" out of range')
        secs = (h * 60 + mi) * 60 + s
        return -secs if m.group(1) == "-" else secs
    low = zone.lower()
    if low in timetz.ABBREVIATIONS:
        return timetz.ABBREVIATIONS[low]
    if low in timetz.DYNAMIC:
        raise unsupported(f'make_timestamptz() at the time zone abbreviation "{zone}" (its offset depends on the date)')
    return None


def _make_timestamptz(vals: list[pa.Array], expr: Call) -> pa.Array:
    """make_timestamptz(year, month, day, hour, min, sec [, zone]): the local time at the zone
    (the session's, UTC, without one). Fixed offsets are applied in NumPy; zone names go
    through timezone(zone, timestamp) per distinct zone."""
    us, ok = _local_timestamp_us([_arr(v) for v in vals[:6]])
    out = expr.type.arrow
    if len(vals) == 6:
        return _timestamps(us, ok, out)
    zones = _arr(vals[6])
    ok = ok & _valid(zones)
    named = np.zeros(len(us), bool)
    for z in pc.unique(zones).drop_null().to_pylist():
        rows = ok & pc.fill_null(pc.equal(zones, z), False).to_numpy(zero_copy_only=False)
        if not rows.any():
            continue
        east = _zone_offset_east(z)
        if east is None:
            named |= rows
        else:
            us = np.where(rows, us - east * 10 ** 6, us)
    result = _timestamps(us, ok, out)
    if named.any():
        idx = pa.array(np.flatnonzero(named))
        local = _timestamps(us, ok, pa.timestamp("us")).take(idx)

        class _As:  # the call's result type, as _at_time_zone reads it
            type = expr.type
        at = _at_time_zone([zones.take(idx), local], _As())
        positions = np.full(len(us), -1, np.int64)
        positions[named] = np.arange(int(named.sum()))
        merged = pc.if_else(pa.array(named), at.take(pa.array(np.maximum(positions, 0))), result)
        return merged
    return result


def _date_bin(vals: list[pa.Array], expr: Call) -> pa.Array:
    """date_bin(stride, source, origin): origin + the largest whole number of strides not
    past source (rounding down also before the origin, as PostgreSQL 15.2 and later do)."""
    stride, src, origin = (_arr(v) for v in vals)
    ok = _valid(stride, src, origin)
    months, days, micros = interval.split(stride)
    if (ok & (months != 0)).any():
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                       "timestamps cannot be binned into intervals containing months or years")
    step = days * US_PER_DAY + micros
    if (ok & (step <= 0)).any():
        raise SqlError("22008", "stride must be greater than zero")
    step = np.where(ok, step, 1)
    t, o = _micros(src), _micros(origin)
    diff = t - o
    return _timestamps(o + diff // step * step, ok, expr.type.arrow)


def _isfinite(vals: list[pa.Array], expr: Call) -> pa.Array:
    """isfinite(date | timestamp | timestamptz | interval): there are no infinite values here."""
    a = _arr(vals[0])
    return pc.if_else(pc.is_valid(a), True, pa.scalar(None, pa.bool_()))


def _make_interval(vals: list[pa.Array], expr: Call) -> pa.Array:
    # Arguments left out default to 0, as PostgreSQL's make_interval declares them.
    n = len(vals[0])
    arrs = [_arr(v) for v in vals[:len(expr.args)]]
    arrs += [pa.array(np.zeros(n, np.int64)) for _ in range(6 - len(arrs))]
    if len(arrs) < 7:
        arrs.append(pa.array(np.zeros(n, np.float64)))
    ok = _valid(*arrs)
    years, months, weeks, days, hours, mins = (_numbers(a) for a in arrs[:6])
    secs = _numbers(arrs[6], np.float64)
    us = (hours * 3600 + mins * 60) * 10 ** 6 + np.rint(secs * 1e6).astype(np.int64)
    return interval.join(years * 12 + months, weeks * 7 + days, us, ok)


def _to_timestamp(vals: list[pa.Array], expr: Call) -> pa.Array:
    a = _arr(vals[0])
    ok = _valid(a)
    x = _numbers(a, np.float64)
    if (ok & ~np.isfinite(x)).any():
        raise SqlError("22008", "timestamp cannot be NaN" if np.isnan(x[ok]).any() else "timestamp out of range")
    us = np.rint(x * 1e6)
    if (ok & (np.abs(us) > 9.2e18)).any():
        raise _out_of_range()
    return _timestamps(np.where(ok, us, 0).astype(np.int64), ok, expr.type.arrow)


def _justify(days_to_months: bool, time_to_days: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        a = _arr(vals[0])
        m, d, u = interval.split(a)
        if time_to_days:
            whole = np.where(u >= 0, u // US_PER_DAY, -((-u) // US_PER_DAY))
            d, u = d + whole, u - whole * US_PER_DAY
        if days_to_months:
            whole = np.where(d >= 0, d // 30, -((-d) // 30))
            m, d = m + whole, d - whole * 30
        if days_to_months and time_to_days:
            # justify_interval: make the signs agree.
            fix_pos = (m > 0) & ((d < 0) | ((d == 0) & (u < 0)))
            fix_neg = (m < 0) & ((d > 0) | ((d == 0) & (u > 0)))
            m, d = np.where(fix_pos, m - 1, np.where(fix_neg, m + 1, m)), np.where(fix_pos, d + 30, np.where(fix_neg, d - 30, d))
            fix_pos = (d > 0) & (u < 0)
            fix_neg = (d < 0) & (u > 0)
            d, u = np.where(fix_pos, d - 1, np.where(fix_neg, d + 1, d)), np.where(fix_pos, u + US_PER_DAY, np.where(fix_neg, u - US_PER_DAY, u))
        elif time_to_days:
            fix_pos = (d > 0) & (u < 0)
            fix_neg = (d < 0) & (u > 0)
            d, u = np.where(fix_pos, d - 1, np.where(fix_neg, d + 1, d)), np.where(fix_pos, u + US_PER_DAY, np.where(fix_neg, u - US_PER_DAY, u))
        elif days_to_months:
            pass
        return interval.join(m, d, u, _valid(a))
    return run


def _age(vals: list[pa.Array], expr: Call) -> pa.Array:
    """age(a, b): the symbolic difference in years, months and days, then the time, as
    PostgreSQL's timestamp_age computes it (borrowing from the month before `a`). Per row in
    Python: the field-by-field borrowing has no vectorised form here."""
    import calendar
    import datetime as dt
    a, b = _arr(vals[0]), _arr(vals[1])
    ok = _valid(a, b)
    ua, ub = _micros(a), _micros(b)
    months = np.zeros(len(ua), np.int64)
    days = np.zeros(len(ua), np.int64)
    us = np.zeros(len(ua), np.int64)
    epoch = dt.datetime(1970, 1, 1)
    for i in np.flatnonzero(ok):
        x = epoch + dt.timedelta(microseconds=int(ua[i]))
        y = epoch + dt.timedelta(microseconds=int(ub[i]))
        neg = x < y
        if neg:
            x, y = y, x
        fsec = (x.hour * 3600 + x.minute * 60 + x.second) * 10 ** 6 + x.microsecond - \
               ((y.hour * 3600 + y.minute * 60 + y.second) * 10 ** 6 + y.microsecond)
        mday = x.day - y.day
        mon = x.month - y.month
        year = x.year - y.year
        if fsec < 0:
            fsec += US_PER_DAY
            mday -= 1
        if mday < 0:
            # borrow the length of the earlier timestamp's month, as PostgreSQL does
            mday += calendar.monthrange(y.year, y.month)[1]
            mon -= 1
        if mon < 0:
            mon += 12
            year -= 1
        sign = -1 if neg else 1
        months[i], days[i], us[i] = sign * (year * 12 + mon), sign * mday, sign * fsec
    return interval.join(months, days, us, ok)


def _epoch_us(v) -> int:
    """Microseconds since 1970 of a naive datetime read as UTC."""
    import datetime as dt
    d = v - dt.datetime(1970, 1, 1)
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def zone_name(text: str) -> str:
    """A time zone as Arrow and zoneinfo know it: IANA names as they are; PostgreSQL's numeric
    forms are POSIX offsets, east of UTC being negative ('+05' is UTC-5, as in PostgreSQL)."""
    import re
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    m = re.fullmatch(r"\s*(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::(\d{2}))?\s*", text, re.I)
    if m:
        sign = "-" if m.group(1) == "+" else "+"
        return f"{sign}{int(m.group(2)):02d}:{int(m.group(3) or 0):02d}"
    name = text.strip()
    if name.upper() in ("UTC", "GMT", "Z", "ZULU"):
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'time zone "{text}" not recognized') from None
    return name


def _at_time_zone(vals: list[pa.Array], expr: Call) -> pa.Array:
    """timezone(zone, ts): a timestamp read as local time in the zone gives a timestamptz; a
    timestamptz gives the zone's local time. Local times in a DST gap or overlap take the
    standard-time offset, as PostgreSQL does. Vectorised per distinct zone (Arrow's tz kernels)."""
    zones, ts = _arr(vals[0]), _arr(vals[1])
    out_type = expr.type.arrow
    if len(ts) == 0:
        return pa.array([], out_type)
    pieces, positions = [], []
    for z in pc.unique(zones).drop_null().to_pylist():
        idx = np.flatnonzero(pc.fill_null(pc.equal(zones, z), False).to_numpy(zero_copy_only=False))
        part = ts if len(idx) == len(ts) else ts.take(pa.array(idx))
        tz = zone_name(z)
        if ts.type.tz is None:  # local time in the zone -> an instant
            local = part.cast(pa.timestamp("us"))
            res = pc.assume_timezone(local, tz, ambiguous="latest", nonexistent="latest")
            back = pc.local_timestamp(res)
            gap = pc.fill_null(pc.not_equal(back, local), False).to_numpy(zero_copy_only=False)
            if gap.any():  # in a DST gap (rare): the offset in force before the change
                from zoneinfo import ZoneInfo
                zone = ZoneInfo(tz)
                us = pc.fill_null(res.cast(pa.timestamp("us", tz="UTC")).view(pa.int64()), 0).to_numpy(
                    zero_copy_only=False).copy()
                for i in np.flatnonzero(gap):
                    v = local[int(i)].as_py()
                    off = v.replace(tzinfo=zone, fold=0).utcoffset()
                    us[i] = _epoch_us(v - off)
                null = local.is_null().to_numpy(zero_copy_only=False)
                res = pa.array(us, pa.int64(), mask=null if null.any() else None).view(pa.timestamp("us", tz="UTC"))
            pieces.append(res.cast(out_type))
        else:  # an instant -> local time in the zone
            pieces.append(pc.local_timestamp(part.cast(pa.timestamp("us", tz=tz))).cast(out_type))
        positions.append(idx)
    nulls = np.flatnonzero(zones.is_null().to_numpy(zero_copy_only=False))
    if len(nulls):
        pieces.append(pa.nulls(len(nulls), out_type))
        positions.append(nulls)
    if len(pieces) == 1 and len(positions[0]) == len(ts):
        return pieces[0]
    both = pa.concat_arrays(pieces)
    order = np.concatenate(positions)
    inv = np.empty(len(order), np.int64)
    inv[order] = np.arange(len(order))
    return both.take(pa.array(inv))


def _to_char(vals: list[pa.Array], expr: Call) -> pa.Array:
    """to_char(timestamp, template): per distinct (value, template) in Python (no vectorised
    form of PostgreSQL's templates). An empty template gives NULL, as in PostgreSQL.
    Numbers go to dataflow/functions/number_format.py, intervals to dataflow/interval_format.py
    (both a Python loop per row)."""
    kind = expr.args[0].type.kind
    if kind is TypeKind.INTERVAL:
        return _interval_to_char(_arr(vals[0]), _arr(vals[1]))
    if kind in (TypeKind.INT4, TypeKind.INT8, TypeKind.FLOAT4, TypeKind.FLOAT8, TypeKind.NUMERIC):
        from dataflow.functions.number_format import to_char_kernel
        return to_char_kernel(_arr(vals[0]), _arr(vals[1]))
    from dataflow.pg_format import strftime_format, to_char
    fmts = pc.unique(_arr(vals[1])).drop_null()
    if len(fmts) == 1 and fmts[0].as_py() != "":
        code = strftime_format(fmts[0].as_py())
        if code is not None:  # the common case: one template Arrow can apply to the column
            ts = _arr(vals[0])
            seconds = ts.cast(pa.timestamp("s", tz=getattr(ts.type, "tz", None)), safe=False)
            out = pc.strftime(seconds, format=code, locale="C")
            return pc.if_else(_arr(vals[1]).is_null(), pa.nulls(len(ts), pa.string()), out)
    cache: dict = {}
    out = []
    for v, f in zip(_arr(vals[0]).to_pylist(), _arr(vals[1]).to_pylist()):
        if v is None or not f:
            out.append(None)
            continue
        key = (v, f)
        if key not in cache:
            cache[key] = to_char(v, f)
        out.append(cache[key])
    return pa.array(out, pa.string())


def _interval_to_char(ivs: pa.Array, fmts: pa.Array) -> pa.Array:
    """to_char(interval, template): a Python loop per row (dataflow/interval_format.py); an
    empty template gives NULL, as in PostgreSQL."""
    from dataflow.interval_format import to_char_interval
    out = []
    for v, f in zip(ivs.to_pylist(), fmts.to_pylist()):
        if v is None or f is None:
            out.append(None)
        else:
            out.append(to_char_interval(v.months, v.days, v.nanoseconds // 1000, f))
    return pa.array(out, pa.string())


def _parse_template(as_date: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        import datetime as dt
        from dataflow.pg_format import parse
        out = []
        for t, f in zip(_arr(vals[0]).to_pylist(), _arr(vals[1]).to_pylist()):
            if t is None or f is None:
                out.append(None)
                continue
            v = parse(t, f)
            out.append(v.date() if as_date else v.replace(tzinfo=dt.timezone.utc))
        return pa.array(out, expr.type.arrow)
    return run


KERNELS = {
    "time_add_interval": _time_interval(1), "interval_add_time": _time_interval(1, interval_first=True),
    "time_sub_interval": _time_interval(-1), "time_sub_time": _time_sub_time,
    "date_add_time": _date_time(False), "time_add_date": _date_time(True),
    "to_char": _to_char, "to_timestamp_fmt": _parse_template(False), "to_date_fmt": _parse_template(True),
    "timezone": _at_time_zone, "timetz_at_zone": _timetz_at_zone,
    "timetz_key": _timetz_key, "timetz_from_key": _timetz_from_key,
    "timetz_add_interval": _timetz_interval(1), "interval_add_timetz": _timetz_interval(1, interval_first=True),
    "timetz_sub_interval": _timetz_interval(-1),
    "date_add_timetz": _date_timetz(False), "timetz_add_date": _date_timetz(True),
    "ts_add_interval": _ts_interval(1), "interval_add_ts": _ts_interval(1, interval_first=True),
    "ts_sub_interval": _ts_interval(-1), "ts_sub_ts": _ts_sub_ts,
    "date_add_days": _date_days(1), "days_add_date": _date_days(1, days_first=True),
    "date_sub_days": _date_days(-1), "date_sub_date": _date_sub_date,
    "interval_add": _interval_op(1), "interval_sub": _interval_op(-1), "interval_neg": _interval_neg,
    "interval_mul": _interval_mul(False), "float_mul_interval": _interval_mul(True),
    "interval_div": _interval_div,
    "date_trunc": _date_trunc, "extract": _extract(False), "date_part": _extract(True),
    "make_date": _make_date, "make_timestamp": _make_timestamp, "make_time": _make_time,
    "make_timestamptz": _make_timestamptz, "date_bin": _date_bin, "isfinite": _isfinite, "make_interval": _make_interval,
    "to_timestamp": _to_timestamp, "justify_days": _justify(True, False),
    "justify_hours": _justify(False, True), "justify_interval": _justify(True, True), "age": _age,
}
