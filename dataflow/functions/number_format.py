"""to_char(number, template): PostgreSQL 15's number templates, ported step for step from its
formatting.c (the NUM_* part: NUMDesc_prepare, NUM_processor, NUM_numpart_to_char and the
int4/int8/float4/float8/numeric front ends), so that every corner prints as PostgreSQL prints it:
the blank reserved for the sign, '#' when the digits do not fit, FM's trimming, a decimal point
written as the C string terminator when a float ran out of digits, and so on.

Patterns (upper or lower case): 9 0 . , D G S PR MI PL SG L FM EEEE RN rn TH th V, and B C SP
(accepted, print nothing). Text in double quotes and any other character is copied. The locale
is C: D is '.', G is ',', L (currency) is ' ', S is '-' / '+'.

Rounding: numeric rounds half away from zero (numeric_round); float8 and float4 print through C's
"%.*f" (the binary value correctly rounded) limited to 15 (float8) or 6 (float4) significant
digits in front of the point; integers with V multiply first (an int4 wraps around as in C).
EEEE prints "%+.*e" for floats and int4, numeric_out_sci for numeric and int8.

Worked example: to_char(-1234.567::numeric, 'FMS9,999.99')
  template:  FM (fill mode), S (locale sign before the digits), 9 , 9 9 9 . 9 9
             -> 4 digits before the point, 2 after
  value:     round(-1234.567, 2) = -1234.57 -> sign '-', digit string '1234.57', which fills
             the 4 places in front of the point (no leading blanks)
  output:    S writes '-' before the first digit, ',' is written once a digit was, FM drops
             the blank a positive sign would take                          -> '-1,234.57'

>>> to_char_numeric(Decimal('-1234.567'), 'FMS9,999.99')
'-1,234.57'
>>> to_char_int(1234, '9,999.99', 32), to_char_int(12345, '9,999', 32)
(' 1,234.00', ' #,###')
>>> to_char_float(0.5, '9.9EEEE', False), to_char_int(3, 'FMRN', 32), to_char_int(-5, '999PR', 32)
(' 5.0e-01', 'III', '  <5>')

Performance: formatting is per value by nature (there is no vectorised form of these templates),
so `to_char_kernel` loops over the rows in Python. Each distinct template is parsed once, and the
processor runs once per output shape (sign, padding, length and point of the digit string); the
other rows of a shape only format their digit string and put it into the cached layout:
0.11-0.30 M rows/s over 1M rows (bench/functions, docs/benchmarks.md "Function library").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from functools import lru_cache

import numpy as np
import pyarrow as pa

from dataflow.errors import SqlError, SqlState

# Keywords in formatting.c's order: grouped by first character, longest first within a group,
# searched the way index_seq_search searches them.
_KEYWORDS = [
    (",", "COMMA"), (".", "DEC"), ("0", "0"), ("9", "9"), ("B", "B"), ("C", "C"), ("D", "D"),
    ("EEEE", "E"), ("FM", "FM"), ("G", "G"), ("L", "L"), ("MI", "MI"), ("PL", "PL"), ("PR", "PR"),
    ("RN", "RN"), ("SG", "SG"), ("SP", "SP"), ("S", "S"), ("TH", "TH"), ("V", "V"),
    ("b", "B"), ("c", "C"), ("d", "D"), ("eeee", "E"), ("fm", "FM"), ("g", "G"), ("l", "L"),
    ("mi", "MI"), ("pl", "PL"), ("pr", "PR"), ("rn", "rn"), ("sg", "SG"), ("sp", "SP"), ("s", "S"),
    ("th", "th"), ("v", "V"),
]
_FIRST: dict[str, int] = {}
for _i, (_name, _id) in enumerate(_KEYWORDS):
    _FIRST.setdefault(_name[0], _i)

# NUMDesc flags
F_DECIMAL, F_LDECIMAL, F_ZERO, F_BLANK, F_FILLMODE, F_LSIGN, F_BRACKET, F_MINUS, F_PLUS, F_ROMAN, \
    F_MULTI, F_PLUS_POST, F_MINUS_POST, F_EEEE = (1 << k for k in range(1, 15))
LSIGN_PRE, LSIGN_POST, LSIGN_NONE = -1, 1, 0

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_DBL_DIG, _FLT_DIG = 15, 6


@dataclass(slots=True)
class NumDesc:
    pre: int = 0
    post: int = 0
    lsign: int = LSIGN_NONE
    flag: int = 0
    pre_lsign_num: int = 0
    multi: int = 0
    zero_start: int = 0
    zero_end: int = 0

    def copy(self) -> "NumDesc":
        return NumDesc(self.pre, self.post, self.lsign, self.flag, self.pre_lsign_num, self.multi,
                       self.zero_start, self.zero_end)


def _syntax(msg: str, detail: str | None = None) -> SqlError:
    return SqlError(SqlState.SYNTAX_ERROR, msg, detail=detail)


def _search(fmt: str, i: int) -> str | None:
    start = _FIRST.get(fmt[i])
    if start is None:
        return None
    for name, kid in _KEYWORDS[start:]:
        if name[0] != fmt[i]:
            return None
        if fmt.startswith(name, i):
            return name
    return None


_IDS = dict(_KEYWORDS)


def _prepare(num: NumDesc, kid: str) -> None:
    """NUMDesc_prepare: what a keyword adds to the number's description (with its errors)."""
    f = num.flag
    if f & F_EEEE and kid != "E":
        raise _syntax('"EEEE" must be the last pattern used')
    if kid == "9":
        if f & F_BRACKET:
            raise _syntax('"9" must be ahead of "PR"')
        if f & F_MULTI:
            num.multi += 1
        elif f & F_DECIMAL:
            num.post += 1
        else:
            num.pre += 1
    elif kid == "0":
        if f & F_BRACKET:
            raise _syntax('"0" must be ahead of "PR"')
        if not f & F_ZERO and not f & F_DECIMAL:
            num.flag |= F_ZERO
            num.zero_start = num.pre + 1
        if not f & F_DECIMAL:
            num.pre += 1
        else:
            num.post += 1
        num.zero_end = num.pre + num.post
    elif kid == "B":
        if num.pre == 0 and num.post == 0 and not f & F_ZERO:
            num.flag |= F_BLANK
    elif kid in ("D", "DEC"):
        if kid == "D":
            num.flag |= F_LDECIMAL
        if f & F_DECIMAL:
            raise _syntax("multiple decimal points")
        if f & F_MULTI:
            raise _syntax('cannot use "V" and decimal point together')
        num.flag |= F_DECIMAL
    elif kid == "FM":
        num.flag |= F_FILLMODE
    elif kid == "S":
        if f & F_LSIGN:
            raise _syntax('cannot use "S" twice')
        if f & (F_PLUS | F_MINUS | F_BRACKET):
            raise _syntax('cannot use "S" and "PL"/"MI"/"SG"/"PR" together')
        if not f & F_DECIMAL:
            num.lsign = LSIGN_PRE
            num.pre_lsign_num = num.pre
            num.flag |= F_LSIGN
        elif num.lsign == LSIGN_NONE:
            num.lsign = LSIGN_POST
            num.flag |= F_LSIGN
    elif kid == "MI":
        if f & F_LSIGN:
            raise _syntax('cannot use "S" and "MI" together')
        num.flag |= F_MINUS | (F_MINUS_POST if f & F_DECIMAL else 0)
    elif kid == "PL":
        if f & F_LSIGN:
            raise _syntax('cannot use "S" and "PL" together')
        num.flag |= F_PLUS | (F_PLUS_POST if f & F_DECIMAL else 0)
    elif kid == "SG":
        if f & F_LSIGN:
            raise _syntax('cannot use "S" and "SG" together')
        num.flag |= F_MINUS | F_PLUS
    elif kid == "PR":
        if f & (F_LSIGN | F_PLUS | F_MINUS):
            raise _syntax('cannot use "PR" and "S"/"PL"/"MI"/"SG" together')
        num.flag |= F_BRACKET
    elif kid in ("RN", "rn"):
        num.flag |= F_ROMAN
    elif kid == "V":
        if f & F_DECIMAL:
            raise _syntax('cannot use "V" and decimal point together')
        num.flag |= F_MULTI
    elif kid == "E":
        if f & F_EEEE:
            raise _syntax('cannot use "EEEE" twice')
        if f & (F_BLANK | F_FILLMODE | F_LSIGN | F_BRACKET | F_MINUS | F_PLUS | F_ROMAN | F_MULTI):
            raise _syntax('"EEEE" is incompatible with other formats',
                          '"EEEE" may only be used together with digit and decimal point patterns.')
        num.flag |= F_EEEE


