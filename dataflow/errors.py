"""User-facing errors with PostgreSQL SQLSTATE codes, raised by any layer and sent by pgwire
as an ErrorResponse. The engine raises them for evaluation errors (division by zero, overflow),
the planner for unknown names and type mismatches, the adapter for sequencing errors."""

from __future__ import annotations


class SqlState:
    SUCCESSFUL = "00000"
    FEATURE_NOT_SUPPORTED = "0A000"
    INVALID_CURSOR_NAME = "34000"
    DATA_EXCEPTION = "22000"
    DIVISION_BY_ZERO = "22012"
    NUMERIC_VALUE_OUT_OF_RANGE = "22003"
    INVALID_TEXT_REPRESENTATION = "22P02"
    INVALID_DATETIME_FORMAT = "22007"
    DATETIME_FIELD_OVERFLOW = "22008"
    STRING_DATA_RIGHT_TRUNCATION = "22001"
    NOT_NULL_VIOLATION = "23502"
    INVALID_PARAMETER_VALUE = "22023"
    ACTIVE_SQL_TRANSACTION = "25001"
    NO_ACTIVE_SQL_TRANSACTION = "25P01"
    IN_FAILED_SQL_TRANSACTION = "25P02"
    READ_ONLY_SQL_TRANSACTION = "25006"
    INVALID_TRANSACTION_STATE = "25000"
    SYNTAX_ERROR = "42601"
    UNDEFINED_TABLE = "42P01"
    UNDEFINED_COLUMN = "42703"
    UNDEFINED_FUNCTION = "42883"
    UNDEFINED_OBJECT = "42704"
    AMBIGUOUS_COLUMN = "42702"
    DUPLICATE_TABLE = "42P07"
    DUPLICATE_OBJECT = "42710"
    DUPLICATE_COLUMN = "42701"
    DUPLICATE_CURSOR = "42P03"
    DATATYPE_MISMATCH = "42804"
    GROUPING_ERROR = "42803"
    WRONG_OBJECT_TYPE = "42809"
    DEPENDENT_OBJECTS_STILL_EXIST = "2BP01"
    INVALID_NAME = "42602"
    PROTOCOL_VIOLATION = "08P01"
    QUERY_CANCELED = "57014"
    OUT_OF_MEMORY = "53200"
    STATEMENT_TOO_COMPLEX = "54001"
    ADMIN_SHUTDOWN = "57P01"
    INTERNAL_ERROR = "XX000"
    INVALID_SQL_STATEMENT_NAME = "26000"
    INVALID_PARAMETER_STATUS = "22023"
    CANT_CHANGE_RUNTIME_PARAM = "55P02"
    OBJECT_NOT_IN_PREREQUISITE_STATE = "55000"


class SqlError(Exception):
    """An error a client sees: SQLSTATE, message, optional detail and hint."""

    def __init__(self, sqlstate: str, message: str, *, detail: str | None = None,
                 hint: str | None = None, severity: str = "ERROR") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail
        self.hint = hint
        self.severity = severity

    def __reduce__(self):  # picklable across the worker boundary, keyword arguments included
        return (_rebuild_sql_error, (self.sqlstate, self.message, self.detail, self.hint, self.severity))

    def __repr__(self) -> str:
        return f"SqlError({self.sqlstate}, {self.message!r})"


def _rebuild_sql_error(sqlstate, message, detail, hint, severity) -> SqlError:
    return SqlError(sqlstate, message, detail=detail, hint=hint, severity=severity)


def unsupported(feature: str) -> SqlError:
    return SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{feature} not yet supported")


def too_deeply_nested() -> SqlError:
    """What a statement nested past the parser's or planner's recursion gets (PostgreSQL's
    words for its own stack limit)."""
    return SqlError(SqlState.STATEMENT_TOO_COMPLEX, "stack depth limit exceeded",
                    hint="The statement nests too deeply (parentheses, subqueries or expressions); "
                         "simplify it.")
