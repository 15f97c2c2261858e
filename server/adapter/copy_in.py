"""Parsing COPY ... FROM STDIN data (PostgreSQL text and CSV formats) into an update batch.

CSV goes through Arrow's vectorised CSV reader; the text format needs backslash-escape handling,
so it is split in Python and then cast column-wise by Arrow."""

from __future__ import annotations

import io
import struct

import pyarrow as pa
import pyarrow.csv as pacsv

from dataflow.decimal_util import plain_text
from dataflow.errors import SqlError, SqlState
from dataflow.scalar import cast_text_columns, check_fits, fit_length_array
from dataflow.types import SqlType, TypeKind

_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unescape(field: str) -> str | None:
    if field == "\\N":
        return None
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        ch = field[i]
        if ch == "\\" and i + 1 < len(field):
            nxt = field[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def _parse_binary(data: bytes, types: list[SqlType]) -> list[pa.Array]:
    """PostgreSQL's binary COPY format (what asyncpg's copy_records_to_table sends)."""
    from server.pgwire.codec import decode_param

    if not data.startswith(_BINARY_SIGNATURE):
        raise SqlError("22P04", "COPY file signature not recognized")
    view = memoryview(data)
    pos = len(_BINARY_SIGNATURE) + 4
    (ext,) = struct.unpack_from("!i", view, pos)
    pos += 4 + ext
    n = len(types)
    columns: list[list] = [[] for _ in range(n)]
    oids = [t.oid for t in types]
    unpack_h, unpack_i = struct.Struct("!h").unpack_from, struct.Struct("!i").unpack_from
    try:
        while True:
            (count,) = unpack_h(view, pos)
            pos += 2
            if count == -1:
                break
            if count != n:
                raise SqlError("22P04", f"row field count is {count}, expected {n}")
            for i in range(n):
                (length,) = unpack_i(view, pos)
                pos += 4
                if length < 0:
                    columns[i].append(None)
                else:
                    columns[i].append(decode_param(bytes(view[pos:pos + length]), oids[i], True))
                    pos += length
    except struct.error:
        raise SqlError("22P04", "unexpected end of binary COPY data") from None
    out = []
    for col, t in zip(columns, types):
        if t.kind is TypeKind.NUMERIC:
            # Through the value's digits and the text input rules: numeric(p, s) rounds and
            # checks its precision, unconstrained numeric refuses what it cannot hold exactly.
            out.append(cast_text_columns([pa.array([None if v is None else plain_text(v) for v in col], pa.string())], [t])[0])
        elif t.length is not None:
            # varchar(n) / character(n): checked, and character(n) blank-padded, as the text
            # formats are (`_cast`).
            values = pa.array(col, t.arrow)
            check_fits(values, t.length, t.name)
            out.append(fit_length_array(values, t))
        else:
            out.append(pa.array(col, t.arrow))
    return out


def _has_empty_text_line(data: bytes, header: bool) -> bool:
    """Whether a text-format payload has an empty line (after the header line)."""
    if header:
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return data.startswith((b"\n", b"\r\n")) or b"\n\n" in data or b"\n\r\n" in data


def _has_empty_csv_line(data: bytes, delimiter: str, header: bool) -> bool:
    """Whether a CSV payload has an empty line outside quotes (after the header line)."""
    if not _has_empty_text_line(data, False):  # (no empty line at all, quoted or not)
        return False
    import csv
    rows = csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline=""), delimiter=delimiter)
    if header:
        next(rows, None)
    return any(not row for row in rows)


# Arrow's CSV reader splits blocks on its thread pool; for a write transaction's few hundred KB
# handing them out costs more than it saves (9,000 rows: 2.1 -> 1.5 ms in one thread).
_THREADED_CSV_BYTES = 4 << 20


