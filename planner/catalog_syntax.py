"""PostgreSQL spellings clients use in catalog queries, rewritten to their plain forms right
after parsing:

    pg_catalog.format_type(t, NULL)              ->  format_type(t, NULL)
    c.relname OPERATOR(pg_catalog.~) '^(t)$'     ->  c.relname ~ '^(t)$'
    x COLLATE pg_catalog.default, x COLLATE "C"  ->  x   (text compares by code point here: C)

and information_schema._pg_expandarray(a), a set of (x, n) records pgJDBC reads in
getPrimaryKeys/getIndexInfo, without a record type (records are not supported):

    (information_schema._pg_expandarray(a)).n    ->  generate_subscripts(a, 1)
    (information_schema._pg_expandarray(a)).x    ->  unnest(a)
    information_schema._pg_expandarray(a) AS k   ->  unnest(a) AS k   (its x)
    (r.k).x                                      ->  r.k   (k a name given to such a call)

Another collation would change comparisons and is refused (0A000) rather than ignored.
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import unsupported

_BYTE_ORDER_COLLATIONS = {"default", "c", "posix", "ucs_basic"}


def normalize(tree: exp.Expression) -> exp.Expression:
    if not tree.find(exp.Dot, exp.Operator, exp.Collate):
        return tree
    tree = _expandarray(tree)
    return tree.transform(_rewrite, copy=False)


def _is_expandarray(node: exp.Expression) -> bool:
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) \
            and node.this.name.lower() == "information_schema":
        node = node.expression
    return isinstance(node, exp.Anonymous) and node.name.lower() == "_pg_expandarray"


def _expandarray(tree: exp.Expression) -> exp.Expression:
    calls = [n for n in tree.find_all(exp.Dot, exp.Anonymous) if _is_expandarray(n)
             and not (isinstance(n, exp.Anonymous) and isinstance(n.parent, exp.Dot) and _is_expandarray(n.parent))]
    if not calls:
        return tree
    names: set[str] = set()
    for call in calls:
        fn = call.expression if isinstance(call, exp.Dot) else call
        arg = fn.expressions[0].copy() if len(fn.expressions) == 1 else None
        if arg is None:
            continue
        paren, field = call.parent, call.parent.parent if call.parent is not None else None
        if isinstance(paren, exp.Paren) and isinstance(field, exp.Dot) and isinstance(field.expression, exp.Identifier):
            name = field.expression.name.lower()
            if name not in ("x", "n"):
                raise unsupported(f"field {name} of information_schema._pg_expandarray")
            field.replace(exp.Anonymous(this="generate_subscripts", expressions=[arg, exp.Literal.number(1)])
                          if name == "n" else exp.Anonymous(this="unnest", expressions=[arg]))
            continue
        if isinstance(call.parent, exp.Alias):
            names.add(call.parent.alias.lower())
        call.replace(exp.Anonymous(this="unnest", expressions=[arg]))
    if names:
        for dot in list(tree.find_all(exp.Dot)):
            inner = dot.this
            if isinstance(inner, exp.Paren) and isinstance(inner.this, exp.Column) \
                    and inner.this.name.lower() in names and isinstance(dot.expression, exp.Identifier):
                if dot.expression.name.lower() != "x":
                    raise unsupported("fields of information_schema._pg_expandarray other than x after it is named")
                dot.replace(inner.this.copy())
    return tree


def _rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) \
            and node.this.name.lower() == "pg_catalog" and isinstance(node.expression, exp.Func):
        return _reparse(node.expression.sql(dialect="postgres"))
    if isinstance(node, exp.Operator):
        op = str(node.args.get("operator") or "").strip()
        if op.lower().startswith("pg_catalog."):
            op = op[len("pg_catalog."):]
        left = node.this.sql(dialect="postgres")
        right = node.expression.sql(dialect="postgres")
        return _reparse(f"({left}) {op} ({right})")
    if isinstance(node, exp.Collate):
        name = node.expression
        text = (name.name if isinstance(name, (exp.Column, exp.Identifier, exp.Var)) else name.sql()).lower()
        if text.strip('"') not in _BYTE_ORDER_COLLATIONS:
            raise unsupported(f"COLLATE {node.expression.sql(dialect='postgres')}")
        return node.this
    return node


def _reparse(text: str) -> exp.Expression:
    from planner.dialect import parse_sqlglot
    return exp.Paren(this=parse_sqlglot(f"SELECT {text}").expressions[0])
