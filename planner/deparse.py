"""A view's definition as PostgreSQL 15 prints it (`pg_get_viewdef(v, true)`, psql's `\\d+ v`).

PostgreSQL does not keep the text a view was created with: it prints its analysed query back,
with every column qualified by its relation, the casts the analysis inserted written out, the
select list one item per line and each clause on a line of its own. A client comparing
definitions, or a user reading `\\d+`, sees that form; this module writes it from the parsed
query and the catalog when the view is created (`planner.lower_ddl`), for the forms listed
below, and gives None for the rest (the caller then keeps the text as written).

>>> # over t(a int, b text):  CREATE VIEW v AS SELECT a, b FROM t WHERE a > -1 AND b = 'x'
>>> # ' SELECT t.a,\\n    t.b\\n   FROM t\\n  WHERE t.a > \\'-1\\'::integer AND t.b = \\'x\\'::text;'

Covered: SELECT [DISTINCT [ON]] over tables, views and derived tables (with column aliases)
joined by commas, [INNER|LEFT|RIGHT|FULL|CROSS] JOIN ... ON, USING and NATURAL, with WHERE,
GROUP BY, HAVING, WINDOW, ORDER BY, LIMIT and OFFSET; WITH; set operations; scalar, IN and
EXISTS subqueries (correlated too); operators, casts, function and aggregate calls (DISTINCT,
FILTER, ORDER BY inside), window functions with frames, CASE, COALESCE/GREATEST/LEAST/NULLIF,
EXTRACT, SUBSTRING, IN lists, BETWEEN, LIKE, IS [NOT] NULL/TRUE/FALSE. Not covered (None):
FULL JOIN USING, table functions and VALUES in FROM, system catalogs, a named window with more
after it, an aggregate inside a window function.

The layout follows PostgreSQL's: a query starts at an indentation level (0 for the view, 8
deeper for each nested query); `_keyword` starts a new line the way ruleutils' context
keywords do (remove trailing blanks, newline, indent, keyword, then move the level), and
parentheses are written only where precedence needs them (`_needs_parens`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal

from sqlglot import exp

from dataflow.errors import SqlError
from dataflow.expr import Call, Cast, ColumnRef, Literal, ScalarExpr
from dataflow.types import BOOL, FLOAT8, INT4, INT8, INTERVAL, TEXT, UNKNOWN, SqlType, TypeKind
from planner.context import PlanContext
from planner.pg_keywords import NON_UNRESERVED_KEYWORDS
from planner.rules.fold_constants import fold_constant
from planner.scope import Scope, ScopeColumn

log = logging.getLogger(__name__)

STD, JOIN_INDENT, VAR = 8, 4, 4   # PostgreSQL's PRETTYINDENT_STD, _JOIN and _VAR
_PLACEHOLDER = 1 << 30            # a column index no scope has: a typed stand-in while typing


class _Unsupported(Exception):
    """A form this module does not print as PostgreSQL would: the caller keeps the written text."""


def deparse_view(query: exp.Expression, ctx: PlanContext, names: list[str], pretty: bool = True) -> str | None:
    """The view's definition as PostgreSQL prints it, or None outside the covered forms.
    `names` are the view's column names (a column list in CREATE VIEW renames the outputs).
    `pretty`: pg_get_viewdef(v, true), psql's form, with only the parentheses precedence needs;
    else pg_get_viewdef(v), pg_views' form, with every operator's."""
    ctx = replace(ctx, fold_constants=False, depends_on=[], ctes={}, outer=None)
    try:
        out = _Out()
        _Query(ctx, out, parents=[], used_names={"old", "new"}, pretty=pretty).write(query, names)
        return out.text + ";"
    except (_Unsupported, SqlError):
        return None
    except Exception:  # a gap in this module must never fail the CREATE VIEW it describes
        log.warning("view definition not deparsed", exc_info=True)
        return None


# ---- output ----------------------------------------------------------------------------------

@dataclass
class _Out:
    text: str = ""
    level: int = 0

    def add(self, s: str) -> None:
        self.text += s

    def keyword(self, s: str, before: int, after: int, plus: int) -> None:
        """A clause keyword on a new line (ruleutils' appendContextKeyword)."""
        self.level += before
        self.text = self.text.rstrip(" ") + "\n" + " " * (max(self.level, 0) + plus) + s
        self.level = max(self.level + after, 0)

    def nested(self) -> "_Out":
        return _Out("", self.level)


# ---- names -----------------------------------------------------------------------------------

def quote_ident(name: str) -> str:
    """PostgreSQL's quote_identifier: bare when lower-case, simple and not a keyword."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) and name not in NON_UNRESERVED_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def _quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---- scopes ----------------------------------------------------------------------------------

@dataclass
class _Rel:
    """One FROM item: the name the query writes for it, the name printed, its columns, and
    those only a qualified name reaches (the other side's copy of a JOIN ... USING column)."""
    written: str
    refname: str
    columns: list[tuple[str, SqlType]]
    hidden: set[str] = field(default_factory=set)


@dataclass
class _Level:
    rels: list[_Rel] = field(default_factory=list)
    # The columns `*` lists, in order, when a USING join reorders them (merged columns first).
    star: list[tuple[_Rel, str]] | None = None

    def find(self, name: str, table: str | None) -> tuple[_Rel, SqlType] | None:
        hits = [(r, t) for r in self.rels if table is None or r.written == table
                for n, t in r.columns if n == name and (table is not None or n not in r.hidden)]
        if len(hits) > 1:
            raise _Unsupported("ambiguous")
        return hits[0] if hits else None


# ---- typing ----------------------------------------------------------------------------------

_INTS = (TypeKind.INT2, TypeKind.INT4, TypeKind.INT8)
_FLOATS = (TypeKind.FLOAT4, TypeKind.FLOAT8)
_DATETIMES = (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ)
_COMPARISONS = {"=", "<>", "<", "<=", ">", ">="}
_ARITHMETIC = {"+", "-", "*", "/"}


_BPCHAR = SqlType(TypeKind.BPCHAR)  # character compares with character: 'x'::bpchar


def _cross_type(op: str, left: SqlType, right: SqlType) -> bool:
    """PostgreSQL has this operator for the two types as they are (int4 > int8, float4 * float8,
    date < timestamp): the analysis inserts no cast."""
    for family in (_INTS, _FLOATS):
        if left.kind in family and right.kind in family:
            return op in _COMPARISONS or op in _ARITHMETIC
    return left.kind in _DATETIMES and right.kind in _DATETIMES and op in _COMPARISONS


def _loose(t: SqlType) -> SqlType:
    """The type an operator or function takes: numeric(8,2) and varchar(10) are numeric and
    varchar there (PostgreSQL relabels them without printing a cast)."""
    if t.kind in (TypeKind.NUMERIC, TypeKind.VARCHAR, TypeKind.BPCHAR):
        return SqlType(t.kind)
    return t


def type_name(t: SqlType) -> str:
    """format_type's name, as a cast prints it: `bpchar` for character without a length."""
    if t.kind is TypeKind.BPCHAR and t.precision is None:
        return "bpchar"
    if t.kind is TypeKind.ARRAY:
        return type_name(t.element) + "[]"
    return t.name


def _typed_text(value, t: SqlType) -> str:
    """A constant's text in type `t` (its output function)."""
    out = fold_constant(Cast(Literal(value, t), TEXT))
    if not isinstance(out, Literal) or out.value is None:
        raise _Unsupported("constant text")
    return out.value


def _const(value, t: SqlType) -> str:
    """A constant as ruleutils' get_const_expr prints it."""
    if value is None:
        return f"NULL::{type_name(t)}"
    if t.kind is TypeKind.BOOL:
        return "true" if value else "false"
    if t.kind is TypeKind.INT4 and value >= 0:
        return str(value)
    if t.kind is TypeKind.NUMERIC and isinstance(value, Decimal) and value.is_finite():
        text = format(value, "f")  # the constant's own scale: 100.00 stays 100.00
        if re.fullmatch(r"[0-9]+\.[0-9]+", text) and t.scale is None:
            return text
        return f"{_quote_literal(text)}::{type_name(t)}"
    if t.kind is TypeKind.UNKNOWN:
        t = TEXT
    text = value if t.kind in (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR) and isinstance(value, str) \
        else _typed_text(value, t)
    return f"{_quote_literal(text)}::{type_name(t)}"


# ---- expressions -----------------------------------------------------------------------------

# What a printed expression is, for the parentheses its parent decides (ruleutils' isSimpleNode):
# "simple" (column, constant, call, CASE, cast), ("op", symbol, binary), ("bool", AND/OR/NOT)
# and "test" (IS NULL, IS TRUE, IS DISTINCT FROM, = ANY, sublinks).
@dataclass(frozen=True)
class _Printed:
    text: str
    kind: tuple = ("simple",)
    call: bool = False  # a function or aggregate call (parenthesised as a sort key)


def _needs_parens(child: tuple, parent: tuple, is_first: bool) -> bool:
    if child[0] == "simple":
        return False
    if child[0] == "saop":  # x = ANY (ARRAY[...]) is parenthesised even under AND/OR/NOT
        return True
    if child[0] == "sublink":  # a scalar subquery: (( SELECT ...)) under an operator
        return parent[0] != "bool"
    if child[0] == "op" and parent[0] == "op":
        c_op, p_op = child[1] if child[2] else None, parent[1] if parent[2] else None
        if c_op is None or p_op is None:
            return True
        lo, hi = "+-", "*/%"
        if c_op not in lo + hi or p_op not in lo + hi:
            return True
        if c_op in hi and p_op in lo:
            return False
        if c_op in lo and p_op in hi:
            return True
        return not is_first  # (a - b) - c, but a - (b - c)
    if child[0] == "bool":
        if parent[0] != "bool":
            return True
        if child[1] in ("NOT", "AND"):
            return parent[1] not in ("AND", "OR")
        return parent[1] != "OR"
    return parent[0] != "bool"  # op and test nodes are simple only under AND/OR/NOT


def _paren(p: _Printed, parent: tuple, is_first: bool = False) -> str:
    return f"({p.text})" if _needs_parens(p.kind, parent, is_first) else p.text


_BINARY = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.EQ: "=",
           exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=", exp.DPipe: "||",
           exp.Like: "~~", exp.ILike: "~~*"}
_NEGATED_BINARY = {exp.Like: "!~~", exp.ILike: "!~~*"}
_UPPER_CALLS = {exp.Coalesce: "COALESCE", exp.Greatest: "GREATEST", exp.Least: "LEAST",
                exp.Nullif: "NULLIF"}
_NAMED_CALLS = {exp.Upper: "upper", exp.Lower: "lower", exp.Length: "length", exp.Abs: "abs",
                exp.Round: "round", exp.Floor: "floor", exp.Ceil: "ceil", exp.Sqrt: "sqrt",
                exp.Ln: "ln", exp.Exp: "exp"}
# Window functions: PostgreSQL's name, result type (None: the argument's).
_WINDOW_FUNCTIONS = {exp.RowNumber: ("row_number", INT8), exp.Rank: ("rank", INT8), exp.DenseRank: ("dense_rank", INT8),
                     exp.PercentRank: ("percent_rank", FLOAT8), exp.CumeDist: ("cume_dist", FLOAT8),
                     exp.Ntile: ("ntile", INT4), exp.Lag: ("lag", None), exp.Lead: ("lead", None),
                     exp.FirstValue: ("first_value", None), exp.LastValue: ("last_value", None),
                     exp.NthValue: ("nth_value", None)}
_AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}


