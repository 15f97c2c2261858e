"""Session variables: defaults, which ones clients must be told about (ParameterStatus), and
the values SHOW reports."""

from __future__ import annotations

SERVER_VERSION = "15.0"

DEFAULTS: dict[str, str] = {
    "application_name": "",
    "client_encoding": "UTF8",
    "client_min_messages": "notice",
    "cluster": "quickstart",
    "database": "slipstream",
    "datestyle": "ISO, MDY",
    "default_table_access_method": "heap",
    "default_transaction_isolation": "strict serializable",
    "default_transaction_read_only": "off",
    "extra_float_digits": "3",
    "idle_in_transaction_session_timeout": "0",
    "in_hot_standby": "off",
    "integer_datetimes": "on",
    "intervalstyle": "postgres",
    "is_superuser": "on",
    "lc_messages": "C",
    "max_connections": "1000",
    "max_identifier_length": "63",
    "max_index_keys": "32",
    "max_result_size": "1GB",
    "password_encryption": "scram-sha-256",
    "search_path": "public",
    "server_encoding": "UTF8",
    "server_version": SERVER_VERSION,
    "server_version_num": "150000",
    "standard_conforming_strings": "on",
    "statement_timeout": "0",
    "timezone": "UTC",
    "transaction_isolation": "strict serializable",
}

# Parameters PostgreSQL reports with ParameterStatus when they change (lower-case -> wire name).
REPORTABLE = {
    "application_name": "application_name",
    "client_encoding": "client_encoding",
    "datestyle": "DateStyle",
    "default_transaction_read_only": "default_transaction_read_only",
    "in_hot_standby": "in_hot_standby",
    "integer_datetimes": "integer_datetimes",
    "intervalstyle": "IntervalStyle",
    "is_superuser": "is_superuser",
    "server_encoding": "server_encoding",
    "server_version": "server_version",
    "session_authorization": "session_authorization",
    "standard_conforming_strings": "standard_conforming_strings",
    "timezone": "TimeZone",
}

READ_ONLY = {"server_version", "server_version_num", "server_encoding", "integer_datetimes",
             "is_superuser", "max_identifier_length", "max_connections", "in_hot_standby", "lc_messages"}

ALIASES = {"time zone": "timezone", "transaction isolation level": "transaction_isolation",
           "session authorization": "session_authorization", "names": "client_encoding",
           "max_query_result_size": "max_result_size"}


def canonical(name: str) -> str:
    name = name.lower().strip()
    return ALIASES.get(name, name)


def get_var(vars: dict[str, str], name: str) -> str | None:
    name = canonical(name)
    if name in vars:
        return vars[name]
    return DEFAULTS.get(name)