def _split_with_arrow(data: bytes, types: list[SqlType], header: bool, parse: pacsv.ParseOptions,
                      **convert) -> list[pa.Array]:
    """A CSV or text payload split into one string column per target by Arrow's CSV reader (no
    per-row Python), then cast. `parse` must not skip empty lines: an empty line is a row (a
    NULL or an empty string in a one-column table; in wider ones the caller has refused it).
    Nothing, or a header alone, is no rows (COPY 0, as PostgreSQL); what Arrow cannot split is
    22P04."""
    if not data:
        return [pa.array([], t.arrow) for t in types]
    names = [f"f{i}" for i in range(len(types))]
    if header and not data.endswith((b"\n", b"\r")):
        data += b"\n"  # (Arrow cannot skip a last record that has no line end: it is still one)
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            # The header is the first record, not the first line: a quoted CSV field may hold
            # a newline (skip_rows counts lines; skip_rows_after_names counts parsed rows).
            read_options=pacsv.ReadOptions(column_names=names, skip_rows_after_names=1 if header else 0,
                                           use_threads=len(data) > _THREADED_CSV_BYTES),
            parse_options=parse,
            convert_options=pacsv.ConvertOptions(column_types={f: pa.string() for f in names},
                                                 strings_can_be_null=True, **convert))
    except pa.ArrowInvalid as e:
        if "Empty CSV file" in str(e) or (header and "Could not skip initial" in str(e)):
            return [pa.array([], t.arrow) for t in types]  # (only a header line)
        raise SqlError("22P04", f"invalid COPY data: {e}") from None
    return cast_text_columns([table.column(i).combine_chunks() for i in range(len(names))], types)


def parse_copy(data: bytes, types: list[SqlType], fmt: str = "text", delimiter: str | None = None,
               header: bool = False) -> list[pa.Array]:
    """The COPY payload as one Arrow array per target column."""
    n = len(types)
    if fmt == "binary":
        return _parse_binary(data, types)
    if fmt == "csv":
        if n > 1 and data and _has_empty_csv_line(data, delimiter or ",", header):
            # PostgreSQL reads an empty line as one empty field (Arrow would make it a row of
            # NULLs): missing data for every other column.
            raise SqlError("22P04", "missing data for column")
        # A quoted field may hold newlines; Arrow's reader must be told, or data larger than its
        # block (1 MiB) fails to split (22P04 for valid data). Without a quote there are none.
        quoted_newlines = b'"' in data
        return _split_with_arrow(data, types, header,
                                 pacsv.ParseOptions(delimiter=delimiter or ",", ignore_empty_lines=False,
                                                    newlines_in_values=quoted_newlines),
                                 null_values=[""], quoted_strings_can_be_null=False)
    sep = delimiter or "\t"
    if b"\\" not in data.replace(b"\\N", b""):
        # No escapes besides NULL markers: Arrow's CSV reader splits it without per-row Python.
        if n > 1 and _has_empty_text_line(data, header):
            raise SqlError("22P04", "missing data for column")  # (an empty line: one empty field)
        return _split_with_arrow(data, types, header,
                                 pacsv.ParseOptions(delimiter=sep, quote_char=False, double_quote=False,
                                                    escape_char=False, newlines_in_values=False,
                                                    ignore_empty_lines=False),
                                 null_values=["\\N"])
    columns: list[list[str | None]] = [[] for _ in range(n)]
    lines = data.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # (what follows the last line's newline)
    if header and lines:
        lines = lines[1:]
    for lineno, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        if line == "\\.":
            break  # the end-of-data marker
        fields = line.split(sep)  # (an empty line is one empty field, as in PostgreSQL)
        if len(fields) != n:
            raise SqlError(SqlState.DATA_EXCEPTION if len(fields) > n else "22P04",
                           f"{'extra' if len(fields) > n else 'missing'} data for column on line {lineno}")
        for i, f in enumerate(fields):
            columns[i].append(_unescape(f))
    return cast_text_columns([pa.array(c, pa.string()) for c in columns], types)
