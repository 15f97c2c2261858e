"""Date and time functions and operators: wall-clock values, date_trunc, extract/date_part,
make_*, date_bin, isfinite, timeofday, to_timestamp, justify_*, and the arithmetic of dates, timestamps and intervals.

Wall-clock functions (now(), current_timestamp, current_date, localtimestamp, ...) are the
statement's start time, fixed at plan time; they are refused where a result is maintained over
time (materialized views, indexes, SUBSCRIBE), as in Materialize, whose mz_now() is the way to
filter by time there. Time zone: the session's is UTC (timestamptz values are computed in UTC).

    SELECT ts + interval '1 mon'      -> Call('ts_add_interval', (ts, Literal(1 mon)), TIMESTAMP)
    SELECT date_trunc('day', ts)      -> Call('date_trunc', (Literal('day'), ts), TIMESTAMP)
    SELECT extract(dow FROM ts)       -> Call('extract', (Literal('dow'), ts), NUMERIC)
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.types import (BOOL, DATE, FLOAT4, FLOAT8, INT4, INT8, INTERVAL, NUMERIC, TEXT, TIME, TIMETZ,
                            TIMESTAMP, TIMESTAMPTZ, SqlType, TypeKind)
from dataflow import timetz
from planner.functions.registry import ANY, Overload, no_function, overloads

if TYPE_CHECKING:
    from planner.context import PlanContext

# Fields extract/date_part know, per input type (PostgreSQL 15).
_TIME_FIELDS = {"microseconds", "milliseconds", "second", "minute", "hour"}  # noqa: E501
_DATE_FIELDS = {"day", "month", "year", "quarter", "week", "dow", "isodow", "doy", "decade",
                "century", "millennium", "isoyear", "epoch", "julian"}
FIELDS = {
    DATE: _DATE_FIELDS,
    TIMESTAMP: _DATE_FIELDS | _TIME_FIELDS,
    TIMESTAMPTZ: _DATE_FIELDS | _TIME_FIELDS | {"timezone", "timezone_hour", "timezone_minute"},
    INTERVAL: _TIME_FIELDS | {"day", "month", "year", "quarter", "decade", "century", "millennium", "epoch"},
    TIME: _TIME_FIELDS | {"epoch"},
    TIMETZ: _TIME_FIELDS | {"epoch", "timezone", "timezone_hour", "timezone_minute"},
}
_FIELD_ALIASES = {"microsecond": "microseconds", "us": "microseconds", "usec": "microseconds",
                  "usecs": "microseconds", "millisecond": "milliseconds", "ms": "milliseconds",
                  "msec": "milliseconds", "msecs": "milliseconds", "seconds": "second",
                  "sec": "second", "secs": "second", "s": "second", "minutes": "minute",
                  "min": "minute", "mins": "minute", "m": "minute", "hours": "hour", "h": "hour",
                  "hr": "hour", "hrs": "hour", "days": "day", "d": "day", "months": "month",
                  "mon": "month", "mons": "month", "years": "year", "y": "year", "yr": "year",
                  "yrs": "year", "weeks": "week", "w": "week", "decades": "decade",
                  "centuries": "century", "millennia": "millennium", "millenniums": "millennium",
                  "qtr": "quarter"}
TRUNC_UNITS = ("microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
               "quarter", "year", "decade", "century", "millennium")


def field_name(value: str) -> str:
    low = value.strip().lower()
    return _FIELD_ALIASES.get(low, low)


def _wall_clock(t: SqlType):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        now = ctx.session.statement_time  # naive UTC
        if t == TIMESTAMPTZ:
            return Literal(now.replace(tzinfo=dt.timezone.utc), t)
        if t == DATE:
            return Literal(now.date(), t)
        if t == TIME:
            return Literal(now.time(), t)
        if t == TIMETZ:  # current_time: at the session's zone, UTC
            tod = now - now.replace(hour=0, minute=0, second=0, microsecond=0)
            return Literal(timetz.value_of(timetz.encode(tod // dt.timedelta(microseconds=1), 0)), t)
        return Literal(now, t)
    return build


def _field_call(kernel: str, result: SqlType):
    """extract/date_part/date_trunc: the field or unit must be a known constant (checked now,
    with PostgreSQL's messages)."""
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        unit, source = args
        if not isinstance(unit, Literal):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{kernel}() with a field that is not a constant")
        if unit.value is None:
            return Literal(None, result if kernel != "date_trunc" else source.type)
        name = field_name(str(unit.value))
        src = source.type
        if kernel == "date_trunc":
            if name not in TRUNC_UNITS:
                what = "interval" if src == INTERVAL else ("timestamp with time zone" if src == TIMESTAMPTZ
                                                            else "timestamp")
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED if name in FIELDS[TIMESTAMPTZ] else
                               SqlState.INVALID_PARAMETER_VALUE,
                               f'unit "{unit.value}" not {"supported" if name in FIELDS[TIMESTAMPTZ] else "recognized"} '
                               f"for type {what}")
            return Call("date_trunc", (Literal(name, TEXT), source), src)
        if name not in FIELDS[TIMESTAMPTZ] | FIELDS[INTERVAL]:
            what = {DATE: "date", INTERVAL: "interval", TIMESTAMPTZ: "timestamp with time zone",
                    TIME: "time without time zone", TIMETZ: "time with time zone"}.get(
                src, "timestamp without time zone")
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'unit "{unit.value}" not recognized for type {what}')
        if name not in FIELDS[src]:
            what = {DATE: "date", INTERVAL: "interval", TIMESTAMPTZ: "timestamp with time zone",
                    TIME: "time without time zone", TIMETZ: "time with time zone"}.get(
                src, "timestamp without time zone")
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f'unit "{unit.value}" not supported for type {what}')
        return Call(kernel, (Literal(name, TEXT), source), result)
    return build


