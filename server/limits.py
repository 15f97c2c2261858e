"""Limits that keep the server up under careless clients, read from session variables over the
server's defaults (`server.adapter.vars.DEFAULTS`, which `slipstream serve --statement-timeout`
and the like set at start):

* statement_timeout (ms; 0 = none): a statement running longer is cancelled with 57014
  `canceling statement due to statement timeout` (server/pgwire/connection.py), as PostgreSQL.
* idle_in_transaction_session_timeout (ms; 0 = none): a session idle inside a transaction block
  for longer is terminated with FATAL 25P03 `terminating connection due to idle-in-transaction
  timeout` (PostgreSQL's words).
* max_connections: a connection beyond it gets FATAL 53300 `sorry, too many clients already`
  after its startup packet (before authentication), and the others keep working.
* max_result_size (bytes; Materialize's, also settable as max_query_result_size, its session-level
  name): a one-off query whose result is larger fails with 53000-class 53200 `result exceeds max
  size of 1073.7 MB` (Materialize's words) instead of holding it all in memory.

* the replica memory limit (`slipstream serve --replica-memory-limit`, server-wide): what each
  replica's dataflows may hold, shared evenly by its workers; a dataflow step that grows a
  worker past its share fails that query or view with 53200 (dataflow/worker.py) instead of the
  operating system killing the replica under everyone.

Durations are PostgreSQL's: a number in milliseconds or with a unit (us, ms, s, min, h, d);
sizes take B, kB, MB, GB, TB (PostgreSQL's memory units, base 1024).
"""

from __future__ import annotations

import functools
import re

from dataflow.errors import SqlError, SqlState

TOO_MANY_CONNECTIONS = "53300"
TOO_MANY_CONNECTIONS_MESSAGE = "sorry, too many clients already"
IDLE_IN_TRANSACTION_TIMEOUT = "25P03"
IDLE_IN_TRANSACTION_MESSAGE = "terminating connection due to idle-in-transaction timeout"
STATEMENT_TIMEOUT_MESSAGE = "canceling statement due to statement timeout"
RESULT_TOO_LARGE = "53200"  # out_of_memory (class 53, insufficient resources), as Materialize

_DURATION_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "min": 60_000.0, "h": 3_600_000.0, "d": 86_400_000.0}
_SIZE_UNITS = {"b": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3, "tb": 1024 ** 4}
_NUMBER_UNIT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")

DURATION_VARS = ("statement_timeout", "idle_in_transaction_session_timeout")
SIZE_VARS = ("max_result_size",)


@functools.lru_cache(maxsize=256)  # (read on every statement: statement_timeout)
def parse_duration_ms(name: str, value: str) -> float:
    m = _NUMBER_UNIT.match(str(value))
    unit = (m.group(2) if m else "").lower() or "ms"
    if m is None or unit not in _DURATION_UNITS:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"',
                       hint='Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".'
                       if m is not None else None)
    ms = float(m.group(1)) * _DURATION_UNITS[unit]
    if ms < 0 or ms > 2147483647:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                       f"{int(ms)} ms is outside the valid range for parameter \"{name}\" (0 .. 2147483647)")
    return ms


@functools.lru_cache(maxsize=256)  # (read on every statement's result)
def parse_size_bytes(name: str, value: str) -> int:
    m = _NUMBER_UNIT.match(str(value))
    unit = (m.group(2) if m else "").lower() or "b"
    if m is None or unit not in _SIZE_UNITS or float(m.group(1)) < 0:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"',
                       hint='Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".')
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def validate(name: str, value: str) -> None:
    """SET checks (22023 for a bad value)."""
    if name in DURATION_VARS:
        parse_duration_ms(name, value)
    elif name in SIZE_VARS:
        parse_size_bytes(name, value)


def _var(vars: dict[str, str], name: str) -> str:
    from server.adapter.vars import DEFAULTS
    return vars.get(name, DEFAULTS.get(name, "0"))


def _seconds(vars: dict[str, str], name: str) -> float | None:
    try:
        ms = parse_duration_ms(name, _var(vars, name))
    except SqlError:
        return None
    return ms / 1000.0 if ms > 0 else None


def statement_timeout(vars: dict[str, str]) -> float | None:
    """Seconds, or None for no limit."""
    return _seconds(vars, "statement_timeout")


def idle_in_transaction_timeout(vars: dict[str, str]) -> float | None:
    return _seconds(vars, "idle_in_transaction_session_timeout")


def max_connections() -> int:
    from server.adapter.vars import DEFAULTS
    return int(DEFAULTS.get("max_connections", "1000"))


def max_result_size(vars: dict[str, str]) -> int:
    return parse_size_bytes("max_result_size", _var(vars, "max_result_size"))


def check_result_size(vars: dict[str, str], batch) -> None:
    """max_result_size against a result batch (an Arrow table). Its buffers' total size is an
    upper bound found without a walk over its columns (a slice counts its whole buffers); only
    past the limit is the exact size computed."""
    limit = max_result_size(vars)
    if limit and batch.get_total_buffer_size() > limit and batch.nbytes > limit:
        raise SqlError(RESULT_TOO_LARGE, f"result exceeds max size of {_pretty(limit)}",
                       hint="Narrow the query (a WHERE clause, LIMIT, fewer columns) or raise max_result_size.")


def _pretty(n: int) -> str:
    """As Materialize prints the limit: 1MB -> '1048.6 KB', 1GB -> '1073.7 MB' (its byte-size
    display: the largest power of 1024 below the value picks the unit, the value in powers of 1000)."""
    k = 0
    while k < 4 and 1024 ** (k + 1) < n:
        k += 1
    if k == 0:
        return f"{n} B"
    return f"{n / 1000 ** k:.1f} {'KMGT'[k - 1]}B"


DEFAULT_REPLICA_MEMORY_SHARE = 0.4


def replica_memory_bytes(value: str | None) -> int | None:
    """The replica memory limit: a size, 'none', or (None) 40% of this machine's memory.

    >>> replica_memory_bytes("4GB")
    4294967296
    >>> replica_memory_bytes("none") is None
    True
    """
    if value is None:
        import os
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * DEFAULT_REPLICA_MEMORY_SHARE)
    if value.strip().lower() == "none":
        return None
    return parse_size_bytes("replica_memory_limit", value)