class _Query:
    """One query level: its FROM items, and the levels around it (for correlated references)."""

    def __init__(self, ctx: PlanContext, out: _Out, parents: list[_Level], used_names: set[str],
                 ctes: dict[str, tuple[list[tuple[str, SqlType]], str]] | None = None,
                 sublink: bool = False, pretty: bool = True) -> None:
        self.ctx = ctx
        self.pretty = pretty
        # A sublink's query (EXISTS, IN, scalar) leaves its unnamed columns unnamed (`?column?`
        # is not printed); a view's, a derived table's and a CTE's name every column.
        self.sublink = sublink
        self.out = out
        self.parents = parents
        self.level = _Level()
        self.used_names = used_names  # refnames taken here and in the levels around
        self.ctes = dict(ctes or {})
        self._types: dict[int, tuple[exp.Expression, SqlType]] = {}

    def _inner(self, out: _Out, parents: list[_Level], sublink: bool = False) -> "_Query":
        """A nested query (derived table, CTE, sublink) printed into `out`."""
        return _Query(self.ctx, out, parents, set(self.used_names), self.ctes, sublink=sublink, pretty=self.pretty)

    def node(self, text: str, kind: tuple) -> _Printed:
        """An operator-like node: without PRETTY_PAREN each one parenthesises itself."""
        return _Printed(text if self.pretty else f"({text})", kind)

    def paren(self, p: _Printed, parent: tuple, is_first: bool = False) -> str:
        """A child as its parent prints it: in pretty mode with the parentheses precedence needs."""
        return _paren(p, parent, is_first) if self.pretty else p.text

    def cast_arg(self, p: _Printed) -> str:
        return self.paren(p, ("cast",)) if self.pretty else f"({p.text})"

    # -- the query -----------------------------------------------------------------------------

    def write(self, node: exp.Expression, names: list[str] | None = None) -> list[tuple[str, SqlType]]:
        """Print the query at the current level; returns its output columns (name, type)."""
        if isinstance(node, exp.Subquery) and not node.alias:
            return self.write(node.this, names)
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, names)
        if not isinstance(node, exp.Select):
            raise _Unsupported(type(node).__name__)
        with_ = node.args.get("with_")
        if with_ is not None:
            self._with(with_)
        out = self.out
        out.level += STD
        out.add(" SELECT")
        self._from(node)
        distinct = node.args.get("distinct")
        if distinct is not None:
            on = distinct.args.get("on")
            if on is None:
                out.add(" DISTINCT")
            else:
                keys = on.expressions if isinstance(on, exp.Tuple) else [on]
                out.add(" DISTINCT ON (" + ", ".join(self.expr(k).text for k in keys) + ")")
        targets = self._targets(node, names)
        self._target_list(targets)
        self._from_clause(node)
        if node.args.get("where") is not None:
            out.keyword(" WHERE ", -STD, STD, 1)
            out.add(self.expr(node.args["where"].this).text)
        group = node.args.get("group")
        if group:
            if any(group.args.get(k) for k in ("grouping_sets", "rollup", "cube")):
                raise _Unsupported("grouping sets")
            out.keyword(" GROUP BY ", -STD, STD, 1)
            out.add(", ".join(self._sort_expr(e, targets) for e in group.expressions))
        if node.args.get("having") is not None:
            out.keyword(" HAVING ", -STD, STD, 0)
            out.add(self.expr(node.args["having"].this).text)
        windows = node.args.get("windows") or []
        if windows:
            out.keyword(" WINDOW ", -STD, STD, 1)
            out.add(", ".join(f"{quote_ident(w.this.name)} AS ({self._window_spec(w)})" for w in windows))
        order = node.args.get("order")
        if order:
            out.keyword(" ORDER BY ", -STD, STD, 1)
            out.add(", ".join(self._ordered(o, targets) for o in order.expressions))
        self._offset_limit(node)
        out.level -= STD
        return [(name, t) for name, _, t in targets]

    def _set_operation(self, node: exp.SetOperation, names: list[str] | None) -> list[tuple[str, SqlType]]:
        """`a UNION b ...`: each SELECT at the query's own level, the operator words at its
        start, a nested operation of another kind in parentheses; ORDER BY by column number."""
        with_ = node.args.get("with_")
        if with_ is not None:
            self._with(with_)
        columns = self._set_operand(node, names, top=True)
        out = self.out
        order = node.args.get("order")
        if order:
            out.keyword(" ORDER BY ", -STD, STD, 1)
            out.add(", ".join(self._ordered_by_number(o, columns) for o in order.expressions))
        self._offset_limit(node)
        return columns

    def _set_operand(self, node: exp.Expression, names: list[str] | None,
                     top: bool = False) -> list[tuple[str, SqlType]]:
        out = self.out
        while isinstance(node, exp.Subquery) and not node.alias:
            node = node.this
        if isinstance(node, exp.Select):
            if any(node.args.get(k) for k in ("order", "limit", "offset", "with_")):
                raise _Unsupported("a set operation's SELECT with ORDER BY or LIMIT")
            return self._inner(out, self.parents, sublink=self.sublink).write(node, names)
        if not isinstance(node, exp.SetOperation) or (
                not top and any(node.args.get(k) for k in ("order", "limit", "offset", "with_"))):
            raise _Unsupported("set operation operand")
        left = node.this
        while isinstance(left, exp.Subquery) and not left.alias:
            left = left.this
        nested = isinstance(left, exp.SetOperation) and (type(left) is not type(node) or bool(
            left.args.get("distinct")) != bool(node.args.get("distinct")))
        if nested:
            out.add("(")
            out.keyword("", STD, 0, 0)
        columns = self._set_operand(left, names)
        if nested:
            out.keyword(") ", -STD, 0, 0)
        else:
            out.keyword("", 0, 0, 0)
        word = {exp.Union: "UNION ", exp.Intersect: "INTERSECT ", exp.Except: "EXCEPT "}[type(node)]
        out.add(word + ("" if node.args.get("distinct") else "ALL "))
        right = node.expression
        while isinstance(right, exp.Subquery) and not right.alias:
            right = right.this
        paren = isinstance(right, exp.SetOperation)
        sub = STD if paren else 0
        if paren:
            out.add("(")
        out.keyword("", sub, 0, 0)
        right_columns = self._set_operand(right, names)
        out.level -= sub
        if paren:
            out.keyword(")", 0, 0, 0)
        # The operation's column types are coerced above its inputs (nothing printed), but an
        # untyped constant would be resolved against the other side: not covered.
        if any((a.kind is TypeKind.UNKNOWN) != (b.kind is TypeKind.UNKNOWN) and TEXT not in (a, b)
               for (_, a), (_, b) in zip(columns, right_columns)):
            raise _Unsupported("set operation with an untyped constant")
        return columns

    def _ordered_by_number(self, o: exp.Ordered, columns: list[tuple[str, SqlType]]) -> str:
        key = o.this
        if isinstance(key, exp.Literal) and not key.is_string and key.this.isdigit():
            n = int(key.this)
        elif isinstance(key, exp.Column) and not key.table and [c for c, _ in columns].count(key.name) == 1:
            n = [c for c, _ in columns].index(key.name) + 1
        else:
            raise _Unsupported("set operation ORDER BY")
        return self._direction(str(n), o)

    def _with(self, with_: exp.With) -> None:
        if with_.args.get("recursive"):
            raise _Unsupported("WITH RECURSIVE")
        out = self.out
        out.level += STD
        out.add(" WITH ")
        for i, cte in enumerate(with_.expressions):
            if cte.args.get("materialized") is not None:
                raise _Unsupported("CTE options")
            renamed = [c.name for c in cte.args["alias"].columns or []]
            out.add(("" if i == 0 else ", ") + quote_ident(cte.alias)
                    + ("(" + ", ".join(quote_ident(n) for n in renamed) + ")" if renamed else "") + " AS (")
            out.keyword("", 0, 0, 0)
            columns = self._inner(out, self.parents).write(cte.this)
            if renamed:
                if len(renamed) != len(columns):
                    raise _Unsupported("partial column aliases")
                columns = [(n, t) for n, (_, t) in zip(renamed, columns)]
            out.keyword("", 0, 0, 0)
            out.add(")")
            self.ctes[cte.alias] = (columns, cte.alias)
        out.level -= STD
        out.keyword("", 0, 0, 0)

    def _offset_limit(self, node: exp.Expression) -> None:
        """OFFSET, then LIMIT (PostgreSQL prints them in that order)."""
        out = self.out
        for key, word in (("offset", " OFFSET "), ("limit", " LIMIT ")):
            clause = node.args.get(key)
            if clause is not None:
                value = clause.args.get("expression")
                out.keyword(word, -STD, STD, 0)
                out.add("ALL" if value is None or isinstance(value, exp.Null) or (
                    isinstance(value, exp.Var) and value.name.upper() == "ALL") else self._limit_value(value))

    def _limit_value(self, value: exp.Expression) -> str:
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            return str(int(value.this))
        raise _Unsupported("LIMIT expression")

    # -- FROM ----------------------------------------------------------------------------------

    def _from(self, node: exp.Select) -> None:
        """Resolve the FROM items (printing waits for the select list, which comes first)."""
        self.from_items: list[list[tuple[exp.Join | None, _Rel, str]]] = []
        from_ = node.args.get("from_")
        if from_ is None:
            return
        chain = [(None, *self._item(from_.this))]
        self.from_items.append(chain)
        stars = [[(chain[0][1], n) for n, _ in chain[0][1].columns]]
        for join in node.args.get("joins") or []:
            kind = (join.args.get("kind") or "").upper()
            side = (join.args.get("side") or "").upper()
            method = (join.args.get("method") or "").upper()
            if not kind and not side and not method and join.args.get("on") is None and not join.args.get("using"):
                chain = [(None, *self._item(join.this))]
                self.from_items.append(chain)
                stars.append([(chain[0][1], n) for n, _ in chain[0][1].columns])
                continue
            rel, shown = self._item(join.this)
            if join.args.get("using") or method == "NATURAL":
                if method not in ("", "NATURAL") or side == "FULL":
                    raise _Unsupported("FULL JOIN USING")
                stars[-1], shown = self._using(join, stars[-1], rel, shown, side)
            else:
                stars[-1] = stars[-1] + [(rel, n) for n, _ in rel.columns]
            chain.append((join, rel, shown))
        self.level.star = [pair for star in stars for pair in star]

    def _using(self, join: exp.Join, left: list[tuple[_Rel, str]], right: _Rel, shown: str,
               side: str) -> tuple[list[tuple[_Rel, str]], str]:
        """JOIN ... USING (k) / NATURAL JOIN: k is the left side's (the right side's in a RIGHT
        JOIN) when unqualified, listed first by `*`; NATURAL prints as the USING it means."""
        visible = [(r, n) for r, n in left if n not in r.hidden]
        if join.args.get("using"):
            names = [i.name for i in join.args["using"]]
        else:
            right_names = {n for n, _ in right.columns}
            names = [n for _, n in visible if n in right_names]
        merged = []
        for name in names:
            lhs = [(r, n) for r, n in visible if n == name]
            rhs = [n for n, _ in right.columns if n == name]
            if len(lhs) != 1 or len(rhs) != 1:
                raise _Unsupported("USING column")
            l_rel = lhs[0][0]
            if _loose(dict(l_rel.columns)[name]) != _loose(dict(right.columns)[name]):
                raise _Unsupported("USING columns of different types")
            kept, dropped = ((right, l_rel) if side == "RIGHT" else (l_rel, right))
            dropped.hidden.add(name)
            merged.append((kept, name))
        rest_left = [(r, n) for r, n in left if n not in names]
        rest_right = [(right, n) for n, _ in right.columns if n not in names]
        return merged + rest_left + rest_right, f"{shown} USING ({', '.join(quote_ident(n) for n in names)})"

    def _item(self, node: exp.Expression) -> tuple[_Rel, str]:
        """A FROM item: its scope entry and its printed text."""
        alias = node.args.get("alias")
        renamed = [c.name for c in alias.columns] if alias is not None and alias.columns else None
        if renamed is not None and not isinstance(node, exp.Subquery):
            raise _Unsupported("column aliases on a relation")
        written_alias = alias.name if alias is not None and alias.name else None
        if isinstance(node, exp.Table):
            if node.args.get("joins") or isinstance(node.this, exp.Anonymous) or not isinstance(node.this, exp.Identifier):
                raise _Unsupported("FROM item")
            name = node.name
            if not node.db and name in self.ctes:
                columns, _ = self.ctes[name]
                shown = quote_ident(name)
            else:
                parts = tuple(p.name for p in (node.args.get("catalog"), node.args.get("db"), node.this) if p)
                item = self.ctx.catalog.resolve(parts, self.ctx.search_path, self.ctx.database)
                if item.schema in ("pg_catalog", "information_schema", "mz_catalog", "mz_internal"):
                    raise _Unsupported("system relation")
                self.ctx.depends_on.append(item.id)
                columns = [(c.name, c.type) for c in item.columns]
                visible = self.ctx.catalog.try_resolve((item.name,), self.ctx.search_path, self.ctx.database)
                shown = quote_ident(item.name) if visible is not None and visible.id == item.id \
                    else f"{quote_ident(item.schema)}.{quote_ident(item.name)}"
                name = item.name
            refname = self._unique(written_alias or name)
            rel = _Rel(written_alias or name, refname, columns)
            if written_alias is not None or refname != name:
                shown += " " + quote_ident(refname)
            self.level.rels.append(rel)
            return rel, shown
        if isinstance(node, exp.Subquery) and written_alias is not None and not node.args.get("joins"):
            if node.args.get("lateral"):
                raise _Unsupported("LATERAL")
            # A derived table sees the levels around this query, not this query's FROM.
            sub_out = self.out.nested()
            columns = self._inner(sub_out, self.parents).write(node.this)
            refname = self._unique(written_alias)
            shown = f"({sub_out.text}) {quote_ident(refname)}"
            if renamed is not None:  # s(x, y): the derived table's columns under new names
                if len(renamed) != len(columns):
                    raise _Unsupported("partial column aliases")
                columns = [(n, t) for n, (_, t) in zip(renamed, columns)]
                shown += "(" + ", ".join(quote_ident(n) for n in renamed) + ")"
            rel = _Rel(written_alias, refname, columns)
            self.level.rels.append(rel)
            return rel, shown
        raise _Unsupported("FROM item")

    def _unique(self, name: str) -> str:
        """PostgreSQL's refnames are unique across the query's levels: t, then t_1, t_2, ..."""
        candidate, n = name, 0
        while candidate in self.used_names:
            n += 1
            candidate = f"{name}_{n}"
        self.used_names.add(candidate)
        return candidate

    def _from_clause(self, node: exp.Select) -> None:
        out = self.out
        for i, chain in enumerate(self.from_items):
            if i == 0:
                out.keyword(" FROM ", -STD, STD, 2)
            else:
                out.add(", ")
                out.text = out.text.rstrip(" ")
                out.keyword("", -STD, STD, VAR)
            if not self.pretty:  # each join parenthesised: ((a JOIN b ON (p)) JOIN c ON (q))
                out.add("(" * (len(chain) - 1))
            for join, _, shown in chain:
                if join is None:
                    out.add(shown)
                    continue
                kind = (join.args.get("kind") or "").upper()
                side = (join.args.get("side") or "").upper()
                on = join.args.get("on")
                if kind == "CROSS" or (on is None and not side and not join.args.get("using")
                                       and (join.args.get("method") or "").upper() != "NATURAL"):
                    word = " CROSS JOIN "
                else:
                    word = {"": " JOIN ", "LEFT": " LEFT JOIN ", "RIGHT": " RIGHT JOIN ",
                            "FULL": " FULL JOIN "}[side]
                out.keyword(word, -STD, STD, JOIN_INDENT)
                out.add(shown)
                if on is not None:
                    cond = self.expr(on).text
                    out.add(f" ON {cond}" if self.pretty else f" ON ({cond})")
                elif side and not join.args.get("using") and (join.args.get("method") or "").upper() != "NATURAL":
                    out.add(" ON TRUE")
                if not self.pretty:
                    out.add(")")

    # -- select list ---------------------------------------------------------------------------

    def _targets(self, node: exp.Select, names: list[str] | None) -> list[tuple[str, _Printed, SqlType]]:
        from planner.scalar import expr_name
        targets = []
        for e in node.expressions:
            if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
                table = e.table if isinstance(e, exp.Column) else None
                if table is None:
                    pairs = self.level.star or []
                else:
                    pairs = [(r, n) for r in self.level.rels if r.written == table for n, _ in r.columns]
                if not pairs:
                    raise _Unsupported("star")
                for r, n in pairs:
                    targets.append((n, _Printed(f"{quote_ident(r.refname)}.{quote_ident(n)}"), dict(r.columns)[n]))
                continue
            inner = e.this if isinstance(e, exp.Alias) else e
            targets.append((expr_name(e), self.expr(inner), self.type_of(inner)))
        if names is not None:
            if len(names) != len(targets):
                raise _Unsupported("column count")
            targets = [(n, p, t) for n, (_, p, t) in zip(names, targets)]
        return targets

    def _target_list(self, targets: list[tuple[str, _Printed, SqlType]]) -> None:
        """The select list: each item after the first on a line of its own (pg_get_viewdef's
        wrap column is 0); an item that starts a line itself (CASE) is not indented again."""
        out = self.out
        for i, (name, printed, _) in enumerate(targets):
            out.add(" " if i == 0 else ", ")
            text = printed.text
            if not _is_column(printed, name) and not (self.sublink and name == "?column?"):
                text += " AS " + quote_ident(name)
            if text.startswith("\n"):
                out.text = out.text.rstrip(" ")
            elif i > 0:
                out.keyword("", -STD, STD, VAR)
            out.add(text)

    def _sort_expr(self, e: exp.Expression, targets: list[tuple[str, _Printed, SqlType]]) -> str:
        """A GROUP BY / ORDER BY item: an ordinal or output name means that select-list item;
        anything but a plain column is parenthesised (ruleutils' get_rule_sortgroupclause)."""
        printed = None
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            k = int(e.this)
            if not 1 <= k <= len(targets):
                raise _Unsupported("ordinal")
            printed = targets[k - 1][1]
        elif isinstance(e, exp.Column) and not e.table and self._find(e.name, None) is None:
            hits = [p for n, p, _ in targets if n == e.name]
            if len(hits) != 1:
                raise _Unsupported("output name")
            printed = hits[0]
        if printed is None:
            printed = self.expr(e)
        if isinstance(e, (exp.Literal, exp.Boolean, exp.Null)) and printed is not None and e is not None \
                and not (isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit()):
            raise _Unsupported("constant sort key")
        return self._group_item(printed)

    def _ordered(self, o: exp.Ordered, targets) -> str:
        return self._direction(self._sort_expr(o.this, targets), o)

    def _direction(self, text: str, o: exp.Ordered) -> str:
        desc = bool(o.args.get("desc"))
        nulls_first = o.args.get("nulls_first")
        if desc:
            text += " DESC"
        # PostgreSQL's default: NULLS LAST ascending, NULLS FIRST descending.
        if nulls_first is not None and bool(nulls_first) != desc:
            text += " NULLS FIRST" if nulls_first else " NULLS LAST"
        return text

    # -- expressions ---------------------------------------------------------------------------

    def _find(self, name: str, table: str | None) -> tuple[_Rel, SqlType] | None:
        for lvl in [self.level, *reversed(self.parents)]:
            hit = lvl.find(name, table)
            if hit is not None:
                return hit
            if table is not None and any(r.written == table for r in lvl.rels):
                raise _Unsupported("no such column")
        return None

    def _scope(self) -> Scope:
        columns = []
        for depth, lvl in enumerate([self.level, *reversed(self.parents)]):
            for r in lvl.rels:
                columns += [ScopeColumn(r.written, n, t, using_hidden=n in r.hidden, level=depth)
                            for n, t in r.columns]
        return Scope(columns)

    def type_of(self, node: exp.Expression) -> SqlType:
        # Printing asks for a node's type at each level above it: typed once. (The node is
        # kept with its type, so its id is not reused while cached.)
        hit = self._types.get(id(node))
        if hit is None:
            hit = self._types[id(node)] = (node, self.lower(node).type)
        return hit[1]

    def lower(self, node: exp.Expression) -> ScalarExpr:
        from planner.aggregates import Grouping
        from planner.scalar import ScalarLowerer, is_aggregate
        scope = self._scope()
        grouping = Grouping(None, scope, self.ctx, [])

        def hook(n: exp.Expression) -> ScalarExpr | None:
            if isinstance(n, exp.Window):
                return ColumnRef(_PLACEHOLDER, self._window_type(n, grouping))
            if is_aggregate(n):
                return ColumnRef(_PLACEHOLDER, grouping._aggregate(n).type)
            if isinstance(n, (exp.Subquery, exp.Exists)) or (isinstance(n, exp.In) and n.args.get("query")):
                return ColumnRef(_PLACEHOLDER, self._sublink(n, self.out.nested())[1])
            return None
        return ScalarLowerer(scope, self.ctx, hook=hook, clause="the view").lower(node)

    def expr(self, node: exp.Expression, want: SqlType | None = None) -> _Printed:
        """Print `node`; `want` is the type its context coerces it to (an implicit cast)."""
        want = None if want is None else _loose(want)
        p = self._expr(node, want)
        if want is None or _constant(node) or (isinstance(node, exp.Cast) and _constant(node.this)):
            return p  # (a constant prints its own coercion)
        own = _loose(self.type_of(node))
        if own == want or own.kind is TypeKind.UNKNOWN:
            return p
        return _Printed(f"{self.cast_arg(p)}::{type_name(want)}")

    def _expr(self, node: exp.Expression, want: SqlType | None) -> _Printed:
        if isinstance(node, exp.Paren):
            return self._expr(node.this, want)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise _Unsupported("star")
            hit = self._find(node.name, node.table or None)
            if hit is None:
                raise _Unsupported("column")
            rel, _ = hit
            return _Printed(f"{quote_ident(rel.refname)}.{quote_ident(node.name)}")
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null, exp.Neg)) and _constant(node):
            return self._literal(node, want)
        if isinstance(node, exp.Neg):
            return self.node("- " + self.paren(self.expr(node.this), ("op", "-", False)), ("op", "-", False))
        if isinstance(node, exp.Cast):
            if isinstance(node, exp.TryCast):
                raise _Unsupported("try cast")
            t = self.type_of(node)
            inner = node.this
            if isinstance(inner, (exp.Literal, exp.Null)) and _constant(inner):
                return self._literal(inner, t)
            return _Printed(f"{self.cast_arg(self.expr(inner))}::{type_name(t)}")
        if isinstance(node, exp.Not):
            # `x NOT LIKE y` and `x NOT IN (...)` are operators of their own; `NOT (x ...)`,
            # parenthesised, is a NOT (sqlglot reads `NOT x IN (...)` as the former too).
            inner = node.this
            if isinstance(inner, (exp.Like, exp.ILike)):
                return self._binary(inner, _NEGATED_BINARY[type(inner)])
            if isinstance(inner, exp.In) and not inner.args.get("query"):
                return self._in_list(inner, negated=True)
            if isinstance(inner, exp.Is):  # x IS NOT TRUE (a parenthesised IS is a Paren)
                return self._is(inner, negated=True)
            return self.node("NOT " + self.paren(self.expr(node.this), ("bool", "NOT")), ("bool", "NOT"))
        if isinstance(node, (exp.And, exp.Or)):
            word = "AND" if isinstance(node, exp.And) else "OR"
            parts = _flatten(node, type(node))
            return self.node(f" {word} ".join(self.paren(self.expr(p), ("bool", word)) for p in parts), ("bool", word))
        if isinstance(node, (exp.Like, exp.ILike)) and node.args.get("negate"):
            return self._binary(node, _NEGATED_BINARY[type(node)])
        if type(node) in _BINARY:
            if isinstance(node.expression, (exp.Any, exp.All)):
                return self._quantified(node, _BINARY[type(node)])
            return self._binary(node, _BINARY[type(node)])
        if isinstance(node, exp.Between):
            if node.args.get("symmetric"):
                raise _Unsupported("BETWEEN SYMMETRIC")
            low = exp.GTE(this=node.this, expression=node.args["low"])
            high = exp.LTE(this=node.this, expression=node.args["high"])
            return self.node(f"{self._binary(low, '>=').text} AND {self._binary(high, '<=').text}", ("bool", "AND"))
        if isinstance(node, exp.Is):
            return self._is(node, negated=False)
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                return self._sublink(node, self.out.nested())[0]
            return self._in_list(node, negated=False)
        if isinstance(node, (exp.Exists, exp.Subquery)):
            return self._sublink(node, self.out.nested())[0]
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.Window):
            return self._window(node)
        if isinstance(node, exp.Substring):
            # substring(x FROM a FOR b), the SQL syntax; PostgreSQL prints substring(x, a, b)
            # called as a function as "substring"(x, a, b), which sqlglot does not tell apart.
            start, length = node.args.get("start"), node.args.get("length")
            # (The SQL syntax shows no implicit casts of its arguments.)
            if any(a is not None and self.type_of(a).kind is TypeKind.UNKNOWN for a in (node.this, start, length)):
                raise _Unsupported("SUBSTRING of a constant")
            text = f"SUBSTRING({self.expr(node.this).text}"
            if start is not None:
                text += f" FROM {self.expr(start).text}"
            if length is not None:
                text += f" FOR {self.expr(length).text}"
            return _Printed(text + ")", call=True)
        if isinstance(node, exp.Extract):
            return _Printed(f"EXTRACT({node.this.name.lower()} FROM {self.expr(node.expression).text})", call=True)
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            lw, rw = self._operand_types(node, "=")
            kind = ("test",)
            distinct = self.node(f"{self.paren(self.expr(node.this, lw), kind)} IS DISTINCT FROM "
                                 f"{self.paren(self.expr(node.expression, rw), kind)}", kind)
            if isinstance(node, exp.NullSafeEQ):  # IS NOT DISTINCT FROM: NOT of IS DISTINCT FROM
                return self.node("NOT " + self.paren(distinct, ("bool", "NOT")), ("bool", "NOT"))
            return distinct
        if type(node) in _UPPER_CALLS:
            return self._call(node, _UPPER_CALLS[type(node)])
        if type(node) in _NAMED_CALLS:
            return self._call(node, _NAMED_CALLS[type(node)])
        if isinstance(node, exp.Anonymous):
            from planner.scalar import is_aggregate
            if is_aggregate(node):
                return self._aggregate(node)
            return self._call(node, node.name.lower())
        if type(node) in _AGGREGATES or isinstance(node, exp.Filter):
            return self._aggregate(node)
        raise _Unsupported(type(node).__name__)

    def _literal(self, node: exp.Expression, want: SqlType | None) -> _Printed:
        lit = self.lower(node)
        if not isinstance(lit, Literal):
            raise _Unsupported("constant")
        if want is None or _loose(lit.type) == want:
            t = lit.type
            if t.kind is TypeKind.UNKNOWN:
                t = TEXT  # PostgreSQL resolves a view's unknown constants to text
            return _Printed(_const(lit.value, t))
        if lit.type.kind is TypeKind.UNKNOWN:
            from planner.scalar import coerce
            coerced = fold_constant(coerce(lit, want, replace(self.ctx, fold_constants=True)))
            if not isinstance(coerced, Literal):
                raise _Unsupported("constant")
            return _Printed(_const(coerced.value, want))
        # A typed constant coerced at run time (1 -> numeric): the cast is printed.
        return _Printed(f"{self.cast_arg(_Printed(_const(lit.value, lit.type)))}::{type_name(want)}")

    def _operand_types(self, node: exp.Expression, op: str) -> tuple[SqlType | None, SqlType | None]:
        """The types the operator's analysis coerces each operand to (None: as it is)."""
        left, right = node.this, node.expression
        lt, rt = _loose(self.type_of(left)), _loose(self.type_of(right))
        if lt == rt:
            return None, None
        if _cross_type(op, lt, rt):
            return None, None
        if op in ("||",) and TypeKind.TEXT in (lt.kind, rt.kind) and UNKNOWN not in (lt, rt):
            return None, None  # text || anynonarray
        if op in ("~~", "!~~", "~~*", "!~~*"):
            # (text, text) and (character, text): anything else is read as text.
            strings = (TypeKind.TEXT, TypeKind.VARCHAR, TypeKind.BPCHAR, TypeKind.UNKNOWN)
            if lt.kind not in strings or rt.kind not in strings:
                raise _Unsupported("LIKE types")
            return (None if lt.kind in (TypeKind.TEXT, TypeKind.BPCHAR) else TEXT), (None if rt == TEXT else TEXT)
        if op in _COMPARISONS and {lt.kind, rt.kind} == {TypeKind.BPCHAR, TypeKind.VARCHAR}:
            return (None if lt.kind is TypeKind.BPCHAR else _BPCHAR), (None if rt.kind is TypeKind.BPCHAR else _BPCHAR)
        if op in _COMPARISONS and {lt.kind, rt.kind} <= {TypeKind.BPCHAR, TypeKind.UNKNOWN}:
            return (None if lt.kind is TypeKind.BPCHAR else _BPCHAR), (None if rt.kind is TypeKind.BPCHAR else _BPCHAR)
        whole = self.lower(node)
        if not isinstance(whole, Call) or len(whole.args) != 2:
            raise _Unsupported("operator resolution")
        a, b = whole.args
        if op in ("=", "<>", "<", "<=", ">", ">=", "~~", "!~~", "~~*", "!~~*", "||"):
            # varchar has no operators of its own: PostgreSQL compares it as text.
            a_t = TEXT if a.type.kind is TypeKind.VARCHAR else _loose(a.type)
            b_t = TEXT if b.type.kind is TypeKind.VARCHAR else _loose(b.type)
        else:
            a_t, b_t = _loose(a.type), _loose(b.type)
        return (None if a_t == lt else a_t), (None if b_t == rt else b_t)

    def _binary(self, node: exp.Expression, op: str) -> _Printed:
        kind = ("op", op, True)
        lw, rw = self._operand_types(node, op)
        left = self.expr(node.this, lw)
        right = self.expr(node.expression, rw)
        return self.node(f"{self.paren(left, kind, True)} {op} {self.paren(right, kind)}", kind)

    def _is(self, node: exp.Is, negated: bool) -> _Printed:
        negated = negated != bool(node.args.get("negate"))
        target = node.expression
        arg = self.paren(self.expr(node.this), ("test",))
        if isinstance(target, exp.Null):
            return self.node(f"{arg} IS {'NOT ' if negated else ''}NULL", ("test",))
        if isinstance(target, exp.Boolean):
            return self.node(f"{arg} IS {'NOT ' if negated else ''}{'TRUE' if target.this else 'FALSE'}", ("test",))
        raise _Unsupported("IS")

    def _quantified(self, node: exp.Expression, op: str) -> _Printed:
        """x op ANY (ARRAY[...]) / ALL: the array's elements and x coerced to one type."""
        quantifier = node.expression
        array = quantifier.this.this if isinstance(quantifier.this, exp.Paren) else quantifier.this
        if not isinstance(array, exp.Array) or op not in _COMPARISONS:
            raise _Unsupported("ANY over an array value")
        self.lower(node)  # (checks the types)
        left, elems = self._elements(node.this, array.expressions)
        word = "ANY" if isinstance(quantifier, exp.Any) else "ALL"
        return self.node(f"{self.paren(left, ('test',))} {op} {word} (ARRAY[{', '.join(elems)}])", ("saop",))

    def _elements(self, left_node: exp.Expression, items: list[exp.Expression]) -> tuple[_Printed, list[str]]:
        types = [_loose(self.type_of(left_node))] + [_loose(self.type_of(i)) for i in items]
        from planner.typing import unify
        common = unify([t for t in types if t.kind is not TypeKind.UNKNOWN] or [TEXT])
        if common is None:
            raise _Unsupported("element types")
        common = TEXT if common.kind is TypeKind.VARCHAR else _loose(common)
        if common.kind is TypeKind.BPCHAR and any(t.kind not in (TypeKind.BPCHAR, TypeKind.UNKNOWN) for t in types):
            raise _Unsupported("character with other strings")
        left = self.expr(left_node, None if types[0] == common else common)
        return left, [self.expr(i, None if t == common else common).text for i, t in zip(items, types[1:])]

    def _in_list(self, node: exp.In, negated: bool) -> _Printed:
        items = node.expressions
        self.lower(exp.In(this=node.this, expressions=items))  # (checks the list types)
        if self.type_of(node.this).kind is TypeKind.VARCHAR and len(items) > 1:
            if not all(self.type_of(i).kind is TypeKind.UNKNOWN for i in items):
                raise _Unsupported("varchar IN list")
            # The list is read as varchar, then the array as text[] for text's = operator.
            elems = [self.expr(i, SqlType(TypeKind.VARCHAR)).text for i in items]
            op = "<> ALL" if negated else "= ANY"
            left = self.expr(node.this, TEXT)
            array = self.cast_arg(_Printed(f"ARRAY[{', '.join(elems)}]"))
            return self.node(f"{self.paren(left, ('test',))} {op} ({array}::text[])", ("saop",))
        left, elems = self._elements(node.this, items)
        if len(items) == 1:  # x IN (y) is x = y
            sym = "<>" if negated else "="
            return self.node(f"{self.paren(left, ('op', sym, True), True)} {sym} {self.paren(_Printed(elems[0]), ('op', sym, True))}",
                            ("op", sym, True))
        op = "<> ALL" if negated else "= ANY"
        return self.node(f"{self.paren(left, ('test',))} {op} (ARRAY[{', '.join(elems)}])", ("saop",))

    def _case(self, node: exp.Case) -> _Printed:
        t = self.type_of(node)
        subject = node.this
        out = self.out.nested()
        out.keyword("CASE", 0, VAR, 0)
        if subject is not None:
            out.add(" " + self.expr(subject).text)
        for w in node.args.get("ifs") or []:
            out.keyword("WHEN ", 0, 0, 0)
            cond = self.expr(w.this).text
            out.add(cond + " THEN " + self.expr(w.args["true"], t).text)
        default = node.args.get("default")
        out.keyword("ELSE ", 0, 0, 0)
        out.add(self.expr(default, t).text if default is not None else _const(None, t))
        out.keyword("END", -VAR, 0, 0)
        return _Printed(out.text)

    def _call(self, node: exp.Expression, name: str) -> _Printed:
        args = _call_args(node)
        whole = self.lower(node)
        wants: list[SqlType | None] = [None] * len(args)
        if type(node) in (exp.Coalesce, exp.Greatest, exp.Least):
            common = _loose(whole.type)  # every argument is coerced to the common type
            wants = [None if _loose(self.type_of(a)) == common else common for a in args]
        elif type(node) is exp.Nullif:
            if len({_loose(self.type_of(a)) for a in args if self.type_of(a).kind is not TypeKind.UNKNOWN}) > 1:
                raise _Unsupported("NULLIF types")
            first = self.type_of(args[0])
            wants = [None, first if self.type_of(args[1]).kind is TypeKind.UNKNOWN else None]
        elif isinstance(whole, Call) and len(whole.args) == len(args):
            for i, (a, lowered) in enumerate(zip(args, whole.args)):
                own = _loose(self.type_of(a))
                if own != _loose(lowered.type):
                    wants[i] = lowered.type
        elif any(self.type_of(a).kind is TypeKind.UNKNOWN for a in args) or (
                type(node) in _UPPER_CALLS and len({self.type_of(a) for a in args}) > 1):
            raise _Unsupported("call resolution")
        text = ", ".join(self.expr(a, w).text for a, w in zip(args, wants))
        return _Printed(f"{quote_ident(name) if name.islower() else name}({text})", call=True)

    def _aggregate(self, node: exp.Expression) -> _Printed:
        filter_ = None
        if isinstance(node, exp.Filter):
            filter_ = node.expression.this if isinstance(node.expression, exp.Where) else node.expression
            node = node.this
        distinct = False
        order: list[exp.Ordered] = []
        if type(node) in _AGGREGATES:
            name = _AGGREGATES[type(node)]
            arg = node.this
            if isinstance(arg, exp.Distinct):
                distinct = True
                if len(arg.expressions) != 1:
                    raise _Unsupported("aggregate arguments")
                arg = arg.expressions[0]
            if isinstance(arg, exp.Order):
                raise _Unsupported("aggregate ORDER BY")
            args = [] if isinstance(arg, exp.Star) else [arg]
            star = isinstance(arg, exp.Star)
        else:
            name = node.name.lower()
            args = list(node.expressions)
            star = False
            if args and isinstance(args[0], exp.Distinct):
                distinct = True
                args = list(args[0].expressions) + args[1:]
            if args and isinstance(args[-1], exp.Order):
                order = list(args[-1].expressions)
                args[-1] = args[-1].this
            if any(isinstance(a, (exp.Order, exp.Distinct)) for a in args):
                raise _Unsupported("aggregate modifiers")
        printed = []
        for a in args:
            t = self.type_of(a)
            printed.append(self.expr(a, TEXT if t.kind is TypeKind.UNKNOWN else None).text
                           if t.kind is not TypeKind.UNKNOWN else _const_text_arg(self, a))
        text = f"{name}({'DISTINCT ' if distinct else ''}{'*' if star else ', '.join(printed)}"
        if order:
            text += " ORDER BY " + ", ".join(self._ordered(o, []) for o in order)
        text += ")"
        if filter_ is not None:
            text += f" FILTER (WHERE {self.expr(filter_).text})"
        return _Printed(text, call=True)

    def _window_type(self, node: exp.Window, grouping) -> SqlType:
        from planner.scalar import is_aggregate
        f = node.this
        if is_aggregate(f):
            return grouping._aggregate(f).type
        if type(f) in _WINDOW_FUNCTIONS:
            result = _WINDOW_FUNCTIONS[type(f)][1]
            return result if result is not None else self.type_of(f.this)
        raise _Unsupported("window function")

    def _window(self, node: exp.Window) -> _Printed:
        """f(...) OVER (PARTITION BY ... ORDER BY ... frame): ruleutils' get_rule_windowspec."""
        from planner.scalar import is_aggregate
        if not isinstance(node.args.get("over"), str) and node.args.get("over") is not None \
                and str(node.args.get("over")).upper() != "OVER":
            raise _Unsupported("window")
        ref = node.args.get("alias")  # OVER w: a window of the WINDOW clause
        if ref is not None and any(node.args.get(k) for k in ("partition_by", "order", "spec")):
            raise _Unsupported("a named window with more")
        f = node.this
        if is_aggregate(f):
            call = self._aggregate(f).text
        elif type(f) in _WINDOW_FUNCTIONS:
            args = [v for k in type(f).arg_types for v in ([f.args.get(k)] if not isinstance(f.args.get(k), list)
                                                           else f.args.get(k)) if v is not None]
            if any(self.type_of(a).kind is TypeKind.UNKNOWN for a in args):
                raise _Unsupported("window function argument")
            call = f"{_WINDOW_FUNCTIONS[type(f)][0]}({', '.join(self.expr(a).text for a in args)})"
        else:
            raise _Unsupported("window function")
        if ref is not None:
            return _Printed(f"{call} OVER {quote_ident(ref.name)}")
        return _Printed(f"{call} OVER ({self._window_spec(node)})")

    def _window_spec(self, node: exp.Window) -> str:
        """PARTITION BY ... ORDER BY ... frame, as ruleutils' get_rule_windowspec prints them."""
        parts = []
        partition = node.args.get("partition_by") or []
        if partition:
            parts.append("PARTITION BY " + ", ".join(self._group_item(self.expr(e)) for e in partition))
        order = node.args.get("order")
        if order:
            items = []
            for o in order.expressions:
                if _constant(o.this):
                    raise _Unsupported("constant window key")
                items.append(self._direction(self._group_item(self.expr(o.this)), o))
            parts.append("ORDER BY " + ", ".join(items))
        spec = node.args.get("spec")
        if spec is not None:
            key = self.type_of(order.expressions[0].this) if order and len(order.expressions) == 1 else None
            parts.append(self._frame(spec, key))
        return " ".join(parts)

    def _frame(self, spec: exp.WindowSpec, key: SqlType | None) -> str:
        """The frame clause; a RANGE offset has the ORDER BY key's type (an interval for dates
        and timestamps), a ROWS or GROUPS offset is a count."""
        offset_type = None
        if spec.args["kind"].upper() == "RANGE":
            if key is None:
                raise _Unsupported("RANGE frame")
            offset_type = INTERVAL if key.kind in _DATETIMES + (TypeKind.TIME,) else key

        def bound(value, side) -> str:
            if isinstance(value, str):
                word = value.upper()
                return "CURRENT ROW" if word == "CURRENT ROW" else f"{word} {side.upper()}"
            return f"{self.expr(value, offset_type).text} {side.upper()}"
        start, end = spec.args.get("start"), spec.args.get("end")
        text = spec.args["kind"].upper() + " "
        if end is not None:
            text += f"BETWEEN {bound(start, spec.args.get('start_side'))} AND {bound(end, spec.args.get('end_side'))}"
        else:
            text += bound(start, spec.args.get("start_side"))
        exclude = spec.args.get("exclude")
        if exclude is not None:
            word = exclude.name.upper() if isinstance(exclude, exp.Expression) else str(exclude).upper()
            if word != "NO OTHERS":
                text += " EXCLUDE " + word
        return text

    def _group_item(self, printed: _Printed) -> str:
        """A PARTITION BY / GROUP BY item: a plain column bare, others parenthesised."""
        if self.pretty:
            return printed.text if _is_plain_column(printed) else f"({printed.text})"
        return f"({printed.text})" if printed.call else printed.text

    def _sublink(self, node: exp.Expression, out: _Out) -> tuple[_Printed, SqlType]:
        """EXISTS (q), x IN (q), (q): the query printed one level deeper, in parentheses."""
        if isinstance(node, exp.In):
            query, prefix = node.args["query"], None
        elif isinstance(node, exp.Exists):
            query, prefix = node.this, "EXISTS "
        else:
            query, prefix = node, ""
        inner_query = query.this if isinstance(query, exp.Subquery) else query
        columns = self._inner(out, [*self.parents, self.level], sublink=True).write(inner_query)
        text = f"({out.text})"
        if isinstance(node, exp.In):
            if len(columns) != 1:
                raise _Unsupported("row IN")
            lt, rt = self.type_of(node.this), columns[0][1]
            if lt != rt and not _cross_type("=", lt, rt):
                raise _Unsupported("IN subquery types")
            return _Printed(f"({self.paren(self.expr(node.this), ('test',))} IN {text})"), BOOL
        if prefix == "EXISTS ":
            return _Printed(f"(EXISTS {text})"), BOOL
        if len(columns) != 1:
            raise _Unsupported("row subquery")
        return _Printed(text, ("sublink",)), columns[0][1]


