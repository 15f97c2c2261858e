"""The function library and the newer types for the query generator (a mixin of `QueryGen`).

Kinds added to gen.py's: interval, time, bytea, uuid, jsonb, textarr (text[]) and intarr
(integer[]), each with literals, casts and the operators and functions producing it. For every
kind, `lib_expr` builds a call of the library (planner/functions/*.py), typed as PostgreSQL types
it: math (sqrt cbrt exp ln log power mod div gcd lcm trunc round sign width_bucket, trigonometry,
& | # ~ << >> ^), strings (concat concat_ws left right lpad rpad repeat reverse position strpos
split_part initcap md5 to_hex ascii chr translate overlay starts_with regexp_* format quote_*,
~ ~* !~ !~* with constant patterns), date/time (date_trunc extract date_part age make_date
make_timestamp make_interval justify_* date +- int, timestamp +- interval, to_char), jsonb
(-> ->> #> #>> @> <@ ? ?| ?& || - jsonb_typeof jsonb_array_length jsonb_build_object/array
to_jsonb jsonb_strip_nulls), arrays (ARRAY[..], subscripts, array_length cardinality
array_position array_cat array_append array_prepend array_remove array_to_string
string_to_array, = ANY, <> ALL, @> <@ &&), bytea (decode encode length md5) and uuid casts.

Never generated: wall-clock and volatile functions (now(), random(), gen_random_uuid()).
Templates never hold literal braces (`'{1,2}'`, JSON): those are `Lit` arguments.
"""

from __future__ import annotations

from tests.fuzz.sqlast import (BOOL, BYTEA, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, INTARR, INTERVAL,
                               INTS, JSONB, NUMERIC, TEXT, TEXTARR, TIME, TIMESTAMP, UUID, Expr, Lit,
                               Op, arith_type, base_type, is_number, kind, null_of, orderable)

NEW_KINDS = ["interval", "time", "bytea", "uuid", "jsonb", "textarr", "intarr"]

INTERVAL_TEXT = ["'1 day'", "'1 day 2 hours'", "'-1 mon'", "'2 hours 30 minutes'", "'1.5 days'",
                 "'P1Y2M3D'", "'@ 1 hour ago'", "'0'", "'1 week'", "'-00:00:01'", "'25:00:00'",
                 "'1 year'", "'0.5 mons'", "'bad'"]
TIME_TEXT = ["'00:00'", "'12:00:00'", "'23:59:59.999999'", "'1:2:3'", "'13:14:15.5'", "'25:00'",
             "'x'"]
BYTEA_TEXT = ["'\\x'", "'\\x00ff'", "'abc'", "'\\xDEAD'", "'a\\000b'", "'\\x4'"]
UUID_TEXT = ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'",
             "'{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}'", "'a0eebc999c0b4ef8bb6d6bb9bd380a1'"]
JSONB_TEXT = ["'{}'", "'[]'", "'{\"a\": 1}'", "'{\"a\": [1, 2, {\"b\": null}]}'", "'[1, 2, 3]'",
              "'\"x\"'", "'null'", "'3.25'", "'false'", "'{\"b\": \"t\", \"a\": {\"c\": 1}}'",
              "'[\"a\", \"b\"]'", "'{\"a\": 1, \"a\": 2}'", "'{bad'"]
TEXTARR_TEXT = ["'{}'", "'{a,b,c}'", "'{\"x y\",NULL,\"\"}'", "'{a}'", "'{b,a}'"]
INTARR_TEXT = ["'{}'", "'{1,2}'", "'{3,NULL,1}'", "'{7}'", "'{-1,0,1}'", "'{x}'"]
JSON_KEYS = ["'a'", "'b'", "'c'", "'ab'", "''", "'x'"]
JSON_PATHS = ["'{a}'", "'{a,b}'", "'{b,0}'", "'{a,0}'", "'{}'", "'{1}'", "'{a,2,b}'"]
REGEX = ["'^a'", "'b$'", "'a.c'", "'[0-9]+'", "'^$'", "'(ab)+'", "'a|b'", "'x*'", "'^[a-z]+$'",
         "'\\.'", "'é'"]
COUNT_REGEX = [p for p in REGEX if "^" not in p and p != "'x*'"]
TS_UNITS = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
            "quarter", "year", "decade", "century", "millennium"]
TS_FIELDS = ["year", "month", "day", "hour", "minute", "second", "dow", "doy", "epoch", "quarter",
             "week", "isodow", "isoyear", "millisecond", "microsecond", "decade", "century",
             "julian"]
TIME_FIELDS = ["hour", "minute", "second", "epoch", "millisecond", "microsecond"]
INTERVAL_FIELDS = ["year", "month", "day", "hour", "minute", "second", "epoch", "millisecond",
                   "quarter", "decade", "century"]
TO_CHAR = ["'YYYY-MM-DD'", "'HH24:MI:SS.US'", "'Day Mon DD YYYY'", "'FMMonth FMDD'", "'YYYY\"Q\"Q'",
           "'DDD IYYY-IW'", "'HH12 AM'", "'J'", "'W WW'", "'yyyy-mm-dd\"T\"hh24:mi'", "'TMDay'",
           "'CC Y,YYY'", "''"]
