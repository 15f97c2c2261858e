"""A small SQL AST for the fuzzer: typed expressions, SELECT / set operations / FROM items.

Everything renders to PostgreSQL text (`render(names)`, where `names` maps the logical table names
t0, t1, ... to the real ones), and every node can propose smaller variants of itself
(`shrinks()`), which the shrinker uses to minimise a failing query.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

# ---- types ------------------------------------------------------------------------------------

INT2, INT4, INT8 = "smallint", "integer", "bigint"
NUMERIC, FLOAT4, FLOAT8 = "numeric", "real", "double precision"
TEXT, BOOL, DATE, TIMESTAMP = "text", "boolean", "date", "timestamp"
INTERVAL, TIME, BYTEA, UUID, JSONB = "interval", "time", "bytea", "uuid", "jsonb"
TEXTARR, INTARR = "text[]", "integer[]"
INTS = (INT2, INT4, INT8)
FLOATS = (FLOAT4, FLOAT8)
NUMBERS = INTS + (NUMERIC,) + FLOATS
ALL_TYPES = NUMBERS + (TEXT, BOOL, DATE, TIMESTAMP, INTERVAL, TIME, BYTEA, UUID, JSONB, TEXTARR,
                       INTARR)
_KIND = {BOOL: "bool", TEXT: "text", DATE: "date", TIMESTAMP: "timestamp", INTERVAL: "interval",
         TIME: "time", BYTEA: "bytea", UUID: "uuid", JSONB: "jsonb", TEXTARR: "textarr",
         INTARR: "intarr"}
# Kinds without PostgreSQL's ordering here: no <, >, ORDER BY, min/max, greatest/least.
UNORDERED = {"jsonb", "textarr", "intarr"}


def kind(t: str) -> str:
    """Type family: int, numeric, float, text, bool, date, timestamp, interval, time, bytea, uuid,
    jsonb, textarr, intarr."""
    if t in INTS:
        return "int"
    if t.startswith("numeric"):
        return "numeric"
    if t in FLOATS:
        return "float"
    return _KIND.get(base_type(t), "text")


def base_type(t: str) -> str:
    """numeric(p,s) -> numeric; varchar(n), character(n) -> text (the same to a client comparing
    answers); everything else unchanged."""
    if t.startswith("numeric"):
        return NUMERIC
    if t.startswith(("varchar", "character", "char(")):
        return TEXT
    return t


def is_number(t: str) -> bool:
    return base_type(t) in NUMBERS


def orderable(t: str) -> bool:
    return kind(t) not in UNORDERED


def arith_type(a: str, b: str) -> str:
    """PostgreSQL's result type of a +-*/ b (numbers only)."""
    a, b = base_type(a), base_type(b)
    if a in INTS and b in INTS:
        return max(a, b, key=INTS.index)
    if a == FLOAT4 and b == FLOAT4:
        return FLOAT4
    if a in FLOATS or b in FLOATS:
        return FLOAT8
    return NUMERIC


def comparable(a: str, b: str) -> bool:
    ka, kb = kind(a), kind(b)
    if is_number(a) and is_number(b):
        return True
    if {ka, kb} <= {"date", "timestamp"}:
        return True
    return ka == kb


def unify(a: str, b: str) -> str | None:
    """The common type of a UNION / CASE / COALESCE over a and b, or None."""
    a, b = base_type(a), base_type(b)
    if a == b:
        return a
    if is_number(a) and is_number(b):
        order = [INT2, INT4, INT8, NUMERIC, FLOAT4, FLOAT8]
        return max(a, b, key=order.index)
    if {a, b} == {DATE, TIMESTAMP}:
        return TIMESTAMP
    return None


# ---- rendering context ------------------------------------------------------------------------

@dataclass
class Names:
    """Logical table name -> real name (a per-run prefix keeps runs on one server apart)."""
    prefix: str = ""

    def table(self, logical: str) -> str:
        return f"{self.prefix}{logical}"


class Node:
    """Base class: `children()` lists (attribute, index) slots holding sub-nodes, so that the
    shrinker can walk and replace them generically."""

    def child_slots(self) -> list[tuple[str, int | None]]:
        return []

    def shrinks(self) -> Iterator["Node"]:
        return iter(())

    def get_slot(self, slot):
        attr, i = slot
        v = getattr(self, attr)
        return v if i is None else v[i]

    def set_slot(self, slot, value) -> None:
        attr, i = slot
        if i is None:
            setattr(self, attr, value)
        else:
            getattr(self, attr)[i] = value


# ---- expressions ------------------------------------------------------------------------------

