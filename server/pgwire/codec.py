"""Value codecs: Python values <-> PostgreSQL text and binary wire formats, chosen by type OID.

Encoders are looked up once per result column and then applied per value, so a result set pays
one dict lookup per column, not per value.

>>> ctx = CodecContext()
>>> text_encoder(FLOAT8, ctx)(1e15), text_encoder(NUMERIC, ctx)(Decimal("1.50"))
(b'1e+15', b'1.50')
>>> binary_encoder(INT4)(7)
b'\\x00\\x00\\x00\\x07'
>>> decode_param(b"t", BOOL.oid, binary=False)
True
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from dataflow import interval
from dataflow import arrays, jsonb, timetz
from dataflow.bytea_uuid import bytea_parse, bytea_text, uuid_parse
from dataflow.errors import SqlError, SqlState
from dataflow.pg_text import normalize_datetime_text, parse_date_text, time_text
from dataflow.pg_text import (float4_text, float8_text, special_float_text, timestamp_text,
                              trim_fraction)
from dataflow.types import (CHAR, NAME, OID, REGCLASS, REGPROC, REGTYPE, BOOL, BYTEA, DATE, INTERVAL, TIME, TIMETZ, JSON, JSONB, UUID, FLOAT4, FLOAT8, INT2, INT4, INT8, NUMERIC, TEXT, TIMESTAMP,
                            TIMESTAMPTZ, UNKNOWN, VARCHAR, BPCHAR, SqlType, TypeKind)

Encoder = Callable[[Any], bytes]

PG_EPOCH = datetime(2000, 1, 1)
PG_EPOCH_UTC = datetime(2000, 1, 1, tzinfo=timezone.utc)
PG_EPOCH_DATE = date(2000, 1, 1)
_UTC_NAMES = frozenset({"utc", "etc/utc", "gmt", "z", "zulu", "universal", "+00", "+00:00"})


@dataclass(frozen=True)
class CodecContext:
    """The session settings that change how values print."""

    timezone: str = "UTC"
    extra_float_digits: int = 1
    # The names regclass/regtype/regproc values print as: (type oid, value) -> name, from the
    # catalog the connection serves (None: print the number, as for an object that is gone).
    reg_names: Callable[[int, int], str | None] | None = None

    @staticmethod
    def from_vars(vars: dict[str, str], reg_names: Callable[[int, int], str | None] | None = None
                  ) -> "CodecContext":
        try:
            efd = int(vars.get("extra_float_digits", "1"))
        except ValueError:
            efd = 1
        return CodecContext(timezone=vars.get("timezone", "UTC") or "UTC", extra_float_digits=efd,
                            reg_names=reg_names)

    def tzinfo(self):
        """None for UTC (the fast path), otherwise a tzinfo for the session's TimeZone."""
        name = self.timezone.strip().strip("'")
        if name.lower() in _UTC_NAMES:
            return None
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            return None


# ---------------------------------------------------------------------------------------------
# Text output
# ---------------------------------------------------------------------------------------------

def _bool_text(v: Any) -> bytes:
    return b"t" if v else b"f"


def _int_text(v: Any) -> bytes:
    return b"%d" % v


def _special_float(v: float) -> bytes | None:
    special = special_float_text(v)
    return None if special is None else special.encode()


def _float8_text_shortest(v: Any) -> bytes:
    return float8_text(v).encode()


def _float4_text_shortest(v: Any) -> bytes:
    return float4_text(v).encode()


def _float_text_digits(digits: int) -> Encoder:
    """extra_float_digits <= 0: PostgreSQL prints with %.{DIG + extra}g."""
    fmt = f".{max(digits, 1)}g"

    def enc(v: Any) -> bytes:
        v = float(v)
        special = _special_float(v)
        return special if special is not None else format(v, fmt).encode()
    return enc


def _numeric_text(v: Any) -> bytes:
    if isinstance(v, Decimal):
        if v.is_nan():
            return b"NaN"
        if v.is_infinite():
            return b"Infinity" if v > 0 else b"-Infinity"
        return format(v, "f").encode()
    if isinstance(v, float):
        special = _special_float(v)
        return special if special is not None else _float8_text_shortest(v)
    return str(v).encode()


