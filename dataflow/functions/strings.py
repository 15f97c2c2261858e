"""Kernels of the string functions (signatures: `planner.functions.strings`).

Vectorised with Arrow's string kernels (utf8_slice_codeunits, utf8_lpad, binary_repeat,
split_pattern, replace_substring_regex, binary_join_element_wise ...). Arguments that are usually
constants (counts, delimiters, fill strings, patterns) take the vectorised path when they are
constants; when they are columns the rows are grouped by the argument's distinct values and each
group runs the same vectorised kernel (`_grouped`), except where noted. Per-row (or per distinct
value) Python is used only where Arrow has no kernel at all, each noted in its docstring: md5,
chr, translate, initcap of strings with non-ASCII characters, format with a non-constant
format string or `*` widths, and a few functions with several non-constant arguments.

Errors carry PostgreSQL's SQLSTATE and wording; like PostgreSQL's strict functions they are
raised only for rows whose arguments are all non-NULL.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, Literal

STR = pa.string()
# PostgreSQL's largest allocation (MaxAllocSize) and varlena header.
_MAX_ALLOC = 0x3FFFFFFF
_VARHDRSZ = 4
_UTF8_MAX_LEN = 4


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _text(x) -> pa.Array:
    x = _arr(x)
    if pa.types.is_null(x.type):
        return pa.nulls(len(x), STR)
    if pa.types.is_large_string(x.type):
        return x.cast(STR)
    return x


def _const(expr: Call, i: int) -> tuple[bool, Any]:
    """(True, value) when argument i is a constant."""
    a = expr.args[i] if i < len(expr.args) else None
    if isinstance(a, Literal):
        return True, a.value
    return False, None


def _valid(*arrs: pa.Array) -> np.ndarray:
    ok = np.ones(len(arrs[0]), bool)
    for a in arrs:
        if a.null_count:
            ok &= pc.is_valid(a).to_numpy(zero_copy_only=False)
    return ok


def _ints(a: pa.Array) -> np.ndarray:
    a = _arr(a)
    if pa.types.is_null(a.type):
        return np.zeros(len(a), np.int64)
    return pc.fill_null(a, 0).to_numpy(zero_copy_only=False).astype(np.int64)


def _null_where(res: pa.Array, ok: np.ndarray) -> pa.Array:
    """`res` with NULL where `ok` is false (a strict function's NULL inputs)."""
    if ok.all():
        return res
    return pc.if_else(pa.array(ok), res, pa.scalar(None, res.type))


def _rowwise(fn: Callable, vals: list[pa.Array], out: pa.DataType) -> pa.Array:
    """Per-row Python (only where no vectorised form exists; see the callers): NULL in any
    argument gives NULL without calling `fn`."""
    cols = [_arr(v).to_pylist() for v in vals]
    return pa.array([None if any(x is None for x in row) else fn(*row) for row in zip(*cols)], out)


_MAX_GROUPS = 64


def _grouped(key: pa.Array, fn: Callable[[Any, np.ndarray], pa.Array], out: pa.DataType,
             fallback: Callable[[], pa.Array] | None = None) -> pa.Array:
    """Run `fn(value, rows)` once per distinct non-NULL value of `key` (rows: the row indices
    holding it; fn returns an array aligned with them) and put the results back in row order;
    rows whose key is NULL give NULL. For per-row arguments (a column of counts, delimiters,
    replacements) that usually take few distinct values: each group is one vectorised call.
    With more than `_MAX_GROUPS` distinct values `fallback()` (per-row Python) answers instead."""
    key = _arr(key)
    n = len(key)
    enc = pc.dictionary_encode(key)
    if fallback is not None and len(enc.dictionary) > _MAX_GROUPS:
        return fallback()
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    parts, perm = [], []
    nulls = order[sorted_codes < 0]
    for j, value in enumerate(enc.dictionary.to_pylist()):
        lo, hi = np.searchsorted(sorted_codes, [j, j + 1])
        if lo == hi:
            continue
        rows = order[lo:hi]
        parts.append(_arr(fn(value, rows)).cast(out))
        perm.append(rows)
    if len(nulls):
        parts.append(pa.nulls(len(nulls), out))
        perm.append(nulls)
    if not parts:
        return pa.nulls(n, out)
    combined = pa.concat_arrays(parts)
    where = np.empty(n, np.int64)
    where[np.concatenate(perm)] = np.arange(n)
    return combined.take(pa.array(where))


def _take(a: pa.Array, rows: np.ndarray) -> pa.Array:
    return _arr(a).take(pa.array(rows))


def _too_large() -> SqlError:
    return SqlError("54000", "requested length too large")


# ---- positions and slices ---------------------------------------------------------------------

def _strpos(vals: list[pa.Array], expr: Call) -> pa.Array:
    s, sub = _text(vals[0]), _text(vals[1])
    const, needle = _const(expr, 1)
    if not const:
        return _grouped(sub, lambda v, rows: _strpos_const(_take(s, rows), v), pa.int32(),
                        lambda: _rowwise(lambda x, y: x.find(y) + 1, [s, sub], pa.int32()))
    if needle is None:
        return pa.nulls(len(s), pa.int32())
    return _strpos_const(s, needle)


def _strpos_const(s: pa.Array, needle: str) -> pa.Array:
    if needle == "":
        return _null_where(pa.array(np.ones(len(s), np.int32)), _valid(s))
    return pc.add(_char_index(s, pc.find_substring(s, needle)), 1).cast(pa.int32())


def _char_index(s: pa.Array, byte_index: pa.Array) -> pa.Array:
    """Byte offsets inside each string (-1: none) as character offsets: the same for ASCII
    data, else the count of UTF-8 lead bytes before the offset (one cumulative sum)."""
    if len(s) == 0 or pc.all(pc.string_is_ascii(s)).as_py() is not False:
        return byte_index
    data = np.frombuffer(s.buffers()[2], np.uint8)
    offsets = np.frombuffer(s.buffers()[1], np.int32)[s.offset:s.offset + len(s) + 1].astype(np.int64)
    leads = np.zeros(len(data) + 1, np.int64)
    np.cumsum((data & 0xC0) != 0x80, out=leads[1:])
    b = pc.fill_null(byte_index, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    start = offsets[:-1]
    chars = np.where(b >= 0, leads[start + np.maximum(b, 0)] - leads[start], -1)
    return _null_where(pa.array(chars, pa.int64()), _valid(byte_index))


def _left_const(s: pa.Array, n: int) -> pa.Array:
    if n == 0:
        return pc.utf8_slice_codeunits(s, 0, 0)
    return pc.utf8_slice_codeunits(s, 0, n)  # negative n: all but the last |n|


def _right_const(s: pa.Array, n: int) -> pa.Array:
    if n == 0:
        return pc.utf8_slice_codeunits(s, 0, 0)
    return pc.utf8_slice_codeunits(s, -n if n > 0 else -n)  # negative n: all but the first |n|


def _left_one(x: str, n: int) -> str:
    return x[:n]


def _right_one(x: str, n: int) -> str:
    return "" if n == 0 else x[-n:]


def _by_count(fn: Callable[[pa.Array, int], pa.Array], one: Callable[[str, int], str]) -> Callable:
    """A kernel of (text, integer) from a kernel of a text array and one integer (and the same
    for one string, for counts with many distinct values)."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        s = _text(vals[0])
        const, n = _const(expr, 1)
        if const:
            return pa.nulls(len(s), STR) if n is None else fn(s, int(n))
        return _grouped(vals[1], lambda v, rows: fn(_take(s, rows), int(v)), STR,
                        lambda: _rowwise(one, [s, vals[1]], STR))
    return run


def _repeat(vals: list[pa.Array], expr: Call) -> pa.Array:
    s = _text(vals[0])
    n = _arr(vals[1])
    ok = _valid(s, n)
    count = np.maximum(_ints(n), 0)
    nbytes = pc.fill_null(pc.binary_length(s), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if ((nbytes * count > _MAX_ALLOC - _VARHDRSZ) & ok).any():
        raise _too_large()
    count = np.where(ok, count, 0)
    return _null_where(pc.binary_repeat(s, pa.array(count)), ok)


def _reverse(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pc.utf8_reverse(_text(vals[0]))


# ---- padding ----------------------------------------------------------------------------------

def _pad(left: bool) -> Callable:
    """lpad/rpad: a longer string is cut to the length (keeping its start), a shorter one is
    filled with the fill string repeated (and cut). The fill strings needed are built once per
    distinct shortfall and spread with one `take`."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        s = _text(vals[0])
        const_n, n = _const(expr, 1)
        const_f, fill = _const(expr, 2) if len(vals) > 2 else (True, " ")
        if const_n and const_f:
            if n is None or fill is None:
                return pa.nulls(len(s), STR)
            return _pad_const(s, int(n), fill, left)
        if const_f:
            if fill is None:
                return pa.nulls(len(s), STR)
            return _grouped(vals[1], lambda v, rows: _pad_const(_take(s, rows), int(v), fill, left), STR,
                            lambda: _rowwise(lambda x, k: _pad_one(x, k, fill, left), [s, vals[1]], STR))
        fills = _text(vals[2])
        return _rowwise(lambda x, k, f: _pad_one(x, k, f, left), [s, vals[1], fills], STR)
    return run


def _check_pad_length(n: int) -> None:
    if _UTF8_MAX_LEN * n + _VARHDRSZ > _MAX_ALLOC:
        raise _too_large()


def _pad_const(s: pa.Array, n: int, fill: str, left: bool) -> pa.Array:
    n = max(n, 0)
    cut = pc.utf8_slice_codeunits(s, 0, n)
    if fill == "":
        return cut
    if s.null_count < len(s):
        _check_pad_length(n)
    if len(fill) == 1:
        return (pc.utf8_lpad if left else pc.utf8_rpad)(cut, width=n, padding=fill)
    need = pc.subtract(pa.scalar(n, pa.int64()), pc.utf8_length(cut).cast(pa.int64()))
    uniq = pc.unique(need).drop_null()
    reps = (n // len(fill)) + 1
    pads = pa.array([(fill * min(reps, k // len(fill) + 1))[:k] for k in uniq.to_pylist()], STR)
    pad = pads.take(pc.index_in(need, uniq))
    return pc.binary_join_element_wise(pad, cut, "") if left else pc.binary_join_element_wise(cut, pad, "")


def _pad_one(s: str, n: int, fill: str, left: bool) -> str:
    n = max(n, 0)
    s = s[:n]
    if fill == "":
        return s
    _check_pad_length(n)
    k = n - len(s)
    pad = (fill * (k // len(fill) + 1))[:k]
    return pad + s if left else s + pad


# ---- split_part, concat, format ---------------------------------------------------------------

def _split_part(vals: list[pa.Array], expr: Call) -> pa.Array:
    s, n = _text(vals[0]), _arr(vals[2])
    const_d, delim = _const(expr, 1)
    if not const_d:
        d = _text(vals[1])
        return _grouped(d, lambda v, rows: _split_part_const(_take(s, rows), v, _take(n, rows)), STR,
                        lambda: _rowwise(_split_part_one, [s, d, n], STR))
    if delim is None:
        return pa.nulls(len(s), STR)
    return _split_part_const(s, delim, n)


def _split_part_one(s: str, delim: str, n: int) -> str:
    if n == 0:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "field position must not be zero")
    parts = s.split(delim) if delim else [s]
    return parts[n - 1 if n > 0 else n] if abs(n) <= len(parts) else ""


def _split_part_const(s: pa.Array, delim: str, n: pa.Array) -> pa.Array:
    ok = _valid(s, n)
    k = _ints(n)
    if ((k == 0) & ok).any():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "field position must not be zero")
    if delim == "":
        # The whole string is the only field.
        res = pc.if_else(pa.array(np.abs(k) == 1), s, pa.scalar("", STR))
        return _null_where(res, ok)
    parts = pc.split_pattern(pc.fill_null(s, ""), delim)
    offsets = parts.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.diff(offsets)
    idx = np.where(k > 0, k - 1, counts + k)
    inside = (idx >= 0) & (idx < counts)
    values = parts.values
    if len(values) == 0:
        return _null_where(pa.array([""] * len(s), STR), ok)
    picked = values.take(pa.array(np.where(inside, offsets[:-1] + idx, 0)))
    return _null_where(pc.if_else(pa.array(inside), picked, pa.scalar("", STR)), ok)


def _concat_any(vals: list[pa.Array], expr: Call) -> pa.Array:
    """concat(...): NULL arguments are left out."""
    return pc.binary_join_element_wise(*[_text(v) for v in vals], "", null_handling="replace",
                                       null_replacement="")


def _concat_ws(vals: list[pa.Array], expr: Call) -> pa.Array:
    """concat_ws(sep, ...): NULL arguments are left out (with their separator); a NULL
    separator gives NULL."""
    sep = _text(vals[0])
    parts = [_text(v) for v in vals[1:]]
    # Arrow drops a row whose values are all NULL ("skip"): give it one empty value instead.
    all_null = np.ones(len(sep), bool)
    for p in parts:
        all_null &= ~_valid(p)
    if all_null.any():
        parts[0] = pc.if_else(pa.array(all_null), pa.scalar("", STR), parts[0])
    return pc.binary_join_element_wise(*parts, sep, null_handling="skip")


def _bool_out(vals: list[pa.Array], expr: Call) -> pa.Array:
    """boolean as its output function prints it (what concat and format show)."""
    return pc.if_else(_arr(vals[0]), pa.scalar("t"), pa.scalar("f"))


class _Spec:
    """One %-specifier of a format() string: the argument (0-based), the width (a number, or
    the argument holding it), left alignment, and the conversion (s, I, L)."""

    __slots__ = ("arg", "width", "width_arg", "minus", "conv")

    def __init__(self, arg: int, width: int | None, width_arg: int | None, minus: bool, conv: str) -> None:
        self.arg, self.width, self.width_arg, self.minus, self.conv = arg, width, width_arg, minus, conv


def _format_error(msg: str, hint: bool = True) -> SqlError:
    return SqlError(SqlState.INVALID_PARAMETER_VALUE, msg,
                    hint='For a single "%" use "%%".' if hint else None)


def _parse_format(fmt: str, nargs: int) -> tuple[list, SqlError | None]:
    """PostgreSQL's text_format parse of `fmt` for `nargs` value arguments: the pieces (text,
    or `_Spec`) up to the first error, and that error (raised after the pieces before it are
    done, as PostgreSQL meets it)."""
    pieces: list = []
    lit: list[str] = []
    i, end = 0, len(fmt)
    arg = -1  # the last argument used

    def digits(j: int) -> tuple[int | None, int]:
        k = j
        while k < end and fmt[k].isdigit() and fmt[k] in "0123456789":
            k += 1
        if k == j:
            return None, j
        v = int(fmt[j:k])
        if v > 2 ** 31 - 1:
            raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "number is out of range")
        return v, k

    def advance(j: int) -> int:
        j += 1
        if j >= end:
            raise _format_error("unterminated format() type specifier")
        return j

    try:
        while i < end:
            c = fmt[i]
            if c != "%":
                lit.append(c)
                i += 1
                continue
            i = advance(i)
            if fmt[i] == "%":
                lit.append("%")
                i += 1
                continue
            argpos = widthpos = None
            width = None
            minus = False
            n, j = digits(i)
            if n is not None and fmt[j] != "$":
                width, i = n, j
            else:
                if n is not None:
                    if n == 0:
                        raise _format_error("format specifies argument 0, but arguments are numbered from 1",
                                            hint=False)
                    argpos = n
                    i = advance(j)
                while fmt[i] == "-":
                    minus = True
                    i = advance(i)
                if fmt[i] == "*":
                    i = advance(i)
                    n, j = digits(i)
                    if n is not None:
                        if fmt[j] != "$":
                            raise _format_error('width argument position must be ended by "$"', hint=False)
                        if n == 0:
                            raise _format_error("format specifies argument 0, but arguments are numbered from 1",
                                                hint=False)
                        widthpos = n
                        i = advance(j)
                    else:
                        widthpos = 0
                else:
                    n, j = digits(i)
                    if n is not None:
                        width, i = n, j
            conv = fmt[i]
            if conv not in "sIL":
                raise _format_error(f'unrecognized format() type specifier "{conv}"')
            width_arg = None
            if widthpos is not None:
                arg = widthpos - 1 if widthpos > 0 else arg + 1
                if arg >= nargs:
                    raise _format_error("too few arguments for format()", hint=False)
                width_arg = arg
            arg = argpos - 1 if argpos is not None else arg + 1
            if arg >= nargs:
                raise _format_error("too few arguments for format()", hint=False)
            if lit:
                pieces.append("".join(lit))
                lit = []
            pieces.append(_Spec(arg, width, width_arg, minus, conv))
            i += 1
    except SqlError as e:
        if lit:
            pieces.append("".join(lit))
        return pieces, e
    if lit:
        pieces.append("".join(lit))
    return pieces, None


def _format(vals: list[pa.Array], expr: Call) -> pa.Array:
    """format(fmt, ...) with %s %I %L %%, argument positions (%2$s), widths and `-`. A constant
    format string is parsed once and assembled column-wise; a non-constant one, or widths taken
    from arguments (`%*s`), are done per row in Python."""
    fmt = _text(vals[0])
    args = [_text(v) for v in vals[1:]]
    nrows = len(fmt)
    const, f = _const(expr, 0)
    if const:
        if f is None or nrows == 0:
            return pa.nulls(nrows, STR)
        pieces, err = _parse_format(f, len(args))
        if all(isinstance(p, str) or p.width_arg is None for p in pieces):
            cols = []
            for p in pieces:
                if isinstance(p, str):
                    cols.append(pa.scalar(p, STR))
                    continue
                a = args[p.arg]
                if p.conv == "s":
                    col = pc.fill_null(a, "")
                elif p.conv == "L":
                    col = _quote_nullable_arr(a)
                else:
                    if a.null_count:
                        raise _null_identifier()
                    col = _quote_ident_arr(a)
                if p.width:
                    col = (pc.utf8_rpad if p.minus else pc.utf8_lpad)(col, width=p.width, padding=" ")
                cols.append(col)
            if err is not None:
                raise err
            if not cols:
                return pa.array([""] * nrows, STR)
            arrays = [c if isinstance(c, pa.Array) else pa.array([c.as_py()] * nrows, STR) for c in cols]
            return pc.binary_join_element_wise(*arrays, "")
    fcol = fmt.to_pylist()
    acols = [a.to_pylist() for a in args]
    cache: dict[str, tuple] = {}
    out = []
    for r, f in enumerate(fcol):
        if f is None:
            out.append(None)
            continue
        if f not in cache:
            cache[f] = _parse_format(f, len(args))
        pieces, err = cache[f]
        out.append(_format_row(pieces, err, [c[r] for c in acols]))
    return pa.array(out, STR)


def _format_row(pieces: list, err: SqlError | None, row: list) -> str:
    buf = []
    for p in pieces:
        if isinstance(p, str):
            buf.append(p)
            continue
        width, minus = p.width or 0, p.minus
        if p.width_arg is not None:
            w = row[p.width_arg]
            width = 0 if w is None else _int4_text(w)
            if width < 0:
                if width == -2 ** 31:
                    raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "number is out of range")
                minus, width = True, -width
        v = row[p.arg]
        if v is None:
            if p.conv == "I":
                raise _null_identifier()
            s = "NULL" if p.conv == "L" else ""
        else:
            s = _quote_ident_one(v) if p.conv == "I" else _quote_literal_one(v) if p.conv == "L" else v
        buf.append(s.ljust(width) if minus else s.rjust(width))
    if err is not None:
        raise err
    return "".join(buf)


def _int4_text(s: str) -> int:
    t = s.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", t):
        raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'invalid input syntax for type integer: "{s}"')
    v = int(t)
    if not -2 ** 31 <= v < 2 ** 31:
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, f'value "{s}" is out of range for type integer')
    return v


def _null_identifier() -> SqlError:
    return SqlError("22004", "null values cannot be formatted as an SQL identifier")


# ---- quoting ----------------------------------------------------------------------------------

# PostgreSQL 15's keywords other than the unreserved ones (pg_get_keywords() where catcode <> 'U'):
# quote_ident quotes them.
_KEYWORDS = frozenset("""
    all analyse analyze and any array as asc asymmetric authorization between bigint binary bit
    boolean both case cast char character check coalesce collate collation column concurrently
    constraint create cross current_catalog current_date current_role current_schema current_time
    current_timestamp current_user dec decimal default deferrable desc distinct do else end except
    exists extract false fetch float for foreign freeze from full grant greatest group grouping
    having ilike in initially inner inout int integer intersect interval into is isnull join
    lateral leading least left like limit localtime localtimestamp national natural nchar none
    normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay
    placing position precision primary real references returning right row select session_user
    setof similar smallint some substring symmetric table tablesample then time timestamp to
    trailing treat trim true union unique user using values varchar variadic verbose when where
    window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse
    xmlpi xmlroot xmlserialize xmltable
    """.split())
_KEYWORD_ARRAY = pa.array(sorted(_KEYWORDS), STR)
_PLAIN_IDENT = re.compile(r"[a-z_][a-z0-9_]*")


def _quote_ident_arr(s: pa.Array) -> pa.Array:
    plain = pc.and_(pc.match_substring_regex(s, r"^[a-z_][a-z0-9_]*$"),
                    pc.invert(pc.is_in(s, _KEYWORD_ARRAY)))
    quoted = pc.binary_join_element_wise(pa.scalar('"'), pc.replace_substring(s, '"', '""'), pa.scalar('"'), "")
    return pc.if_else(plain, s, quoted)


def _quote_ident_one(s: str) -> str:
    if _PLAIN_IDENT.fullmatch(s) and s not in _KEYWORDS:
        return s
    return '"' + s.replace('"', '""') + '"'


def _quote_literal_arr(s: pa.Array) -> pa.Array:
    """'...' with quotes doubled; a value with a backslash becomes E'...' with it doubled."""
    body = pc.replace_substring(s, "'", "''")
    has_bs = pc.match_substring(s, "\\")
    body = pc.replace_substring(body, "\\", "\\\\")
    prefix = pc.if_else(has_bs, pa.scalar("E'"), pa.scalar("'"))
    return pc.binary_join_element_wise(prefix, body, pa.scalar("'"), "")


def _quote_literal_one(s: str) -> str:
    body = s.replace("'", "''")
    if "\\" in s:
        return "E'" + body.replace("\\", "\\\\") + "'"
    return "'" + body + "'"


def _quote_nullable_arr(s: pa.Array) -> pa.Array:
    return pc.fill_null(_quote_literal_arr(s), "NULL")


# ---- characters and bytes ---------------------------------------------------------------------

def _md5(vals: list[pa.Array], expr: Call) -> pa.Array:
    """md5 of text (its UTF-8 bytes) or bytea, in hex: hashlib once per distinct value (Arrow
    has no digest kernel)."""
    a = _arr(vals[0])
    if pa.types.is_null(a.type):
        return pa.nulls(len(a), STR)
    uniq = pc.unique(a)
    digests = pa.array([None if v is None else
                        hashlib.md5(v.encode() if isinstance(v, str) else v).hexdigest()
                        for v in uniq.to_pylist()], STR)
    return digests.take(pc.index_in(a, uniq))


def _ascii(vals: list[pa.Array], expr: Call) -> pa.Array:
    """The code point of the first character (0 for an empty string): the first characters
    are few, so each distinct one is looked up once."""
    first = pc.utf8_slice_codeunits(_text(vals[0]), 0, 1)
    uniq = pc.unique(first)
    codes = pa.array([None if c is None else (ord(c) if c else 0) for c in uniq.to_pylist()], pa.int32())
    return codes.take(pc.index_in(first, uniq))


def _chr(vals: list[pa.Array], expr: Call) -> pa.Array:
    """The character of a code point (per distinct value: Arrow cannot build characters)."""
    a = _arr(vals[0])
    ok = _valid(a)
    v = _ints(a)
    bad = ok & ((v <= 0) | (v > 0x10FFFF) | ((v >= 0xD800) & (v <= 0xDFFF)))
    if bad.any():
        x = int(v[np.argmax(bad)])
        if x < 0:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "character number must be positive")
        if x == 0:
            raise SqlError("54000", "null character not permitted")
        if x > 0x10FFFF:
            raise SqlError("54000", f"requested character too large for encoding: {x}")
        raise SqlError("54000", f"requested character not valid for encoding: {x}")
    uniq = pc.unique(a)
    chars = pa.array([None if c is None else chr(c) for c in uniq.to_pylist()], STR)
    return chars.take(pc.index_in(a, uniq))


def _translate_table(frm: str, to: str) -> dict:
    table: dict = {}
    for i, c in enumerate(frm):
        if ord(c) not in table:  # the first occurrence of a character decides
            table[ord(c)] = to[i] if i < len(to) else None
    return table


def _translate(vals: list[pa.Array], expr: Call) -> pa.Array:
    """translate(s, from, to): one replace_substring per character when no replacement is
    itself a character to replace (the usual case); else str.translate once per distinct
    string (Arrow has no character-mapping kernel); per row when from/to are not constants."""
    s = _text(vals[0])
    cf, frm = _const(expr, 1)
    ct, to = _const(expr, 2)
    if cf and ct:
        if frm is None or to is None:
            return pa.nulls(len(s), STR)
        table = _translate_table(frm, to)
        targets = {v for v in table.values() if v}
        if len(table) <= 16 and not any(ord(v) in table for v in targets):
            # No replacement is itself replaced: one Arrow pass per character.
            for code, v in table.items():
                s = pc.replace_substring(s, chr(code), v or "")
            return s
        uniq = pc.unique(s)
        out = pa.array([None if x is None else x.translate(table) for x in uniq.to_pylist()], STR)
        return out.take(pc.index_in(s, uniq))
    return _rowwise(lambda x, f, t: x.translate(_translate_table(f, t)), [s, vals[1], vals[2]], STR)


def _octet_length(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pc.binary_length(_text(vals[0])).cast(pa.int32())


def _bit_length(vals: list[pa.Array], expr: Call) -> pa.Array:
    a = _arr(vals[0])
    a = _text(a) if not pa.types.is_binary(a.type) else a
    return pc.multiply(pc.binary_length(a).cast(pa.int32()), 8)


def _starts_with(vals: list[pa.Array], expr: Call) -> pa.Array:
    s = _text(vals[0])
    const, prefix = _const(expr, 1)
    if const:
        if prefix is None:
            return pa.nulls(len(s), pa.bool_())
        return pc.starts_with(s, prefix)
    prefix = _text(vals[1])
    return _grouped(prefix, lambda v, rows: pc.starts_with(_take(s, rows), v), pa.bool_(),
                    lambda: _rowwise(str.startswith, [s, prefix], pa.bool_()))


_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
_SHIFTS = np.arange(60, -1, -4, dtype=np.uint64)


def _to_hex(vals: list[pa.Array], expr: Call) -> pa.Array:
    """Hex digits of an integer, a negative one as its two's complement (32 or 64 bits):
    the digits of every row at once with NumPy, leading zeros dropped."""
    a = _arr(vals[0])
    v = _ints(a)
    u = (v & 0xFFFFFFFF).astype(np.uint64) if pa.types.is_int32(a.type) or pa.types.is_int16(a.type) \
        else v.view(np.uint64)
    nib = ((u[:, None] >> _SHIFTS[None, :]) & np.uint64(0xF)).astype(np.uint8)
    nonzero = nib != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), 15)
    keep = np.arange(16)[None, :] >= first[:, None]
    data = _HEX[nib][keep]
    offsets = np.zeros(len(v) + 1, np.int32)
    np.cumsum(16 - first, out=offsets[1:])
    res = pa.Array.from_buffers(STR, len(v), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())])
    return _null_where(res, _valid(a))


