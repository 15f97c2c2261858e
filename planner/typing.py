"""Types: SQL type names to `SqlType`, PostgreSQL's numeric promotion, implicit casts, and the
result types of operators, functions and aggregates.

Promotion follows PostgreSQL's operator resolution for the types we have:
int2 < int4 < int8 < numeric within exact numbers; any float makes the result float8
(float4 op float4 stays float4). An `unknown` literal or parameter takes the other side's type.

>>> unify([INT4, INT8]).name, unify([INT4, NUMERIC]).name, unify([INT8, FLOAT4]).name
('bigint', 'numeric', 'double precision')
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import SqlError, SqlState
from dataflow.types import (CHAR, NAME, OID, REGCLASS, REGNAMESPACE, REGPROC, REGROLE, REGTYPE, ARRAY_OIDS, BOOL, BYTEA, DATE, INTERVAL, TIME, TIMETZ, JSON, JSONB, UUID, array_of, FLOAT4, FLOAT8, INT2, INT4, INT8, NUMERIC, TEXT,
                            TIMESTAMP, TIMESTAMPTZ, UNKNOWN, VARCHAR, NUMERIC_MAX_PRECISION,
                            BPCHAR, SqlType, TypeKind, bpchar, numeric, varchar)

DT = exp.DataType.Type

_SIMPLE = {
    DT.BOOLEAN: BOOL, DT.SMALLINT: INT2, DT.INT: INT4, DT.BIGINT: INT8, DT.FLOAT: FLOAT4,
    DT.DOUBLE: FLOAT8, DT.TEXT: TEXT, DT.VARCHAR: VARCHAR, DT.NVARCHAR: VARCHAR,
    DT.CHAR: TEXT, DT.NCHAR: TEXT,
    DT.TIMESTAMP: TIMESTAMP, DT.TIMESTAMPTZ: TIMESTAMPTZ, DT.TIMESTAMPLTZ: TIMESTAMPTZ,
    DT.DATE: DATE, DT.INTERVAL: INTERVAL, DT.TIME: TIME, DT.VARBINARY: BYTEA, DT.UUID: UUID,
    DT.JSONB: JSONB, DT.JSON: JSON,
}

# Types of the system catalogs, spelled as user-defined names by sqlglot.
_CATALOG_TYPES = {"oid": OID, "regclass": REGCLASS, "regtype": REGTYPE, "regproc": REGPROC,
                  "char": CHAR, "pg_node_tree": TEXT, "regnamespace": REGNAMESPACE, "regrole": REGROLE}
_SIMPLE[DT.NAME] = NAME

_RANK = {TypeKind.INT2: 0, TypeKind.INT4: 1, TypeKind.INT8: 2, TypeKind.NUMERIC: 3}


def _modifiers(dt: exp.DataType) -> list[int]:
    """A type's modifiers, `numeric(10, 2)` -> [10, 2]: integer constants only (PostgreSQL's
    grammar; `float8((1))` or `numeric(a + 1)` is a syntax error there too)."""
    out = []
    for p in dt.expressions:
        value = p.this
        text = value.this if isinstance(value, exp.Literal) and not value.is_string else None
        if not isinstance(text, str) or not text.lstrip("-").isdigit():
            raise SqlError(SqlState.SYNTAX_ERROR, "type modifiers must be simple constants or identifiers")
        out.append(int(text))
    return out


def type_from_ast(dt: exp.DataType) -> SqlType:
    """`numeric(10,2)` -> numeric(10,2); unsupported types raise 0A000."""
    t = dt.this
    if t in (DT.DECIMAL, DT.BIGDECIMAL):
        params = _modifiers(dt)
        if not params:
            return NUMERIC
        precision = params[0]
        scale = params[1] if len(params) > 1 else 0
        if not 1 <= precision <= NUMERIC_MAX_PRECISION:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f"precision for type numeric must be between 1 and {NUMERIC_MAX_PRECISION}")
        if not 0 <= scale <= precision:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f"scale for type numeric must be between 0 and precision {precision}")
        return numeric(precision, scale)
    if t is DT.DOUBLE and dt.expressions:
        # float(p): p binary digits of precision; 1-24 is real, 25-53 double precision.
        bits = _modifiers(dt)[0]
        if bits < 1:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "precision for type float must be at least 1 bit")
        if bits > 53:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "precision for type float must be less than 54 bits")
        return FLOAT4 if bits <= 24 else FLOAT8
    if t is DT.BPCHAR and not dt.expressions:
        return BPCHAR
    if t in (DT.VARCHAR, DT.NVARCHAR, DT.CHAR, DT.NCHAR, DT.BPCHAR):
        params = _modifiers(dt)
        char = t in (DT.CHAR, DT.NCHAR, DT.BPCHAR)
        length = params[0] if params else (1 if char else None)
        if length is not None and not 1 <= length <= 10_485_760:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f"length for type {'char' if char else 'varchar'} must be at least 1")
        return bpchar(length) if char else varchar(length)
    if t is DT.ARRAY and len(dt.expressions) == 1:
        element = type_from_ast(dt.expressions[0])
        if element.kind is TypeKind.ARRAY:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
        return array_of(element)
    if t is DT.TIMETZ:
        if dt.expressions:
            # PostgreSQL rounds to the precision; not done here, so refused rather than ignored.
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "time with time zone with a precision is not supported")
        return TIMETZ
    if t in _SIMPLE:
        return _SIMPLE[t]
    if t is DT.USERDEFINED and dt.args.get("kind") is not None:
        kind = dt.args["kind"]
        if isinstance(kind, exp.Dot) and kind.this.name.lower() == "pg_catalog":
            # pg_catalog.int4, pg_catalog."char": the built-in type of that name.
            inner = kind.expression
            if inner.args.get("quoted") or inner.name.lower() in _CATALOG_TYPES:
                named = _CATALOG_TYPES.get(inner.name.lower())
                if named is not None:
                    return named
            else:
                return type_from_ast(exp.DataType.build(inner.name, dialect="postgres"))
        named = _CATALOG_TYPES.get(kind.name.lower())
        if named is not None:
            return named
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"type {dt.sql(dialect='postgres').lower()} not yet supported")


def is_float(t: SqlType) -> bool:
    return t.kind in (TypeKind.FLOAT4, TypeKind.FLOAT8)


def is_time(t: SqlType) -> bool:
    return t.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ, TypeKind.DATE)


_MODIFIED = (TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.NUMERIC)


def unify(types: list[SqlType], common: bool = False) -> SqlType | None:
    """The common type of several values, or None when there is none. Unknowns adopt the
    others' type; all-unknown is text. Operators (`common` false: comparisons, arithmetic) take
    real with any other number to double precision, as PostgreSQL's operator resolution does;
    CASE, COALESCE, UNION and VALUES (`common`, PostgreSQL's select_common_type) keep real
    unless a double is present, since integers and numeric cast to real implicitly."""
    known = [t for t in types if t.kind is not TypeKind.UNKNOWN]
    if not known:
        return TEXT
    first = known[0]
    if all(t == first for t in known):
        if common and len(known) < len(types) and first.kind in _MODIFIED and first != SqlType(first.kind):
            # With an untyped literal the common type has no modifier (PostgreSQL's typmod of
            # a UNION or CASE is the inputs' only if they all agree): varchar(3) UNION '€uro'
            # keeps the whole string.
            return SqlType(first.kind)
        return first
    kinds = {t.kind for t in known}
    if any(t.is_oid for t in known) and all(t.is_oid or t.is_integer for t in known):
        oids = {t for t in known if t.is_oid}
        return oids.pop() if len(oids) == 1 else OID
    if all(t.is_numeric_family for t in known):
        if kinds & {TypeKind.FLOAT4, TypeKind.FLOAT8}:
            if TypeKind.FLOAT8 not in kinds and (common or kinds == {TypeKind.FLOAT4}):
                return FLOAT4
            return FLOAT8
        top = max(known, key=lambda t: _RANK[t.kind])
        return NUMERIC if top.kind is TypeKind.NUMERIC else top
    if all(t.is_text for t in known):
        # character(n) values keep their padding in a UNION of characters, as in PostgreSQL.
        for kind in (TypeKind.BPCHAR, TypeKind.VARCHAR):
            if all(t.kind is kind for t in known):
                return SqlType(kind)
        if common and first.kind in (TypeKind.BPCHAR, TypeKind.VARCHAR):
            # PostgreSQL's select_common_type keeps the first of the string types (they cast
            # to each other implicitly): coalesce(character(3), text) is character.
            return SqlType(first.kind)
        return TEXT
    if all(is_time(t) for t in known):
        if TypeKind.TIMESTAMPTZ in kinds:
            return TIMESTAMPTZ
        return TIMESTAMP
    if kinds == {TypeKind.BOOL}:
        return BOOL
    if kinds == {TypeKind.TIME, TypeKind.TIMETZ}:
        return TIMETZ  # time casts to timetz implicitly, not back
    if kinds == {TypeKind.ARRAY} and common:
        # In a UNION/CASE/COALESCE varchar[] with text[] is text[], integer[] with bigint[]
        # bigint[]: the elements' common type (PostgreSQL's operators, `=` among them, want
        # arrays of one type: varchar[] = text[] does not exist).
        element = unify([t.element for t in known], common)
        return array_of(element) if element is not None else None
    if kinds == {TypeKind.ARRAY}:
        # An operator takes arrays whose elements differ only in their modifiers: one array
        # type to PostgreSQL (varchar(5)[] = varchar[]; varchar[] = text[] does not exist).
        elements = {t.element.kind for t in known}
        if len(elements) == 1:
            return array_of(SqlType(elements.pop()))
    return None


# Casts PostgreSQL applies implicitly (in expressions): number widening and time widening.
def implicitly_castable(src: SqlType, dst: SqlType) -> bool:
    if src == dst or src.kind is TypeKind.UNKNOWN:
        return True
    if src.kind is TypeKind.ARRAY or dst.kind is TypeKind.ARRAY:
        return src.kind is dst.kind and implicitly_castable(src.element, dst.element)
    if src.is_numeric_family and dst.is_numeric_family:
        if is_float(dst):
            return True
        if is_float(src):
            return False
        return _RANK[src.kind] <= _RANK[dst.kind]
    if src.is_text and dst.is_text:
        return True
    if dst.is_oid and (src.is_oid or src.is_integer):
        return True
    if src.kind is TypeKind.DATE and dst.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
        return True
    if src.kind is TypeKind.TIMESTAMP and dst.kind is TypeKind.TIMESTAMPTZ:
        return True
    if src.kind is TypeKind.TIME and dst.kind is TypeKind.TIMETZ:
        return True  # at the session's zone (UTC)
    return False


_JSON_KINDS = (TypeKind.JSON, TypeKind.JSONB)


def assignment_castable(src: SqlType, dst: SqlType) -> bool:
    """Casts allowed when storing a value in a column (INSERT/UPDATE): also narrowing between
    numbers and anything to text."""
    if implicitly_castable(src, dst):
        return True
    if src.kind is TypeKind.ARRAY and dst.kind is TypeKind.ARRAY:
        return assignment_castable(src.element, dst.element)
    if src.is_numeric_family and dst.is_numeric_family:
        return True
    if src.is_oid and dst.kind in (TypeKind.INT4, TypeKind.INT8):
        return True
    if dst.is_text:
        return True
    if is_time(src) and is_time(dst):
        return True
    if src.kind in _JSON_KINDS and dst.kind in _JSON_KINDS:
        return True
    if src.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ) and dst.kind is TypeKind.TIME:
        return True
    if {src.kind, dst.kind} == {TypeKind.TIME, TypeKind.INTERVAL}:
        return True  # time -> interval (implicit in PostgreSQL), interval -> time
    if src.kind in (TypeKind.TIMETZ, TypeKind.TIMESTAMPTZ) and dst.kind is TypeKind.TIMETZ:
        return True
    if src.kind is TypeKind.TIMETZ and dst.kind is TypeKind.TIME:
        return True  # drops the zone
    return False


def explicitly_castable(src: SqlType, dst: SqlType) -> bool:
    if assignment_castable(src, dst) or src.is_text:
        return True
    if src.kind is TypeKind.ARRAY and dst.kind is TypeKind.ARRAY:
        return explicitly_castable(src.element, dst.element)
    if src.kind is TypeKind.BOOL and dst.kind is TypeKind.INT4:
        return True
    if src.kind is TypeKind.INT4 and dst.kind is TypeKind.BOOL:
        return True
    if src.kind is TypeKind.JSONB and (dst.is_numeric_family or dst.kind is TypeKind.BOOL):
        return True  # ('1.5'::jsonb)::numeric: a scalar of the right kind, else 22023
    return False


OID_TYPES = {t.oid: t for t in (BOOL, INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC, TEXT, VARCHAR,
                                TIMESTAMP, TIMESTAMPTZ, DATE, INTERVAL, BYTEA, UUID, JSONB, JSON, TIME, TIMETZ)}
OID_TYPES[1042] = BPCHAR
OID_TYPES.update({t.oid: t for t in (OID, REGCLASS, REGTYPE, REGPROC, REGNAMESPACE, REGROLE, NAME, CHAR)})


# Array parameter types (OID 1007 is integer[]), by their element types above.
_ELEMENT_OF_KIND = {t.kind: t for t in OID_TYPES.values()}
_ARRAY_OID_TYPES = {oid: array_of(_ELEMENT_OF_KIND[k]) for k, oid in ARRAY_OIDS.items() if k in _ELEMENT_OF_KIND}


def type_from_oid(oid: int) -> SqlType | None:
    """The SqlType of a parameter type OID; None for 0 (infer) and unknown OIDs."""
    if oid == 0 or oid == UNKNOWN.oid:
        return None
    t = OID_TYPES.get(oid) or _ARRAY_OID_TYPES.get(oid)
    if t is None:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"parameter type with OID {oid} not yet supported")
    return t