class Expr(Node):
    typ: str

    def render(self, n: Names) -> str:
        raise NotImplementedError


@dataclass
class Lit(Expr):
    text: str
    typ: str

    def render(self, n: Names) -> str:
        return self.text


@dataclass
class Col(Expr):
    qual: str | None
    name: str
    typ: str

    def render(self, n: Names) -> str:
        return f"{self.qual}.{self.name}" if self.qual else self.name


def null_of(t: str) -> Lit:
    return Lit(f"CAST(NULL AS {t})", base_type(t))


SIMPLE_LITERAL = {INT2: "CAST(1 AS smallint)", INT4: "1", INT8: "CAST(1 AS bigint)", NUMERIC: "1.5",
                  FLOAT4: "CAST(1 AS real)", FLOAT8: "CAST(1 AS double precision)", TEXT: "'a'",
                  BOOL: "true", DATE: "DATE '2020-01-01'",
                  TIMESTAMP: "TIMESTAMP '2020-01-01 00:00:00'", INTERVAL: "INTERVAL '1 day'",
                  TIME: "TIME '12:00:00'", BYTEA: "CAST('ab' AS bytea)",
                  UUID: "CAST('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS uuid)",
                  JSONB: "CAST('{\"a\": 1}' AS jsonb)", TEXTARR: "ARRAY['a']", INTARR: "ARRAY[1]"}


@dataclass
class Op(Expr):
    """Any composite expression: `template` has {0}, {1}, ... for the rendered args.

    `drop_from`: args from this index on form a list whose items may be dropped one at a time
    when shrinking (IN lists, COALESCE arguments), keeping at least `min_items` of them; the
    template is then rebuilt by `rebuild`."""
    template: str
    args: list[Expr]
    typ: str
    rebuild: Callable[[list[Expr]], "Expr"] | None = field(default=None, repr=False)

    def render(self, n: Names) -> str:
        return self.template.format(*(a.render(n) for a in self.args))

    def child_slots(self):
        return [("args", i) for i in range(len(self.args))]

    def shrinks(self) -> Iterator[Expr]:
        for a in self.args:
            if isinstance(a, Expr) and a.typ == self.typ:
                yield a
        if self.rebuild is not None:
            for i in range(len(self.args)):
                smaller = self.rebuild(self.args[:i] + self.args[i + 1:])
                if smaller is not None:
                    yield smaller
        if self.typ != BOOL:
            # A NULL condition lets PostgreSQL skip evaluating whole subtrees (one-time filters),
            # which would let shrinking drift from a real difference to an evaluation-order one.
            yield null_of(self.typ)
        if base_type(self.typ) in SIMPLE_LITERAL:
            yield Lit(SIMPLE_LITERAL[base_type(self.typ)], base_type(self.typ))


@dataclass
class InSubquery(Expr):
    arg: Expr
    query: "Query"
    negate: bool = False
    typ: str = BOOL

    def render(self, n: Names) -> str:
        return f"({self.arg.render(n)} {'NOT IN' if self.negate else 'IN'} ({self.query.render(n)}))"

    def child_slots(self):
        return [("arg", None), ("query", None)]

    def shrinks(self):
        yield Lit("true", BOOL)


# ---- FROM items -------------------------------------------------------------------------------

@dataclass
class ScopeCol:
    """A column visible in a FROM scope. qual None: a USING-merged column (unqualified only)."""
    qual: str | None
    name: str
    typ: str
    star: bool = True          # appears in SELECT * expansion

    def ref(self) -> Col:
        return Col(self.qual, self.name, base_type(self.typ))


class FromItem(Node):
    def render(self, n: Names) -> str:
        raise NotImplementedError


@dataclass
class TableRef(FromItem):
    table: str            # logical name (t0 ...) or a CTE name
    alias: str
    is_cte: bool = False

    def render(self, n: Names) -> str:
        name = self.table if self.is_cte else n.table(self.table)
        return f"{name} AS {self.alias}"


@dataclass
class SubqueryRef(FromItem):
    query: "Query"
    alias: str

    def render(self, n: Names) -> str:
        return f"({self.query.render(n)}) AS {self.alias}"

    def child_slots(self):
        return [("query", None)]


@dataclass
class FuncRef(FromItem):
    """A set-returning function in FROM: `generate_series(1, 3) AS g(c0)`; its arguments may
    refer to the FROM items before it (PostgreSQL's implicit LATERAL)."""
    call: Expr
    alias: str
    column: str = "c0"

    def render(self, n: Names) -> str:
        return f"{self.call.render(n)} AS {self.alias}({self.column})"

    def child_slots(self):
        return [("call", None)]