def _quote_ident(vals: list[pa.Array], expr: Call) -> pa.Array:
    return _quote_ident_arr(_text(vals[0]))


def _quote_literal(vals: list[pa.Array], expr: Call) -> pa.Array:
    return _quote_literal_arr(_text(vals[0]))


def _quote_nullable(vals: list[pa.Array], expr: Call) -> pa.Array:
    return _quote_nullable_arr(_text(vals[0]))


# ---- initcap ----------------------------------------------------------------------------------

def _initcap_one(s: str) -> str:
    out = []
    word = False
    for c in s:
        m = c.lower() if word else c.upper()
        out.append(m if len(m) == 1 else c)  # one character for one, as towupper/towlower
        word = c.isalnum()
    return "".join(out)


def _initcap(vals: list[pa.Array], expr: Call) -> pa.Array:
    """The first letter of each word upper case, the rest lower case; a word is a run of
    letters and digits. ASCII strings are done on the bytes of the whole batch with NumPy;
    strings with other characters go through Python once per distinct value."""
    s = _text(vals[0])
    out = _initcap_ascii(s)
    other = pc.fill_null(pc.invert(pc.string_is_ascii(s)), False)
    if not pc.any(other).as_py():
        return out
    odd = s.filter(other)
    uniq = pc.unique(odd)
    fixed = pa.array([_initcap_one(x) for x in uniq.to_pylist()], STR).take(pc.index_in(odd, uniq))
    return pc.replace_with_mask(out, other, fixed)


