"""Reading SUBSCRIBE output the ways clients do, and rebuilding a collection from its diffs.

Output rows are (mz_timestamp, [mz_progressed,] mz_diff, *columns). A progress row (with
PROGRESS) has mz_progressed = true and NULL everywhere else; it promises that every later row
has mz_timestamp >= its timestamp, so at a progress row P the rebuilt collection is the view
AS OF P - 1.

    view = Reconstruction()
    view.apply(rows, progress=True)      # consumes data rows, remembers progress timestamps
    view.rows()                          # sorted list of row tuples (multiset expanded)
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
import tty
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import psycopg


@dataclass
class Reconstruction:
    counts: Counter = field(default_factory=Counter)
    last_timestamp: int = -1
    progress: list[int] = field(default_factory=list)

    def apply(self, rows: Iterable[Sequence[Any]], progress: bool) -> None:
        for row in rows:
            ts = int(row[0])
            assert ts >= self.last_timestamp, f"mz_timestamp went backwards: {row}"
            self.last_timestamp = ts
            if progress:
                if row[1]:
                    assert all(v is None for v in row[2:]), f"progress row with data: {row}"
                    self.progress.append(ts)
                    continue
                diff, values = int(row[2]), tuple(row[3:])
            else:
                diff, values = int(row[1]), tuple(row[2:])
            assert diff != 0, f"a zero diff: {row}"
            self.counts[values] += diff
            assert self.counts[values] >= 0, f"negative multiplicity after {row}"
            if self.counts[values] == 0:
                del self.counts[values]

    def rows(self) -> list[tuple]:
        out: list[tuple] = []
        for values, count in self.counts.items():
            out.extend([values] * count)
        return sorted(out, key=repr)


def psycopg_fetch(conn: psycopg.Connection, cursor: str, timeout: str = "1s") -> list[tuple]:
    """One `FETCH ALL <cursor> WITH (timeout = ...)` on a connection inside BEGIN."""
    return conn.execute(f"FETCH ALL {cursor} WITH (timeout = '{timeout}')").fetchall()


def psycopg_fetch_until(conn: psycopg.Connection, cursor: str, done, deadline_s: float = 60,
                        timeout: str = "1s") -> list[tuple]:
    """FETCH repeatedly until `done(all_rows_so_far)` is true; fails after `deadline_s`."""
    rows: list[tuple] = []
    deadline = time.monotonic() + deadline_s
    while not done(rows):
        assert time.monotonic() < deadline, f"SUBSCRIBE did not deliver in time; got {rows}"
        rows.extend(psycopg_fetch(conn, cursor, timeout))
    return rows


class PsqlCopyReader:
    """`psql -c "COPY (SUBSCRIBE ...) TO STDOUT"` as a subprocess; read lines, then kill it.

    psql writes COPY rows with stdio and flushes only at the end of the COPY when stdout is a
    pipe, so a few rows of an endless SUBSCRIBE would never arrive. On a terminal stdout is
    line-buffered, so psql's stdout is a pseudo-terminal here, as for a person at a prompt."""

    def __init__(self, argv: list[str]):
        self._fd, replica = pty.openpty()
        tty.setraw(replica)  # no \n -> \r\n translation, no echo
        env = {**os.environ, "PAGER": "cat", "PSQL_PAGER": "cat"}
        self.proc = subprocess.Popen(argv, stdout=replica, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env)
        os.close(replica)
        self._buffer = b""

    def read_lines(self, count: int, timeout: float = 60) -> list[str]:
        """At least `count` complete lines (more if they arrived together)."""
        deadline = time.monotonic() + timeout
        while self._buffer.count(b"\n") < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"psql delivered only {self._buffer!r} in {timeout}s; "
                                     f"stderr: {self._stderr()}")
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError:  # EIO: psql closed the terminal (exited)
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"psql exited early ({self.proc.wait()}): "
                                         f"{self._buffer!r}; stderr: {self._stderr()}")
                self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [line.decode().rstrip("\r") for line in lines]

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return "(psql still running)"
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc.stderr.close()
        os.close(self._fd)


def parse_copy_text(line: str) -> list[str | None]:
    """One line of PostgreSQL text COPY: tab-separated fields, \\N for NULL."""
    return [None if field == r"\N" else field for field in line.split("\t")]
