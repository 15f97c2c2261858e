"""CREATE SOURCE ... FROM POSTGRES: parsing and planning (Materialize's syntax).

    CREATE SOURCE [IF NOT EXISTS] name [IN CLUSTER c]
      FROM POSTGRES CONNECTION conn (PUBLICATION 'pub' [, TEXT COLUMNS (table.col, ...)])
      { FOR ALL TABLES | FOR TABLES (t1 [AS name1], schema.t2 [AS name2], ...) | FOR SCHEMAS (s, ...) }
      [EXPOSE PROGRESS AS progress_name]

One subsource per upstream table of the publication (FOR TABLES: those named; FOR SCHEMAS: those
in the schemas), named as the table (or its AS name) in the source's schema, plus the progress
subsource (`<name>_progress`, column `lsn`). What the upstream holds (tables, columns, types,
replica identity) is read when the statement runs (storage/sources/postgres/setup.py), not here.

>>> from planner.dialect import parse_one_statement
>>> s = parse_one_statement("CREATE SOURCE pg FROM POSTGRES CONNECTION c (PUBLICATION 'p') FOR TABLES (a, s.b AS x)")
>>> s.publication, s.tables
('p', ((('a',), None), (('s', 'b'), 'x')))
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState

Name = tuple[str, ...]


@dataclass(frozen=True)
class CreatePostgresSource:
    name: Name
    connection: Name
    publication: str
    text_columns: tuple[Name, ...]  # [schema.]table.column
    tables: tuple[tuple[Name, str | None], ...] | None  # FOR TABLES: (upstream name, AS name); None: all
    schemas: tuple[str, ...] | None  # FOR SCHEMAS
    progress_name: str | None
    if_not_exists: bool


@dataclass(frozen=True)
class CreatePostgresSourcePlan:
    name: str
    schema: str
    database: str
    connection: Name
    search_path: tuple[str, ...]
    publication: str
    text_columns: tuple[Name, ...]
    tables: tuple[tuple[Name, str | None], ...] | None
    schemas: tuple[str, ...] | None
    progress_name: str
    if_not_exists: bool
    create_sql: str


def parse_postgres_source(c, name: Name, if_not_exists: bool) -> CreatePostgresSource:
    """After FROM POSTGRES."""
    from planner.dialect import syntax_error_at
    c.expect("CONNECTION")
    connection = c.name()
    publication: str | None = None
    text_columns: list[Name] = []
    if c.accept_type(TokenType.L_PAREN):
        while True:
            if c.accept("PUBLICATION"):
                c.accept_type(TokenType.EQ)
                t = c.peek()
                if t is None or t.token_type != TokenType.STRING:
                    raise syntax_error_at(t)
                c.pos += 1
                publication = t.text
            elif c.accept("TEXT", "COLUMNS"):
                c.accept_type(TokenType.EQ)
                c.expect_type(TokenType.L_PAREN)
                text_columns.append(c.name())
                while c.accept_type(TokenType.COMMA):
                    text_columns.append(c.name())
                c.expect_type(TokenType.R_PAREN)
            elif c.accept("EXCLUDE", "COLUMNS") or c.accept("DETAILS"):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                               f"PostgreSQL source option {c.toks[c.pos - 2].text.upper()} not yet supported")
            else:
                raise syntax_error_at(c.peek())
            if c.accept_type(TokenType.R_PAREN):
                break
            c.expect_type(TokenType.COMMA)
    if publication is None:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "PUBLICATION option is required",
                       hint="CREATE SOURCE name FROM POSTGRES CONNECTION c (PUBLICATION 'pub') FOR ALL TABLES")
    for bad in text_columns:
        if len(bad) < 2:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           f'TEXT COLUMNS must name columns as table.column: "{".".join(bad)}"')
    tables = schemas = None
    if c.accept("FOR", "ALL", "TABLES"):
        pass
    elif c.accept("FOR", "TABLES"):
        c.expect_type(TokenType.L_PAREN)
        items = []
        while True:
            upstream = c.name()
            alias = None
            if c.accept("AS"):
                alias = c.name()[-1]
            items.append((upstream, alias))
            if c.accept_type(TokenType.R_PAREN):
                break
            c.expect_type(TokenType.COMMA)
        tables = tuple(items)
    elif c.accept("FOR", "SCHEMAS"):
        schemas = c.ident_list()
    else:
        raise SqlError(SqlState.SYNTAX_ERROR,
                       "multi-output sources require a FOR TABLES (..), FOR SCHEMAS (..) or FOR ALL TABLES statement")
    progress = None
    if c.accept("EXPOSE", "PROGRESS", "AS"):
        progress = c.name()[-1]
    if c.accept("WITH"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE SOURCE ... WITH (...) not yet supported")
    c.expect_end()
    return CreatePostgresSource(name, connection, publication, tuple(text_columns), tables, schemas,
                                progress, if_not_exists)


def plan_postgres_source(node: CreatePostgresSource, ctx, sql: str) -> CreatePostgresSourcePlan:
    from planner.lower_ddl import _qualified
    database, schema, name = _qualified(node.name, ctx)
    return CreatePostgresSourcePlan(name, schema, database, node.connection, tuple(ctx.search_path),
                                    node.publication, node.text_columns, node.tables, node.schemas,
                                    node.progress_name or f"{name}_progress", node.if_not_exists, sql)