def _initcap_ascii(s: pa.Array) -> pa.Array:
    if len(s) == 0 or s.buffers()[2] is None:
        return s
    offsets = np.frombuffer(s.buffers()[1], np.int32)[s.offset:s.offset + len(s) + 1]
    base, stop = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(s.buffers()[2], np.uint8)[base:stop].copy()
    lower = (data >= 0x61) & (data <= 0x7A)
    upper = (data >= 0x41) & (data <= 0x5A)
    alnum = lower | upper | ((data >= 0x30) & (data <= 0x39))
    after_alnum = np.zeros(len(data), bool)
    after_alnum[1:] = alnum[:-1]
    starts = offsets[:-1].astype(np.int64) - base
    after_alnum[starts[starts < len(data)]] = False  # each string starts a new word
    data[lower & ~after_alnum] -= 32
    data[upper & after_alnum] += 32
    new_offsets = (offsets.astype(np.int64) - base).astype(np.int32)
    res = pa.Array.from_buffers(STR, len(s), [None, pa.py_buffer(new_offsets.tobytes()), pa.py_buffer(data.tobytes())])
    return _null_where(res, _valid(s))


# ---- overlay ----------------------------------------------------------------------------------

def _overlay_check(sp: int, sl: int) -> int:
    end = sp + sl
    if not -2 ** 31 <= end < 2 ** 31:
        raise SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
    if sp - 1 < 0:
        raise SqlError("22011", "negative substring length not allowed")
    return end