@dataclass
class Join(FromItem):
    kind: str                  # 'CROSS JOIN', 'JOIN', 'INNER JOIN', 'LEFT JOIN', ...
    left: FromItem
    right: FromItem
    on: Expr | None = None
    using: list[str] | None = None
    paren: bool = False

    def render(self, n: Names) -> str:
        s = f"{self.left.render(n)} {self.kind} {self.right.render(n)}"
        if self.on is not None:
            s += f" ON {self.on.render(n)}"
        elif self.using is not None:
            s += f" USING ({', '.join(self.using)})"
        return f"({s})" if self.paren else s

    def child_slots(self):
        slots = [("left", None), ("right", None)]
        if self.on is not None:
            slots.append(("on", None))
        return slots

    def shrinks(self):
        yield self.left
        yield self.right
        if self.kind not in ("JOIN", "INNER JOIN", "CROSS JOIN"):
            yield Join("JOIN", self.left, self.right, self.on, self.using, self.paren)
        if self.paren:
            yield Join(self.kind, self.left, self.right, self.on, self.using, False)


# ---- queries ----------------------------------------------------------------------------------

@dataclass
class OrderKey:
    pos: int                 # 1-based output column
    desc: bool = False
    nulls: str | None = None  # 'FIRST' / 'LAST' / None

    def render(self) -> str:
        s = str(self.pos) + (" DESC" if self.desc else "")
        return s + (f" NULLS {self.nulls}" if self.nulls else "")

    def nulls_first(self) -> bool:
        return self.nulls == "FIRST" if self.nulls else self.desc


class Query(Node):
    order_by: list[OrderKey]
    limit: int | None
    offset: int | None
    ctes: list[tuple[str, "Query"]]

    def out_types(self) -> list[str]:
        raise NotImplementedError

    def body(self, n: Names) -> str:
        raise NotImplementedError

    def render(self, n: Names, with_order: bool = True) -> str:
        s = ""
        if self.ctes:
            s = "WITH " + ", ".join(f"{name} AS ({q.render(n)})" for name, q in self.ctes) + " "
        s += self.body(n)
        if with_order:
            s += self.tail()
        return s

    def tail(self) -> str:
        s = ""
        if self.order_by:
            s += " ORDER BY " + ", ".join(k.render() for k in self.order_by)
        if self.limit is not None:
            s += f" LIMIT {self.limit}"
        if self.offset is not None:
            s += f" OFFSET {self.offset}"
        return s

    def cte_slots(self):
        return [("ctes", i) for i in range(len(self.ctes))]

    def total_order(self) -> bool:
        """ORDER BY covers every output column: the ordered result is deterministic."""
        return {k.pos for k in self.order_by} >= set(range(1, len(self.out_types()) + 1))

    def tail_shrinks(self) -> Iterator["Query"]:
        if self.offset is not None:
            q = copy.copy(self); q.offset = None; yield q
        if self.limit is not None:
            q = copy.copy(self); q.limit = None; yield q
        if self.order_by and self.limit is None and self.offset is None:
            q = copy.copy(self); q.order_by = []; yield q
        for i in range(len(self.ctes)):
            q = copy.copy(self); q.ctes = self.ctes[:i] + self.ctes[i + 1:]; yield q


