"""Split a simple-query string into statements and parse each one.

>>> [s.sql for s in parse("SELECT 1; SHOW TABLES")]
['SELECT 1', 'SHOW TABLES']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot.tokens import TokenType

from planner import mz_ast
from planner.dialect import parse_one_statement, tokenize


@dataclass(frozen=True)
class Statement:
    """One statement: its original text and its parsed form (a sqlglot tree or an mz_ast node)."""

    sql: str
    ast: Any

    @property
    def is_empty(self) -> bool:
        return isinstance(self.ast, mz_ast.Empty)


def parse(sql: str) -> list[Statement]:
    """Parse every statement in `sql`; an all-empty string yields one empty statement.
    Syntax errors raise SqlError 42601."""
    tokens = tokenize(sql)
    groups: list[list] = [[]]
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(t)
    out = []
    for g in groups:
        if not g:
            continue
        text = sql[g[0].start: g[-1].end + 1]
        # Token offsets must be relative to the statement's own text.
        local = tokenize(text)
        out.append(Statement(text, parse_one_statement(text, local)))
    if not out:
        out.append(Statement("", mz_ast.Empty()))
    return out
