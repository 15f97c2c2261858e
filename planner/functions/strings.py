"""String functions: PostgreSQL's text family (strpos/position, left/right, lpad/rpad, repeat,
reverse, initcap, split_part, concat/concat_ws, format, md5, ascii/chr, translate, octet/bit
length, starts_with (and `^@`), to_hex, quote_*, overlay, regexp_replace/count/like/substr/instr/match;
regexp_matches is a set-returning function: `planner.table_functions`).

Typing follows PostgreSQL's catalog: the string arguments are text (a character(n) value loses
its trailing blanks on the way, an untyped literal reads as text), the counts are integer (a
bigint argument finds no function: 42883). concat, concat_ws and format take "any": each
argument is printed by its type's output function (plan time: `_text_out`), which differs from a
cast to text for boolean (`t`, not `true`) and character(n) (padding kept).

Regular expressions take constant patterns, checked and translated into RE2 by
`planner.patterns` as `~` is; the flags are constant too.

    SELECT lpad(name, 8, '*')         -> Call('lpad', (name, Literal(8, INT4), Literal('*')), TEXT)
    SELECT concat(a, 1, true)         -> Call('concat_any', (a, Cast(1, TEXT), Call('bool_out', ...)), TEXT)
    SELECT regexp_replace(s, 'a+', 'x', 'g')
                                      -> Call('regexp_replace', (s, Literal('(?s)a+'), Literal('x'), Literal(0)), TEXT)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call, Cast, Literal, ScalarExpr
from dataflow.types import BOOL, BPCHAR, BYTEA, INT4, INT8, TEXT, TypeKind, array_of
from planner.functions.registry import ANY, Overload, no_function, overloads
from planner.patterns import check_regex

if TYPE_CHECKING:
    from planner.context import PlanContext


def _text_out(e: ScalarExpr, ctx: "PlanContext") -> ScalarExpr:
    """An "any" argument as its type's output function prints it (what concat and format
    see): text as it is (character(n) with its padding), boolean as t/f, others as their cast
    to text (the same digits and forms)."""
    from planner.scalar import resolve_unknown
    e = resolve_unknown(e, ctx)
    if e.type.is_text:
        return e
    if e.type.kind is TypeKind.BOOL:
        return Call("bool_out", (e,), TEXT)
    return Cast(e, TEXT)


def _as_text(e: ScalarExpr, ctx: "PlanContext") -> ScalarExpr:
    """An "any" argument as the text its cast gives (quote_literal(anyelement) is
    quote_literal($1::text)): character(n) loses its padding, boolean is true/false."""
    from planner.scalar import coerce, resolve_unknown
    e = resolve_unknown(e, ctx)
    return coerce(e, TEXT, ctx) if e.type.is_text else Cast(e, TEXT)


def _concat(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Call("concat_any", tuple(_text_out(a, ctx) for a in args), TEXT)


def _concat_ws(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Call("concat_ws", (args[0], *(_text_out(a, ctx) for a in args[1:])), TEXT)


def _format(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    return Call("format", (args[0], *(_text_out(a, ctx) for a in args[1:])), TEXT)


def _quote(kernel: str):
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        return Call(kernel, (_as_text(args[0], ctx),), TEXT)
    return build


# ---- regular expressions ----------------------------------------------------------------------

# PostgreSQL's regex flags (regexp_replace & co.): which we take, and which change the meaning of
# the pattern in ways the translation into RE2 does not follow.
_SUPPORTED_FLAGS = set("gict")
_OTHER_FLAGS = set("bempnqswx")


def _constant_text(e: ScalarExpr, what: str, fn: str) -> str | None:
    if not isinstance(e, Literal):
        raise unsupported(f"{fn}() with a {what} that is not a constant")
    v = e.value
    if v is not None and not isinstance(v, str):
        raise unsupported(f"{fn}() with a {what} that is not a constant")
    return v


def _flags(flags: str, fn: str, global_ok: bool) -> tuple[bool, bool]:
    """(global, ignore_case) of PostgreSQL's flag string, or its errors."""
    glob = ignore_case = False
    for c in flags:
        if c not in _SUPPORTED_FLAGS and c not in _OTHER_FLAGS:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid regular expression option: "{c}"')
    for c in flags:
        if c == "g":
            if not global_ok:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                               f'{fn}() does not support the "global" option')
            glob = True
        elif c == "i":
            ignore_case = True
        elif c == "c":
            ignore_case = False
        elif c in _OTHER_FLAGS and c not in "st":
            raise unsupported(f'the regular expression flag "{c}"')
    return glob, ignore_case