def _const_text_arg(q: _Query, a: exp.Expression) -> str:
    lit = q.lower(a)
    if not isinstance(lit, Literal):
        raise _Unsupported("argument")
    return _const(lit.value, TEXT)


def _call_args(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous) or type(node) in (exp.Coalesce, exp.Greatest, exp.Least):
        first = [] if isinstance(node, exp.Anonymous) else [node.this]
        return first + list(node.expressions)
    args = [node.this]
    for key in ("expression", "decimals"):
        if node.args.get(key) is not None:
            args.append(node.args[key])
    extra = set(k for k, v in node.args.items() if v is not None) - {"this", "expression", "decimals"}
    if extra:
        raise _Unsupported(f"call arguments {extra}")
    return args


def _flatten(node: exp.Expression, cls: type) -> list[exp.Expression]:
    """`a AND b AND c` is one AND of three in PostgreSQL's grammar, as is `(a AND b) AND c`;
    `a AND (b AND c)` is an AND inside an AND."""
    if isinstance(node, cls):
        left = node.this
        while isinstance(left, exp.Paren):
            left = left.this
        return _flatten(left, cls) + [node.expression]
    return [node]


def _constant(node: exp.Expression) -> bool:
    if isinstance(node, exp.Neg):
        return isinstance(node.this, exp.Literal) and not node.this.is_string
    return isinstance(node, (exp.Literal, exp.Boolean, exp.Null))


def _is_plain_column(p: _Printed) -> bool:
    return p.kind == ("simple",) and re.fullmatch(r'("[^"]*"|[a-z_][a-z0-9_$]*)\.("[^"]*"|[a-z_][a-z0-9_$]*)', p.text) is not None


def _is_column(p: _Printed, name: str) -> bool:
    """A plain column whose name is the output name: printed without AS."""
    return _is_plain_column(p) and p.text.split(".", 1)[1] == quote_ident(name)
