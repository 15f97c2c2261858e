"""Casting constant values at plan time, with PostgreSQL's errors.

Used to coerce literals and parameters (INSERT ... VALUES, `'2024-01-01'::timestamp`, `1::numeric`)
before anything reaches the engine, so bad input fails the statement with the right SQLSTATE.

>>> cast_value("42", TEXT, INT4), cast_value(1, INT4, numeric(5, 2))
(42, Decimal('1.00'))
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from typing import Any

import pyarrow as pa

from dataflow import interval, timetz
from dataflow import arrays, jsonb, oid_names
from dataflow.bytea_uuid import bytea_parse, bytea_text, uuid_parse
from dataflow.decimal_util import check_unconstrained, field_overflow, plain_text
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.float4 import float4_of_exact
from dataflow.pg_text import normalize_datetime_text, parse_date_text, parse_time, time_text
from dataflow.pg_text import float4_text, float8_text, timestamp_text, timestamptz_text_utc
from dataflow.scalar import datetime_input_error, int_of_text
from dataflow.types import DEFAULT_NUMERIC_SCALE, NUMERIC_MAX_PRECISION, TEXT, SqlType, TypeKind

_INT_RANGE = {TypeKind.INT2: (-(2 ** 15), 2 ** 15 - 1, "smallint"),
              TypeKind.INT4: (-(2 ** 31), 2 ** 31 - 1, "integer"),
              TypeKind.INT8: (-(2 ** 63), 2 ** 63 - 1, "bigint")}
_TRUE = {"t", "true", "y", "yes", "on", "1"}
_WIDE = Context(prec=2 * NUMERIC_MAX_PRECISION + 4)
_FALSE = {"f", "false", "n", "no", "off", "0"}


def _bad_text(t: SqlType, s: str, code: str = SqlState.INVALID_TEXT_REPRESENTATION) -> SqlError:
    name = {TypeKind.INT2: "smallint", TypeKind.INT4: "integer", TypeKind.INT8: "bigint"}.get(t.kind, t.name)
    if t.kind is TypeKind.NUMERIC:
        name = "numeric"
    return SqlError(code, f'invalid input syntax for type {name}: "{s}"')


def _check_int(v: int, t: SqlType) -> int:
    lo, hi, name = _INT_RANGE[t.kind]
    if not lo <= v <= hi:
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f"{name} out of range")
    return v


def _to_numeric(d: Decimal, t: SqlType, text: str | None = None) -> Decimal:
    """`d` as a value of numeric type `t`; `text` is the value as the user wrote it (for the
    error message), when it came from text."""
    if d.is_nan():
        raise unsupported("NaN as a numeric value")
    if d.is_infinite():
        raise unsupported("infinite numeric values")
    if d == 0:
        d = d.copy_abs()  # numeric has no negative zero: -0.0 is 0.0
    if t.scale is None:
        # Unconstrained numeric holds 16 fractional and 22 integer digits (decimal128(38, 16)):
        # a value it cannot hold exactly is refused, never rounded.
        return check_unconstrained(d, text)
    if d.adjusted() >= t.precision - t.scale + 1:  # too many integer digits even before rounding
        raise _field_overflow(t)
    with localcontext() as c:
        c.prec = 2 * NUMERIC_MAX_PRECISION + 4
        q = d.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
    q = q.copy_abs() if q == 0 else q  # -0.0001 rounds to 0.000, not -0.000
    int_digits = len(q.as_tuple().digits) - t.scale if q != 0 else 0
    if int_digits > t.precision - t.scale:
        raise _field_overflow(t)
    return q


def _field_overflow(t: SqlType) -> SqlError:
    return field_overflow(t.precision, t.scale)


def _float_out_of_range(text: str, t: SqlType) -> SqlError:
    """PostgreSQL's error for text (or a numeric, which it reads through its text) that a
    float type cannot hold."""
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f'"{text}" is out of range for type {t.name}')


def _parse_timestamp(s: str, t: SqlType) -> dt.datetime:
    text = s.strip()
    extra = 0
    loose = normalize_datetime_text(text)
    if loose is not None:
        text, extra = loose
    try:
        v = dt.datetime.fromisoformat(text) + dt.timedelta(days=extra)
    except ValueError:
        raise datetime_input_error(t, s) from None
    if t.kind is TypeKind.TIMESTAMPTZ:
        # Naive input is read in the session time zone, which is UTC.
        v = v.replace(tzinfo=dt.timezone.utc) if v.tzinfo is None else v.astimezone(dt.timezone.utc)
    elif v.tzinfo is not None:
        v = v.replace(tzinfo=None)  # PostgreSQL ignores a zone given for timestamp without time zone
    return v


def text_of(value: Any, src: SqlType) -> str:
    """A value's PostgreSQL text form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float4_text(value) if src.kind is TypeKind.FLOAT4 else float8_text(value)
    if isinstance(value, Decimal):
        if src.kind is TypeKind.NUMERIC and src.scale is None and value.as_tuple().exponent == -DEFAULT_NUMERIC_SCALE:
            # A value computed by the engine carries the storage's 16 digits, not its own:
            # printed as query output prints it (server/adapter/finishing.py).
            value = value.normalize(_WIDE) if value else Decimal(0)
            if value.as_tuple().exponent > 0:
                value = value.quantize(Decimal(1), context=_WIDE)
        return plain_text(value)  # never an exponent, as PostgreSQL prints numeric
    if isinstance(value, dt.datetime):
        return timestamptz_text_utc(value) if value.tzinfo is not None else timestamp_text(value)
    if isinstance(value, pa.MonthDayNano):
        return interval.fmt(value)
    if isinstance(value, dt.time):
        return time_text(value)
    if isinstance(value, dt.timedelta):  # a timetz is its key as a timedelta (dataflow.timetz)
        return timetz.fmt(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytea_text(bytes(value))
    return str(value)


def _to_float(v: float, t: SqlType, exact: Any = None) -> float:
    """A double as a value of `t`: real rounds it to single precision (refusing what single
    precision cannot hold, as PostgreSQL does). `exact` (an int, Decimal or number text) is the
    value `v` was rounded from, if any: real is then rounded from it in one step."""
    if t.kind is not TypeKind.FLOAT4:
        return v
    import numpy as np
    if exact is not None and math.isfinite(v):
        single = float4_of_exact(exact)
    else:
        with np.errstate(over="ignore", under="ignore"):
            single = float(np.float32(v))
    if math.isinf(single) and not math.isinf(v):
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
    if single == 0.0 and v != 0.0:
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow")
    return single


def fit_length(s: str, t: SqlType, assignment: bool = False) -> str:
    """A string as a value of varchar(n) / character(n): an explicit cast cuts it to n
    characters (and character(n) pads it to n); storing it in a column (`assignment`) refuses a
    longer value with 22001 unless only blanks are beyond n, as PostgreSQL does."""
    if t.kind is TypeKind.NAME:
        return oid_names.truncate_name(s)
    if t.kind is TypeKind.CHAR:
        return s.encode()[:1].decode(errors="ignore")
    n = t.length
    if n is None:
        return s
    if len(s) > n:
        if assignment and len(s.rstrip(" ")) > n:
            raise SqlError(SqlState.STRING_DATA_RIGHT_TRUNCATION, f"value too long for type {t.name}")
        s = s[:n]
    return s.ljust(n) if t.kind is TypeKind.BPCHAR else s


def cast_value(value: Any, src: SqlType, dst: SqlType) -> Any:
    """Cast a Python value of type `src` to `dst`. NULL (None) stays NULL."""
    if value is None:
        return None
    k = dst.kind
    if src.is_text and not isinstance(value, str):
        src = _type_of_python(value)
    if src.kind in (TypeKind.JSON, TypeKind.JSONB) and not dst.is_text:
        return _cast_json(value, src, dst)
    if src.kind is TypeKind.ARRAY and dst.kind is TypeKind.ARRAY:
        # element by element, with the cast's own rules
        return arrays.write([cast_value(v, src.element, dst.element) for v in arrays.read(value, src.element)],
                            dst.element)
    if src.is_text:
        s = value
        if src.kind is TypeKind.BPCHAR and dst.kind not in (TypeKind.BPCHAR, TypeKind.BYTEA):
            s = s.rstrip(" ")  # character(n) -> text drops the padding (bytea keeps it)
        if dst.is_text:
            return fit_length(s, dst)
        st = s.strip()
        if "_" in st and k in (*_INT_RANGE, TypeKind.NUMERIC, TypeKind.FLOAT4, TypeKind.FLOAT8):
            raise _bad_text(dst, s)  # Python reads 1_000 as 1000; PostgreSQL 15 does not
        if k in _INT_RANGE:
            value = int_of_text(s)
            if value is None:
                raise _bad_text(dst, s)
            return _check_int(value, dst)
        if dst.is_oid:
            # Names of relations, types and functions are looked up by the planner before a
            # cast gets here (planner/catalog_casts.py); what is left is the numeric form.
            return oid_names.parse_oid(st, dst)
        if k is TypeKind.NUMERIC:
            try:
                d = Decimal(st)
            except InvalidOperation:
                raise _bad_text(dst, s) from None
            if d.is_nan():
                raise unsupported("NaN as a numeric value")
            return _to_numeric(d, dst, st)
        if k in (TypeKind.FLOAT4, TypeKind.FLOAT8):
            low = st.lower()
            if low in ("infinity", "+infinity", "inf"):
                return math.inf
            if low in ("-infinity", "-inf"):
                return -math.inf
            try:
                v = float(st)
            except ValueError:
                raise _bad_text(dst, s) from None
            if math.isinf(v) and "inf" not in low or (v == 0.0 and any(c in "123456789" for c in
                                                                     low.split("e")[0])):
                raise _float_out_of_range(st, dst)
            try:
                return _to_float(v, dst, st)
            except SqlError:
                raise _float_out_of_range(st, dst) from None  # float4in's own message
        if k is TypeKind.BOOL:
            low = st.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise _bad_text(dst, s)
        if k in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
            return _parse_timestamp(s, dst)
        if k is TypeKind.INTERVAL:
            return interval.parse(s)
        if k is TypeKind.TIME:
            v = parse_time(st) or _time_of_timestamp_text(st)
            if v is None:
                raise datetime_input_error(dst, s)
            return v
        if k is TypeKind.TIMETZ:
            return timetz.value_of(timetz.parse(s))
        if k is TypeKind.BYTEA:
            return bytea_parse(s)
        if k is TypeKind.UUID:
            return uuid_parse(s)
        if k is TypeKind.ARRAY:
            return arrays.canonical(s, dst.element)
        if k is TypeKind.JSONB:
            return jsonb.normalize(s)
        if k is TypeKind.JSON:
            return jsonb.check_json(s)
        if k is TypeKind.DATE:
            try:
                return parse_date_text(st)
            except ValueError:
                try:
                    return dt.datetime.fromisoformat(st).date()
                except ValueError:
                    raise datetime_input_error(dst, s) from None
    if dst.is_text:
        return fit_length(text_of(value, src), dst)
    if dst.is_oid:
        if src.is_oid:
            return value
        if src.is_integer:
            return oid_names.oid_of_int(int(value), src)
    if src.is_oid and k in (TypeKind.INT4, TypeKind.INT8):
        return oid_names.int_of_oid(value, dst)
    if k in _INT_RANGE:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f"{_INT_RANGE[k][2]} out of range")
            return _check_int(round(value), dst)  # Python rounds a float half to even, exactly
        if isinstance(value, Decimal):
            if not value.is_finite() or abs(value) >= 2 ** 64:
                raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f"{_INT_RANGE[k][2]} out of range")
            with localcontext() as c:
                c.prec = 2 * NUMERIC_MAX_PRECISION + 4
                return _check_int(int(value.to_integral_value(rounding=ROUND_HALF_UP)), dst)
        return _check_int(int(value), dst)
    if k is TypeKind.NUMERIC:
        if isinstance(value, float):
            if math.isnan(value):
                raise unsupported("NaN as a numeric value")
            if math.isinf(value):
                raise unsupported("infinite numeric values")
            # PostgreSQL converts a real through its 6 significant digits, a double through 15.
            text = format(value, ".6g" if src.kind is TypeKind.FLOAT4 else ".15g")
            return _to_numeric(Decimal(text), dst, text)
        return _to_numeric(Decimal(value), dst)
    if k in (TypeKind.FLOAT4, TypeKind.FLOAT8):
        if isinstance(value, Decimal):
            # PostgreSQL reads a numeric as a float through its text (float4in / float8in).
            value = value.copy_abs() if value == 0 else value  # a numeric zero has no sign
            v = float(value)
            if math.isinf(v) or (v == 0.0 and value != 0):
                raise _float_out_of_range(plain_text(value), dst)
            try:
                return _to_float(v, dst, value)
            except SqlError:
                raise _float_out_of_range(plain_text(value), dst) from None
        if isinstance(value, int) and not isinstance(value, bool):
            return _to_float(float(value), dst, value)  # int -> real in one rounding, as C does
        return _to_float(float(value), dst)
    if k is TypeKind.BOOL:
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value != 0
    if k is TypeKind.TIMESTAMP:
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=None) if value.tzinfo is None else \
                value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day)
    if k is TypeKind.TIMESTAMPTZ:
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else \
                value.astimezone(dt.timezone.utc)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if k is TypeKind.DATE and isinstance(value, dt.datetime):
        return value.date()
    if k is TypeKind.DATE and isinstance(value, dt.date):
        return value
    if k is TypeKind.INTERVAL and isinstance(value, pa.MonthDayNano):
        return value
    if k is TypeKind.TIME and isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.time().replace(tzinfo=None)
    if k is TypeKind.TIME and isinstance(value, dt.time):
        return value
    if k is TypeKind.TIME and isinstance(value, pa.MonthDayNano):
        # PostgreSQL's interval_time: the time field modulo a day.
        us = (value.nanoseconds // 1000) % (86_400 * 10 ** 6)
        return (dt.datetime.min + dt.timedelta(microseconds=us)).time()
    if k is TypeKind.INTERVAL and isinstance(value, dt.time):
        us = ((value.hour * 60 + value.minute) * 60 + value.second) * 10 ** 6 + value.microsecond
        return pa.MonthDayNano([0, 0, us * 1000])
    if k is TypeKind.TIMETZ:
        return _to_timetz(value, src, dst)
    if k is TypeKind.TIME and isinstance(value, dt.timedelta):  # timetz -> time drops the zone
        return _time_of_us(timetz.decode(timetz.key_of(value))[0])
    if k is TypeKind.BYTEA and isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if k is TypeKind.UUID and src.kind is TypeKind.UUID:
        return value
    raise SqlError(SqlState.DATATYPE_MISMATCH, f"cannot cast type {src.name} to {dst.name}")


def _cast_json(value: str, src: SqlType, dst: SqlType) -> Any:
    """json <-> jsonb; a jsonb number or boolean to a number or boolean type."""
    if dst.kind is TypeKind.JSONB:
        return jsonb.normalize(value)
    if dst.kind is TypeKind.JSON:
        return value
    v = jsonb.parse(value)
    kind = jsonb.typeof(v)
    want = "boolean" if dst.kind is TypeKind.BOOL else "number"
    if kind != want:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot cast jsonb {kind} to type {dst.name}")
    if dst.kind is TypeKind.BOOL:
        return v
    return cast_value(v, SqlType(TypeKind.NUMERIC), dst)


def _time_of_us(us: int) -> dt.time:
    if us >= 86_400 * 10 ** 6:
        raise unsupported("the time 24:00:00 (end of day) as time without time zone")
    return (dt.datetime.min + dt.timedelta(microseconds=us)).time()


def _to_timetz(value: Any, src: SqlType, dst: SqlType) -> dt.timedelta:
    """time -> timetz at the session's zone (UTC); timestamptz -> its UTC time of day."""
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        v = value.astimezone(dt.timezone.utc)
        us = ((v.hour * 60 + v.minute) * 60 + v.second) * 10 ** 6 + v.microsecond
        return timetz.value_of(timetz.encode(us, 0))
    if isinstance(value, dt.time) and not isinstance(value, dt.datetime):
        us = ((value.hour * 60 + value.minute) * 60 + value.second) * 10 ** 6 + value.microsecond
        return timetz.value_of(timetz.encode(us, 0))
    raise SqlError(SqlState.DATATYPE_MISMATCH, f"cannot cast type {src.name} to {dst.name}")


def _time_of_timestamp_text(text: str) -> dt.time | None:
    """'2024-01-01 10:00:00'::time reads the time part, as PostgreSQL does."""
    loose = normalize_datetime_text(text)
    if loose is None or len(loose[0]) <= 10:
        return None
    try:
        return dt.datetime.fromisoformat(loose[0]).time()
    except ValueError:
        return None


def _type_of_python(v: Any) -> SqlType:
    from dataflow.types import BOOL, DATE, FLOAT8, INT8, NUMERIC, TIMESTAMP, TIMESTAMPTZ
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT8
    if isinstance(v, float):
        return FLOAT8
    if isinstance(v, Decimal):
        return NUMERIC
    if isinstance(v, dt.datetime):
        return TIMESTAMPTZ if v.tzinfo else TIMESTAMP
    if isinstance(v, dt.date):
        return DATE
    if isinstance(v, pa.MonthDayNano):
        from dataflow.types import INTERVAL
        return INTERVAL
    if isinstance(v, dt.time):
        from dataflow.types import TIME
        return TIME
    if isinstance(v, dt.timedelta):
        from dataflow.types import TIMETZ
        return TIMETZ
    if isinstance(v, (bytes, bytearray, memoryview)):
        from dataflow.types import BYTEA
        return BYTEA
    return TEXT