def _regex(args: list[ScalarExpr], fn: str, flags_at: int | None, global_ok: bool = False):
    """The checked RE2 pattern and the flags of a regexp_* call, or a NULL literal result when
    the pattern or the flags are NULL (the functions are strict)."""
    pattern = _constant_text(args[1], "pattern", fn)
    flags = ""
    if flags_at is not None and flags_at < len(args):
        flags = _constant_text(args[flags_at], "flags argument", fn)
    if pattern is None or flags is None:
        return None
    glob, ignore_case = _flags(flags, fn, global_ok)
    return check_regex(pattern, ignore_case), glob


def _matches_empty(regex: str) -> bool:
    import pyarrow as pa
    import pyarrow.compute as pc
    return bool(pc.match_substring_regex(pa.array([""], pa.string()), regex)[0].as_py())


def _check_start(args: list[ScalarExpr], at: int, pattern: str, fn: str) -> None:
    """A start position past the first character is taken by searching the rest of the string;
    `^` would then match there, where PostgreSQL's does not: refused."""
    if at < len(args):
        start = args[at]
        if not (isinstance(start, Literal) and (start.value is None or start.value <= 1)) and _has_caret(pattern):
            raise unsupported(f"{fn}() with a start position and a pattern using ^")


def _has_caret(pattern: str) -> bool:
    i, in_bracket = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_bracket:
            if c == "]":
                in_bracket = False
        elif c == "[":
            in_bracket = True
            if pattern.startswith("[^]", i) or pattern.startswith("[]", i):
                i += 3 if pattern[i + 1] == "^" else 2
                continue
            if pattern.startswith("[^", i):
                i += 1
        elif c == "^":
            return True
        i += 1
    return False