def _overlay_const(s: pa.Array, r: pa.Array, sp: int, sl: int) -> pa.Array:
    if s.null_count < len(s):
        end = _overlay_check(sp, sl)
    else:
        end = sp + sl
    pre = pc.utf8_slice_codeunits(s, 0, max(sp - 1, 0))
    post = pc.utf8_slice_codeunits(s, max(end - 1, 0))
    return pc.binary_join_element_wise(pre, r, post, "")


def _overlay(vals: list[pa.Array], expr: Call) -> pa.Array:
    """overlay(s placing r from sp [for sl]) = substr(s, 1, sp - 1) || r || substr(s, sp + sl);
    sl defaults to r's length."""
    s, r = _text(vals[0]), _text(vals[1])
    c_sp, sp = _const(expr, 2)
    if len(vals) > 3:
        c_sl, sl = _const(expr, 3)
    else:
        c_sl, sl = _const(expr, 1)
        sl = None if not c_sl or sl is None else len(sl)
    if c_sp and c_sl:
        if sp is None or sl is None:
            return pa.nulls(len(s), STR)
        return _null_where(_overlay_const(s, r, int(sp), int(sl)), _valid(s, r))

    def one(x: str, y: str, start: int, count: int | None = None) -> str:
        end = _overlay_check(start, len(y) if count is None else count)
        return x[:start - 1] + y + x[max(end - 1, 0):]
    return _rowwise(one, [s, r, *vals[2:]], STR)