def _text_text(v: Any) -> bytes:
    return v.encode() if isinstance(v, str) else str(v).encode()


_trim_fraction = trim_fraction


def _timestamp_text(v: Any) -> bytes:
    return timestamp_text(v).encode()


def _format_offset(off: timedelta) -> str:
    secs = int(off.total_seconds())
    sign = "-" if secs < 0 else "+"
    secs = abs(secs)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    out = f"{sign}{h:02d}"
    if m or s:
        out += f":{m:02d}"
    if s:
        out += f":{s:02d}"
    return out


def _timestamptz_text(tz) -> Encoder:
    if tz is None:
        def enc_utc(v: Any) -> bytes:
            tz = v.tzinfo
            if tz is None:
                return (_trim_fraction(v.isoformat(sep=" ")) + "+00").encode()
            if tz is not timezone.utc:
                v = v.astimezone(timezone.utc)
            return (_trim_fraction(v.isoformat(sep=" ")[:-6]) + "+00").encode()  # drop '+00:00'
        return enc_utc

    def enc_zone(v: Any) -> bytes:
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        local = v.astimezone(tz)
        naive = local.replace(tzinfo=None)
        return (_trim_fraction(naive.isoformat(sep=" ")) + _format_offset(local.utcoffset())).encode()
    return enc_zone


def _date_text(v: Any) -> bytes:
    if isinstance(v, datetime):
        v = v.date()
    return v.isoformat().encode()


def text_encoder(t: SqlType, ctx: CodecContext = CodecContext()) -> Encoder:
    """The text-format encoder for values of type `t` (bytes out, never called with None)."""
    oid = t.oid
    if oid == BOOL.oid:
        return _bool_text
    if oid in (INT2.oid, INT4.oid, INT8.oid):
        return _int_text
    if oid in (FLOAT4.oid, FLOAT8.oid):
        if ctx.extra_float_digits > 0:
            return _float4_text_shortest if oid == FLOAT4.oid else _float8_text_shortest
        base = 6 if oid == FLOAT4.oid else 15
        return _float_text_digits(base + ctx.extra_float_digits)
    if oid == NUMERIC.oid:
        return _numeric_text
    if oid == TIMESTAMP.oid:
        return _timestamp_text
    if oid == TIMESTAMPTZ.oid:
        return _timestamptz_text(ctx.tzinfo())
    if oid == DATE.oid:
        return _date_text
    if oid == INTERVAL.oid:
        return lambda v: interval.fmt(v).encode()
    if oid == TIME.oid:
        return lambda v: time_text(v).encode()
    if oid == TIMETZ.oid:
        return lambda v: timetz.fmt(v).encode()
    if oid == BYTEA.oid:
        return lambda v: bytea_text(v).encode()
    if oid == OID.oid:
        return _int_text
    if oid in _REG_OIDS:
        return _reg_text(oid, ctx.reg_names)
    return _text_text


_REG_OIDS = frozenset({REGCLASS.oid, REGTYPE.oid, REGPROC.oid, 4089, 4096})  # + regnamespace, regrole


def _reg_text(type_oid: int, names: Callable[[int, int], str | None] | None) -> Encoder:
    if names is None:
        return _int_text

    def encode(v: Any) -> bytes:
        name = names(type_oid, v)
        return (str(v) if name is None else name).encode()
    return encode


# ---------------------------------------------------------------------------------------------
# Binary output
# ---------------------------------------------------------------------------------------------

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
_F32 = struct.Struct(">f")
_F64 = struct.Struct(">d")

NUMERIC_POS = 0x0000
NUMERIC_NEG = 0x4000
NUMERIC_NAN = 0xC000
NUMERIC_PINF = 0xD000
NUMERIC_NINF = 0xF000


_NUMERIC_HEADERS: dict[int, struct.Struct] = {}


