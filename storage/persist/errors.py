"""Errors persist raises. Read-frontier violations are user-visible SqlErrors; an UpperMismatch
is a normal outcome of racing writers that the caller handles (usually by retrying)."""

from __future__ import annotations

from dataflow.errors import SqlError, SqlState


class UpperMismatch(Exception):
    """compare_and_append lost: the shard's upper was not the expected one."""

    def __init__(self, shard_id: str, expected_upper: int, actual_upper: int) -> None:
        super().__init__(
            f"shard {shard_id}: expected upper {expected_upper} but it is {actual_upper} "
            "(another writer appended first)"
        )
        self.shard_id = shard_id
        self.expected_upper = expected_upper
        self.actual_upper = actual_upper


class ReadBeforeSince(SqlError):
    def __init__(self, shard_id: str, time: int, since: int) -> None:
        super().__init__(
            SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE,
            f"timestamp {time} is not valid for shard {shard_id}: it has been compacted up to {since}",
            hint=f"read at a timestamp at or after {since}",
        )
        self.time, self.since = time, since


class ReadNotReady(SqlError):
    def __init__(self, shard_id: str, time: int, upper: int) -> None:
        super().__init__(
            SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE,
            f"timestamp {time} is not yet readable for shard {shard_id}: its upper is {upper}",
            hint=f"wait until the upper passes {time}, or read at a timestamp before {upper}",
        )
        self.time, self.upper = time, upper


class ShardDropped(SqlError):
    def __init__(self, shard_id: str) -> None:
        super().__init__(SqlState.UNDEFINED_OBJECT, f"persist shard {shard_id} has been dropped")
        self.shard_id = shard_id


class SchemaMismatch(SqlError):
    def __init__(self, shard_id: str, expected: tuple[str, ...], got: tuple[str, ...]) -> None:
        super().__init__(
            SqlState.DATATYPE_MISMATCH,
            f"persist shard {shard_id} stores columns ({', '.join(expected)}), "
            f"not ({', '.join(got)})",
        )
