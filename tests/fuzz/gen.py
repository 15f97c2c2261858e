"""Random queries over a random schema, typed so that most of them are valid SQL.

    g = QueryGen(random.Random(1), schema, Features())
    q = g.query()                    # a Query (sqlast); q.render(Names(prefix)) is its SQL

Covers: arithmetic (+ - * / %, unary minus), comparisons, AND/OR/NOT, IS [NOT] NULL,
IS [NOT] DISTINCT FROM, IS [NOT] TRUE/FALSE/UNKNOWN, [NOT] BETWEEN [SYMMETRIC], [NOT] IN lists,
[NOT] LIKE/ILIKE and ~~ !~~ ~~* !~~*, CASE (both forms), COALESCE, NULLIF, GREATEST/LEAST, casts
(CAST and ::), lower/upper/length/substr/substring/trim/btrim/ltrim/rtrim/replace/||,
abs/round/floor/ceil; comma joins, CROSS/INNER/LEFT/RIGHT/FULL joins with equality ON or USING,
parenthesised joins, subqueries in FROM, CTEs, x [NOT] IN (SELECT ...) in WHERE, aggregates
(count(*), count, count(DISTINCT), sum, min, max, avg) with GROUP BY/HAVING, DISTINCT,
UNION/EXCEPT/INTERSECT [ALL], ORDER BY/LIMIT/OFFSET.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Callable

from tests.fuzz.gen_library import NEW_KINDS, LibraryGen, is_srf
from tests.fuzz.schema import Schema, pick_value
from tests.fuzz.sqlast import (BOOL, BYTEA, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, INTARR, INTERVAL,
                               INTS, JSONB, NUMERIC, TEXT, TEXTARR, TIME, TIMESTAMP, UUID, Col, Expr,
                               FromItem, FuncRef, InSubquery, Join, Lit, Op, OrderKey, Query,
                               ScopeCol, Select, SetOp, SubqueryRef, TableRef, arith_type, base_type,
                               comparable, is_number, kind, null_of, orderable, unify)

KINDS = ["int", "numeric", "float", "text", "bool", "date", "timestamp"] + NEW_KINDS
KIND_WEIGHTS = [5, 2, 2, 3, 3, 1, 1] + [1] * len(NEW_KINDS)
DEFAULT_TYPE = {"int": INT4, "numeric": NUMERIC, "float": FLOAT8, "text": TEXT, "bool": BOOL,
                "date": DATE, "timestamp": TIMESTAMP, "interval": INTERVAL, "time": TIME,
                "bytea": BYTEA, "uuid": UUID, "jsonb": JSONB, "textarr": TEXTARR, "intarr": INTARR}
LIKE_PATTERNS = ["'%'", "'a%'", "'%a'", "'%b%'", "'_'", "'a_c'", "'A%'", "'%%'", "''", "'abc'",
                 "'x\\%y'", "'%\\_%'", "'_%'", "'h%o'", "'%€%'"]


@dataclass
class Features:
    """What the generator may produce. The first five are constructs with known Slipstream
    bugs being fixed (switch them off with Features.avoiding_known_bugs() to look past them)."""
    not_like: bool = True          # NOT LIKE / NOT ILIKE / !~~ / !~~* (NOT ignored)
    symmetric: bool = True         # BETWEEN SYMMETRIC (SYMMETRIC ignored)
    comma_outer: bool = True       # FROM a, b FULL JOIN c ON ... (comma binds wrongly)
    where_outer: bool = True       # WHERE over RIGHT/FULL joins (pushed below the join)
    real_literals: bool = True     # real constants that are not exact in binary (cast in double)
    unsupported: bool = True       # a few constructs Slipstream refuses (NOT IN (SELECT), ...)
    date_arith: bool = True        # date + int, date - int, date - date
    set_ops: bool = True
    subqueries: bool = True
    aggregates: bool = True
    new_types: bool = True         # interval, time, bytea, uuid, jsonb, text[], integer[],
                                   # varchar(n), character(n) columns and expressions
    library: bool = True           # the function library (gen_library.py), by family
    srf: bool = True               # generate_series/unnest in FROM (also lateral) and SELECT
    windows: bool = True           # window functions whose answer does not depend on the order
                                   # among peers, over the default, RANGE (with offsets) and
                                   # GROUPS frames

    @classmethod
    def avoiding_known_bugs(cls) -> "Features":
        return cls(not_like=False, symmetric=False, comma_outer=False, where_outer=False,
                   real_literals=False)

    @classmethod
    def parse(cls, spec: str) -> "Features":
        """'-not_like,+date_arith' style toggles on top of the defaults; 'known' = avoid bugs."""
        f = cls()
        for part in filter(None, (p.strip() for p in spec.split(","))):
            if part == "known":
                f = cls.avoiding_known_bugs()
                continue
            on, name = part[0] != "-", part.lstrip("+-")
            if name not in {x.name for x in fields(cls)}:
                raise ValueError(f"unknown feature {name!r}")
            setattr(f, name, on)
        return f


@dataclass
class Relation:
    name: str
    is_cte: bool
    columns: list[tuple[str, str]]


class QueryGen(LibraryGen):
    def __init__(self, rng: random.Random, schema: Schema, features: Features | None = None):
        self.rng = rng
        self.schema = schema
        self.f = features or Features()
        self.alias_n = 0
        # Base relations (table or CTE scans) one query may still use: keeps the cross products,
        # hence PostgreSQL's and Slipstream's work per query, small.
        self.budget = 6
        self.relations = [Relation(t.name, False, list(t.columns)) for t in schema.tables]

    # ---- helpers -----------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def alias(self, prefix: str) -> str:
        self.alias_n += 1
        return f"{prefix}{self.alias_n}"

    def pick_kind(self) -> str:
        if not self.f.new_types:
            return self.rng.choices(KINDS[:7], KIND_WEIGHTS[:7])[0]
        return self.rng.choices(KINDS, KIND_WEIGHTS)[0]

    # ---- literals ----------------------------------------------------------------------------

    def literal(self, k: str, typ: str | None = None) -> Expr:
        r = self.rng
        if self.chance(0.07):
            return null_of(typ or DEFAULT_TYPE[k])
        if k in NEW_KINDS:
            return self.lib_literal(k)
        if k == "int":
            t = typ or r.choice([INT4, INT4, INT4, INT2, INT8])
            if t == INT4 and self.chance(0.85):
                v = r.choice(["0", "1", "2", "3", "5", "10", "-1", "(-3)", "7"])
                return Lit(v, INT4)
            v = pick_value(r, t)
            if t == INT4:
                return Lit(f"({v})" if v.startswith("-") else v, INT4)
            return Lit(f"CAST({v} AS {t})", t)
        if k == "numeric":
            if typ and typ.startswith("numeric("):
                return Lit(f"CAST({pick_value(r, typ)} AS {typ})", NUMERIC)
            v = r.choice(["1.5", "0.1", "2.25", "100.001", "0.5", "3", "1e2", "(-2.5)", "0.001",
                          "123456.789", "1.00"])
            if v in ("3",):
                return Lit(f"CAST({v} AS numeric)", NUMERIC)
            return Lit(v, NUMERIC)
        if k == "float":
            t = typ or r.choice([FLOAT8, FLOAT8, FLOAT4])
            pool = ["0.5", "1", "-2.25", "3.75", "0", "100", "-0.125"]
            if self.chance(0.1):
                pool = ["'Infinity'", "'-Infinity'", "'NaN'"]
            elif t == FLOAT4 and self.f.real_literals and self.chance(0.3):
                pool = ["0.1", "1.1", "3.3", "0.7"]
            v = r.choice(pool)
            if self.chance(0.5):
                return Lit(f"CAST({v} AS {t})", t)
            return Lit(f"{v}::{'float4' if t == FLOAT4 else 'float8'}", t)
        if k == "text":
            return Lit(pick_value(r, TEXT), TEXT)
        if k == "bool":
            return Lit(r.choice(["true", "false"]), BOOL)
        if k == "date":
            v = pick_value(r, DATE)
            return Lit(f"DATE {v}" if self.chance(0.5) else f"CAST({v} AS date)", DATE)
        if k == "timestamp":
            v = pick_value(r, TIMESTAMP)
            return Lit(f"TIMESTAMP {v}" if self.chance(0.5) else f"CAST({v} AS timestamp)", TIMESTAMP)
        raise ValueError(k)

    # ---- expressions -------------------------------------------------------------------------

    def leaf(self, k: str, atoms: list[Expr]) -> Expr:
        cands = [a for a in atoms if kind(a.typ) == k]
        if cands and self.chance(0.8):
            return self.rng.choice(cands)
        return self.literal(k)

    def expr(self, k: str, atoms: list[Expr], depth: int, sub: bool = False) -> Expr:
        """An expression of kind k over `atoms`. sub: may contain x IN (SELECT ...)."""
        if depth <= 0 or self.chance(0.3):
            return self.leaf(k, atoms)
        if self.f.library and self.chance(0.35):
            e = self.lib_expr(k, atoms, depth - 1, sub)
            if e is not None:
                return e
        gen = getattr(self, f"_expr_{k}")
        e = gen(atoms, depth - 1, sub) if self.chance(0.8) else self._generic(k, atoms, depth - 1, sub)
        return e

    def any_expr(self, atoms: list[Expr], depth: int) -> Expr:
        return self.expr(self.pick_kind(), atoms, depth)

    def _generic(self, k: str, atoms, depth, sub) -> Expr:
        r = self.rng
        e = lambda: self.expr(k, atoms, depth, sub)  # noqa: E731
        choice = r.randrange(6)
        if choice == 0:  # searched CASE
            n = r.randint(1, 3)
            conds = [self.expr("bool", atoms, depth, sub) for _ in range(n)]
            vals = [e() for _ in range(n)]
            has_else = self.chance(0.7)
            args = [x for pair in zip(conds, vals) for x in pair] + ([e()] if has_else else [])
            return make_case(args, has_else, operand=False)
        if choice == 1:  # simple CASE
            ok = r.choice(KINDS[:4])
            operand = self.expr(ok, atoms, depth, sub)
            n = r.randint(1, 3)
            args = [operand]
            for _ in range(n):
                args += [self.expr(ok, atoms, 0), e()]
            has_else = self.chance(0.6)
            if has_else:
                args.append(e())
            return make_case(args, has_else, operand=True)
        if choice == 2:
            return make_variadic("coalesce", [e() for _ in range(r.randint(1, 3))])
        if choice == 3:
            a, b = e(), e()
            return Op("nullif({0}, {1})", [a, b], base_type(a.typ))
        if choice in (4, 5) and k != "bool" and orderable(DEFAULT_TYPE[k]):
            fn = "greatest" if choice == 4 else "least"
            return make_variadic(fn, [e() for _ in range(r.randint(1, 3))])
        return self.leaf(k, atoms)

    def _number(self, k: str, atoms, depth, sub) -> Expr:
        return self.expr(k, atoms, depth, sub)

    def _arith(self, k: str, atoms, depth, sub) -> Expr:
        r = self.rng
        other = {"int": ["int"], "numeric": ["int", "numeric"], "float": ["int", "numeric", "float"]}[k]
        a = self.expr(k, atoms, depth, sub)
        b = self.expr(r.choice(other), atoms, depth, sub)
        if self.chance(0.5):
            a, b = b, a
        ops = ["+", "-", "*", "/"] + (["%"] if k != "float" else [])
        op = r.choice(ops)
        if op in ("/", "%") and self.chance(0.6):
            b = self.literal(r.choice(other)) if self.chance(0.5) else Lit(r.choice(["2", "3", "(-7)"]), INT4)
        t = arith_type(a.typ, b.typ)
        if kind(t) != k:      # e.g. numeric op float -> float; keep the requested kind
            return a
        return Op("({0} " + op + " {1})", [a, b], t)

    def _expr_int(self, atoms, depth, sub) -> Expr:
        r = self.rng
        c = r.randrange(10)
        if c <= 3:
            return self._arith("int", atoms, depth, sub)
        if c == 4:
            a = self.expr("int", atoms, depth, sub)
            return Op("(- {0})", [a], a.typ)
        if c == 5:
            a = self.expr("int", atoms, depth, sub)
            return Op("abs({0})", [a], a.typ)
        if c == 6:
            return Op(r.choice(["length({0})", "char_length({0})"]), [self.expr("text", atoms, depth, sub)], INT4)
        if c == 7 and self.f.date_arith:
            a, b = self.expr("date", atoms, depth, sub), self.expr("date", atoms, depth, sub)
            if a.typ == DATE and b.typ == DATE:
                return Op("({0} - {1})", [a, b], INT4)
        # casts
        src = r.choice(["numeric", "float", "int", "text", "bool"])
        t = r.choice(INTS)
        if src == "bool":
            t = INT4
        if src == "text" and self.chance(0.9):
            a = Lit(r.choice(["'12'", "' 7 '", "'-3'", "'x'", "'2147483648'"]), TEXT)
        else:
            a = self.expr(src, atoms, depth, sub)
        return cast(r, a, t)

    def _expr_numeric(self, atoms, depth, sub) -> Expr:
        r = self.rng
        c = r.randrange(8)
        if c <= 2:
            return self._arith("numeric", atoms, depth, sub)
        if c == 3:
            a = self.expr("numeric", atoms, depth, sub)
            return Op(r.choice(["round({0})", "floor({0})", "ceil({0})", "ceiling({0})", "abs({0})",
                                "(- {0})"]), [a], NUMERIC)
        if c == 4:
            a = self.expr("numeric", atoms, depth, sub)
            return Op("round({0}, " + r.choice(["0", "1", "2", "4", "(-1)"]) + ")", [a], NUMERIC)
        src = r.choice(["int", "float", "numeric", "text"])
        if src == "text":
            a = Lit(r.choice(["'1.25'", "' 3 '", "'-0.5'", "'abc'", "'1e3'"]), TEXT)
        else:
            a = self.expr(src, atoms, depth, sub)
        t = r.choice([NUMERIC, NUMERIC, "numeric(5,2)", "numeric(10,3)", "numeric(4,0)"])
        return cast(r, a, t, NUMERIC)

    def _expr_float(self, atoms, depth, sub) -> Expr:
        r = self.rng
        c = r.randrange(7)
        if c <= 2:
            return self._arith("float", atoms, depth, sub)
        if c == 3:
            a = self.expr("float", atoms, depth, sub)
            fn = r.choice(["abs({0})", "floor({0})", "ceil({0})", "round({0})", "(- {0})"])
            t = a.typ if fn in ("abs({0})", "(- {0})") else FLOAT8
            return Op(fn, [a], t)
        if c == 4:   # floor/ceil/round of an integer are double precision in PostgreSQL
            a = self.expr("int", atoms, depth, sub)
            return Op(r.choice(["floor({0})", "ceil({0})", "round({0})"]), [a], FLOAT8)
        src = r.choice(["int", "numeric", "float", "text"])
        if src == "text":
            a = Lit(r.choice(["'1.5'", "'-Infinity'", "'nan'", "'x'", "' 2 '"]), TEXT)
        else:
            a = self.expr(src, atoms, depth, sub)
        return cast(r, a, r.choice([FLOAT4, FLOAT8]))

    def _expr_text(self, atoms, depth, sub) -> Expr:
        r = self.rng
        t = lambda: self.expr("text", atoms, depth, sub)  # noqa: E731
        c = r.randrange(11)
        if c <= 1:
            a, b = t(), t()
            if self.chance(0.2):
                b = self.expr(r.choice(["int", "numeric", "bool"]), atoms, depth, sub)
                if self.chance(0.5):
                    a, b = b, a
            return Op("({0} || {1})", [a, b], TEXT)
        if c == 2:
            return Op(r.choice(["lower({0})", "upper({0})"]), [t()], TEXT)
        if c == 3:
            a = t()
            n1 = r.choice(["1", "2", "0", "(-1)", "3"])
            if self.chance(0.5):
                n2 = r.choice(["1", "2", "0", "5", "(-1)"])
                form = r.choice([f"substr({{0}}, {n1}, {n2})", f"substring({{0}} from {n1} for {n2})",
                                 f"substring({{0}}, {n1}, {n2})"])
            else:
                form = r.choice([f"substr({{0}}, {n1})", f"substring({{0}} from {n1})"])
            return Op(form, [a], TEXT)
        if c == 4:
            form = r.choice(["trim({0})", "btrim({0})", "ltrim({0})", "rtrim({0})",
                             "trim(both 'a' from {0})", "trim(leading ' ' from {0})",
                             "trim(trailing 'c' from {0})", "btrim({0}, 'ab')", "ltrim({0}, 'a')"])
            return Op(form, [t()], TEXT)
        if c == 5:
            return Op("replace({0}, {1}, {2})", [t(), self.leaf("text", []), t()], TEXT)
        if c <= 7:
            src = r.choice(["int", "numeric", "float", "bool", "date", "timestamp", "text"])
            return cast(r, self.expr(src, atoms, depth, sub), r.choice([TEXT, TEXT, "varchar"]), TEXT)
        return self.leaf("text", atoms)

    def _compare_operands(self, atoms, depth, sub) -> tuple[Expr, Expr]:
        k = self.pick_kind()
        a = self.expr(k, atoms, depth, sub)
        if is_number(a.typ) and self.chance(0.3):
            k2 = self.rng.choice(["int", "numeric", "float"])
        elif k in ("date", "timestamp") and self.chance(0.2):
            k2 = "timestamp" if k == "date" else "date"
        else:
            k2 = k
        b = self.expr(k2, atoms, depth, sub)
        return a, b

    def _expr_bool(self, atoms, depth, sub) -> Expr:
        r = self.rng
        b = lambda: self.expr("bool", atoms, depth, sub)  # noqa: E731
        c = r.randrange(20)
        if c <= 3:
            a, x = self._compare_operands(atoms, depth, sub)
            op = r.choice(["=", "<>", "!=", "<", "<=", ">", ">="] if orderable(a.typ) else ["=", "<>", "!="])
            return Op("({0} " + op + " {1})", [a, x], BOOL)
        if c <= 5:
            return Op("({0} " + r.choice(["AND", "OR"]) + " {1})", [b(), b()], BOOL)
        if c == 6:
            return Op("(NOT {0})", [b()], BOOL)
        if c == 7:
            a = self.any_expr(atoms, depth)
            return Op("({0} IS " + r.choice(["NULL", "NOT NULL"]) + ")", [a], BOOL)
        if c == 8:
            a, x = self._compare_operands(atoms, depth, sub)
            return Op("({0} IS " + r.choice(["", "NOT "]) + "DISTINCT FROM {1})", [a, x], BOOL)
        if c == 9:
            test = r.choice(["TRUE", "FALSE", "UNKNOWN", "NOT TRUE", "NOT FALSE", "NOT UNKNOWN"])
            return Op("({0} IS " + test + ")", [b()], BOOL)
        if c == 10:
            k = r.choice(["int", "numeric", "float", "text", "date"] +
                         (["interval", "time", "uuid", "bytea"] if self.f.new_types else []))
            x, lo, hi = (self.expr(k, atoms, depth, sub) for _ in range(3))
            form = r.choice(["BETWEEN", "NOT BETWEEN"])
            if self.f.symmetric and self.chance(0.3):
                form += " SYMMETRIC"
            return Op("({0} " + form + " {1} AND {2})", [x, lo, hi], BOOL)
        if c == 11:
            k = r.choice(["int", "numeric", "float", "text", "date", "bool"] +
                         (NEW_KINDS if self.f.new_types else []))
            x = self.expr(k, atoms, depth, sub)
            items = [self.expr(k, atoms, max(0, depth - 1), sub) if self.chance(0.3) else self.literal(k)
                     for _ in range(r.randint(1, 4))]
            return make_in(x, items, self.chance(0.3))
        if c == 12:
            ops = ["LIKE", "ILIKE", "~~", "~~*"]
            if self.f.not_like:
                ops += ["NOT LIKE", "NOT ILIKE", "!~~", "!~~*"]
            x = self.expr("text", atoms, depth, sub)
            pat = Lit(r.choice(LIKE_PATTERNS), TEXT) if self.chance(0.8) else self.expr("text", atoms, 0)
            return Op("({0} " + r.choice(ops) + " {1})", [x, pat], BOOL)
        if c == 13 and sub and self.f.subqueries:
            return self.in_subquery(atoms, depth)
        if c == 14:
            src = r.choice(["int", "text"])
            a = self.expr("int", atoms, depth, sub) if src == "int" else \
                Lit(r.choice(["'t'", "'yes'", "'off'", "' true '", "'x'"]), TEXT)
            if a.typ in (INT2, INT8):   # only integer casts to boolean
                a = cast(r, a, INT4)
            return cast(r, a, BOOL, BOOL)
        return self.leaf("bool", atoms)

    def _expr_date(self, atoms, depth, sub) -> Expr:
        r = self.rng
        c = r.randrange(4)
        if c == 0:
            return cast(r, self.expr("timestamp", atoms, depth, sub), DATE)
        if c == 1 and self.f.date_arith:
            op = r.choice(["+", "-"])
            return Op("({0} " + op + " {1})", [self.expr("date", atoms, depth, sub),
                                              self.expr("int", atoms, 0)], DATE)
        if c == 2:
            v = r.choice(["'2020-03-01'", "'20200101'", "'1999-01-08'", "' 2000-02-29 '", "'2020-01-01 10:00'", "'bad'"])
            return cast(r, Lit(v, TEXT), DATE)
        return self.leaf("date", atoms)

    def _expr_timestamp(self, atoms, depth, sub) -> Expr:
        r = self.rng
        if self.chance(0.5):
            return cast(r, self.expr("date", atoms, depth, sub), TIMESTAMP)
        return self.leaf("timestamp", atoms)

    def in_subquery(self, atoms, depth) -> Expr:
        k = self.rng.choice(["int", "int", "text", "numeric", "date"])
        x = self.expr(k, atoms, max(0, depth - 1))
        q = self.select(depth=1, want=[k], top=False, allow_order=False)
        negate = self.f.unsupported and self.chance(0.1)
        return InSubquery(x, q, negate)

    # ---- aggregates ----------------------------------------------------------------------------

    def aggregate(self, atoms: list[Expr]) -> Expr:
        if self.f.library and self.chance(0.4):
            agg = self.lib_aggregate(atoms)
        else:
            agg = self.plain_aggregate(atoms)
        if self.f.library and self.chance(0.15):
            agg = self.with_filter(agg, atoms)
        return agg

    def plain_aggregate(self, atoms: list[Expr]) -> Expr:
        r = self.rng
        c = r.randrange(8)
        if c == 0:
            return Lit("count(*)", INT8)
        if c == 1:
            return Op("count({0})", [self.any_expr(atoms, 1)], INT8)
        if c == 2:
            return Op("count(DISTINCT {0})", [self.any_expr(atoms, 1)], INT8)
        if c in (3, 4):
            a = self.expr(r.choice(["int", "numeric", "float"]), atoms, 1)
            t = {INT2: INT8, INT4: INT8, INT8: NUMERIC}.get(a.typ, base_type(a.typ))
            distinct = "DISTINCT " if self.chance(0.1) else ""
            return Op(f"sum({distinct}{{0}})", [a], t)
        if c == 5:
            a = self.expr(r.choice(["int", "numeric", "float"]), atoms, 1)
            distinct = "DISTINCT " if self.chance(0.1) else ""
            return Op(f"avg({distinct}{{0}})", [a], FLOAT8 if kind(a.typ) == "float" else NUMERIC)
        a = self.expr(r.choice(["int", "numeric", "float", "text", "date", "timestamp"]), atoms, 1)
        return Op(r.choice(["min({0})", "max({0})"]), [a], base_type(a.typ))

    # ---- FROM ----------------------------------------------------------------------------------

    def relation(self, depth: int, srf: bool = True) -> tuple[FromItem, list[ScopeCol]]:
        self.budget -= 1
        if depth > 0 and self.f.subqueries and self.budget > 0 and self.chance(0.2):
            q = self.select_or_setop(depth - 1, top=False)
            a = self.alias("s")
            return SubqueryRef(q, a), [ScopeCol(a, n, t) for n, t in zip(q.out_names(), q.out_types())]
        if self.f.srf and srf and self.chance(0.06):
            return self.srf_item([])
        rel = self.rng.choice(self.relations)
        a = self.alias("a")
        return TableRef(rel.name, a, rel.is_cte), [ScopeCol(a, n, t) for n, t in rel.columns]

    def srf_item(self, scope: list[ScopeCol]) -> tuple[FromItem, list[ScopeCol]]:
        """generate_series/unnest in FROM, over columns of `scope` when given (LATERAL)."""
        call = self.srf_call(referenceable(scope) if scope else [])
        a = self.alias("g")
        return FuncRef(call, a), [ScopeCol(a, "c0", call.typ)]

    def join_tree(self, depth: int, max_joins: int, comma_follows: bool
                  ) -> tuple[FromItem, list[ScopeCol]]:
        r = self.rng
        left, scope = self.relation(depth)
        for _ in range(r.randint(0, max_joins)):
            if self.budget <= 0:
                break
            if self.f.srf and self.chance(0.06):
                # Evaluated per row of the left side: inner joins only.
                right, rscope = self.srf_item(scope)
                if self.chance(0.5):
                    left, scope = Join("CROSS JOIN", left, right), scope + rscope
                else:
                    on = self.expr("bool", referenceable(scope + rscope), 1)
                    left, scope = Join(r.choice(["JOIN", "INNER JOIN"]), left, right, on=on), scope + rscope
                continue
            if self.chance(0.08):
                right, rscope = self.join_tree(depth, 1, False)
                if isinstance(right, Join):
                    right.paren = True
            else:
                # A function on the right of an outer join or USING is refused (0A000): rarely.
                right, rscope = self.relation(depth, srf=self.f.unsupported and self.chance(0.1))
            kinds = ["CROSS JOIN", "JOIN", "INNER JOIN", "LEFT JOIN", "LEFT OUTER JOIN",
                     "RIGHT JOIN", "RIGHT OUTER JOIN", "FULL JOIN", "FULL OUTER JOIN"]
            if comma_follows and not self.f.comma_outer:
                kinds = kinds[:5]
            jk = r.choice(kinds)
            outer = jk.split()[0] in ("LEFT", "RIGHT", "FULL")
            if jk == "CROSS JOIN":
                left = Join(jk, left, right)
                scope = scope + rscope
                continue
            using = self.using_candidates(scope, rscope)
            # USING in outer joins is refused (0A000): rarely.
            if using and self.chance((0.03 if self.f.unsupported else 0) if outer else 0.35):
                names = r.sample(using, r.randint(1, min(2, len(using))))
                left, scope = Join(jk, left, right, using=names), merge_using(jk, scope, rscope, names)
                continue
            pairs = [(a, b) for a in scope if a.qual for b in rscope if b.qual and comparable(a.typ, b.typ)]
            same = [(a, b) for a, b in pairs if a.typ == b.typ]
            if outer and same and self.chance(0.85):
                pairs = same    # Slipstream's outer joins want equalities of one type
            both = [c.ref() for c in scope + rscope if c.qual]
            conds: list[Expr] = []
            if pairs:
                for a, b in r.sample(pairs, min(len(pairs), r.choice([1, 1, 1, 2]))):
                    x, y = (a.ref(), b.ref()) if self.chance(0.7) else (b.ref(), a.ref())
                    conds.append(Op("({0} = {1})", [x, y], BOOL))
            if not outer and (not conds or self.chance(0.2)):
                conds.append(self.expr("bool", both, 2))
            elif outer and not conds:
                # Nothing to equate: compare casts to text, or (rarely) any condition, which
                # Slipstream refuses for outer joins.
                if self.f.unsupported and self.chance(0.1):
                    conds.append(self.expr("bool", both, 1))
                elif self.chance(0.7):
                    left, scope = Join("CROSS JOIN", left, right), scope + rscope
                    continue
                else:
                    a, b = r.choice([c for c in scope if c.qual]), r.choice([c for c in rscope if c.qual])
                    conds.append(Op("({0} = {1})", [cast(r, a.ref(), TEXT), cast(r, b.ref(), TEXT)], BOOL))
            elif outer and self.f.unsupported and self.chance(0.03):
                conds.append(self.expr("bool", both, 1))
            on = conds[0]
            for c in conds[1:]:
                on = Op("({0} AND {1})", [on, c], BOOL)
            left, scope = Join(jk, left, right, on=on), scope + rscope
        return left, scope

    @staticmethod
    def using_candidates(left: list[ScopeCol], right: list[ScopeCol]) -> list[str]:
        def unq(scope):
            counts: dict[str, list[ScopeCol]] = {}
            for c in scope:
                if c.star:
                    counts.setdefault(c.name, []).append(c)
            return {n: cs[0] for n, cs in counts.items() if len(cs) == 1}
        lu, ru = unq(left), unq(right)
        return [n for n in lu if n in ru and comparable(lu[n].typ, ru[n].typ)]

    def from_clause(self, depth: int) -> tuple[list[FromItem], list[ScopeCol]]:
        n = self.rng.choices([1, 2, 3], [70, 25, 5])[0]
        items, scope = [], []
        for i in range(n):
            if i and self.budget <= 0:
                break
            if i and self.f.srf and self.chance(0.15):
                item, s = self.srf_item(scope)
                items.append(item)
                scope += s
                continue
            item, s = self.join_tree(depth, self.rng.choice([0, 1, 1, 2, 3]), comma_follows=i > 0)
            items.append(item)
            scope += s
        return items, scope

    # ---- queries -------------------------------------------------------------------------------

    def query(self) -> Query:
        """A top-level query, maybe with CTEs, ORDER BY, LIMIT and OFFSET."""
        self.budget = self.rng.choice([2, 3, 4, 4, 5, 6])
        self.relations = [rel for rel in self.relations if not rel.is_cte]
        ctes = []
        if self.f.subqueries and self.chance(0.15):
            for _ in range(self.rng.randint(1, 2)):
                q = self.select_or_setop(1, top=False)
                name = self.alias("w")
                ctes.append((name, q))
                self.relations.append(Relation(name, True, list(zip(q.out_names(), q.out_types()))))
        q = self.select_or_setop(2, top=True)
        q.ctes = ctes + q.ctes
        self.add_order(q, top=True)
        return q

    def add_order(self, q: Query, top: bool) -> None:
        r = self.rng
        types = q.out_types()
        width = len(types)
        # jsonb and arrays have no ORDER BY here (refused): order by the other columns only.
        ok = [p for p in range(1, width + 1) if orderable(types[p - 1])]
        if not top and len(ok) < width:
            return
        if ok and self.chance(0.4 if top else 0.1):
            # Inside a query, LIMIT/OFFSET need a total order, else the outer query's answer
            # is not determined.
            if not top or self.chance(0.5):
                positions = r.sample(ok, len(ok))
            else:
                positions = r.sample(ok, r.randint(1, len(ok)))
            q.order_by = [OrderKey(p, self.chance(0.4), r.choice([None, None, "FIRST", "LAST"]))
                          for p in positions]
        if q.order_by and self.chance(0.4 if top else 0.9):
            q.limit = r.choice([0, 1, 2, 3, 5, 10])
        elif not q.order_by and top and self.chance(0.05):
            q.limit = r.choice([0, 1, 100])
        if (q.limit is not None or q.order_by) and self.chance(0.2):
            q.offset = r.choice([0, 1, 2, 4])

    def select_or_setop(self, depth: int, want: list[str] | None = None, top: bool = False) -> Query:
        if self.f.set_ops and depth > 0 and self.chance(0.15):
            left = self.select(depth - 1, want=want, top=False)
            right = self.select(depth - 1, want=[kind(t) for t in left.out_types()], top=False)
            op = self.rng.choice(["UNION", "EXCEPT", "INTERSECT"])
            q = SetOp(op, self.chance(0.5), left, right)
            if not top:
                self.add_order(q, top=False)
            return q
        q = self.select(depth, want=want, top=top)
        if not top:
            self.add_order(q, top=False)
        return q

    def select(self, depth: int, want: list[str] | None = None, top: bool = False,
               allow_order: bool = True) -> Select:
        r = self.rng
        if self.chance(0.04):
            from_, scope = [], []
        else:
            from_, scope = self.from_clause(depth)
        atoms = referenceable(scope)
        outer_joined = any(isinstance(f, Join) and join_kinds(f) & {"RIGHT", "FULL"} for f in from_)
        q = Select(items=[], from_=from_)
        q.scope = scope  # for TLP
        if self.chance(0.6) and scope and (self.f.where_outer or not outer_joined):
            q.where = self.expr("bool", atoms, r.randint(1, 3), sub=True)
        if self.f.aggregates and scope and self.chance(0.3):
            nkeys = r.choice([0, 1, 1, 2])
            keys = []
            for _ in range(nkeys):
                keys.append(r.choice(atoms) if self.chance(0.8) or not atoms else self.any_expr(atoms, 1))
            # A literal key would be a position (GROUP BY 1) or an error: keep column expressions.
            keys = dedup([k for k in keys if not isinstance(k, Lit)])
            q.group_by = keys
            aggs = [self.aggregate(atoms) for _ in range(r.randint(1, 3))]
            agg_atoms = keys + aggs
            kinds = want or [r.choice([kind(a.typ) for a in agg_atoms] + [self.pick_kind()])
                             for _ in range(r.randint(1, 4))]
            items = []
            for i, k in enumerate(kinds):
                pool = [a for a in agg_atoms if kind(a.typ) == k]
                if pool and self.chance(0.6):
                    items.append(r.choice(pool))
                else:
                    items.append(self.expr(k, agg_atoms, r.randint(0, 2)))
            q.items = [(e, f"x{i}") for i, e in enumerate(items)]
            if self.chance(0.3):
                q.having = self.expr("bool", agg_atoms, 2)
            q.agg_atoms = agg_atoms
        else:
            if top and want is None and scope and self.chance(0.08):
                q.star = [c for c in scope if c.star]
            else:
                kinds = want or [self.pick_kind() for _ in range(r.choices([1, 2, 3, 4], [3, 4, 3, 2])[0])]
                q.items = [(self.expr(k, atoms, r.randint(0, 3)), f"x{i}") for i, k in enumerate(kinds)]
                if self.f.srf and self.chance(0.05):
                    # One set-returning function in the select list (no aggregates here).
                    call = self.srf_call(atoms)
                    i = r.randrange(len(q.items))
                    if want is None or kind(call.typ) == want[i]:
                        q.items[i] = (call, q.items[i][1])
                elif self.f.windows and atoms and self.chance(0.12):
                    call = self.window_call(atoms)
                    i = r.randrange(len(q.items))
                    if call is not None and (want is None or kind(call.typ) == want[i]):
                        q.items[i] = (call, q.items[i][1])
                        q.has_window = True  # (TLP would change the rows a window sees)
        if self.chance(0.15):
            q.distinct = True
        return q


    # ---- window functions --------------------------------------------------------------------

    # Offsets of RANGE frames per ORDER BY key kind (PostgreSQL's in_range types).
    _RANGE_OFFSETS = {"int": ["0", "1", "3"], "numeric": ["0.5", "2"], "float": ["0.25", "2.5", "'Infinity'"],
                      "date": ["interval '1 day'", "interval '1 month'"],
                      "timestamp": ["interval '2 hours'", "interval '1 month 1 day'"]}

    def window_call(self, atoms: list[Expr]) -> Expr | None:
        """A window function whose answer PostgreSQL determines whatever the order among
        peers: rank/dense_rank, or count/sum/min/max over the default frame, a RANGE frame
        (offsets by the key's type) or a GROUPS frame, either with any EXCLUDE clause."""
        r = self.rng
        keys = [a for a in atoms if kind(a.typ) in ("int", "numeric", "float", "text", "date", "timestamp")]
        if not keys:
            return None
        key = r.choice(keys)
        order = " DESC" if self.chance(0.3) else ""
        if self.chance(0.3):
            order += r.choice([" NULLS FIRST", " NULLS LAST"])
        args: list[Expr] = [key]
        parts = [a for a in atoms if orderable(a.typ) and kind(a.typ) in ("int", "numeric", "text", "bool", "date")]
        partition = ""
        if parts and self.chance(0.5):
            args.append(r.choice(parts))
            partition = "PARTITION BY {1} "
        frame = ""
        roll = r.random()
        k = kind(key.typ)
        if roll < 0.35 and k in self._RANGE_OFFSETS:
            a, b = r.choice(self._RANGE_OFFSETS[k]), r.choice(self._RANGE_OFFSETS[k])
            frame = " " + r.choice([f"RANGE BETWEEN {a} PRECEDING AND CURRENT ROW",
                                    f"RANGE BETWEEN {a} PRECEDING AND {b} FOLLOWING",
                                    f"RANGE BETWEEN CURRENT ROW AND {b} FOLLOWING",
                                    f"RANGE BETWEEN UNBOUNDED PRECEDING AND {a} PRECEDING",
                                    f"RANGE BETWEEN {a} FOLLOWING AND UNBOUNDED FOLLOWING"])
        elif roll < 0.6:
            a, b = r.randint(0, 2), r.randint(0, 2)
            frame = " " + r.choice([f"GROUPS BETWEEN {a} PRECEDING AND {b} FOLLOWING",
                                    f"GROUPS BETWEEN CURRENT ROW AND {b} FOLLOWING",
                                    f"GROUPS BETWEEN UNBOUNDED PRECEDING AND {a} PRECEDING"])
        if frame and self.chance(0.3):  # (each row's own exclusion does not depend on peers' order)
            frame += " EXCLUDE " + r.choice(["CURRENT ROW", "GROUP", "TIES", "NO OTHERS"])
        over = f" OVER ({partition}ORDER BY {{0}}{order}{frame})"
        func = r.choice(["rank", "dense_rank", "count*", "count", "sum", "min", "max"])
        if func in ("rank", "dense_rank"):
            return Op(f"{func}()" + over.replace(frame, ""), args, INT8)
        if func == "count*":
            return Op("count(*)" + over, args, INT8)
        value_kinds = {"count": ["int", "text", "date", "float"], "sum": ["int"],
                       "min": ["int", "numeric", "float", "text", "date", "timestamp"]}
        vk = r.choice(value_kinds.get(func, value_kinds["min"]))
        value = self.expr(vk, atoms, r.randint(0, 1))
        n = len(args)
        args.append(value)
        if func == "sum":   # (PostgreSQL: sum of bigint is numeric)
            typ = NUMERIC if base_type(value.typ) == INT8 else INT8
        else:
            typ = INT8 if func == "count" else base_type(value.typ)
        return Op(f"{func}({{{n}}})" + over, args, typ)


# ---- construction helpers ---------------------------------------------------------------------

def cast(r: random.Random, a: Expr, t: str, result: str | None = None) -> Expr:
    if r.random() < 0.7:
        return Op("CAST({0} AS " + t + ")", [a], result or base_type(t))
    short = {"double precision": "float8", "real": "float4", "integer": "int4", "smallint": "int2",
             "bigint": "int8", "boolean": "bool"}.get(t, t)
    return Op("({0})::" + short, [a], result or base_type(t))


def make_case(args: list[Expr], has_else: bool, operand: bool) -> Expr | None:
    start = 1 if operand else 0
    pairs = (len(args) - start - (1 if has_else else 0)) // 2
    if pairs < 1:
        return None
    s = "(CASE " + ("{0} " if operand else "")
    i = start
    for _ in range(pairs):
        s += f"WHEN {{{i}}} THEN {{{i + 1}}} "
        i += 2
    if has_else:
        s += f"ELSE {{{i}}} "
    s += "END)"
    results = [args[start + 2 * j + 1] for j in range(pairs)] + ([args[-1]] if has_else else [])
    t = results[0].typ
    for x in results[1:]:
        t = unify(t, x.typ) or t

    def rebuild(new_args):
        # Dropping one argument shifts pairs: only accept drops that keep the shape, i.e. drop
        # the ELSE (last) or a whole WHEN pair (handled by dropping at even/odd offsets).
        if has_else and len(new_args) == len(args) - 1 and new_args == args[:-1]:
            return make_case(new_args, False, operand)
        return None
    return Op(s, list(args), t, rebuild)


def make_variadic(fn: str, args: list[Expr]) -> Expr:
    t = args[0].typ
    for x in args[1:]:
        t = unify(t, x.typ) or t

    def rebuild(new_args):
        return make_variadic(fn, new_args) if new_args else None
    return Op(fn + "(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")", list(args),
              base_type(t), rebuild)