def _numeric_struct(ngroups: int) -> struct.Struct:
    st = _NUMERIC_HEADERS.get(ngroups)
    if st is None:
        st = _NUMERIC_HEADERS[ngroups] = struct.Struct(f">hhHh{ngroups}h")
    return st


def _numeric_binary(v: Any) -> bytes:
    """PostgreSQL's NUMERIC send format: ndigits, weight, sign, dscale, then base-10000 digits
    (no leading or trailing zero groups, as numeric_send writes them)."""
    if type(v) is not Decimal:
        v = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if not v.is_finite():
        if v.is_nan():
            return struct.pack(">hhHh", 0, 0, NUMERIC_NAN, 0)
        return struct.pack(">hhHh", 0, 0, NUMERIC_PINF if v > 0 else NUMERIC_NINF, 0)
    text = str(v)  # C-fast; plain notation for all but very large/small exponents
    if "E" in text:
        sign, digits, exp = v.as_tuple()
        coef = int("".join(map(str, digits)))
    else:
        sign = text[0] == "-"
        int_part, _, frac = text.lstrip("-").partition(".")
        coef = int(int_part + frac)
        exp = -len(frac)
    dscale = -exp if exp < 0 else 0
    if coef == 0:
        return struct.pack(">hhHh", 0, 0, NUMERIC_POS, dscale)
    # Align the exponent down to a multiple of 4, then split the coefficient into base-10000
    # groups; the first group's weight is its position relative to the decimal point.
    k = exp % 4
    coef *= _POW10[k]
    exp -= k
    groups = []
    while coef:
        coef, r = divmod(coef, 10000)
        groups.append(r)
    groups.reverse()
    weight = len(groups) - 1 + exp // 4
    while groups[-1] == 0:
        groups.pop()
    return _numeric_struct(len(groups)).pack(len(groups), weight, NUMERIC_NEG if sign else NUMERIC_POS,
                                             dscale, *groups)


_POW10 = (1, 10, 100, 1000)
_INTERVAL_BINARY = struct.Struct(">qii")  # microseconds, days, months


