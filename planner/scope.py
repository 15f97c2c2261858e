"""Name resolution: which input column a (possibly qualified) column name means.

A scope lists the columns of the FROM clause in plan order, each tagged with the name of the FROM
item it came from. Resolution follows PostgreSQL:

>>> s = Scope([ScopeColumn("o", "id", INT8), ScopeColumn("c", "id", INT8)])
>>> s.resolve("id", "c")
1
>>> s.resolve("id")   # raises SqlError 42702: column reference "id" is ambiguous

Inside a correlated subquery the scope also holds the outer query's columns the subquery reads
(`level` 1, or more for queries further out; `planner.subqueries`). A name resolves at the
innermost level that has it, as in PostgreSQL: `x` in `(SELECT x FROM u WHERE u.id = t.id)` is
u's x if u has one, else the outer query's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dataflow.errors import SqlError, SqlState
from dataflow.types import SqlType


@dataclass(frozen=True)
class ScopeColumn:
    table: str | None
    name: str
    type: SqlType
    # The right-hand copy of a JOIN ... USING column: reachable only qualified, not in `*`.
    using_hidden: bool = False
    # (relation OID, column number) when this is a catalog relation's column as such.
    origin: tuple[int, int] | None = None
    # 0: a column of this query's FROM; k > 0: a column of the query k levels out.
    level: int = 0
    # Where an outer column was lifted from: (recorder, position) that `mark` tells it was read
    # (`planner.subqueries.Recorder`).
    lifted_from: object = None
    # The FROM item's name when an unqualified reference to it that names no column means this
    # column: a function item's whole-row reference (`SELECT x FROM jsonb_array_elements(j) x`
    # is its one column, `value`; over several columns it is a record, refused).
    whole_row: str | None = None

    def mark_used(self) -> None:
        if self.lifted_from is not None:
            recorder, position = self.lifted_from
            recorder.mark(position)


@dataclass
class Scope:
    columns: list[ScopeColumn] = field(default_factory=list)
    # The order `*` lists the columns in, when it is not plan order: `a JOIN b USING (k)` lists
    # k first, then a's other columns, then b's (as PostgreSQL does).
    order: list[int] | None = None

    def star_order(self) -> list[int]:
        return list(range(len(self.columns))) if self.order is None else list(self.order)

    def __add__(self, other: "Scope") -> "Scope":
        if self.order is None and other.order is None:
            return Scope(self.columns + other.columns)
        n = len(self.columns)
        return Scope(self.columns + other.columns, self.star_order() + [n + i for i in other.star_order()])

    @property
    def types(self) -> tuple[SqlType, ...]:
        return tuple(c.type for c in self.columns)

    def has_table(self, table: str) -> bool:
        return any(c.table == table and c.level == 0 for c in self.columns)

    def _levels(self) -> list[int]:
        return sorted({c.level for c in self.columns}) or [0]

    def resolve(self, name: str, table: str | None = None) -> int:
        for level in self._levels():
            at = [(i, c) for i, c in enumerate(self.columns) if c.level == level]
            if table is not None:
                if not any(c.table == table for _, c in at):
                    continue
                hits = [i for i, c in at if c.table == table and c.name == name]
                if not hits:
                    raise SqlError(SqlState.UNDEFINED_COLUMN, f"column {table}.{name} does not exist")
            else:
                hits = [i for i, c in at if c.name == name and not c.using_hidden]
                if not hits:
                    hits = [i for i, c in at if c.whole_row == name]
                    if len(hits) > 1:
                        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                                       f'whole-row reference "{name}" (a record value) not yet supported')
                if not hits:
                    continue
            if len(hits) > 1:
                raise SqlError(SqlState.AMBIGUOUS_COLUMN, f'column reference "{name}" is ambiguous')
            return hits[0]
        if table is not None:
            raise SqlError(SqlState.UNDEFINED_TABLE, f'missing FROM-clause entry for table "{table}"')
        raise SqlError(SqlState.UNDEFINED_COLUMN, f'column "{name}" does not exist')

    def star(self, table: str | None = None) -> list[int]:
        if table is None:
            return [i for i in self.star_order() if not self.columns[i].using_hidden and self.columns[i].level == 0]
        if not self.has_table(table):
            raise SqlError(SqlState.UNDEFINED_TABLE, f'missing FROM-clause entry for table "{table}"')
        return [i for i, c in enumerate(self.columns) if c.table == table and c.level == 0]
