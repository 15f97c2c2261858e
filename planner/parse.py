"""Split a simple-query string into statements and parse each one.

>>> [s.sql for s in parse("SELECT 1; SHOW TABLES")]
['SELECT 1', 'SHOW TABLES']
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sqlglot.tokens import TokenType

from planner import literal_insert, mz_ast
from planner.dialect import parse_one_statement, tokenize


# Shorter statements take the general parser (whose tree a cache keeps): the scan pays off for
# many rows.
_LITERAL_INSERT_MIN = 512


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
    rows = literal_insert.scan(sql) if len(sql) > _LITERAL_INSERT_MIN else None
    if rows is not None:  # (a bulk INSERT of literal rows: no tokens, no tree)
        return [Statement(sql.strip().rstrip(";").rstrip(), rows)]
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
        # Token offsets must be relative to the statement's own text: a statement at the start
        # of the string (the usual single statement) already has them.
        local = g if g[0].start == 0 else tokenize(text)
        out.append(Statement(text, parse_one_statement(text, local)))
    if not out:
        out.append(Statement("", mz_ast.Empty()))
    return out


class ParseCache:
    """Parsed statements by their text, for the texts clients send again and again: every
    execution of a prepared statement re-sends its text's name, and drivers describe and then
    execute the same text. A hit costs a copy of the tree (the planner may rewrite the one it
    gets), about a fifth of parsing it. Syntax errors and long texts (bulk INSERTs) are not kept.

    >>> cache = ParseCache(capacity=2)
    >>> cache.parse("SELECT 1")[0].sql, cache.parse("SELECT 1")[0].sql
    ('SELECT 1', 'SELECT 1')
    """

    MAX_TEXT = 4096

    def __init__(self, capacity: int = 512) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, list[Statement]] = OrderedDict()

    def parse(self, sql: str) -> list[Statement]:
        if len(sql) > self.MAX_TEXT:
            return parse(sql)
        cached = self._entries.get(sql)
        if cached is None:
            cached = self._entries[sql] = parse(sql)
            if len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(sql)
        try:
            return copy.deepcopy(cached)
        except RecursionError:  # a tree nested deeper than copying recurses: parse it again
            self._entries.pop(sql, None)
            return parse(sql)