FORMATS = [("'%s'", 1), ("'%s-%s'", 2), ("'[%10s]'", 1), ("'%-5s|'", 1), ("'%L'", 1), ("'%I'", 1),
           ("'%1$s %1$s'", 1), ("'%%%s'", 1), ("'%2$s %1$s'", 2)]


def fn(name: str, args: list[Expr], typ: str) -> Op:
    return Op(name + "(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")", list(args), typ)


def binop(op: str, a: Expr, b: Expr, typ: str) -> Op:
    return Op("({0} " + op + " {1})", [a, b], typ)


def lit(text: str, typ: str = TEXT) -> Lit:
    return Lit(text, typ)


def typed(e: Expr) -> Expr:
    """A string constant typed text: PostgreSQL reads a bare 'x' as unknown, which its
    polymorphic functions (to_jsonb, array_agg, jsonb_agg) refuse."""
    if isinstance(e, Lit) and e.typ == TEXT and e.text.startswith("'"):
        return Op("CAST({0} AS text)", [e], TEXT)
    return e


def elem_kind(k: str) -> str:
    return {"textarr": "text", "intarr": "int"}[k]


class LibraryGen:
    """Mixed into QueryGen: needs self.rng, self.chance, self.expr, self.leaf, self.literal."""

    # ---- literals of the new kinds ---------------------------------------------------------

    def lib_literal(self, k: str) -> Expr:
        r = self.rng
        def c(pool, typ, prefix=None):
            v = r.choice(pool)
            if prefix and self.chance(0.4):
                return Lit(f"{prefix} {v}", typ)
            return Lit(f"CAST({v} AS {typ})" if self.chance(0.6) else f"{v}::{typ}", typ)
        if k == "interval":
            return c(INTERVAL_TEXT[:-1] if self.chance(0.95) else INTERVAL_TEXT, INTERVAL, "INTERVAL")
        if k == "time":
            return c(TIME_TEXT[:-2] if self.chance(0.95) else TIME_TEXT, TIME, "TIME")
        if k == "bytea":
            if self.chance(0.2):
                return Lit(r.choice(["decode('00ff', 'hex')", "decode('YWJj', 'base64')",
                                     "decode('a\\\\000', 'escape')"]), BYTEA)
            return c(BYTEA_TEXT[:-1] if self.chance(0.95) else BYTEA_TEXT, BYTEA)
        if k == "uuid":
            return c(UUID_TEXT[:-1] if self.chance(0.95) else UUID_TEXT, UUID)
        if k == "jsonb":
            return c(JSONB_TEXT[:-1] if self.chance(0.97) else JSONB_TEXT, JSONB)
        if k == "textarr":
            if self.chance(0.4):
                items = [self.literal("text") for _ in range(r.randint(1, 3))]
                return Lit("ARRAY[" + ", ".join(i.text for i in items) + "]", TEXTARR)
            if self.chance(0.1):
                return Lit("ARRAY[]::text[]", TEXTARR)
            return c(TEXTARR_TEXT, TEXTARR)
        if k == "intarr":
            if self.chance(0.4):
                items = [r.choice(["1", "2", "0", "(-5)", "NULL", "2147483647"]) for _ in range(r.randint(1, 3))]
                if all(i == "NULL" for i in items):
                    items[0] = "1"
                return Lit("ARRAY[" + ", ".join(items) + "]", INTARR)
            if self.chance(0.1):
                return Lit("ARRAY[]::integer[]", INTARR)
            return c(INTARR_TEXT[:-1] if self.chance(0.95) else INTARR_TEXT, INTARR)
        raise ValueError(k)

    # ---- helpers ---------------------------------------------------------------------------

    def _int4(self, atoms, depth, sub) -> Expr:
        """An integer expression typed integer (casting a smallint/bigint one)."""
        a = self.expr("int", atoms, depth, sub)
        if a.typ != INT4:
            a = Op("CAST({0} AS integer)", [a], INT4)
        return a

    def _small_int(self, choices=("0", "1", "2", "3", "(-1)", "5")) -> Lit:
        return Lit(self.rng.choice(list(choices)), INT4)

    def _ts(self, atoms, depth, sub) -> Expr:
        """A timestamp expression (a date one cast to timestamp: PostgreSQL would take a date to
        timestamptz, the session time zone's type, for most date/time functions)."""
        if self.chance(0.25):
            return Op("CAST({0} AS timestamp)", [self.expr("date", atoms, depth, sub)], TIMESTAMP)
        a = self.expr("timestamp", atoms, depth, sub)
        if a.typ != TIMESTAMP:
            a = Op("CAST({0} AS timestamp)", [a], TIMESTAMP)
        return a

    def _num_arg(self, atoms, depth, sub, kinds=("int", "numeric", "float")) -> Expr:
        return self.expr(self.rng.choice(list(kinds)), atoms, depth, sub)

    # ---- the library, by result kind -------------------------------------------------------

    def lib_expr(self, k: str, atoms, depth, sub) -> Expr | None:
        gen = getattr(self, f"_lib_{k}", None)
        return gen(atoms, depth, sub) if gen is not None else None

    def _lib_int(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        c = r.randrange(16)
        if c == 0:
            a, b = e("int"), e("int") if self.chance(0.4) else self._small_int(("2", "3", "(-7)", "0", "10"))
            return fn("mod", [a, b], arith_type(a.typ, b.typ))
        if c == 1:
            a, b = e("int"), e("int")
            t = arith_type(a.typ, b.typ)
            return fn(r.choice(["gcd", "lcm"]), [a, b], INT4 if t == INT2 else t)
        if c == 2:
            a, b = e("int"), e("int")
            return binop(r.choice(["&", "|", "#"]), a, b, arith_type(a.typ, b.typ))
        if c == 3:
            a = e("int")
            if self.chance(0.3):
                return Op("(~ {0})", [a], a.typ)
            n = self._small_int(("0", "1", "3", "31", "33", "(-1)", "64", "15"))
            return binop(r.choice(["<<", ">>"]), a, n, a.typ)
        if c == 4:
            t, p = e("text"), e("text") if self.chance(0.3) else self.literal("text")
            if self.chance(0.5):
                return fn("strpos", [t, p], INT4)
            return Op("position({1} in {0})", [t, p], INT4)
        if c == 5:
            return fn(r.choice(["ascii", "octet_length", "bit_length"]), [e("text")], INT4)
        if c == 6:
            return fn(r.choice(["length", "octet_length"]), [e("bytea")], INT4)
        if c == 7:
            k = r.choice(["textarr", "intarr"])
            a = e(k)
            form = r.choice(["array_length({0}, 1)", "cardinality({0})", "array_upper({0}, 1)",
                             "array_lower({0}, 1)", "array_ndims({0})", "array_length({0}, 2)"])
            return Op(form, [a], INT4)
        if c == 8:
            k = r.choice(["textarr", "intarr"])
            arr = e(k)
            x = self._int4(atoms, depth, sub) if k == "intarr" else e("text")
            return fn("array_position", [arr, x], INT4)
        if c == 9:
            arr = e("intarr")
            i = self._small_int(("1", "2", "0", "3", "(-1)")) if self.chance(0.7) else self._int4(atoms, depth, sub)
            return Op("({0})[{1}]", [arr, i], INT4)
        if c == 10:
            j = e("jsonb")
            if self.chance(0.5):
                return fn("jsonb_array_length", [j], INT4)
            return Op("CAST(({0} ->> {1}) AS integer)", [j, lit(r.choice(JSON_KEYS))], INT4) \
                if self.chance(0.5) else Op("CAST(({0} -> {1}) AS integer)", [j, lit(r.choice(JSON_KEYS))], INT4)
        if c == 11:
            x = self._num_arg(atoms, depth, sub, ("float", "numeric", "int"))
            lo, hi = r.choice([("0", "10"), ("10", "0"), ("(-5)", "5"), ("1", "1")])
            n = r.choice(["4", "1", "3", "0"])
            if kind(x.typ) == "float" or (kind(x.typ) == "int" and self.chance(0.5)):
                lo, hi = f"CAST({lo} AS double precision)", f"CAST({hi} AS double precision)"
            else:
                lo, hi = f"CAST({lo} AS numeric)", f"CAST({hi} AS numeric)"
            return Op(f"width_bucket({{0}}, {lo}, {hi}, {n})", [x], INT4)
        if c == 12:
            # (patterns with ^ or matching the empty string are refused for counts: rarely)
            pool = REGEX if self.f.unsupported and self.chance(0.05) else COUNT_REGEX
            return fn("regexp_count", [e("text"), lit(r.choice(pool))], INT4)
        if c == 13 and self.f.date_arith:
            return binop("-", e("date"), e("date"), INT4) if self.chance(0.7) else None
        if c == 14:
            return Op("(sign({0}))::integer", [e("int")], INT4)
        return None

    def _lib_numeric(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        num = lambda: self.expr(r.choice(["numeric", "numeric", "int"]), atoms, depth, sub)  # noqa: E731
        c = r.randrange(11)
        if c == 0:
            a = e("numeric")
            f = r.choice(["sqrt", "exp", "ln", "log", "log10"])
            if f == "exp" and self.chance(0.7):
                a = fn("least", [a, Lit("CAST(40 AS numeric)", NUMERIC)], NUMERIC)
            elif f != "exp" and self.chance(0.6):
                a = Op("(abs({0}) + 1)", [a], NUMERIC)
            return fn(f, [a], NUMERIC)
        if c == 1:
            a = e("numeric")
            if self.chance(0.5):
                return Op("power({0}, {1})", [a, self._small_int(("2", "3", "0", "(-1)", "10"))], NUMERIC)
            return Op("({0} ^ {1})", [a, Lit(r.choice(["2", "0.5", "(-2)", "3"]), NUMERIC if self.chance(0.5) else INT4)], NUMERIC)
        if c == 2:
            return Op("log({0}, {1})", [Lit(r.choice(["2.0", "10.0", "0.5", "1.0"]), NUMERIC),
                                        Op("(abs({0}) + 1)", [e("numeric")], NUMERIC)], NUMERIC)
        if c == 3:
            a = num()
            if self.chance(0.4):
                return fn("trunc", [a], NUMERIC) if kind(a.typ) == "numeric" else Op("trunc({0}, 0)", [a], NUMERIC)
            f = r.choice(["trunc", "round"])
            return Op(f + "({0}, " + r.choice(["0", "1", "2", "3", "(-1)", "(-2)", "10"]) + ")", [a], NUMERIC)
        if c == 4:
            a, b = num(), num()
            if kind(a.typ) == "int" and kind(b.typ) == "int":
                a = Op("CAST({0} AS numeric)", [a], NUMERIC)
            return fn(r.choice(["div", "mod", "gcd", "lcm"]), [a, b], NUMERIC)
        if c == 5:
            return fn("sign", [e("numeric")], NUMERIC)
        if c == 6:
            # extract is numeric (PostgreSQL 14+)
            src = r.choice(["timestamp", "date", "time", "interval"])
            fields = {"timestamp": TS_FIELDS, "date": TS_FIELDS, "time": TIME_FIELDS,
                      "interval": INTERVAL_FIELDS}[src]
            a = self._ts(atoms, depth, sub) if src == "timestamp" else e(src)
            return Op(f"extract({r.choice(fields)} from {{0}})", [a], NUMERIC)
        if c == 7:
            j = e("jsonb")
            return Op("CAST(({0} -> {1}) AS numeric)", [j, lit(r.choice(JSON_KEYS))], NUMERIC)
        if c == 8:
            return fn("abs", [e("numeric")], NUMERIC)
        return None

    def _lib_float(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        fl = lambda: self.expr(r.choice(["float", "float", "int"]), atoms, depth, sub)  # noqa: E731
        c = r.randrange(10)
        if c == 0:
            f = r.choice(["sqrt", "cbrt", "exp", "ln", "log", "log10"])
            a = fl()
            if f in ("sqrt", "ln", "log", "log10") and self.chance(0.6):
                a = Op("(abs({0}) + 1)", [a], FLOAT8 if kind(a.typ) == "float" else a.typ)
            return fn(f, [a], FLOAT8)
        if c == 1:
            f = r.choice(["sin", "cos", "tan", "cot", "asin", "acos", "atan", "sind", "cosd", "tand",
                          "asind", "acosd", "atand", "sinh", "cosh", "tanh", "asinh", "acosh",
                          "atanh", "degrees", "radians"])
            return fn(f, [fl()], FLOAT8)
        if c == 2:
            return fn(r.choice(["atan2", "atan2d"]), [fl(), fl()], FLOAT8)
        if c == 3:
            a, b = fl(), fl()
            if self.chance(0.5):
                return fn(r.choice(["power", "pow"]), [a, b], FLOAT8)
            return binop("^", a, b, FLOAT8)
        if c == 4:
            return fn(r.choice(["trunc", "sign"]), [fl()], FLOAT8)
        if c == 5:
            src = r.choice(["timestamp", "time", "interval"])
            fields = {"timestamp": TS_FIELDS, "time": TIME_FIELDS, "interval": INTERVAL_FIELDS}[src]
            a = self._ts(atoms, depth, sub) if src == "timestamp" else e(src)
            return Op(f"date_part('{r.choice(fields)}', {{0}})", [a], FLOAT8)
        if c == 6:
            return Lit("pi()", FLOAT8)
        if c == 7:
            j = e("jsonb")
            return Op("CAST(({0} -> {1}) AS double precision)", [j, lit(r.choice(JSON_KEYS))], FLOAT8)
        return None

    def _lib_text(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        t = lambda: e("text")  # noqa: E731
        anyk = lambda: e(r.choice(["int", "numeric", "float", "text", "bool", "date", "timestamp",  # noqa: E731
                                   "interval", "time", "bytea", "uuid", "jsonb", "intarr", "textarr"]))
        c = r.randrange(24)
        if c == 0:
            return fn("concat", [anyk() for _ in range(r.randint(1, 4))], TEXT)
        if c == 1:
            return fn("concat_ws", [self.literal("text") if self.chance(0.8) else t()] +
                      [anyk() for _ in range(r.randint(1, 3))], TEXT)
        if c == 2:
            return Op(r.choice(["left", "right"]) + "({0}, {1})",
                      [t(), self._small_int(("0", "1", "2", "(-1)", "(-5)", "10"))], TEXT)
        if c == 3:
            args = [t(), self._small_int(("0", "1", "3", "5", "(-1)"))]
            if self.chance(0.6):
                args.append(Lit(r.choice(["'x'", "''", "'ab'", "' '"]), TEXT))
            return fn(r.choice(["lpad", "rpad"]), args, TEXT)
        if c == 4:
            return fn("repeat", [t(), self._small_int(("0", "1", "2", "3", "(-1)"))], TEXT)
        if c == 5:
            return fn(r.choice(["reverse", "initcap", "md5", "quote_literal", "quote_ident",
                                "quote_nullable"]), [t()], TEXT)
        if c == 6:
            return fn("split_part", [t(), Lit(r.choice(["','", "' '", "'a'", "''", "'ab'"]), TEXT),
                                     self._small_int(("1", "2", "(-1)", "3"))], TEXT)
        if c == 7:
            a = e("int")
            if a.typ == INT2:
                a = Op("CAST({0} AS integer)", [a], INT4)
            return fn("to_hex", [a], TEXT)
        if c == 8:
            n = Lit(r.choice(["65", "97", "8364", "32", "1114111", "48"]), INT4) if self.chance(0.9) \
                else self._int4(atoms, 0, sub)
            return fn("chr", [n], TEXT)
        if c == 9:
            return fn("translate", [t(), Lit(r.choice(["'ab'", "'a'", "''", "'xyz'"]), TEXT),
                                    Lit(r.choice(["'x'", "'XY'", "''", "'1'"]), TEXT)], TEXT)
        if c == 10:
            n = r.choice(["1", "2", "0", "5"])
            form = "overlay({0} placing {1} from " + n + (" for " + r.choice(["0", "1", "3"]) if self.chance(0.5) else "") + ")"
            return Op(form, [t(), self.literal("text")], TEXT)
        if c == 11:
            args = [t(), Lit(r.choice(REGEX), TEXT), Lit(r.choice(["'x'", "''", "'<\\&>'", "'\\1'"]), TEXT)]
            if self.chance(0.5):
                args.append(Lit(r.choice(["'g'", "'i'", "'gi'"]), TEXT))
            return fn("regexp_replace", args, TEXT)
        if c == 12:
            fmt, n = r.choice(FORMATS)
            f = Lit(fmt, TEXT)
            args = [anyk() if "%I" not in fmt else t() for _ in range(n)]
            return fn("format", [f] + args, TEXT)
        if c == 13:
            return fn("encode", [e("bytea"), Lit(r.choice(["'hex'", "'base64'", "'escape'"]), TEXT)], TEXT)
        if c == 14:
            j = e("jsonb")
            if self.chance(0.5):
                return binop("->>", j, lit(r.choice(JSON_KEYS)) if self.chance(0.7) else self._small_int(("0", "1", "(-1)")), TEXT)
            return binop("#>>", j, lit(r.choice(JSON_PATHS)), TEXT)
        if c == 15:
            return fn("jsonb_typeof", [e("jsonb")], TEXT)
        if c == 16:
            arr = e(r.choice(["textarr", "intarr"]))
            args = [arr, Lit(r.choice(["','", "''", "' | '"]), TEXT)]
            if self.chance(0.4):
                args.append(Lit(r.choice(["'*'", "''"]), TEXT))
            return fn("array_to_string", args, TEXT)
        if c == 17:
            return fn("to_char", [self._ts(atoms, depth, sub), Lit(r.choice(TO_CHAR), TEXT)], TEXT)
        if c == 18:
            arr = e("textarr")
            i = self._small_int(("1", "2", "0", "3")) if self.chance(0.8) else self._int4(atoms, 0, sub)
            return Op("({0})[{1}]", [arr, i], TEXT)
        if c == 19:
            src = r.choice(["interval", "time", "uuid", "bytea", "jsonb", "textarr", "intarr"])
            return Op("CAST({0} AS text)" if self.chance(0.6) else "({0})::text", [e(src)], TEXT)
        if c == 20:
            n = r.choice(["1", "2", "3", "5"])
            return Op(f"CAST({{0}} AS {r.choice(['varchar', 'character', 'char'])}({n}))", [t()], TEXT)
        if c == 21:
            return fn("md5", [e("bytea")], TEXT)
        if c == 22:
            return fn(r.choice(["upper", "lower"]), [t()], TEXT)
        return None

    def _lib_bool(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        c = r.randrange(10)
        if c == 0:
            return fn("starts_with", [e("text"), e("text") if self.chance(0.3) else self.literal("text")], BOOL)
        if c == 1:
            op = r.choice(["~", "~*", "!~", "!~*"])
            return binop(op, e("text"), Lit(r.choice(REGEX), TEXT), BOOL)
        if c == 2:
            args = [e("text"), Lit(r.choice(REGEX), TEXT)]
            if self.chance(0.3):
                args.append(Lit("'i'", TEXT))
            return fn("regexp_like", args, BOOL)
        if c == 3:
            a, b = e("jsonb"), e("jsonb")
            return binop(r.choice(["@>", "<@"]), a, b, BOOL)
        if c == 4:
            j = e("jsonb")
            if self.chance(0.6):
                return binop("?", j, lit(r.choice(JSON_KEYS)), BOOL)
            return binop(r.choice(["?|", "?&"]), j, Lit(r.choice(["ARRAY['a', 'b']", "ARRAY['c']",
                                                                   "ARRAY[]::text[]"]), TEXTARR), BOOL)
        if c == 5:
            k = r.choice(["textarr", "intarr"])
            return binop(r.choice(["@>", "<@", "&&"]), e(k), e(k), BOOL)
        if c in (6, 7):
            k = r.choice(["textarr", "intarr"])
            arr = e(k)
            x = self._int4(atoms, depth, sub) if k == "intarr" else e("text")
            op = r.choice(["=", "=", "<>", "<", ">="])
            q = r.choice(["ANY", "ALL", "SOME"])
            return Op("({0} " + op + " " + q + " ({1}))", [x, arr], BOOL)
        if c == 8:
            j = e("jsonb")
            return Op("CAST(({0} -> {1}) AS boolean)", [j, lit(r.choice(JSON_KEYS))], BOOL)
        return None

    def _lib_date(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        c = r.randrange(4)
        if c == 0:
            y = r.choice(["2020", "1999", "1", "(-44)", "0", "2021"])
            m = r.choice(["1", "2", "12", "13"])
            d = r.choice(["1", "29", "31", "28"])
            return Lit(f"make_date({y}, {m}, {d})", DATE)
        if c == 1 and self.f.date_arith:
            return binop(r.choice(["+", "-"]), self.expr("date", atoms, depth, sub),
                         self.expr("int", atoms, 0) if self.chance(0.5) else self._small_int(("1", "30", "(-1)", "365")), DATE)
        if c == 2 and self.f.date_arith:
            return binop("+", self._small_int(("1", "7")), self.expr("date", atoms, depth, sub), DATE)
        return None

    def _lib_timestamp(self, atoms, depth, sub) -> Expr | None:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        c = r.randrange(6)
        if c == 0:
            return Op(f"date_trunc('{r.choice(TS_UNITS)}', {{0}})", [self._ts(atoms, depth, sub)], TIMESTAMP)
        if c == 1:
            return binop(r.choice(["+", "-"]), self._ts(atoms, depth, sub), e("interval"), TIMESTAMP)
        if c == 2:
            return binop("+", e("interval"), e("date") if self.chance(0.5) else self._ts(atoms, depth, sub), TIMESTAMP)
        if c == 3:
            return binop("+", e("date"), e("time"), TIMESTAMP)
        if c == 4:
            return Lit(f"make_timestamp({r.choice(['2020', '1999', '1'])}, {r.choice(['1', '2', '12'])}, "
                       f"{r.choice(['1', '29', '30'])}, {r.choice(['0', '23', '24'])}, {r.choice(['0', '59'])}, "
                       f"{r.choice(['0', '1.5', '59.999999', '60'])})", TIMESTAMP)
        return None

    # ---- the new kinds ---------------------------------------------------------------------

    def _expr_interval(self, atoms, depth, sub) -> Expr:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        c = r.randrange(12)
        if c == 0:
            return binop("-", self._ts(atoms, depth, sub), self._ts(atoms, depth, sub), INTERVAL)
        if c == 1:
            return binop("-", e("time"), e("time"), INTERVAL)
        if c == 2:
            return fn("age", [self._ts(atoms, depth, sub), self._ts(atoms, depth, sub)], INTERVAL)
        if c == 3:
            return binop(r.choice(["+", "-"]), e("interval"), e("interval"), INTERVAL)
        if c == 4:
            return Op("(- {0})", [e("interval")], INTERVAL)
        if c == 5:
            n = self._num_arg(atoms, 0, sub) if self.chance(0.3) else \
                Lit(r.choice(["2", "0.5", "(-1)", "1.5", "0", "CAST(0.25 AS double precision)"]), NUMERIC)
            if self.chance(0.2):
                return binop("/", e("interval"), n, INTERVAL)
            return binop("*", e("interval"), n, INTERVAL) if self.chance(0.7) else binop("*", n, e("interval"), INTERVAL)
        if c == 6:
            return fn(r.choice(["justify_days", "justify_hours", "justify_interval"]), [e("interval")], INTERVAL)
        if c == 7:
            n = r.randint(1, 7)
            vals = [r.choice(["0", "1", "2", "(-1)", "12", "100"]) for _ in range(n - 1)]
            last = r.choice(["0", "1", "(-3)", "25"]) if n < 7 else r.choice(["0", "1.5", "59.999999", "(-0.5)"])
            return Lit(f"make_interval({', '.join(vals + [last])})", INTERVAL)
        if c == 8:
            u = r.choice([x for x in TS_UNITS if x != "week"])
            return Op(f"date_trunc('{u}', {{0}})", [e("interval")], INTERVAL)
        if c == 9:
            return Op("CAST({0} AS interval)", [Lit(r.choice(INTERVAL_TEXT), TEXT)], INTERVAL)
        if c == 10:
            return Op("CAST({0} AS interval)", [e("time")], INTERVAL)
        return self.leaf("interval", atoms)

    def _expr_time(self, atoms, depth, sub) -> Expr:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        c = r.randrange(6)
        if c == 0:
            return Op("CAST({0} AS time)" if self.chance(0.5) else "({0})::time", [self._ts(atoms, depth, sub)], TIME)
        if c == 1:
            return binop(r.choice(["+", "-"]), e("time"), e("interval"), TIME)
        if c == 2:
            return binop("+", e("interval"), e("time"), TIME)
        if c == 3:
            return Op("CAST({0} AS time)", [Lit(r.choice(TIME_TEXT), TEXT)], TIME)
        if c == 4:
            return Op("CAST({0} AS time)", [e("interval")], TIME)
        return self.leaf("time", atoms)

    def _expr_bytea(self, atoms, depth, sub) -> Expr:
        r = self.rng
        c = r.randrange(5)
        if c == 0:
            v = r.choice(["'00ff'", "'DEADbeef'", "''", "'abc'", "'0'"])
            return Op("decode({0}, 'hex')", [Lit(v, TEXT)], BYTEA)
        if c == 1:
            return Op("decode({0}, {1})", [self.expr("text", atoms, depth, sub),
                                           Lit(r.choice(["'escape'", "'base64'"]), TEXT)], BYTEA)
        if c == 2:
            return Op("CAST({0} AS bytea)", [self.expr("text", atoms, depth, sub)], BYTEA)
        if c == 3:
            return binop("||", self.expr("bytea", atoms, depth, sub), self.expr("bytea", atoms, depth, sub), BYTEA)
        return self.leaf("bytea", atoms)

    def _expr_uuid(self, atoms, depth, sub) -> Expr:
        if self.chance(0.3):
            return Op("CAST({0} AS uuid)", [Lit(self.rng.choice(UUID_TEXT), TEXT)], UUID)
        if self.chance(0.3):
            return Op("CAST(CAST({0} AS text) AS uuid)", [self.leaf("uuid", atoms)], UUID)
        return self.leaf("uuid", atoms)

    def _expr_jsonb(self, atoms, depth, sub) -> Expr:
        r = self.rng
        e = lambda k: self.expr(k, atoms, depth, sub)  # noqa: E731
        anyk = lambda: e(r.choice(["int", "numeric", "text", "bool", "jsonb", "intarr", "textarr",  # noqa: E731
                                   "date", "float", "uuid"]))
        c = r.randrange(11)
        if c == 0:
            key = lit(r.choice(JSON_KEYS)) if self.chance(0.7) else self._small_int(("0", "1", "(-1)", "5"))
            return binop("->", e("jsonb"), key, JSONB)
        if c == 1:
            return binop("#>", e("jsonb"), lit(r.choice(JSON_PATHS)), JSONB)
        if c == 2:
            return binop("||", e("jsonb"), e("jsonb"), JSONB)
        if c == 3:
            key = lit(r.choice(JSON_KEYS)) if self.chance(0.7) else self._small_int(("0", "(-1)"))
            return binop("-", e("jsonb"), key, JSONB)
        if c == 4:
            args = []
            for _ in range(r.randint(0, 2)):
                args += [lit(r.choice(JSON_KEYS[:4])), anyk()]
            return fn("jsonb_build_object", args, JSONB)
        if c == 5:
            return fn("jsonb_build_array", [anyk() for _ in range(r.randint(0, 3))], JSONB)
        if c == 6:
            return fn("to_jsonb", [typed(anyk())], JSONB)
        if c == 7:
            return fn("jsonb_strip_nulls", [e("jsonb")], JSONB)
        if c == 8:
            return Op("CAST({0} AS jsonb)", [Lit(r.choice(JSONB_TEXT), TEXT)], JSONB)
        if c == 9:
            return fn("jsonb_extract_path", [e("jsonb")] + [lit(r.choice(JSON_KEYS[:3])) for _ in range(r.randint(1, 2))], JSONB)
        return self.leaf("jsonb", atoms)

    def _expr_arr(self, k: str, atoms, depth, sub) -> Expr:
        r = self.rng
        t = TEXTARR if k == "textarr" else INTARR
        arr = lambda: self.expr(k, atoms, depth, sub)  # noqa: E731
        el = (lambda: self.expr("text", atoms, depth, sub)) if k == "textarr" else \
            (lambda: self._int4(atoms, depth, sub))
        c = r.randrange(9)
        if c == 0:
            items = [el() for _ in range(r.randint(1, 3))]
            return Op("ARRAY[" + ", ".join(f"{{{i}}}" for i in range(len(items))) + "]", items, t)
        if c == 1:
            return fn("array_append", [arr(), el()], t)
        if c == 2:
            return fn("array_prepend", [el(), arr()], t)
        if c == 3:
            return fn("array_cat", [arr(), arr()], t) if self.chance(0.5) else binop("||", arr(), arr(), t)
        if c == 4:
            # (a bare 'x' next to an array is read as an array literal by PostgreSQL)
            return binop("||", arr(), typed(el()), t) if self.chance(0.5) else binop("||", typed(el()), arr(), t)
        if c == 5:
            return fn("array_remove", [arr(), el()], t)
        if c == 6:
            if k == "textarr":
                if self.chance(0.5):
                    return fn("string_to_array", [self.expr("text", atoms, depth, sub),
                                                  Lit(r.choice(["','", "' '", "''", "'a'"]), TEXT)], t)
                return Op("CAST({0} AS text[])", [self.expr("intarr", atoms, depth, sub)], t)
            return Op("CAST({0} AS integer[])", [self.expr("textarr", atoms, depth, sub)], t)
        if c == 7:
            return Op(f"CAST({{0}} AS {t})", [Lit(r.choice(TEXTARR_TEXT if k == "textarr" else INTARR_TEXT), TEXT)], t)
        return self.leaf(k, atoms)

    def _expr_textarr(self, atoms, depth, sub) -> Expr:
        return self._expr_arr("textarr", atoms, depth, sub)

    def _expr_intarr(self, atoms, depth, sub) -> Expr:
        return self._expr_arr("intarr", atoms, depth, sub)

    # ---- aggregates ------------------------------------------------------------------------

    def lib_aggregate(self, atoms: list[Expr]) -> Expr:
        r = self.rng
        c = r.randrange(7)
        if c == 0:
            f = r.choice(["bool_and", "bool_or", "every"])
            return Op(f + "({0})", [self.expr("bool", atoms, 1)], BOOL)
        if c == 1:
            x = self.expr("text", atoms, 1)
            sep = Lit(r.choice(["','", "''", "' | '"]), TEXT)
            distinct = "DISTINCT " if self.chance(0.2) else ""
            order = " ORDER BY {0}" + (" DESC" if self.chance(0.4) else "") + \
                r.choice(["", "", " NULLS FIRST", " NULLS LAST"])
            return Op(f"string_agg({distinct}{{0}}, {{1}}{order})", [x, sep], TEXT)
        if c == 2:
            k = r.choice(["int", "text"])
            x = self._int4(atoms, 1, False) if k == "int" else typed(self.expr("text", atoms, 1))
            distinct = "DISTINCT " if self.chance(0.2) else ""
            order = " ORDER BY {0}" + (" DESC" if self.chance(0.4) else "") + r.choice(["", " NULLS FIRST"])
            return Op(f"array_agg({distinct}{{0}}{order})", [x], INTARR if k == "int" else TEXTARR)
        if c == 3:
            x = typed(self.expr(r.choice(["int", "text", "bool"]), atoms, 1))
            return Op("jsonb_agg({0} ORDER BY {0})", [x], JSONB)
        if c in (4, 5):
            f = r.choice(["variance", "var_samp", "var_pop", "stddev", "stddev_samp", "stddev_pop"])
            x = self.expr(r.choice(["int", "numeric", "float"]), atoms, 1)
            distinct = "DISTINCT " if self.chance(0.1) else ""
            return Op(f"{f}({distinct}{{0}})", [x], FLOAT8 if kind(x.typ) == "float" else NUMERIC)
        k = r.choice(["int", "numeric", "float", "text", "date", "timestamp", "time"])
        x = self.expr(k, atoms, 1)
        return Op(r.choice(["min(DISTINCT {0})", "max(DISTINCT {0})"]), [x], base_type(x.typ))

    def with_filter(self, agg: Expr, atoms: list[Expr]) -> Expr:
        """`agg FILTER (WHERE cond)`."""
        cond = self.expr("bool", atoms, 1)
        if isinstance(agg, Lit):
            return Op(agg.text + " FILTER (WHERE {0})", [cond], agg.typ)
        if isinstance(agg, Op):
            n = len(agg.args)
            return Op(agg.template + f" FILTER (WHERE {{{n}}})", list(agg.args) + [cond], agg.typ)
        return agg

    # ---- set-returning functions -----------------------------------------------------------

    def srf_call(self, atoms: list[Expr]) -> Expr:
        """A set-returning call: generate_series over integers or timestamps, or unnest of an
        array; its arguments may be columns of `atoms` (PostgreSQL's implicit LATERAL)."""
        r = self.rng
        c = r.randrange(5)
        ints = [a for a in atoms if kind(a.typ) == "int"]
        arrs = [a for a in atoms if kind(a.typ) in ("textarr", "intarr")]
        if c == 0 and ints:
            col = r.choice(ints)
            t = INT8 if col.typ == INT8 else INT4
            return Op("generate_series(" + r.choice(["0", "1", "(-1)"]) + ", ({0} % 4))", [col], t)
        if c == 1 and arrs:
            a = r.choice(arrs)
            return Op("unnest({0})", [a], TEXT if kind(a.typ) == "textarr" else INT4)
        if c == 2:
            k = r.choice(["textarr", "intarr"])
            a = self.lib_literal(k) if self.chance(0.7) else self.expr(k, atoms, 1)
            return Op("unnest({0})", [a], TEXT if k == "textarr" else INT4)
        if c == 3:
            lo, hi = r.choice([("TIMESTAMP '2020-01-30'", "TIMESTAMP '2020-05-01'"),
                               ("TIMESTAMP '2020-01-01 10:00'", "TIMESTAMP '2020-01-01 08:00'"),
                               ("TIMESTAMP '2000-02-28'", "TIMESTAMP '2000-03-02'")])
            step = r.choice(["INTERVAL '1 mon'", "INTERVAL '1 day'", "INTERVAL '-1 hour'",
                             "INTERVAL '1 day 12 hours'"])
            return Lit(f"generate_series({lo}, {hi}, {step})", TIMESTAMP)
        lo, hi = r.choice([("1", "3"), ("0", "0"), ("3", "1"), ("(-2)", "2")])
        step = r.choice(["", "", ", 2", ", (-1)"])
        return Lit(f"generate_series({lo}, {hi}{step})", INT4)


def is_srf(e: Expr) -> bool:
    text = e.text if isinstance(e, Lit) else getattr(e, "template", "")
    return text.startswith(("generate_series(", "unnest("))
