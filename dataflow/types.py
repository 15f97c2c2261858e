"""SQL types as the whole system sees them: PostgreSQL OIDs, Arrow storage types, display names.

Every layer speaks these: the planner types expressions with them, the engine stores columns in
their Arrow type, persist writes Parquet in that type, and pgwire encodes values by their OID.

>>> INT8.oid, INT8.arrow
(20, DataType(int64))
>>> numeric(10, 2).name
'numeric(10,2)'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import pyarrow as pa


class TypeKind(str, Enum):
    BOOL = "bool"
    INT2 = "int2"
    INT4 = "int4"
    INT8 = "int8"
    FLOAT4 = "float4"
    FLOAT8 = "float8"
    NUMERIC = "numeric"
    TEXT = "text"
    VARCHAR = "varchar"
    BPCHAR = "bpchar"  # character(n): blank-padded to n; trailing blanks are insignificant
    TIMESTAMP = "timestamp"
    TIMESTAMPTZ = "timestamptz"
    DATE = "date"
    TIME = "time"  # time of day without zone, microseconds
    TIMETZ = "timetz"  # time of day and zone offset, one int64 key: see dataflow.timetz
    INTERVAL = "interval"  # (months, days, microseconds): see dataflow.interval
    BYTEA = "bytea"
    UUID = "uuid"  # kept as its canonical text: see dataflow.bytea_uuid
    JSONB = "jsonb"  # kept as PostgreSQL's canonical output text: see dataflow.jsonb
    JSON = "json"  # kept as its input text (checked)
    ARRAY = "array"  # one-dimensional, of `SqlType.element`; kept as its canonical text: dataflow.arrays
    # Object identifiers (pg_catalog's keys), kept as int64; the reg* types print as names.
    OID = "oid"
    REGCLASS = "regclass"
    REGTYPE = "regtype"
    REGPROC = "regproc"
    REGNAMESPACE = "regnamespace"
    REGROLE = "regrole"
    NAME = "name"  # catalog names: text that compares like text
    CHAR = "char"  # PostgreSQL's one-byte "char" (pg_class.relkind), kept as a one-character string
    UNKNOWN = "unknown"  # an untyped NULL or string literal before coercion
    VOID = "void"  # what pg_sleep returns: always the empty string (kept as text)


# Unconstrained `numeric` is stored as a 38-digit decimal with this many fractional digits.
DEFAULT_NUMERIC_SCALE = 16
NUMERIC_MAX_PRECISION = 38

_OIDS = {
    TypeKind.BOOL: 16,
    TypeKind.INT2: 21,
    TypeKind.INT4: 23,
    TypeKind.INT8: 20,
    TypeKind.FLOAT4: 700,
    TypeKind.FLOAT8: 701,
    TypeKind.NUMERIC: 1700,
    TypeKind.TEXT: 25,
    TypeKind.VARCHAR: 1043,
    TypeKind.BPCHAR: 1042,
    TypeKind.TIMESTAMP: 1114,
    TypeKind.TIMESTAMPTZ: 1184,
    TypeKind.DATE: 1082,
    TypeKind.TIME: 1083,
    TypeKind.TIMETZ: 1266,
    TypeKind.INTERVAL: 1186,
    TypeKind.BYTEA: 17,
    TypeKind.UUID: 2950,
    TypeKind.JSONB: 3802,
    TypeKind.JSON: 114,
    TypeKind.ARRAY: 0,  # per element type: ARRAY_OIDS
    TypeKind.OID: 26,
    TypeKind.REGCLASS: 2205,
    TypeKind.REGTYPE: 2206,
    TypeKind.REGPROC: 24,
    TypeKind.REGNAMESPACE: 4089,
    TypeKind.REGROLE: 4096,
    TypeKind.NAME: 19,
    TypeKind.CHAR: 18,
    TypeKind.UNKNOWN: 705,
    TypeKind.VOID: 2278,
}

_PG_NAMES = {
    TypeKind.BOOL: "boolean",
    TypeKind.INT2: "smallint",
    TypeKind.INT4: "integer",
    TypeKind.INT8: "bigint",
    TypeKind.FLOAT4: "real",
    TypeKind.FLOAT8: "double precision",
    TypeKind.NUMERIC: "numeric",
    TypeKind.TEXT: "text",
    TypeKind.VARCHAR: "character varying",
    TypeKind.BPCHAR: "character",
    TypeKind.TIMESTAMP: "timestamp without time zone",
    TypeKind.TIMESTAMPTZ: "timestamp with time zone",
    TypeKind.DATE: "date",
    TypeKind.TIME: "time without time zone",
    TypeKind.TIMETZ: "time with time zone",
    TypeKind.INTERVAL: "interval",
    TypeKind.BYTEA: "bytea",
    TypeKind.UUID: "uuid",
    TypeKind.JSONB: "jsonb",
    TypeKind.JSON: "json",
    TypeKind.ARRAY: "array",
    TypeKind.OID: "oid",
    TypeKind.REGCLASS: "regclass",
    TypeKind.REGTYPE: "regtype",
    TypeKind.REGPROC: "regproc",
    TypeKind.REGNAMESPACE: "regnamespace",
    TypeKind.REGROLE: "regrole",
    TypeKind.NAME: "name",
    TypeKind.CHAR: '"char"',
    TypeKind.UNKNOWN: "unknown",
    TypeKind.VOID: "void",
}


@dataclass(frozen=True)
class SqlType:
    """A SQL type; `precision`/`scale` only for numeric (None scale = unconstrained);
    `precision` is the length n of varchar(n) and character(n) (None = no limit)."""

    kind: TypeKind
    precision: int | None = None
    scale: int | None = None
    element: "SqlType | None" = None  # the element type of an array

    @property
    def oid(self) -> int:
        if self.kind is TypeKind.ARRAY:
            return ARRAY_OIDS[self.element.kind]
        return _OIDS[self.kind]

    @property
    def name(self) -> str:
        if self.kind is TypeKind.ARRAY:
            return f"{self.element.name}[]"
        if self.kind is TypeKind.NUMERIC and self.scale is not None:
            return f"numeric({self.precision},{self.scale})"
        if self.kind in (TypeKind.VARCHAR, TypeKind.BPCHAR) and self.precision is not None:
            return f"{_PG_NAMES[self.kind]}({self.precision})"
        return _PG_NAMES[self.kind]

    @property
    def length(self) -> int | None:
        """The n of varchar(n) / character(n)."""
        return self.precision if self.kind in (TypeKind.VARCHAR, TypeKind.BPCHAR) else None

    @property
    def arrow(self) -> pa.DataType:
        k = self.kind
        if k is TypeKind.BOOL:
            return pa.bool_()
        if k is TypeKind.INT2:
            return pa.int16()
        if k is TypeKind.INT4:
            return pa.int32()
        if k is TypeKind.INT8:
            return pa.int64()
        if k is TypeKind.FLOAT4:
            return pa.float32()
        if k is TypeKind.FLOAT8:
            return pa.float64()
        if k is TypeKind.NUMERIC:
            return pa.decimal128(NUMERIC_MAX_PRECISION, self.effective_scale)
        if k in (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.UNKNOWN, TypeKind.NAME,
                 TypeKind.CHAR, TypeKind.VOID):
            return pa.string()
        if k in OID_KINDS:
            return pa.int64()
        if k is TypeKind.TIMESTAMP:
            return pa.timestamp("us")
        if k is TypeKind.TIMESTAMPTZ:
            return pa.timestamp("us", tz="UTC")
        if k is TypeKind.DATE:
            return pa.date32()
        if k is TypeKind.INTERVAL:
            return pa.month_day_nano_interval()
        if k is TypeKind.TIME:
            return pa.time64("us")
        if k is TypeKind.TIMETZ:
            return pa.duration("us")  # the key of dataflow.timetz
        if k is TypeKind.BYTEA:
            return pa.binary()
        if k in (TypeKind.UUID, TypeKind.JSONB, TypeKind.JSON, TypeKind.ARRAY):
            return pa.string()
        raise AssertionError(k)

    @property
    def effective_scale(self) -> int:
        return DEFAULT_NUMERIC_SCALE if self.scale is None else self.scale

    @property
    def is_numeric_family(self) -> bool:
        return self.kind in NUMBER_KINDS

    @property
    def is_integer(self) -> bool:
        return self.kind in (TypeKind.INT2, TypeKind.INT4, TypeKind.INT8)

    @property
    def is_text(self) -> bool:
        return self.kind in TEXT_KINDS

    @property
    def is_oid(self) -> bool:
        """oid and the reg* types: object identifiers, int64 values."""
        return self.kind in OID_KINDS

    def __str__(self) -> str:
        return self.name


BOOL = SqlType(TypeKind.BOOL)
INT2 = SqlType(TypeKind.INT2)
INT4 = SqlType(TypeKind.INT4)
INT8 = SqlType(TypeKind.INT8)
FLOAT4 = SqlType(TypeKind.FLOAT4)
FLOAT8 = SqlType(TypeKind.FLOAT8)
NUMERIC = SqlType(TypeKind.NUMERIC)
TEXT = SqlType(TypeKind.TEXT)
VARCHAR = SqlType(TypeKind.VARCHAR)
BPCHAR = SqlType(TypeKind.BPCHAR)
TIMESTAMP = SqlType(TypeKind.TIMESTAMP)
TIMESTAMPTZ = SqlType(TypeKind.TIMESTAMPTZ)
DATE = SqlType(TypeKind.DATE)
TIME = SqlType(TypeKind.TIME)
TIMETZ = SqlType(TypeKind.TIMETZ)
INTERVAL = SqlType(TypeKind.INTERVAL)
BYTEA = SqlType(TypeKind.BYTEA)
UUID = SqlType(TypeKind.UUID)
JSONB = SqlType(TypeKind.JSONB)
JSON = SqlType(TypeKind.JSON)
UNKNOWN = SqlType(TypeKind.UNKNOWN)
VOID = SqlType(TypeKind.VOID)
OID = SqlType(TypeKind.OID)
REGCLASS = SqlType(TypeKind.REGCLASS)
REGTYPE = SqlType(TypeKind.REGTYPE)
REGPROC = SqlType(TypeKind.REGPROC)
REGNAMESPACE = SqlType(TypeKind.REGNAMESPACE)
REGROLE = SqlType(TypeKind.REGROLE)
NAME = SqlType(TypeKind.NAME)
CHAR = SqlType(TypeKind.CHAR)

OID_KINDS = frozenset({TypeKind.OID, TypeKind.REGCLASS, TypeKind.REGTYPE, TypeKind.REGPROC,
                       TypeKind.REGNAMESPACE, TypeKind.REGROLE})
TEXT_KINDS = frozenset({TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.UNKNOWN, TypeKind.NAME,
                        TypeKind.CHAR})

NUMBER_KINDS = frozenset(
    {TypeKind.INT2, TypeKind.INT4, TypeKind.INT8, TypeKind.FLOAT4, TypeKind.FLOAT8, TypeKind.NUMERIC}
)


# The OID of the array type of each element type (PostgreSQL's pg_type.typarray).
ARRAY_OIDS = {
    TypeKind.BOOL: 1000, TypeKind.INT2: 1005, TypeKind.INT4: 1007, TypeKind.INT8: 1016,
    TypeKind.FLOAT4: 1021, TypeKind.FLOAT8: 1022, TypeKind.NUMERIC: 1231, TypeKind.TEXT: 1009,
    TypeKind.VARCHAR: 1015, TypeKind.BPCHAR: 1014, TypeKind.TIMESTAMP: 1115, TypeKind.TIMESTAMPTZ: 1185,
    TypeKind.DATE: 1182, TypeKind.TIME: 1183, TypeKind.TIMETZ: 1270, TypeKind.INTERVAL: 1187, TypeKind.BYTEA: 1001, TypeKind.UUID: 2951,
    TypeKind.JSONB: 3807, TypeKind.JSON: 199,
    TypeKind.OID: 1028, TypeKind.REGCLASS: 2210, TypeKind.REGTYPE: 2211, TypeKind.REGPROC: 1008,
    TypeKind.NAME: 1003, TypeKind.CHAR: 1002, TypeKind.REGNAMESPACE: 4090, TypeKind.REGROLE: 4097,
}


def array_of(element: SqlType) -> SqlType:
    return SqlType(TypeKind.ARRAY, element=element)


def numeric(precision: int | None = None, scale: int | None = None) -> SqlType:
    if precision is None:
        return NUMERIC
    return SqlType(TypeKind.NUMERIC, precision, 0 if scale is None else scale)


def varchar(length: int | None = None) -> SqlType:
    return SqlType(TypeKind.VARCHAR, length)


def bpchar(length: int | None = 1) -> SqlType:
    return SqlType(TypeKind.BPCHAR, length)


@dataclass(frozen=True)
class Column:
    """A named, typed column of a relation."""

    name: str
    type: SqlType
    nullable: bool = True
    # Where a query's output column comes from, when it is a relation's column as such: the
    # relation's OID and the column's number (RowDescription carries them; drivers use them).
    table_oid: int = field(default=0, compare=False)
    attnum: int = field(default=0, compare=False)


def arrow_schema(types: tuple[SqlType, ...] | list[SqlType]) -> pa.Schema:
    """The Arrow schema of an update batch with these row types: c0..cN-1, time, diff."""
    fields = [pa.field(f"c{i}", t.arrow) for i, t in enumerate(types)]
    fields.append(pa.field("time", pa.uint64(), nullable=False))
    fields.append(pa.field("diff", pa.int64(), nullable=False))
    return pa.schema(fields)