def _unsupported(what: str):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{what} is not supported yet")
    return build


def _isfinite(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """isfinite(date | timestamp | timestamptz | interval): an untyped literal fits two type
    categories, so it is ambiguous (42725), as in PostgreSQL."""
    a = args[0]
    if a.type.kind is TypeKind.UNKNOWN:
        raise SqlError("42725", "function isfinite(unknown) is not unique",
                       hint="Could not choose a best candidate function. You might need to add explicit type casts.")
    if a.type not in (DATE, TIMESTAMP, TIMESTAMPTZ, INTERVAL):
        raise no_function("isfinite", args)
    return Call("isfinite", (a,), BOOL)


def _timeofday(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """PostgreSQL's `%a %b %d %H:%M:%S.%06d %Y %Z` of the current time in the session's zone (UTC)."""
    now = dt.datetime.now(dt.timezone.utc)
    return Literal(now.strftime("%a %b %d %H:%M:%S.") + f"{now.microsecond:06d}" + now.strftime(" %Y UTC"), TEXT)


def _same(types: list[SqlType]) -> SqlType:
    return types[0]


FUNCTIONS = overloads(
    # Wall clock: the statement's start time.
    *(Overload(name, (), t, build=_wall_clock(t), wall_clock=True) for name, t in (
        ("now", TIMESTAMPTZ), ("current_timestamp", TIMESTAMPTZ), ("transaction_timestamp", TIMESTAMPTZ),
        ("statement_timestamp", TIMESTAMPTZ), ("clock_timestamp", TIMESTAMPTZ),
        ("localtimestamp", TIMESTAMP), ("current_date", DATE), ("localtime", TIME), ("current_time", TIMETZ))),
    # date_trunc(unit, value)
    *(Overload("date_trunc", (TEXT, t), t, build=_field_call("date_trunc", t)) for t in (TIMESTAMP, TIMESTAMPTZ, INTERVAL)),
    # extract(field FROM value) is numeric since PostgreSQL 14; date_part stays double precision.
    *(Overload("extract", (TEXT, t), NUMERIC, build=_field_call("extract", NUMERIC))
      for t in (DATE, TIMESTAMP, TIMESTAMPTZ, INTERVAL, TIME, TIMETZ)),
    *(Overload("date_part", (TEXT, t), FLOAT8, build=_field_call("date_part", FLOAT8))
      for t in (TIMESTAMP, TIMESTAMPTZ, INTERVAL, TIME, TIMETZ)),
    Overload("make_date", (INT4, INT4, INT4), DATE, kernel="make_date"),
    Overload("make_timestamp", (INT4, INT4, INT4, INT4, INT4, FLOAT8), TIMESTAMP, kernel="make_timestamp"),
    Overload("make_time", (INT4, INT4, FLOAT8), TIME, kernel="make_time"),
    Overload("make_timestamptz", (INT4, INT4, INT4, INT4, INT4, FLOAT8), TIMESTAMPTZ, kernel="make_timestamptz"),
    Overload("make_timestamptz", (INT4, INT4, INT4, INT4, INT4, FLOAT8, TEXT), TIMESTAMPTZ,
             kernel="make_timestamptz"),
    *(Overload("date_bin", (INTERVAL, t, t), t, kernel="date_bin") for t in (TIMESTAMP, TIMESTAMPTZ)),
    Overload("isfinite", (ANY,), BOOL, build=_isfinite),
    # timeofday(): the wall clock's time as text, when the statement is planned.
    Overload("timeofday", (), TEXT, build=_timeofday, wall_clock=True),
    # make_interval(years, months, weeks, days, hours, mins, secs), each defaulting to 0.
    *(Overload("make_interval", (INT4, INT4, INT4, INT4, INT4, INT4, FLOAT8)[:n], INTERVAL,
               kernel="make_interval") for n in range(8)),
    Overload("to_timestamp", (FLOAT8,), TIMESTAMPTZ, kernel="to_timestamp"),
    Overload("justify_days", (INTERVAL,), INTERVAL, kernel="justify_days"),
    Overload("justify_hours", (INTERVAL,), INTERVAL, kernel="justify_hours"),
    Overload("justify_interval", (INTERVAL,), INTERVAL, kernel="justify_interval"),
    Overload("to_char", (TIMESTAMP, TEXT), TEXT, kernel="to_char"),
    Overload("to_char", (TIMESTAMPTZ, TEXT), TEXT, kernel="to_char"),
    # Numbers (dataflow/functions/number_format.py) and intervals (dataflow/interval_format.py);
    # a smallint argument goes to double precision, the preferred number type, as in PostgreSQL.
    *(Overload("to_char", (t, TEXT), TEXT, kernel="to_char")
      for t in (INT4, INT8, FLOAT4, FLOAT8, NUMERIC, INTERVAL)),
    Overload("to_timestamp", (TEXT, TEXT), TIMESTAMPTZ, kernel="to_timestamp_fmt"),
    Overload("to_date", (TEXT, TEXT), DATE, kernel="to_date_fmt"),
    Overload("timezone", (TEXT, TIMESTAMP), TIMESTAMPTZ, kernel="timezone"),
    Overload("timezone", (TEXT, TIMESTAMPTZ), TIMESTAMP, kernel="timezone"),
    Overload("timezone", (TEXT, TIMETZ), TIMETZ, kernel="timetz_at_zone"),
    Overload("timezone", (INTERVAL, TIMETZ), TIMETZ, kernel="timetz_at_zone"),
    Overload("age", (TIMESTAMP, TIMESTAMP), INTERVAL, kernel="age"),
    Overload("age", (TIMESTAMPTZ, TIMESTAMPTZ), INTERVAL, kernel="age"),
    # Operators.
    Overload("+", (DATE, INT4), DATE, kernel="date_add_days"),
    Overload("+", (INT4, DATE), DATE, kernel="days_add_date"),
    Overload("-", (DATE, INT4), DATE, kernel="date_sub_days"),
    Overload("-", (DATE, DATE), INT4, kernel="date_sub_date"),
    Overload("+", (DATE, INTERVAL), TIMESTAMP, kernel="ts_add_interval"),
    Overload("+", (INTERVAL, DATE), TIMESTAMP, kernel="interval_add_ts"),
    Overload("-", (DATE, INTERVAL), TIMESTAMP, kernel="ts_sub_interval"),
    *(Overload("+", (t, INTERVAL), t, kernel="ts_add_interval") for t in (TIMESTAMP, TIMESTAMPTZ)),
    *(Overload("+", (INTERVAL, t), t, kernel="interval_add_ts") for t in (TIMESTAMP, TIMESTAMPTZ)),
    *(Overload("-", (t, INTERVAL), t, kernel="ts_sub_interval") for t in (TIMESTAMP, TIMESTAMPTZ)),
    *(Overload("-", (t, t), INTERVAL, kernel="ts_sub_ts") for t in (TIMESTAMP, TIMESTAMPTZ)),
    Overload("+", (TIME, INTERVAL), TIME, kernel="time_add_interval"),
    Overload("+", (INTERVAL, TIME), TIME, kernel="interval_add_time"),
    Overload("-", (TIME, INTERVAL), TIME, kernel="time_sub_interval"),
    Overload("-", (TIME, TIME), INTERVAL, kernel="time_sub_time"),
    Overload("+", (DATE, TIME), TIMESTAMP, kernel="date_add_time"),
    Overload("+", (TIMETZ, INTERVAL), TIMETZ, kernel="timetz_add_interval"),
    Overload("+", (INTERVAL, TIMETZ), TIMETZ, kernel="interval_add_timetz"),
    Overload("-", (TIMETZ, INTERVAL), TIMETZ, kernel="timetz_sub_interval"),
    Overload("+", (DATE, TIMETZ), TIMESTAMPTZ, kernel="date_add_timetz"),
    Overload("+", (TIMETZ, DATE), TIMESTAMPTZ, kernel="timetz_add_date"),
    Overload("+", (TIME, DATE), TIMESTAMP, kernel="time_add_date"),
    Overload("+", (INTERVAL, INTERVAL), INTERVAL, kernel="interval_add"),
    Overload("-", (INTERVAL, INTERVAL), INTERVAL, kernel="interval_sub"),
    Overload("-", (INTERVAL,), INTERVAL, kernel="interval_neg"),
    Overload("*", (INTERVAL, FLOAT8), INTERVAL, kernel="interval_mul"),
    Overload("*", (FLOAT8, INTERVAL), INTERVAL, kernel="float_mul_interval"),
    Overload("/", (INTERVAL, FLOAT8), INTERVAL, kernel="interval_div"),
)