# ---- regular expressions ----------------------------------------------------------------------

def _groups(regex: str) -> int:
    """How many capturing groups a (checked) pattern has: `(` outside brackets, not escaped,
    not `(?:` (`planner.patterns` refuses other `(?` forms)."""
    count, i, in_bracket = 0, 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_bracket:
            if regex.startswith("[:", i) or regex.startswith("[.", i) or regex.startswith("[=", i):
                close = regex.find(regex[i + 1] + "]", i + 2)
                i = close + 2 if close >= 0 else len(regex)
                continue
            if c == "]":
                in_bracket = False
        elif c == "[":
            in_bracket = True
            j = i + 1
            if regex.startswith("^", j):
                j += 1
            if regex.startswith("]", j):
                j += 1
            i = j
            continue
        elif c == "(" and not regex.startswith("(?", i):
            count += 1
        i += 1
    return count


def _rewrite(repl: str, groups: int) -> str:
    """PostgreSQL's replacement string (\\1..\\9, \\& for the whole match, \\\\ for a
    backslash; any other backslash is literal) as an RE2 rewrite string."""
    out, i = [], 0
    while i < len(repl):
        c = repl[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        d = repl[i + 1] if i + 1 < len(repl) else ""
        if "1" <= d <= "9":
            if int(d) <= groups:
                out.append("\\" + d)
            i += 2
        elif d == "&":
            out.append("\\0")
            i += 2
        elif d == "\\":
            out.append("\\\\")
            i += 2
        else:
            out.append("\\\\")
            i += 1
    return "".join(out)


def _check_start(start: np.ndarray, ok: np.ndarray) -> None:
    bad = ok & (start <= 0)
    if bad.any():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                       f'invalid value for parameter "start": {int(start[np.argmax(bad)])}')