def _timestamp_binary(v: Any) -> bytes:
    d = v - (PG_EPOCH if v.tzinfo is None else PG_EPOCH_UTC)
    return _I64.pack((d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds)


def _date_binary(v: Any) -> bytes:
    if isinstance(v, datetime):
        v = v.date()
    return _I32.pack((v - PG_EPOCH_DATE).days)


def _timetz_binary(v: Any) -> bytes:
    """PostgreSQL's timetz_send: int64 microseconds of the day, int32 zone seconds west of UTC."""
    time_us, zone = timetz.decode(timetz.key_of(v))
    return _I64.pack(time_us) + _I32.pack(zone)


_BINARY_ENCODERS: dict[int, Encoder] = {
    BOOL.oid: lambda v: b"\x01" if v else b"\x00",
    INT2.oid: lambda v: _I16.pack(v),
    INT4.oid: lambda v: _I32.pack(v),
    INT8.oid: lambda v: _I64.pack(v),
    FLOAT4.oid: lambda v: _F32.pack(v),
    FLOAT8.oid: lambda v: _F64.pack(v),
    NUMERIC.oid: _numeric_binary,
    TEXT.oid: _text_text,
    VARCHAR.oid: _text_text,
    BPCHAR.oid: _text_text,
    UNKNOWN.oid: _text_text,
    TIMESTAMP.oid: _timestamp_binary,
    TIMESTAMPTZ.oid: _timestamp_binary,
    DATE.oid: _date_binary,
    INTERVAL.oid: lambda v: _INTERVAL_BINARY.pack(v.nanoseconds // 1000, v.days, v.months),
    BYTEA.oid: bytes,
    TIME.oid: lambda v: _I64.pack(((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond),
    TIMETZ.oid: _timetz_binary,
    UUID.oid: lambda v: bytes.fromhex(v.replace("-", "")),
    JSONB.oid: lambda v: b"\x01" + v.encode(),  # format version 1, then the text
    JSON.oid: _text_text,
    NAME.oid: _text_text,
    CHAR.oid: _text_text,
    2278: lambda v: b"",  # void: PostgreSQL's void_send sends no bytes
    **{oid: (lambda v: _U32.pack(v)) for oid in (OID.oid, REGCLASS.oid, REGTYPE.oid, REGPROC.oid, 4089, 4096)},
}


def has_binary_output(oid: int) -> bool:
    return oid in _BINARY_ENCODERS or oid in _ARRAY_ELEMENTS


def _array_elements() -> dict[int, SqlType]:
    from dataflow.types import ARRAY_OIDS
    from planner.typing import OID_TYPES
    by_kind = {t.kind: t for t in OID_TYPES.values()}
    return {oid: by_kind[k] for k, oid in ARRAY_OIDS.items() if k in by_kind}


# Array type OID -> element type.
_ARRAY_ELEMENTS = _array_elements()


def _array_binary(element: SqlType) -> Encoder:
    """PostgreSQL's binary array: ndim, has-nulls flag, element OID, (length, lower bound 1) per
    dimension, then each element as length + its own binary form (-1 for NULL)."""
    enc = binary_encoder(element)

    def encode(v: Any) -> bytes:
        values = arrays.read(v, element)
        if not values:
            return struct.pack(">iii", 0, 0, element.oid)
        parts = [struct.pack(">iiiii", 1, int(any(x is None for x in values)), element.oid, len(values), 1)]
        for x in values:
            if x is None:
                parts.append(_I32.pack(-1))
            else:
                b = enc(x)
                parts.append(_I32.pack(len(b)) + b)
        return b"".join(parts)
    return encode


def binary_encoder_for_oid(oid: int, type_name: str) -> Encoder:
    enc = _BINARY_ENCODERS.get(oid)
    if enc is None:
        raise SqlError(SqlState.UNDEFINED_FUNCTION,
                       f"no binary output function available for type {type_name}")
    return enc


def binary_encoder(t: SqlType) -> Encoder:
    """The binary-format encoder for `t`; SqlError 42883 when the type has no binary form."""
    if t.kind is TypeKind.ARRAY:
        return _array_binary(t.element)
    return binary_encoder_for_oid(t.oid, t.name)


def encoder(t: SqlType, binary: bool, ctx: CodecContext = CodecContext()) -> Encoder:
    return binary_encoder(t) if binary else text_encoder(t, ctx)


# ---------------------------------------------------------------------------------------------
# Parameter input
# ---------------------------------------------------------------------------------------------

_TYPE_NAMES = {t.oid: t.name for t in (BOOL, INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC, TEXT,
                                       VARCHAR, BPCHAR, TIMESTAMP, TIMESTAMPTZ, DATE, INTERVAL, BYTEA, UUID,
                                       JSONB, JSON, TIME, TIMETZ, UNKNOWN, OID, REGCLASS, REGTYPE, REGPROC, NAME, CHAR)}
_OID_PARAM_OIDS = frozenset({OID.oid, REGCLASS.oid, REGTYPE.oid, REGPROC.oid, 4089, 4096})
_INT_RANGES = {INT2.oid: 1 << 15, INT4.oid: 1 << 31, INT8.oid: 1 << 63}
_TRUE = frozenset({"t", "true", "y", "yes", "on", "1"})
_FALSE = frozenset({"f", "false", "n", "no", "off", "0"})


def _bad_text(type_name: str, s: str) -> SqlError:
    return SqlError(SqlState.INVALID_TEXT_REPRESENTATION,
                    f'invalid input syntax for type {type_name}: "{s}"')


def _parse_datetime(s: str, type_name: str) -> datetime:
    text, extra = normalize_datetime_text(s.strip()) or (s.strip(), 0)
    try:
        v = datetime.fromisoformat(text) + timedelta(days=extra)
    except ValueError:
        raise SqlError(SqlState.INVALID_DATETIME_FORMAT,
                       f'invalid input syntax for type {type_name}: "{s}"') from None
    return v


def _decode_text(s: str, oid: int) -> Any:
    if oid in _ARRAY_ELEMENTS:
        return arrays.canonical(s, _ARRAY_ELEMENTS[oid])
    name = _TYPE_NAMES.get(oid, "unknown")
    if oid in _OID_PARAM_OIDS:
        from planner.casts import cast_value
        return cast_value(s, TEXT, OID) if s.strip().lstrip("-").isdigit() else s
    if oid == BOOL.oid:
        low = s.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise _bad_text("boolean", s)
    if oid in _INT_RANGES:
        try:
            if "_" in s:
                raise ValueError(s)  # Python reads 1_000 as 1000; PostgreSQL 15 does not
            v = int(s.strip())
        except ValueError:
            raise _bad_text(name, s) from None
        bound = _INT_RANGES[oid]
        if not -bound <= v < bound:
            raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE,
                           f'value "{s}" is out of range for type {name}')
        return v
    if oid in (FLOAT4.oid, FLOAT8.oid):
        # float4in / float8in: out-of-range input is 22003, real is rounded once from the text.
        from planner.casts import cast_value
        return cast_value(s, TEXT, FLOAT4 if oid == FLOAT4.oid else FLOAT8)
    if oid == NUMERIC.oid:
        try:
            if "_" in s:
                raise InvalidOperation(s)
            return Decimal(s.strip())
        except InvalidOperation:
            raise _bad_text("numeric", s) from None
    if oid == TIMESTAMP.oid:
        return _parse_datetime(s, name).replace(tzinfo=None)
    if oid == TIMESTAMPTZ.oid:
        v = _parse_datetime(s, name)
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        return v.astimezone(timezone.utc)
    if oid == INTERVAL.oid:
        return interval.parse(s)
    if oid == BYTEA.oid:
        return bytea_parse(s)
    if oid == TIME.oid:
        from planner.casts import cast_value
        return cast_value(s, TEXT, TIME)
    if oid == TIMETZ.oid:
        return timetz.value_of(timetz.parse(s))
    if oid == UUID.oid:
        return uuid_parse(s)
    if oid == JSONB.oid:
        return jsonb.normalize(s)
    if oid == JSON.oid:
        return jsonb.check_json(s)
    if oid == DATE.oid:
        try:
            return parse_date_text(s)
        except ValueError:
            raise SqlError(SqlState.INVALID_DATETIME_FORMAT,
                           f'invalid input syntax for type date: "{s}"') from None
    return s


def _decode_numeric_binary(b: bytes) -> Decimal:
    ndigits, weight, sign, dscale = struct.unpack_from(">hhHh", b)
    if sign == NUMERIC_NAN:
        return Decimal("NaN")
    if sign == NUMERIC_PINF:
        return Decimal("Infinity")
    if sign == NUMERIC_NINF:
        return Decimal("-Infinity")
    groups = struct.unpack_from(f">{ndigits}h", b, 8)
    value = 0
    for g in groups:
        value = value * 10000 + g
    exp10 = (weight + 1 - ndigits) * 4
    with localcontext() as c:
        c.prec = 1000  # numerics reach 131072 digits before the point; don't round them
        d = Decimal(value).scaleb(exp10).quantize(Decimal(1).scaleb(-dscale))
    return d.copy_negate() if sign == NUMERIC_NEG else d  # (unary minus would round to 28 digits)


_ARRAY_INTS = {INT2.oid: np.dtype(">i2"), INT4.oid: np.dtype(">i4"), INT8.oid: np.dtype(">i8")}


def _decode_array_binary(b: bytes, oid: int) -> str:
    element = _ARRAY_ELEMENTS[oid]
    ndim, _flags, _elem_oid = struct.unpack_from(">iii", b)
    if ndim == 0:
        return "{}"
    if ndim != 1:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
    count, _lower = struct.unpack_from(">ii", b, 12)
    ints = _ARRAY_INTS.get(element.oid)
    if ints is not None and len(b) == 20 + count * (4 + ints.itemsize):
        # Integers without NULLs: every element is its length then its value; read at once
        # (a DELETE's 5 000 ids).
        items = np.frombuffer(b, np.dtype([("n", ">i4"), ("v", ints)]), count, 20)
        if (items["n"] == ints.itemsize).all():
            return "{" + ",".join(map(str, items["v"].tolist())) + "}"
    pos, values = 20, []
    for _ in range(count):
        (length,) = _I32.unpack_from(b, pos)
        pos += 4
        if length < 0:
            values.append(None)
            continue
        values.append(_decode_binary(b[pos:pos + length], element.oid))
        pos += length
    return arrays.write(values, element)


def _decode_binary(b: bytes, oid: int) -> Any:
    n = len(b)
    if oid in _ARRAY_ELEMENTS:
        return _decode_array_binary(b, oid)
    if oid == BOOL.oid and n == 1:
        return b != b"\x00"
    if oid == INT2.oid and n == 2:
        return _I16.unpack(b)[0]
    if oid == INT4.oid and n == 4:
        return _I32.unpack(b)[0]
    if oid == INT8.oid and n == 8:
        return _I64.unpack(b)[0]
    if oid == FLOAT4.oid and n == 4:
        return _F32.unpack(b)[0]
    if oid == FLOAT8.oid and n == 8:
        return _F64.unpack(b)[0]
    if oid == NUMERIC.oid and n >= 8:
        return _decode_numeric_binary(b)
    if oid in (TIMESTAMP.oid, TIMESTAMPTZ.oid) and n == 8:
        v = PG_EPOCH + timedelta(microseconds=_I64.unpack(b)[0])
        return v.replace(tzinfo=timezone.utc) if oid == TIMESTAMPTZ.oid else v
    if oid == DATE.oid and n == 4:
        return PG_EPOCH_DATE + timedelta(days=_I32.unpack(b)[0])
    if oid == BYTEA.oid:
        return bytes(b)
    if oid == TIME.oid and n == 8:
        us = _I64.unpack(b)[0]
        return (datetime(2000, 1, 1) + timedelta(microseconds=us)).time()
    if oid == TIMETZ.oid and n == 12:
        # PostgreSQL's timetz_recv checks both fields the same way.
        us, zone = _I64.unpack(b[:8])[0], _I32.unpack(b[8:])[0]
        if not 0 <= us <= timetz.US_PER_DAY:
            raise SqlError("22P03", "time out of range")
        if abs(zone) > timetz.ZONE_LIMIT:
            raise SqlError("22P03", "time zone displacement out of range")
        return timetz.value_of(timetz.encode(us, zone))
    if oid == JSONB.oid and n >= 1 and b[0] == 1:
        return jsonb.normalize(b[1:].decode("utf-8"))
    if oid == JSON.oid:
        return jsonb.check_json(b.decode("utf-8"))
    if oid == UUID.oid and n == 16:
        h = b.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if oid == INTERVAL.oid and n == 16:
        us, days, months = _INTERVAL_BINARY.unpack(b)
        return interval.make(months, days, us)
    if oid in (TEXT.oid, VARCHAR.oid, BPCHAR.oid, UNKNOWN.oid, NAME.oid, CHAR.oid, 0):
        return b.decode("utf-8")
    if oid in _OID_PARAM_OIDS and n == 4:
        return _U32.unpack(b)[0]
    if oid not in _TYPE_NAMES:
        raise SqlError(SqlState.UNDEFINED_FUNCTION,
                       f"no binary input function available for type with OID {oid}")
    raise SqlError(SqlState.PROTOCOL_VIOLATION,
                   f"incorrect binary data format in bind parameter for type {_TYPE_NAMES[oid]}")


def decode_param(raw: bytes | None, oid: int, binary: bool) -> Any:
    """Decode one Bind parameter (None = SQL NULL) of type `oid` in text or binary format."""
    if raw is None:
        return None
    try:
        if binary:
            return _decode_binary(raw, oid)
        return _decode_text(raw.decode("utf-8"), oid)
    except UnicodeDecodeError:
        raise SqlError("22021", "invalid byte sequence for encoding \"UTF8\"") from None
    except (struct.error, OverflowError, ValueError, InvalidOperation) as e:
        raise SqlError(SqlState.PROTOCOL_VIOLATION,
                       f"incorrect binary data format in bind parameter: {e}") from None
