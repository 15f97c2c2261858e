"""bytea and uuid: PostgreSQL's text forms, read and written.

bytea is Arrow `binary`; its text output is hex (`\\x00ff`, PostgreSQL's default bytea_output)
and its input takes hex or the escape format (`a\\000b`, `\\\\` for a backslash). uuid is kept
as its canonical text (lower-case, hyphenated) in Arrow `string`: that text sorts in the byte
order PostgreSQL sorts uuids by, so comparisons, keys and ORDER BY need nothing special.

>>> bytea_text(bytea_parse("\\\\x00FF")), bytea_text(bytea_parse("a\\\\000b\\\\\\\\"))
('\\\\x00ff', '\\\\x6100625c')
>>> uuid_parse("{A0EEBC99-9C0B4EF8-BB6D-6BB9BD380A11}")
'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
"""

from __future__ import annotations

import re

from dataflow.errors import SqlError, SqlState

_HEX_DIGITS = re.compile(r"^[0-9a-fA-F]{32}$")


def bytea_parse(text: str) -> bytes:
    if text.startswith("\\x") or text.startswith("\\X"):
        digits = re.sub(r"\s", "", text[2:])
        if len(digits) % 2:
            raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, "invalid hexadecimal data: odd number of digits")
        try:
            return bytes.fromhex(digits)
        except ValueError:
            bad = next(c for c in digits if c not in "0123456789abcdefABCDEF")
            raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'invalid hexadecimal digit: "{bad}"') from None
    return bytea_parse_escape(text)


def bytea_parse_escape(text: str) -> bytes:
    """The escape format alone (`decode(text, 'escape')`): a backslash is followed by another
    or by three octal digits; `\\x00ff` is not hex here but an invalid escape, as in PostgreSQL."""
    out = bytearray()
    i = 0
    raw = text.encode("utf-8")
    while i < len(raw):
        c = raw[i]
        if c != 0x5C:  # backslash
            out.append(c)
            i += 1
        elif raw[i + 1:i + 2] == b"\\":
            out.append(0x5C)
            i += 2
        elif re.match(rb"[0-3][0-7][0-7]", raw[i + 1:i + 4]):
            out.append(int(raw[i + 1:i + 4], 8))
            i += 4
        else:
            raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea")
    return bytes(out)


def bytea_text(value: bytes) -> str:
    return "\\x" + value.hex()


def uuid_parse(text: str) -> str:
    """PostgreSQL's uuid input: 32 hex digits, optionally in braces, with a hyphen allowed after
    any group of four digits; the canonical form is lower case 8-4-4-4-12."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1]
    digits = s.replace("-", "")
    ok = _HEX_DIGITS.match(digits) and not s.startswith("-") and not s.endswith("-") and "--" not in s
    if ok:
        # hyphens only between groups of four digits
        pos = 0
        for ch in s:
            if ch == "-":
                ok = ok and pos % 4 == 0
            else:
                pos += 1
    if not ok:
        raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'invalid input syntax for type uuid: "{text}"')
    d = digits.lower()
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"
