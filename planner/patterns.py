"""Regular-expression patterns: PostgreSQL's `~`, `~*` and `SIMILAR TO`, checked and translated at
plan time into the RE2 syntax the engine's regex kernel (Arrow's `match_substring_regex`) runs.

PostgreSQL's "advanced regular expressions" and RE2 agree on the common core (literals, `.`,
brackets and POSIX classes, `* + ? {m,n}` and their lazy forms, `|`, groups, `^ $`, `\\d \\s \\w`).
Where they disagree a pattern could silently match differently, so those constructs are refused
with 0A000 instead: back-references, lookaround and other `(?...)` forms, `\\m \\M \\y \\Y \\Z`, `\\b`
(a backspace in PostgreSQL, a word boundary in RE2), collating elements `[[.x.]]` / `[[=x=]]`.
PostgreSQL's `.` matches a newline; RE2's does only with the `s` flag, which is always set.

>>> similar_to_regex("a%b_")
'^(?:a.*b.)$'
>>> similar_to_regex("100\\\\%")
'^(?:100\\\\%)$'
>>> check_regex("^[a-z]+\\\\d$")
'(?s)^[a-z]+\\\\d$'
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError, unsupported

# Escapes that mean the same in PostgreSQL ARE and RE2.
_SAME_ESCAPES = set("dDsSwWntrfv")


def check_regex(pattern: str, ignore_case: bool = False) -> str:
    """The RE2 form of a PostgreSQL regular expression, or 0A000 for a construct that would
    match differently, or 2201B for an invalid pattern."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 >= len(pattern):
                raise _invalid(pattern, "invalid escape \\ sequence")
            nxt = pattern[i + 1]
            if nxt.isalnum() and nxt not in _SAME_ESCAPES:
                raise unsupported(f"the regular expression escape \\{nxt}")
            i += 2
            continue
        if c == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            raise unsupported("regular expression (?...) constructs other than (?:...)")
        if c == "[" and (pattern.startswith("[[.", i) or pattern.startswith("[[=", i)):
            raise unsupported("collating elements in regular expression brackets")
        i += 1
    flags = "(?si)" if ignore_case else "(?s)"
    regex = flags + pattern
    try:
        pc.match_substring_regex(pa.array([""], pa.string()), regex)
    except pa.ArrowInvalid as e:
        raise _invalid(pattern, str(e).split(":")[-1].strip()) from None
    return regex


def similar_to_regex(pattern: str, escape: str | None = "\\") -> str:
    """SQL's SIMILAR TO pattern as an anchored regular expression (PostgreSQL's translation:
    `%` is `.*`, `_` is `.`, `.`, `^`, `$` and the escape character's operand are literal, and
    bracket expressions are copied as they are)."""
    out: list[str] = []
    in_bracket = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape:
            if i + 1 >= len(pattern):
                raise SqlError("22025", "invalid escape string",
                               hint="Escape string must be empty or one character.")
            nxt = pattern[i + 1]
            if nxt == '"':
                raise unsupported('the SIMILAR TO escape-quote (substring) separator')
            out.append("\\" + nxt)
            i += 2
            continue
        if in_bracket:
            out.append("\\\\" if c == "\\" else c)
            if c == "]":
                in_bracket = False
        elif c == "[":
            in_bracket = True
            out.append(c)
            if pattern.startswith("[^]", i) or pattern.startswith("[]", i):
                j = i + (3 if pattern[i + 1] == "^" else 2)
                out.append(pattern[i + 1:j])
                i = j
                continue
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c == "(":
            out.append("(?:")
        elif c in "\\.^$":
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "^(?:" + "".join(out) + ")$"


def _invalid(pattern: str, why: str) -> SqlError:
    return SqlError("2201B", f"invalid regular expression: {why}")