@lru_cache(maxsize=512)
def parse(fmt: str) -> tuple[tuple[tuple[bool, str], ...], NumDesc]:
    """The template as nodes ((True, keyword id) or (False, literal character)) and its NumDesc."""
    nodes: list[tuple[bool, str]] = []
    num = NumDesc()
    i, n = 0, len(fmt)
    while i < n:
        name = _search(fmt, i)
        if name is not None:
            kid = _IDS[name]
            nodes.append((True, kid))
            i += len(name)
            _prepare(num, kid)
        elif fmt[i] == '"':
            i += 1
            while i < n:
                if fmt[i] == '"':
                    i += 1
                    break
                if fmt[i] == "\\" and i + 1 < n:
                    i += 1
                nodes.append((False, fmt[i]))
                i += 1
        else:
            if fmt[i] == "\\" and i + 1 < n and fmt[i + 1] == '"':
                i += 1
            nodes.append((False, fmt[i]))
            i += 1
    return tuple(nodes), num


# ---------------------------------------------------------------------------------------------
# The processor (to_char direction only)

def _get_th(num: str, upper: bool) -> str:
    if not num or not num[-1].isdigit():
        raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION, f'"{num}" is not a number')
    last = num[-1]
    if len(num) > 1 and num[-2] == "1":
        last = "0"
    s = {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return s.upper() if upper else s


def _process(nodes, num: NumDesc, number: str, out_pre_spaces: int, sign: str, real: str | None = None) -> str:
    """NUM_processor for to_char: `number` is the digit string (no sign), `sign` '+', '-' or
    '\\0' (Roman numerals). The output is built as C builds it, so a NUL written into it ends
    the string. `real`: the actual digit string when `number` holds placeholders (see
    `_layout`); every decision that reads a digit's value reads it there."""
    if real is None:
        real = number
    out: list[str] = []
    if num.zero_start:
        num.zero_start -= 1
    if num.flag & F_EEEE:
        return number
    if num.flag & F_ROMAN:
        num.lsign = num.pre_lsign_num = num.post = num.pre = 0
        out_pre_spaces = 0
        sign = "\0"
        num.flag = (F_FILLMODE if num.flag & F_FILLMODE else 0) | F_ROMAN
    flag = num.flag
    fill = bool(flag & F_FILLMODE)
    if flag & (F_PLUS | F_MINUS):
        sign_wrote = not (flag & F_PLUS and not flag & F_MINUS)
    else:
        if sign != "-" and fill:
            flag &= ~F_BRACKET
        sign_wrote = sign == "+" and fill and not flag & F_LSIGN
        if num.lsign == LSIGN_PRE and num.pre == num.pre_lsign_num:
            num.lsign = LSIGN_POST
    num.flag = flag
    num_count = num.post + num.pre - 1
    last_relevant: int | None = None
    if fill and flag & F_DECIMAL:
        dot = real.find(".")
        if dot >= 0:
            last_relevant = dot
            for k in range(dot + 1, len(real)):
                if real[k] != "0":
                    last_relevant = k
        if last_relevant is not None and num.zero_end > out_pre_spaces:
            last_zero = min(len(number) - 1, num.zero_end - out_pre_spaces)
            if last_relevant < last_zero:
                last_relevant = last_zero
    if not sign_wrote and out_pre_spaces == 0:
        num_count += 1

    nlen = len(number)
    number_p = 0
    num_in = False
    num_curr = 0
    is_zero = bool(flag & F_ZERO)
    roman = bool(flag & F_ROMAN)

    def at(k: int) -> str:
        return number[k] if 0 <= k < nlen else "\0"

    first_zero = real[:1] == "0"

    for is_kw, v in nodes:
        if not is_kw:
            out.append(v)
            continue
        if v in ("9", "0", "DEC", "D"):
            # NUM_numpart_to_char
            if roman:
                continue
            num_in = False
            predec_space = (not is_zero and number_p == 0 and first_zero and num.post != 0)
            if not sign_wrote and (num_curr >= out_pre_spaces or (is_zero and num.zero_start == num_curr)) \
                    and (not predec_space or (last_relevant is not None and real[last_relevant] == ".")):
                if num.flag & F_LSIGN:
                    if num.lsign == LSIGN_PRE:
                        out.append("-" if sign == "-" else "+")
                        sign_wrote = True
                elif num.flag & F_BRACKET:
                    out.append(" " if sign == "+" else "<")
                    sign_wrote = True
                elif sign == "+":
                    if not fill:
                        out.append(" ")
                    sign_wrote = True
                elif sign == "-":
                    out.append("-")
                    sign_wrote = True
            if num_curr < out_pre_spaces and (num.zero_start > num_curr or not is_zero):
                if not fill:
                    out.append(" ")
            elif is_zero and num_curr < out_pre_spaces and num.zero_start <= num_curr:
                out.append("0")
                num_in = True
            else:
                c = at(number_p)
                if c == ".":
                    if last_relevant is None or at(last_relevant) != ".":
                        out.append(".")
                    elif fill:
                        out.append(".")
                else:
                    if last_relevant is not None and number_p > last_relevant and v != "0":
                        pass
                    elif not is_zero and number_p == 0 and first_zero and num.post != 0:
                        if not fill:
                            out.append(" ")
                        elif last_relevant is not None and real[last_relevant] == ".":
                            out.append("0")
                    else:
                        out.append(c)
                        num_in = True
                if number_p < nlen:
                    number_p += 1
            end = num_count + (1 if out_pre_spaces else 0) + (1 if num.flag & F_DECIMAL else 0)
            if last_relevant is not None and last_relevant == number_p:
                end = num_curr
            if num_curr + 1 == end:
                if sign_wrote and num.flag & F_BRACKET:
                    out.append(" " if sign == "+" else ">")
                elif num.flag & F_LSIGN and num.lsign == LSIGN_POST:
                    out.append("-" if sign == "-" else "+")
            num_curr += 1
        elif v == "COMMA":
            if not num_in:
                if fill:
                    continue
                out.append(" ")
            else:
                out.append(",")
        elif v == "G":
            if not num_in:
                if fill:
                    continue
                out.append(" ")
            else:
                out.append(",")
        elif v == "L":
            out.append(" ")
        elif v in ("RN", "rn"):
            text = number[number_p:] if v == "RN" else number[number_p:].lower()
            out.append(text if fill else text.rjust(15))
        elif v in ("TH", "th"):
            if roman or real[:1] == "#" or sign == "-" or num.flag & F_DECIMAL:
                continue
            out.append(_get_th(real, v == "TH"))
        elif v in ("MI", "PL"):  # the sign if it is this one's, else a blank (none in FM)
            mark = "-" if v == "MI" else "+"
            if sign == mark:
                out.append(mark)
            elif not fill:
                out.append(" ")
        elif v == "SG":
            out.append(sign)
    s = "".join(out)
    cut = s.find("\0")
    return s if cut < 0 else s[:cut]


def _hashes(num: NumDesc) -> str:
    """The digit string of a number too wide for the template: '#' everywhere, '.' after pre."""
    s = ["#"] * (num.pre + num.post + 1)
    s[num.pre] = "."
    return "".join(s)


def _eeee_hashes(num: NumDesc) -> str:
    """EEEE of NaN or an infinity."""
    s = ["#"] * (num.pre + num.post + 6)
    s[0] = " "
    s[num.pre + 1] = "."
    return "".join(s)


def _roman(n: int) -> str:
    """int_to_roman: 1..3999, else fifteen '#'."""
    if n > 3999 or n < 1:
        return "#" * 15
    out = []
    for digit, (one, five, ten) in zip(f"{n:04d}", (("M", "", ""), ("C", "D", "M"), ("X", "L", "C"), ("I", "V", "X"))):
        d = int(digit)
        if d == 9:
            out.append(one + ten)
        elif d >= 5:
            out.append(five + one * (d - 5))
        elif d == 4:
            out.append(one + five)
        else:
            out.append(one * d)
    return "".join(out)


def _int_out_of_range(bits: int) -> SqlError:
    return SqlError(SqlState.NUMERIC_VALUE_OUT_OF_RANGE,
                    "integer out of range" if bits == 32 else "bigint out of range")


def _sci(value: Decimal, rscale: int) -> str:
    """numeric_out_sci: one digit before the point, `rscale` after (half away from zero),
    exponent with a sign and at least two digits."""
    rscale = max(rscale, 0)
    with localcontext() as ctx:
        ctx.prec = 200
        if value == 0:
            exponent = 0
            sig = Decimal(0)
        else:
            exponent = value.adjusted()
            sig = value.scaleb(-exponent)
        sig = sig.quantize(Decimal(1).scaleb(-rscale), rounding=ROUND_HALF_UP)
    text = f"{sig:f}"
    if sig == 0 and text.startswith("-"):
        text = text[1:]
    return f"{text}e{exponent:+03d}"


def _c_float(v: float, post: int) -> str:
    """C's "%.*f" as PostgreSQL's snprintf prints it (NaN, Infinity spelled out)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return "%.*f" % (post, v)


def _finish(nodes, num: NumDesc, orgnum: str, post_digits: bool, cache: dict | None = None) -> str:
    """The common tail of int4/int8/float/numeric to_char: split off the sign, pad or overflow.
    `num` is only read here (the processor gets a copy)."""
    if orgnum.startswith("-"):
        sign, numstr = "-", orgnum[1:]
    else:
        sign, numstr = "+", orgnum
    if post_digits and num.post:
        numstr = numstr + "." + "0" * num.post
        pre_len = len(numstr) - num.post - 1
    else:
        dot = numstr.find(".")
        pre_len = dot if dot >= 0 else len(numstr)
    out_pre_spaces = 0
    if pre_len < num.pre:
        out_pre_spaces = num.pre - pre_len
    elif pre_len > num.pre:
        numstr = _hashes(num)
    if cache is None or len(numstr) > 4000 or _uncacheable(nodes):
        return _process(nodes, num.copy(), numstr, out_pre_spaces, sign)
    # The output's shape depends on the digit string only through these: the same key gives the
    # same layout, into which the digits are put by position.
    last_relevant = None
    if num.flag & F_FILLMODE and num.flag & F_DECIMAL and "." in numstr:
        last_relevant = len(numstr.rstrip("0")) - 1
    key = (sign, out_pre_spaces, num.pre, num.post, len(numstr), numstr.find("."),
           numstr[:1] if numstr[:1] in ("0", "#") else "", last_relevant)
    layout = cache.get(key)
    if layout is None:
        layout = cache[key] = _layout(nodes, num.copy(), numstr, out_pre_spaces, sign)
    return layout.format(*numstr)


_PUA = 0xE000


@lru_cache(maxsize=512)
def _uncacheable(nodes) -> bool:
    """Templates whose output reads a digit's value beyond the layout key (TH) or that contain
    the placeholder characters themselves are formatted value by value."""
    return any(v in ("TH", "th") if kw else _PUA <= ord(v) < _PUA + 4096 for kw, v in nodes)


def _layout(nodes, num: NumDesc, numstr: str, out_pre_spaces: int, sign: str) -> str:
    """The processor's output for this digit string as a str.format pattern: each digit the
    processor copied is a placeholder {k} for position k of the digit string."""
    placeholder = "".join("." if c == "." else chr(_PUA + k) for k, c in enumerate(numstr))
    out = _process(nodes, num, placeholder, out_pre_spaces, sign, real=numstr)
    parts = []
    for c in out:
        k = ord(c) - _PUA
        if 0 <= k < len(numstr):
            parts.append("{%d}" % k)
        else:
            parts.append("{{" if c == "{" else "}}" if c == "}" else c)
    return "".join(parts)


def _template(fmt: str):
    nodes, num = parse(fmt)
    return nodes, num.copy()


def to_char_int(value: int, fmt: str, bits: int, cache: dict | None = None) -> str:
    """int4_to_char (bits=32) / int8_to_char (bits=64)."""
    if not fmt:
        return ""
    nodes, num = _template(fmt)
    if num.flag & F_ROMAN:
        if bits == 64 and not _INT32_MIN <= value <= _INT32_MAX:
            raise _int_out_of_range(32)
        return _process(nodes, num, _roman(value), 0, "\0")
    if num.flag & F_EEEE:
        if bits == 32:
            s = "%+.*e" % (num.post, float(value))
            return _process(nodes, num, " " + s[1:] if s[0] == "+" else s, 0, "+")
        s = _sci(Decimal(value), num.post)
        return _process(nodes, num, s if s.startswith("-") else " " + s, 0, "+")
    if num.flag & F_MULTI:
        p = 10.0 ** num.multi
        if bits == 32:
            # (int32) pow(10, multi): out of range is INT_MIN on x86; the product wraps around.
            m = int(p) if p < 2 ** 31 else _INT32_MIN
            value = ((value * m - _INT32_MIN) % (1 << 32)) + _INT32_MIN
        else:
            if not (-9.223372036854775808e18 <= p < 9.223372036854775808e18):
                raise _int_out_of_range(64)
            value = value * int(p)
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise _int_out_of_range(64)
        num.pre += num.multi
    return _finish(nodes, num, str(value), True, cache)


_CTX = Context(prec=400)


@lru_cache(maxsize=None)
def _exponent(post: int) -> Decimal:
    return Decimal(1).scaleb(-post)


def to_char_numeric(value: Decimal, fmt: str, cache: dict | None = None) -> str:
    """numeric_to_char."""
    if not fmt:
        return ""
    nodes, num = _template(fmt)
    if num.flag & F_ROMAN:
        r = int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        if not _INT32_MIN <= r <= _INT32_MAX:
            raise _int_out_of_range(32)
        return _process(nodes, num, _roman(r), 0, "\0")
    if num.flag & F_EEEE:
        s = _sci(value, num.post)
        return _process(nodes, num, s if s.startswith("-") else " " + s, 0, "+")
    if num.flag & F_MULTI:
        value = value.scaleb(num.multi)
        num.pre += num.multi
    x = value.quantize(_exponent(num.post), rounding=ROUND_HALF_UP, context=_CTX)
    orgnum = f"{x:f}"
    if x == 0 and orgnum.startswith("-"):
        orgnum = orgnum[1:]
    return _finish(nodes, num, orgnum, False, cache)


def to_char_float(value: float, fmt: str, single: bool, cache: dict | None = None) -> str:
    """float8_to_char, or float4_to_char when `single` (the value is a float4)."""
    if not fmt:
        return ""
    nodes, num = _template(fmt)
    if num.flag & F_ROMAN:
        if math.isnan(value) or math.isinf(value):
            r = _INT32_MAX
        else:
            r = round(value)  # rint: half to even
            if not _INT32_MIN <= r <= _INT32_MAX:
                r = _INT32_MAX
        return _process(nodes, num, _roman(r), 0, "\0")
    if num.flag & F_EEEE:
        if math.isnan(value) or math.isinf(value):
            return _process(nodes, num, _eeee_hashes(num), 0, "+")
        s = "%+.*e" % (num.post, value)
        return _process(nodes, num, " " + s[1:] if s[0] == "+" else s, 0, "+")
    val = value
    if num.flag & F_MULTI:
        if single:
            with np.errstate(over="ignore"):  # float arithmetic, as in C: inf past the range
                val = float(np.float32(value) * np.float32(10.0 ** num.multi))
        else:
            val = value * 10.0 ** num.multi
        num.pre += num.multi
    digits = _FLT_DIG if single else _DBL_DIG
    pre_len = len(_c_float(abs(val), 0))
    if pre_len >= digits:
        num.post = 0
    elif pre_len + num.post > digits:
        num.post = digits - pre_len
    return _finish(nodes, num, _c_float(val, num.post), False, cache)


# ---------------------------------------------------------------------------------------------
# The kernel

def to_char_kernel(values: pa.Array, fmts: pa.Array) -> pa.Array:
    """to_char(number, text) over a batch: a Python loop per row (no vectorised form of the
    templates). Each distinct template is parsed once, and the processor runs once per output
    shape (sign, padding, length and point of the digit string): the other rows of that shape
    only put their digits into the cached layout. NULL value or template: NULL; an empty
    template: the empty string, as in PostgreSQL."""
    t = values.type
    caches: dict[str, dict] = {}
    fs = fmts.to_pylist()
    if pa.types.is_decimal(t) and len(set(fs)) == 1 and fs[0] and _plain(fs[0]):
        return _numeric_kernel(values, fs[0])
    vs = values.to_pylist()
    if pa.types.is_decimal(t):
        def fn(v, f):
            return to_char_numeric(v, f, caches.setdefault(f, {}))
    elif pa.types.is_floating(t):
        single = t == pa.float32()

        def fn(v, f):
            return to_char_float(v, f, single, caches.setdefault(f, {}))
    else:
        bits = 64 if t.bit_width == 64 else 32

        def fn(v, f):
            return to_char_int(v, f, bits, caches.setdefault(f, {}))
    out = [None if v is None or f is None else fn(v, f) for v, f in zip(vs, fs)]
    return pa.array(out, pa.string())


def _plain(fmt: str) -> bool:
    """A valid template without RN, EEEE or V (a template error waits for a non-NULL value)."""
    try:
        return not parse(fmt)[1].flag & (F_ROMAN | F_EEEE | F_MULTI)
    except SqlError:
        return False


def _numeric_kernel(values: pa.Array, fmt: str) -> pa.Array:
    """to_char(numeric, one template without RN, EEEE or V): rounds the unscaled integers
    (half away from zero) instead of making a Decimal per row."""
    from dataflow.decimal_util import to_unscaled
    unscaled, valid = to_unscaled(values)
    scale = values.type.scale
    nodes, num0 = parse(fmt)
    post = num0.post
    cache: dict = {}
    out: list[str | None] = []
    if post >= scale:
        mul, div = 10 ** (post - scale), 1
    else:
        mul, div = 1, 10 ** (scale - post)
    half = div // 2 if div > 1 else 0
    for u, ok in zip(unscaled.tolist(), valid.tolist()):
        if not ok:
            out.append(None)
            continue
        a = -u if u < 0 else u
        q = a * mul if div == 1 else (a + half) // div
        digits = str(q)
        if post:
            digits = digits.rjust(post + 1, "0")
            digits = digits[:-post] + "." + digits[-post:]
        out.append(_finish(nodes, num0, "-" + digits if u < 0 and q else digits, False, cache))
    return pa.array(out, pa.string())