def make_in(x: Expr, items: list[Expr], negate: bool) -> Expr:
    s = "({0} " + ("NOT IN" if negate else "IN") + " (" + \
        ", ".join(f"{{{i + 1}}}" for i in range(len(items))) + "))"

    def rebuild(new_args):
        if len(new_args) < 2 or new_args[0] is not x:
            return None
        return make_in(x, new_args[1:], negate)
    return Op(s, [x] + items, BOOL, rebuild)


def merge_using(jk: str, left: list[ScopeCol], right: list[ScopeCol], names: list[str]) -> list[ScopeCol]:
    merged = []
    for n in names:
        lc = next(c for c in left if c.star and c.name == n)
        rc = next(c for c in right if c.star and c.name == n)
        merged.append(ScopeCol(None, n, unify(lc.typ, rc.typ) or base_type(lc.typ)))
    hide = lambda c: ScopeCol(c.qual, c.name, c.typ, star=False) if c.star and c.name in names else c  # noqa: E731
    return merged + [hide(c) for c in left] + [hide(c) for c in right]


def referenceable(scope: list[ScopeCol]) -> list[Expr]:
    """Column references valid in the scope: every qualified column, and a USING-merged column
    when its name is unambiguous."""
    counts: dict[str, int] = {}
    for c in scope:
        if c.star:
            counts[c.name] = counts.get(c.name, 0) + 1
    out = []
    for c in scope:
        if c.qual is not None:
            out.append(c.ref())
        elif counts.get(c.name) == 1:
            out.append(c.ref())
    return out


def join_kinds(item: FromItem) -> set[str]:
    if isinstance(item, Join):
        return {item.kind.split()[0]} | join_kinds(item.left) | join_kinds(item.right)
    return set()


def dedup(exprs: list[Expr]) -> list[Expr]:
    seen, out = set(), []
    for e in exprs:
        key = e.render(_NAMES)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


from tests.fuzz.sqlast import Names  # noqa: E402

_NAMES = Names()
