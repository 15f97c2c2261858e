"""PostgreSQL spellings clients use in catalog queries, rewritten to their plain forms right
after parsing:

    pg_catalog.format_type(t, NULL)              ->  format_type(t, NULL)
    c.relname OPERATOR(pg_catalog.~) '^(t)$'     ->  c.relname ~ '^(t)$'
    x COLLATE pg_catalog.default, x COLLATE "C"  ->  x   (text compares by code point here: C)

Another collation would change comparisons and is refused (0A000) rather than ignored.
"""

from __future__ import annotations

from sqlglot import exp

from dataflow.errors import unsupported

_BYTE_ORDER_COLLATIONS = {"default", "c", "posix", "ucs_basic"}


def normalize(tree: exp.Expression) -> exp.Expression:
    if not tree.find(exp.Dot, exp.Operator, exp.Collate):
        return tree
    return tree.transform(_rewrite, copy=False)


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