@dataclass
class Select(Query):
    items: list[tuple[Expr, str]]
    from_: list[FromItem] = field(default_factory=list)
    where: Expr | None = None
    group_by: list[Expr] = field(default_factory=list)
    having: Expr | None = None
    distinct: bool = False
    star: list[ScopeCol] | None = None     # SELECT * (items unused), with its expansion
    order_by: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None
    ctes: list[tuple[str, Query]] = field(default_factory=list)

    def out_types(self) -> list[str]:
        if self.star is not None:
            return [base_type(c.typ) for c in self.star]
        return [base_type(e.typ) for e, _ in self.items]

    def out_names(self) -> list[str]:
        if self.star is not None:
            return [c.name for c in self.star]
        return [a for _, a in self.items]

    def body(self, n: Names) -> str:
        s = "SELECT " + ("DISTINCT " if self.distinct else "")
        if self.star is not None:
            s += "*"
        else:
            s += ", ".join(f"{e.render(n)} AS {a}" for e, a in self.items)
        if self.from_:
            s += " FROM " + ", ".join(f.render(n) for f in self.from_)
        if self.where is not None:
            s += f" WHERE {self.where.render(n)}"
        if self.group_by:
            s += " GROUP BY " + ", ".join(g.render(n) for g in self.group_by)
        if self.having is not None:
            s += f" HAVING {self.having.render(n)}"
        return s

    def child_slots(self):
        slots = self.cte_slots()
        if self.star is None:
            slots += [("items", i) for i in range(len(self.items))]
        slots += [("from_", i) for i in range(len(self.from_))]
        if self.where is not None:
            slots.append(("where", None))
        slots += [("group_by", i) for i in range(len(self.group_by))]
        if self.having is not None:
            slots.append(("having", None))
        return slots

    def get_slot(self, slot):
        v = super().get_slot(slot)
        if slot[0] == "items":
            return v[0]
        return v[1] if slot[0] == "ctes" else v

    def set_slot(self, slot, value):
        attr, i = slot
        if attr == "items":
            self.items[i] = (value, self.items[i][1])
        elif attr == "ctes":
            self.ctes[i] = (self.ctes[i][0], value)
        else:
            super().set_slot(slot, value)

    def shrinks(self) -> Iterator[Query]:
        yield from self.tail_shrinks()
        if self.where is not None:
            q = copy.copy(self); q.where = None; yield q
        if self.having is not None:
            q = copy.copy(self); q.having = None; yield q
        if self.distinct:
            q = copy.copy(self); q.distinct = False; yield q
        if self.group_by:
            q = copy.copy(self); q.group_by = []; yield q
        if self.star is None and len(self.items) > 1:
            for i in range(len(self.items)):
                q = copy.copy(self)
                q.items = self.items[:i] + self.items[i + 1:]
                q.order_by = [OrderKey(k.pos - (k.pos > i + 1), k.desc, k.nulls)
                              for k in self.order_by if k.pos != i + 1]
                yield q
        for i in range(len(self.group_by)):
            if len(self.group_by) > 1:
                q = copy.copy(self); q.group_by = self.group_by[:i] + self.group_by[i + 1:]; yield q
        if len(self.from_) > 1:
            for i in range(len(self.from_)):
                q = copy.copy(self); q.from_ = self.from_[:i] + self.from_[i + 1:]; yield q


@dataclass
class SetOp(Query):
    op: str                   # UNION / EXCEPT / INTERSECT
    all: bool
    left: Query
    right: Query
    order_by: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None
    ctes: list[tuple[str, Query]] = field(default_factory=list)

    def out_types(self) -> list[str]:
        return [unify(a, b) or a for a, b in zip(self.left.out_types(), self.right.out_types())]

    def out_names(self) -> list[str]:
        return self.left.out_names()

    def body(self, n: Names) -> str:
        return f"({self.left.render(n)}) {self.op}{' ALL' if self.all else ''} ({self.right.render(n)})"

    def child_slots(self):
        return self.cte_slots() + [("left", None), ("right", None)]

    def get_slot(self, slot):
        v = super().get_slot(slot)
        return v[1] if slot[0] == "ctes" else v

    def set_slot(self, slot, value):
        if slot[0] == "ctes":
            self.ctes[slot[1]] = (self.ctes[slot[1]][0], value)
        else:
            super().set_slot(slot, value)

    def shrinks(self) -> Iterator[Query]:
        yield from self.tail_shrinks()
        for side in (self.left, self.right):
            q = copy.copy(side)
            q.ctes = self.ctes + side.ctes
            q.order_by, q.limit, q.offset = self.order_by, self.limit, self.offset
            yield q
        if self.all:
            q = copy.copy(self); q.all = False; yield q


# ---- generic tree walking for the shrinker ----------------------------------------------------

def walk_slots(node: Node, path: tuple = ()) -> Iterator[tuple[tuple, Node]]:
    """Every (path, node) in the tree, root first; a path is a tuple of slots."""
    yield path, node
    for slot in node.child_slots():
        child = node.get_slot(slot)
        if isinstance(child, Node):
            yield from walk_slots(child, path + (slot,))


def replace_at(root: Node, path: tuple, new: Node) -> Node:
    """A copy of `root` with the node at `path` replaced by `new` (shares untouched subtrees)."""
    if not path:
        return new
    root = copy.copy(root)
    for attr in ("args", "items", "from_", "group_by", "ctes"):
        if hasattr(root, attr):
            setattr(root, attr, list(getattr(root, attr)))
    child = root.get_slot(path[0])
    root.set_slot(path[0], replace_at(child, path[1:], new))
    return root


def size(node: Node) -> int:
    return sum(1 for _ in walk_slots(node))


def render_any(node: Any, n: Names) -> str:
    return node.render(n)