def _from_start(vals: list[pa.Array], expr: Call, fn: Callable[[pa.Array, int], pa.Array],
                out: pa.DataType) -> pa.Array:
    """Run `fn(s, start)` with the start position (1-based, checked), per distinct start when
    it is a column."""
    s = _text(vals[0])
    start = _arr(vals[2])
    _check_start(_ints(start), _valid(s, start))
    const, v = _const(expr, 2)
    if const:
        return pa.nulls(len(s), out) if v is None else fn(s, int(v))
    return _grouped(start, lambda v, rows: fn(_take(s, rows), int(v)), out)


def _regexp_replace(vals: list[pa.Array], expr: Call) -> pa.Array:
    """regexp_replace with a constant pattern (already RE2, `planner.patterns`): Arrow's
    replace_substring_regex, from the start position on, the first match or every one."""
    regex = expr.args[1].value
    n = expr.args[4].value
    s, repl = _text(vals[0]), _text(vals[2])
    if n < 0 and _valid(s, _arr(vals[3])).any():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "n": {n}')
    groups = _groups(regex)

    def replace(x: pa.Array, rewrite: str, start: int) -> pa.Array:
        kw = {"max_replacements": 1} if n == 1 else {}
        if start <= 1:
            return pc.replace_substring_regex(x, regex, rewrite, **kw)
        pre = pc.utf8_slice_codeunits(x, 0, start - 1)
        rest = pc.utf8_slice_codeunits(x, start - 1)
        if len(x) and start - 1 > 0:
            # PostgreSQL searches nothing past the end (a pattern matching an empty string
            # still matches at the very end)
            short = pc.less(pc.utf8_length(x), start - 1)
            done = pc.binary_join_element_wise(pre, pc.replace_substring_regex(rest, regex, rewrite, **kw), "")
            return pc.if_else(short, x, done)
        return pc.binary_join_element_wise(pre, pc.replace_substring_regex(rest, regex, rewrite, **kw), "")

    const_r, r = _const(expr, 2)

    def with_start(x: pa.Array, rows: np.ndarray | None, start: int) -> pa.Array:
        if const_r:
            return replace(x, _rewrite(r, groups), start)
        rr = repl if rows is None else _take(repl, rows)
        return _grouped(rr, lambda v, sub: replace(_take(x, sub), _rewrite(v, groups), start), STR)

    if const_r and r is None:
        return pa.nulls(len(s), STR)
    start = _arr(vals[3])
    _check_start(_ints(start), _valid(s, start, repl))
    const_s, st = _const(expr, 3)
    if const_s:
        if st is None:
            return pa.nulls(len(s), STR)
        return with_start(s, None, int(st))
    return _grouped(start, lambda v, rows: with_start(_take(s, rows), rows, int(v)), STR)