def _regexp_replace(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """regexp_replace(source, pattern, replacement [, flags]) and PostgreSQL 15's
    (source, pattern, replacement, start [, N [, flags]]): an explicit N overrides the `g`
    flag (0 is every match). Every match or the first one; a later one is refused."""
    with_start = len(args) >= 4 and args[3].type == INT4
    flags_at = (5 if len(args) > 5 else None) if with_start else (3 if len(args) > 3 else None)
    r = _regex(args, "regexp_replace", flags_at, global_ok=True)
    if r is None:
        return Literal(None, TEXT)
    regex, glob = r
    n: ScalarExpr = Literal(0 if glob else 1, INT4)
    if with_start and len(args) > 4:
        n = args[4]
        if not isinstance(n, Literal):
            raise unsupported("regexp_replace() with a match number that is not a constant")
        if n.value is None:
            return Literal(None, TEXT)
        if n.value > 1:
            raise unsupported("regexp_replace() of a match other than the first or all")
    if n.value == 0 and _matches_empty(regex):
        raise unsupported("regexp_replace() of every match of a pattern that can match an empty string")
    start: ScalarExpr = Literal(1, INT4)
    if with_start:
        _check_start(args, 3, args[1].value, "regexp_replace")
        start = args[3]
    return Call("regexp_replace", (args[0], Literal(regex, TEXT), args[2], start, n), TEXT)


def _constant_text_or_empty(e: ScalarExpr) -> str:
    return e.value if isinstance(e, Literal) and isinstance(e.value, str) else ""


def _regexp_count(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    r = _regex(args, "regexp_count", 3)
    if r is None:
        return Literal(None, INT4)
    regex, _ = r
    if _matches_empty(regex):
        raise unsupported("regexp_count() of a pattern that can match an empty string")
    if _has_caret(args[1].value):
        # Each search after a match starts a new string for Arrow, where ^ matches again
        # (regexp_count('aaa', '^a') would be 3; PostgreSQL's is 1).
        raise unsupported("regexp_count() of a pattern using ^")
    _check_start(args, 2, args[1].value, "regexp_count")
    start = args[2] if len(args) > 2 else Literal(1, INT4)
    return Call("regexp_count", (args[0], Literal(regex, TEXT), start), INT4)


def _regexp_split_to_array(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """regexp_split_to_array(s, pattern [, flags]): the pieces between matches (an empty piece
    before a leading or after a trailing match, as in PostgreSQL). regexp_split_to_table is
    unnest of it (`planner.table_functions`)."""
    r = _regex(args, "regexp_split_to_array", 2)
    if r is None:
        return Literal(None, array_of(TEXT))
    regex, _ = r
    if _matches_empty(regex):
        # PostgreSQL splits between characters there ('abc' by '' is {a,b,c}); Arrow cannot.
        raise unsupported("regexp_split_to_array() of a pattern that can match an empty string")
    return Call("regexp_split_to_array", (args[0], Literal(regex, TEXT)), array_of(TEXT))


_QUANTIFIER_START = set("*+?{")


def capture_pattern(pattern: str, fn: str) -> tuple[str, int]:
    """The pattern of a regexp_match/regexp_matches call with its capturing groups named
    `g1`, `g2`, ... (Arrow's extract_regex reads named groups only), and their number.

    PostgreSQL matches the leftmost-longest string (a whole pattern is greedy unless its first
    quantifier is lazy) and RE2 the leftmost-first one, and where a group may not take part in
    the match PostgreSQL answers NULL for it and Arrow an empty string. Both agree on
    concatenations of single characters, brackets and escapes with greedy quantifiers, grouped
    by unquantified parentheses (checked against PostgreSQL); everything else is refused with
    0A000: `|`, lazy quantifiers, quantified groups.
    """
    out: list[str] = []
    groups = 0
    i, in_bracket, prev_group_end = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if in_bracket:
            out.append(c)
            if c == "\\" and i + 1 < len(pattern):
                out.append(pattern[i + 1])
                i += 1
            elif c == "[" and pattern.startswith("[:", i):
                j = pattern.find(":]", i + 2)
                if j >= 0:
                    out.append(pattern[i + 1:j + 2])
                    i = j + 1
            elif c == "]":
                in_bracket = False
            i += 1
            continue
        if c in _QUANTIFIER_START and not (c == "{" and not _is_bound(pattern, i)):
            if prev_group_end:
                raise unsupported(f"{fn}() of a pattern with a quantified group")
            j = pattern.find("}", i) + 1 if c == "{" else i + 1
            if j < len(pattern) and pattern[j] == "?":
                raise unsupported(f"{fn}() of a pattern with a lazy quantifier")
            out.append(pattern[i:j])
            i = j
            prev_group_end = False
            continue
        prev_group_end = False
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "|":
            raise unsupported(f"{fn}() of a pattern with alternatives (|)")
        if c == "[":
            in_bracket = True
            out.append(c)
            j = i + 1
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):  # a leading ] is literal
                j += 1
            out.append(pattern[i + 1:j])
            i = j
            continue
        if c == "(":
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
                continue
            groups += 1
            out.append(f"(?P<g{groups}>")
            i += 1
            continue
        if c == ")":
            prev_group_end = True
        out.append(c)
        i += 1
    return "".join(out), groups


def _is_bound(pattern: str, i: int) -> bool:
    """Whether `{` at i starts a bound `{m}`, `{m,}` or `{m,n}` (else it is a literal brace)."""
    import re
    return re.match(r"\{\d+(,\d*)?\}", pattern[i:]) is not None


def match_call(args: list[ScalarExpr], fn: str) -> tuple[str, int, bool] | None:
    """(RE2 pattern with named groups, number of groups, global) of regexp_match(es)(s, pattern
    [, flags]), or None when the pattern or the flags are NULL."""
    flags = _constant_text(args[2], "flags argument", fn) if len(args) > 2 else ""
    if fn == "regexp_match" and flags and "g" in flags and all(c in _SUPPORTED_FLAGS | _OTHER_FLAGS for c in flags):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, 'regexp_match() does not support the "global" option',
                       hint="Use the regexp_matches function instead.")
    r = _regex(args, fn, 2, global_ok=True)
    if r is None:
        return None
    regex, glob = r
    prefix = regex[:regex.index(")") + 1]  # (?s) or (?si)
    named, groups = capture_pattern(args[1].value, fn)
    return prefix + named, groups, glob


def _regexp_match(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    """regexp_match(s, pattern [, flags]): the first match's groups (the whole match when the
    pattern has none) as text[], NULL without a match."""
    r = match_call(args, "regexp_match")
    if r is None:
        return Literal(None, array_of(TEXT))
    regex, groups, _ = r
    return Call("regexp_match", (args[0], Literal(regex, TEXT), Literal(groups, INT4)), array_of(TEXT))


def _regexp_like(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
    r = _regex(args, "regexp_like", 2)
    if r is None:
        return Literal(None, BOOL)
    return Call("regex_match", (args[0], Literal(r[0], TEXT)), BOOL)


def _regexp_first(kernel: str, result):
    """regexp_substr / regexp_instr of the first match: (string, pattern [, start [, N = 1
    [, endoption (instr only) [, flags [, subexpr = 0]]]]]). Their invalid values are raised
    by the kernel (only for rows it computes: the functions are strict)."""
    def build(args: list[ScalarExpr], ctx: "PlanContext") -> ScalarExpr:
        flags_at = {"regexp_substr": 4, "regexp_instr": 5}[kernel]
        r = _regex(args, kernel, flags_at)
        if r is None:
            return Literal(None, result)
        regex, _ = r
        defaults = {3: 1, 4: 0, 6: 0} if kernel == "regexp_instr" else {3: 1, 5: 0}
        params = []
        for i, default in defaults.items():
            a = args[i] if i < len(args) else Literal(default, INT4)
            if not isinstance(a, Literal):
                raise unsupported(f"{kernel}() with arguments that are not constants")
            if a.value is None:
                return Literal(None, result)
            params.append(a)
        n, sub = params[0].value, params[-1].value
        if n > 1:
            raise unsupported(f"{kernel}() of a match other than the first")
        if sub > 0:
            raise unsupported(f"{kernel}() of a parenthesized subexpression")
        _check_start(args, 2, args[1].value, kernel)
        start = args[2] if len(args) > 2 else Literal(1, INT4)
        return Call(kernel, (args[0], Literal(regex, TEXT), start, *params), result)
    return build


def _regexp_overloads(name: str, builder, shapes: list[tuple]) -> list[Overload]:
    return [Overload(name, shape, TEXT if name in ("regexp_replace", "regexp_substr") else
                     BOOL if name == "regexp_like" else INT4, build=builder) for shape in shapes]


T, I = TEXT, INT4

FUNCTIONS = overloads(
    Overload("strpos", (T, T), INT4, kernel="strpos"),
    # position(a IN b) is parsed as sqlglot's StrPosition and planned as strpos(b, a).
    Overload("left", (T, I), TEXT, kernel="left"),
    Overload("right", (T, I), TEXT, kernel="right"),
    Overload("repeat", (T, I), TEXT, kernel="repeat"),
    Overload("reverse", (T,), TEXT, kernel="reverse"),
    Overload("initcap", (T,), TEXT, kernel="initcap"),
    Overload("lpad", (T, I), TEXT, kernel="lpad"),
    Overload("lpad", (T, I, T), TEXT, kernel="lpad"),
    Overload("rpad", (T, I), TEXT, kernel="rpad"),
    Overload("rpad", (T, I, T), TEXT, kernel="rpad"),
    Overload("split_part", (T, T, I), TEXT, kernel="split_part"),
    Overload("concat", (ANY, ANY), TEXT, build=_concat, variadic=True),
    Overload("concat_ws", (T, ANY, ANY), TEXT, build=_concat_ws, variadic=True),
    Overload("format", (T, ANY), TEXT, build=_format, variadic=True),
    Overload("md5", (T,), TEXT, kernel="md5"),
    Overload("md5", (BYTEA,), TEXT, kernel="md5"),
    Overload("ascii", (T,), INT4, kernel="ascii"),
    Overload("chr", (I,), TEXT, kernel="chr"),
    Overload("translate", (T, T, T), TEXT, kernel="translate"),
    Overload("octet_length", (T,), INT4, kernel="octet_length"),
    # character(n) counts its padding (its own overload, as in PostgreSQL).
    Overload("octet_length", (BPCHAR,), INT4, kernel="octet_length"),
    Overload("bit_length", (T,), INT4, kernel="bit_length"),
    Overload("bit_length", (BYTEA,), INT4, kernel="bit_length"),
    Overload("starts_with", (T, T), BOOL, kernel="starts_with"),
    Overload("^@", (T, T), BOOL, kernel="starts_with"),
    Overload("to_hex", (I,), TEXT, kernel="to_hex"),
    Overload("to_hex", (INT8,), TEXT, kernel="to_hex"),
    Overload("quote_ident", (T,), TEXT, kernel="quote_ident"),
    Overload("quote_literal", (ANY,), TEXT, build=_quote("quote_literal")),
    Overload("quote_nullable", (ANY,), TEXT, build=_quote("quote_nullable")),
    Overload("overlay", (T, T, I), TEXT, kernel="overlay"),
    Overload("overlay", (T, T, I, I), TEXT, kernel="overlay"),
    *_regexp_overloads("regexp_replace", _regexp_replace,
                       [(T, T, T), (T, T, T, T), (T, T, T, I), (T, T, T, I, I), (T, T, T, I, I, T)]),
    *_regexp_overloads("regexp_count", _regexp_count, [(T, T), (T, T, I), (T, T, I, T)]),
    *_regexp_overloads("regexp_like", _regexp_like, [(T, T), (T, T, T)]),
    Overload("regexp_match", (T, T), array_of(TEXT), build=_regexp_match),
    Overload("regexp_match", (T, T, T), array_of(TEXT), build=_regexp_match),
    Overload("regexp_split_to_array", (T, T), array_of(TEXT), build=_regexp_split_to_array),
    Overload("regexp_split_to_array", (T, T, T), array_of(TEXT), build=_regexp_split_to_array),
    *_regexp_overloads("regexp_substr", _regexp_first("regexp_substr", TEXT),
                       [(T, T), (T, T, I), (T, T, I, I), (T, T, I, I, T), (T, T, I, I, T, I)]),
    *_regexp_overloads("regexp_instr", _regexp_first("regexp_instr", INT4),
                       [(T, T), (T, T, I), (T, T, I, I), (T, T, I, I, I), (T, T, I, I, I, T),
                        (T, T, I, I, I, T, I)]),
)
