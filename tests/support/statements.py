"""Parameterised statements built with buildpg, sent alike to PostgreSQL and to Slipstream.

buildpg renders identifiers (`V`) and values into SQL with $n placeholders, so the same
(sql, args) pair can go to the oracle and to the system under test through asyncpg:

    insert("orders", ["id", "amount"], [(1, 10), (2, None)])
    # ('INSERT INTO orders (id, amount) VALUES ($1, $2), ($3, $4)', [1, 10, 2, None])
    update("orders", {"amount": 5}, {"id": 3})
    # ('UPDATE orders SET amount = $1 WHERE id = $2', [5, 3])
    delete("orders", {"id": 3})
    # ('DELETE FROM orders WHERE id = $1', [3])

`inline()` turns such a pair into plain SQL text (for psql and simple-query paths).
"""

from __future__ import annotations

import datetime
import decimal
import re
from typing import Any, Iterable, Sequence

from buildpg import MultipleValues, SetValues, V, Values, funcs, render


def insert(table: str, columns: Sequence[str],
           rows: Iterable[Sequence[Any]]) -> tuple[str, list[Any]]:
    return render("INSERT INTO :table (:columns) VALUES :values", table=V(table),
                  columns=funcs.comma_sep(*[V(c) for c in columns]),
                  values=MultipleValues(*[Values(*row) for row in rows]))


def _where(equals: dict[str, Any]):
    return funcs.AND(*[V(column) == value for column, value in equals.items()])


def update(table: str, assignments: dict[str, Any],
           where: dict[str, Any]) -> tuple[str, list[Any]]:
    return render("UPDATE :table SET :assignments WHERE :where", table=V(table),
                  assignments=SetValues(**assignments), where=_where(where))


def delete(table: str, where: dict[str, Any]) -> tuple[str, list[Any]]:
    return render("DELETE FROM :table WHERE :where", table=V(table), where=_where(where))


def literal(value: Any) -> str:
    """A SQL literal for a Python value (tests only: values come from the tests themselves)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else f"'{value}'"
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def inline(sql: str, args: Sequence[Any]) -> str:
    """Substitute $n placeholders with literals: `inline(*insert(...))` -> plain SQL."""
    return re.sub(r"\$(\d+)", lambda m: literal(args[int(m.group(1)) - 1]), sql)


async def execute(conn: Any, statement: tuple[str, Sequence[Any]]) -> str:
    """Run a rendered (sql, args) pair on an asyncpg connection; returns the command tag."""
    sql, args = statement
    return await conn.execute(sql, *args)