def _regexp_count(vals: list[pa.Array], expr: Call) -> pa.Array:
    """regexp_count: Arrow's count_substring_regex (the planner refuses patterns that can match
    an empty string, which Arrow counts differently)."""
    regex = expr.args[1].value
    return _from_start(vals, expr, lambda x, st: pc.count_substring_regex(
        pc.utf8_slice_codeunits(x, st - 1), regex).cast(pa.int32()), pa.int32())


def _first_match(x: pa.Array, regex: str) -> pa.Array:
    """A struct of the text before the first match (`pre`) and the match (`m`); NULL where
    none. The lazy prefix finds the leftmost start, the match is then RE2's at that start."""
    return pc.extract_regex(x, "^(?P<pre>(?s:.*?))(?P<m>" + regex + ")")


def _regexp_substr(vals: list[pa.Array], expr: Call) -> pa.Array:
    regex = expr.args[1].value
    _check_n(expr)

    def run(x: pa.Array, st: int) -> pa.Array:
        found = _first_match(pc.utf8_slice_codeunits(x, st - 1), regex)
        return _null_where(pc.struct_field(found, "m"), _valid(found))
    return _from_start(vals, expr, run, STR)


def _regexp_instr(vals: list[pa.Array], expr: Call) -> pa.Array:
    regex = expr.args[1].value
    _check_n(expr)
    end = expr.args[4].value
    if end not in (0, 1):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "endoption": {end}')

    def run(x: pa.Array, st: int) -> pa.Array:
        found = _first_match(pc.utf8_slice_codeunits(x, st - 1), regex)
        pos = pc.add(pc.utf8_length(pc.struct_field(found, "pre")), st)
        if end:
            pos = pc.add(pos, pc.utf8_length(pc.struct_field(found, "m")))
        pos = pc.if_else(pc.is_valid(found), pos, 0).cast(pa.int32())
        return _null_where(pos, _valid(x))
    return _from_start(vals, expr, run, pa.int32())


def _regexp_split_to_array(vals: list[pa.Array], expr: Call) -> pa.Array:
    """Arrow's split_pattern_regex (the planner refuses patterns that can match an empty
    string), each list written as array text once per distinct input."""
    from dataflow import arrays
    from dataflow.types import TEXT
    s = _text(vals[0])
    uniq = pc.unique(s)
    pieces = pc.split_pattern_regex(uniq, expr.args[1].value).to_pylist()
    texts = pa.array([None if p is None else arrays.write(p, TEXT) for p in pieces], STR)
    return texts.take(pc.index_in(s, uniq))


# Python's str.isspace characters, as `dataflow.arrays` decides which elements to quote.
_QUOTE_NEEDED = ('[{},"\\\\\t-\\r\\x1c-\\x1f \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}'
                 '\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]')


def array_element_texts(x: pa.Array) -> pa.Array:
    """Text values as elements of a text[]'s canonical text (`dataflow.arrays.write`), vectorised:
    quoted (with `"` and `\\` escaped) where empty, NULL-like or holding a special character."""
    x = _text(x)
    needs = pc.or_(pc.or_(pc.equal(pc.utf8_length(x), 0), pc.equal(pc.utf8_upper(x), "NULL")),
                   pc.match_substring_regex(x, _QUOTE_NEEDED))
    escaped = pc.replace_substring_regex(x, '(["\\\\])', "\\\\\\1")
    quoted = pc.binary_join_element_wise('"', escaped, '"', "")
    return pc.fill_null(pc.if_else(needs, quoted, x), "NULL")


def match_groups(x: pa.Array, regex: str, groups: int) -> tuple[pa.Array, pa.Array, pa.Array]:
    """The first match of `regex` (named groups g1..gn, see planner.functions.strings
    capture_pattern) in each string: (the text[] of its groups, or of the whole match when there
    are none; NULL without a match), the match's length in characters, and the text after it.
    The lazy prefix finds the leftmost start; the trailing `.*` always matches, so the match is
    RE2's own at that start."""
    found = pc.extract_regex(x, "^(?s:.*?)(?P<m>" + regex + ")(?P<post>(?s:.*))$")
    names = [f"g{k}" for k in range(1, groups + 1)] or ["m"]
    parts = [array_element_texts(pc.struct_field(found, n)) for n in names]
    joined = pc.binary_join_element_wise(*parts, ",") if len(parts) > 1 else parts[0]
    texts = pc.if_else(pc.is_valid(found), pc.binary_join_element_wise("{", joined, "}", ""),
                       pa.scalar(None, STR))
    return texts, pc.utf8_length(pc.struct_field(found, "m")), pc.struct_field(found, "post")


def _regexp_match(vals: list[pa.Array], expr: Call) -> pa.Array:
    """regexp_match(s, pattern, groups): Arrow's extract_regex over the batch."""
    return match_groups(_text(vals[0]), expr.args[1].value, expr.args[2].value)[0]


def regexp_matches(x: pa.Array, regex: str, groups: int, glob: bool) -> tuple[np.ndarray, pa.Array]:
    """regexp_matches as a set function: (result rows per string, their text[] values). Without
    `glob` the first match only; with it every match, each search starting where the previous
    match ended (one character later after an empty match), as PostgreSQL does. One vectorised
    pass over the strings still matching per match found; a pattern anchored by `^` matches
    at most once (every later search starts inside the string, where PostgreSQL's `^` does not
    match)."""
    from planner.functions.strings import _has_caret
    x = _text(x)
    active = np.flatnonzero(_valid(x))
    rest = x.take(pa.array(active))
    once = not glob or _has_caret(regex.split(")", 1)[1])
    rows, values, total = [], [], 0
    while len(active):
        texts, mlen, post = match_groups(rest, regex, groups)
        hit = pc.is_valid(texts).to_numpy(zero_copy_only=False)
        rows.append(active[hit])
        values.append(texts.filter(pa.array(hit)))
        total += int(hit.sum())
        if total > 50_000_000:
            raise SqlError("54000", "regexp_matches would return too many rows")
        if once:
            break
        empty = pc.fill_null(pc.equal(mlen, 0), False).to_numpy(zero_copy_only=False)
        # After an empty match the next search starts one character later; past the end of
        # the string there is no next search.
        if empty.any():
            shifted = pc.struct_field(pc.extract_regex(post, "^(?s:.)(?P<post>(?s:.*))$"), "post")
            post = pc.if_else(pa.array(empty), shifted, post)
        keep = hit & pc.is_valid(post).to_numpy(zero_copy_only=False)
        active, rest = active[keep], post.filter(pa.array(keep))
    rep = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    out = pa.concat_arrays(values) if values else pa.array([], STR)
    order = np.argsort(rep, kind="stable")  # each string's matches together, in order
    counts = np.bincount(rep, minlength=len(x)).astype(np.int64)
    return counts, out.take(pa.array(order))


def _check_n(expr: Call) -> None:
    n = expr.args[3].value
    if n <= 0:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "n": {n}')
    sub = expr.args[-1].value
    if sub < 0:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid value for parameter "subexpr": {sub}')


KERNELS = {
    "strpos": _strpos, "left": _by_count(_left_const, _left_one), "right": _by_count(_right_const, _right_one),
    "repeat": _repeat, "reverse": _reverse, "initcap": _initcap,
    "lpad": _pad(True), "rpad": _pad(False), "split_part": _split_part,
    "concat_any": _concat_any, "concat_ws": _concat_ws, "bool_out": _bool_out, "format": _format,
    "md5": _md5, "ascii": _ascii, "chr": _chr, "translate": _translate,
    "octet_length": _octet_length, "bit_length": _bit_length, "starts_with": _starts_with,
    "to_hex": _to_hex, "quote_ident": _quote_ident, "quote_literal": _quote_literal,
    "quote_nullable": _quote_nullable, "overlay": _overlay, "regexp_replace": _regexp_replace,
    "regexp_count": _regexp_count, "regexp_substr": _regexp_substr,
    "regexp_split_to_array": _regexp_split_to_array, "regexp_instr": _regexp_instr,
    "regexp_match": _regexp_match,
}
