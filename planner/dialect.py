"""The Slipstream dialect: PostgreSQL (via sqlglot) plus Materialize's statements.

sqlglot's Postgres parser handles standard SQL (SELECT, INSERT, UPDATE, DELETE, CREATE TABLE).
In front of it sits a small recogniser over sqlglot's own tokens for the statement heads it does
not know or parses loosely: SUBSCRIBE, SHOW, SET/RESET, BEGIN/COMMIT/..., DECLARE/FETCH/CLOSE,
COPY, EXPLAIN, CREATE [MATERIALIZED] VIEW ... [IN CLUSTER c], CREATE [DEFAULT] INDEX, DROP,
DISCARD, DEALLOCATE, and a query's trailing `AS OF <ts>`. Each produces a `planner.mz_ast` node;
embedded queries are parsed by sqlglot.

>>> parse_one_statement("FETCH 10 c WITH (timeout = '1s')")
Fetch(cursor='c', count=10, timeout_ms=1000)
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from dataflow.errors import SqlError, SqlState, unsupported
from planner import mz_ast as m
from planner.functions import FUNCTIONS
from planner import catalog_syntax, join_syntax
from planner.functions.aggregates import AGGREGATE_FUNCTIONS
from planner.table_functions import TABLE_FUNCTIONS

LIBRARY = frozenset(FUNCTIONS) | frozenset(TABLE_FUNCTIONS) | frozenset(AGGREGATE_FUNCTIONS)



class Slipstream(Postgres):
    """Postgres, except that no statement head swallows the rest of the statement as one string
    (Postgres' tokenizer does that for SHOW and FETCH): the recogniser needs their tokens."""

    class Tokenizer(Postgres.Tokenizer):
        COMMANDS: set = set()


def _keep_library_calls_as_typed() -> None:
    """The functions of our library (`planner.functions`) stay calls of the name the user typed
    (sqlglot's own builders would turn `to_hex` into HEX, `div` into a cast of an integer
    division, `date_trunc` into another argument order). sqlglot's parser classes are compiled
    and cannot be subclassed, so its Postgres function table is edited, once, in place: this
    process parses SQL only through this module."""
    for table in (Postgres.Parser.FUNCTIONS, Postgres.Parser.FUNCTION_PARSERS):
        for name in [k for k in table if k.lower() in LIBRARY and k.lower() not in _SPECIAL_SYNTAX]:
            del table[name]
    # Names PostgreSQL does not have (IFNULL, NVL, LEN, HEX, DATE_ADD, ...) would otherwise be
    # read as the function sqlglot maps them to: they stay plain calls, and fail with 42883
    # naming what the user wrote, as in PostgreSQL.
    from planner.scalar import POSTGRES_FUNCTIONS
    keep = _POSTGRES_BUILTINS | POSTGRES_FUNCTIONS
    table = Postgres.Parser.FUNCTIONS
    for name in [k for k in table if k.lower() not in keep]:
        del table[name]


# PostgreSQL functions sqlglot builds nodes for that the planner reads by their node (aggregates,
# the CASE-like functions, the string functions with their own syntax).
_POSTGRES_BUILTINS = frozenset("""
    count sum min max avg coalesce greatest least nullif abs floor ceil ceiling round lower upper
    length char_length character_length replace substring substr trim btrim ltrim rtrim
    bool_and bool_or every stddev stddev_pop stddev_samp variance var_pop var_samp array_agg
    json_agg jsonb_agg string_agg json_object_agg jsonb_object_agg percentile_cont percentile_disc
    mode row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
    nth_value array extract cast position overlay
    """.split())


# Library functions with SQL syntax of their own (EXTRACT(field FROM x)): sqlglot parses them.
_SPECIAL_SYNTAX = frozenset({"extract", "position", "overlay", "substring", "trim"})


def _catalog_types_as_names() -> None:
    """oid, regclass, regtype, ... are type names like any other (sqlglot reads them as a
    special token that takes no `[]`, so `$1::oid[]` would not parse)."""
    table = Postgres.Tokenizer.KEYWORDS
    for word in [k for k, v in table.items() if v is TokenType.OBJECT_IDENTIFIER]:
        del table[word]


def _subscripts_as_written() -> None:
    """Subscripts stay as written (1-based, PostgreSQL's), in parsing and in generated SQL alike:
    sqlglot would shift them to 0-based by subtracting 1 where it guesses an array
    (`a[CAST(i AS int)]` became `a[i + -1]`, `a[i]` of an untyped column did not), and the
    planner could not tell which it had done."""
    Postgres.INDEX_OFFSET = 0


def _no_arrow_lambdas() -> None:
    """PostgreSQL has no `x -> expr` lambdas: `f(j->'a')` is the jsonb operator on column j
    (sqlglot read a lone column before `->` in a call's arguments as a lambda's parameter).
    `=>` (named arguments) stays."""
    Postgres.Parser.LAMBDAS.pop(TokenType.ARROW, None)


_keep_library_calls_as_typed()
_catalog_types_as_names()
_no_arrow_lambdas()
_subscripts_as_written()
_DIALECT = Slipstream()
_NON_WORDS = {TokenType.STRING, TokenType.IDENTIFIER, TokenType.NUMBER, TokenType.L_PAREN,
              TokenType.R_PAREN, TokenType.COMMA, TokenType.DOT, TokenType.EQ, TokenType.SEMICOLON,
              TokenType.PARAMETER, TokenType.BYTE_STRING, TokenType.NATIONAL_STRING}


def syntax_error_at(tok: Token | None) -> SqlError:
    if tok is None:
        return SqlError(SqlState.SYNTAX_ERROR, "syntax error at end of input")
    return SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{tok.text}"')


def tokenize(sql: str) -> list[Token]:
    try:
        return _DIALECT.tokenize(sql)
    except TokenError as e:
        raise SqlError(SqlState.SYNTAX_ERROR, f"syntax error: {e}") from None


_INTERVAL_FIELDS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "YEARS", "MONTHS", "DAYS",
                    "HOURS", "MINUTES", "SECONDS"}


def _interval_literals_as_casts(text: str) -> str:
    """`INTERVAL '1 day 02:00:00'` as `CAST('1 day 02:00:00' AS interval)`: sqlglot splits
    such a literal into a number and a unit and drops the rest (the time part, a trailing
    `ago`, which negates)."""
    if "interval" not in text.lower():
        return text
    try:
        toks = tokenize(text)
    except SqlError:
        return text
    edits = []
    for i, t in enumerate(toks[:-1]):
        s = toks[i + 1]
        nxt = toks[i + 2] if i + 2 < len(toks) else None
        if t.token_type == TokenType.INTERVAL and s.token_type == TokenType.STRING and \
                (nxt is None or nxt.text.upper() not in _INTERVAL_FIELDS):
            edits.append((t.start, s.end + 1, f"CAST({text[s.start:s.end + 1]} AS interval)"))
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text


def _quoted_unnest_after_paren(text: str) -> str:
    try:
        toks = tokenize(text)
    except SqlError:
        return text
    edits = [t for prev, t in zip(toks, toks[1:])
             if prev.token_type == TokenType.L_PAREN and t.text.upper() == "UNNEST"]
    for t in reversed(edits):
        text = text[:t.start] + '"unnest"' + text[t.end + 1:]
    return text


def _sqlglot_one(text: str, toks: list[Token] | None = None) -> exp.Expression:
    """sqlglot.parse_one(text, read="postgres"), from the statement's tokens when the caller has
    them: tokenizing is most of what parsing a long statement (a bulk INSERT) costs. Our
    tokenizer is Postgres' except for statement heads that swallow the rest of a statement
    (SHOW, FETCH), which never reach sqlglot; the parser is Postgres' own."""
    result = _DIALECT.parser().parse(toks if toks is not None else _DIALECT.tokenize(text), text)
    if not result or result[0] is None:
        raise ParseError(f"No expression was parsed from '{text}'")
    return exp.Block(expressions=result) if len(result) > 1 else result[0]


def parse_sqlglot(text: str, toks: list[Token] | None = None) -> exp.Expression:
    """Parse standard SQL with sqlglot, mapping its errors to PostgreSQL's 42601 wording.
    `toks`: the text's tokens, if already at hand."""
    rewritten = _interval_literals_as_casts(text)
    if rewritten is not text:
        text, toks = rewritten, None
    try:
        try:
            tree = _sqlglot_one(text, toks)
        except ParseError:
            # sqlglot cannot start a parenthesised join with unnest (`FROM (unnest(a) AS u
            # JOIN t ON ...)`): read as a plain call of that name, which it can.
            retry = _quoted_unnest_after_paren(text)
            if retry == text:
                raise
            try:
                tree = _sqlglot_one(retry)
            except ParseError:
                pass
            else:
                return _normalized(tree, retry)
            raise
    except ParseError as e:
        _check_groups_frame(text)
        err = e.errors[0] if e.errors else {}
        near = err.get("highlight")
        if near:
            raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{near}"') from None
        raise SqlError(SqlState.SYNTAX_ERROR, "syntax error at end of input") from None
    except TokenError as e:
        raise SqlError(SqlState.SYNTAX_ERROR, f"syntax error: {e}") from None
    if tree is None or isinstance(tree, exp.Command):
        toks = tokenize(text)
        raise syntax_error_at(toks[0] if toks else None)
    return _normalized(tree, text)


def _check_groups_frame(text: str) -> None:
    """`OVER (GROUPS BETWEEN ...)` with no ORDER BY: sqlglot reads GROUPS as the name of a window
    and fails on the frame after it; PostgreSQL parses it and rejects the frame (42P20)."""
    try:
        toks = tokenize(text)
    except SqlError:
        return
    for prev, t, nxt in zip(toks, toks[1:], toks[2:]):
        if prev.token_type == TokenType.L_PAREN and t.text.upper() == "GROUPS" and \
                nxt.token_type != TokenType.R_PAREN and nxt.text.upper() not in ("ORDER", "PARTITION", "ROWS", "RANGE"):
            raise SqlError("42P20", "GROUPS mode requires an ORDER BY clause")


def _normalized(tree: exp.Expression, text: str) -> exp.Expression:
    """Unquoted identifiers folded to lower case, as PostgreSQL folds them (`SELECT A FROM T`
    reads column a of table t; `"A"` stays A), then the catalog spellings and join nesting."""
    tree = normalize_identifiers(tree, dialect="postgres")
    return _in_values(join_syntax.normalize(catalog_syntax.normalize(tree), text))


def _in_values(tree: exp.Expression) -> exp.Expression:
    """`x IN (VALUES (1), (2))`, which sqlglot reads as a list holding one VALUES, as the
    subquery it is in PostgreSQL: `x IN (SELECT * FROM (VALUES ...) AS "*VALUES*")`."""
    for node in list(tree.find_all(exp.In)):
        items = node.expressions
        if len(items) == 1 and isinstance(items[0], exp.Values) and node.args.get("query") is None:
            node.set("expressions", [])
            node.set("query", exp.Subquery(this=_values_as_select(items[0])))
    return tree


class _Cursor:
    """A read position over one statement's tokens."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.toks = tokens
        self.pos = 0

    def peek(self, k: int = 0) -> Token | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def is_word(self, w: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.token_type not in _NON_WORDS and t.text.upper() == w

    def accept(self, *words: str) -> bool:
        if all(self.is_word(w, i) for i, w in enumerate(words)):
            self.pos += len(words)
            return True
        return False

    def accept_type(self, tt: TokenType) -> Token | None:
        t = self.peek()
        if t is not None and t.token_type == tt:
            self.pos += 1
            return t
        return None

    def expect(self, *words: str) -> None:
        for w in words:
            if not self.accept(w):
                raise syntax_error_at(self.peek())

    def expect_type(self, tt: TokenType) -> Token:
        t = self.accept_type(tt)
        if t is None:
            raise syntax_error_at(self.peek())
        return t

    def at_end(self) -> bool:
        return self.pos >= len(self.toks)

    def expect_end(self) -> None:
        if not self.at_end():
            raise syntax_error_at(self.peek())

    def ident(self) -> str:
        t = self.peek()
        if t is None:
            raise syntax_error_at(None)
        if t.token_type == TokenType.IDENTIFIER:
            self.pos += 1
            return t.text
        if t.token_type in _NON_WORDS:
            raise syntax_error_at(t)
        self.pos += 1
        return t.text.lower()

    def name(self) -> m.Name:
        parts = [self.ident()]
        while self.accept_type(TokenType.DOT):
            parts.append(self.ident())
        return tuple(parts)

    def ident_list(self) -> tuple[str, ...]:
        self.expect_type(TokenType.L_PAREN)
        out = [self.ident()]
        while self.accept_type(TokenType.COMMA):
            out.append(self.ident())
        self.expect_type(TokenType.R_PAREN)
        return tuple(out)

    def value(self) -> str:
        """A setting value: a string's contents, or a word/number as written."""
        t = self.peek()
        if t is None:
            raise syntax_error_at(None)
        self.pos += 1
        if t.token_type == TokenType.STRING:
            return t.text
        if t.token_type == TokenType.IDENTIFIER:
            return t.text
        if t.text == "-" and self.peek() is not None:  # negative numbers
            return "-" + self.value()
        if t.token_type in _NON_WORDS - {TokenType.NUMBER}:
            raise syntax_error_at(t)
        return t.text if t.token_type == TokenType.NUMBER else t.text.lower()

    def rest_text(self) -> str:
        t = self.peek()
        if t is None:
            raise syntax_error_at(None)
        return self.text[t.start: self.toks[-1].end + 1]

    def paren_span(self) -> tuple[int, int]:
        """Consume a parenthesised group; return the token index range inside it."""
        self.expect_type(TokenType.L_PAREN)
        start, depth = self.pos, 1
        while True:
            t = self.peek()
            if t is None:
                raise syntax_error_at(None)
            self.pos += 1
            if t.token_type == TokenType.L_PAREN:
                depth += 1
            elif t.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    return start, self.pos - 1

    def text_of(self, i: int, j: int) -> str:
        if i >= j:
            raise syntax_error_at(self.toks[i] if i < len(self.toks) else None)
        return self.text[self.toks[i].start: self.toks[j - 1].end + 1]

    def options(self) -> dict[str, str | None]:
        """`(name [=] value, ...)` option lists (WITH (...) of SUBSCRIBE, COPY, FETCH)."""
        self.expect_type(TokenType.L_PAREN)
        out: dict[str, str | None] = {}
        while True:
            key = self.ident().lower()
            self.accept_type(TokenType.EQ)
            t = self.peek()
            if t is not None and t.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
                out[key] = self.value()
            else:
                out[key] = None
            if self.accept_type(TokenType.R_PAREN):
                return out
            self.expect_type(TokenType.COMMA)


def _bool_option(v: str | None, name: str) -> bool:
    if v is None:
        return True
    lv = v.lower()
    if lv in ("true", "on", "1", "yes", "t"):
        return True
    if lv in ("false", "off", "0", "no", "f"):
        return False
    raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"invalid value for option {name.upper()}: {v}")


def _split_as_of(text: str, toks: list[Token]) -> tuple[str, str | None]:
    """Split a query's trailing top-level `AS OF [AT LEAST] <expr>` off."""
    depth = 0
    for i, t in enumerate(toks):
        if t.token_type == TokenType.L_PAREN:
            depth += 1
        elif t.token_type == TokenType.R_PAREN:
            depth -= 1
        elif (depth == 0 and t.text.upper() == "AS" and i + 2 < len(toks)
              and toks[i + 1].text.upper() == "OF" and toks[i + 1].token_type not in _NON_WORDS):
            j = i + 2
            if toks[j].text.upper() == "AT" and j + 1 < len(toks) and toks[j + 1].text.upper() == "LEAST":
                j += 2
            if j >= len(toks):
                raise syntax_error_at(None)
            return text[toks[0].start: t.start].strip(), text[toks[j].start: toks[-1].end + 1]
    return text, None


def _parse_expr(text: str) -> exp.Expression:
    tree = parse_sqlglot(f"SELECT {text}")
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        raise SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{text}"')
    return tree.expressions[0]


def _values_as_select(values: exp.Values) -> exp.Select:
    """A VALUES list as a statement (`VALUES (1, 'a'), (2, 'b') ORDER BY 1 LIMIT 1`) as
    `SELECT * FROM (VALUES ...) AS "*VALUES*"` with its ORDER BY / LIMIT / OFFSET, which is what
    PostgreSQL's parser makes of it too (columns column1, column2, ...)."""
    tail = {k: values.args.get(k) for k in ("order", "limit", "offset", "with_")}
    inner = values.copy()
    for k in tail:
        inner.set(k, None)
    inner.set("alias", exp.TableAlias(this=exp.to_identifier("*VALUES*", quoted=True)))
    sel = exp.Select(expressions=[exp.Star()]).from_(inner)
    for k, v in tail.items():
        if v is not None:
            sel.set(k, v)
    return sel


def parse_query(text: str, toks: list[Token] | None = None) -> Any:
    """A query, possibly with a trailing AS OF: an exp.Query or SelectAsOf."""
    toks = tokenize(text) if toks is None else toks
    if not toks:
        raise syntax_error_at(None)
    if len(toks) > 2 and toks[0].text.upper() == "WITH" and toks[1].text.upper() == "MUTUALLY":
        from planner.recursive import parse_mutually_recursive
        return parse_mutually_recursive(text, toks)
    body, as_of = _split_as_of(text, toks)
    tree = parse_sqlglot(body)
    if isinstance(tree, exp.Values):
        tree = _values_as_select(tree)
    if not isinstance(tree, exp.Query):
        raise syntax_error_at(toks[0])
    if as_of is None:
        return tree
    return m.SelectAsOf(tree, _parse_expr(as_of))


_QUERY_HEADS = {"SELECT", "WITH", "VALUES", "TABLE", "("}
_SQLGLOT_HEADS = {"INSERT", "UPDATE", "DELETE"}


# Valid PostgreSQL statements that Slipstream does not implement: 0A000, not a syntax error.
_POSTGRES_ONLY_HEADS = frozenset({
    "LISTEN", "NOTIFY", "UNLISTEN", "VACUUM", "ANALYZE", "CLUSTER", "REINDEX", "LOCK", "CHECKPOINT",
    "TRUNCATE", "MERGE", "CALL", "DO", "LOAD", "REFRESH", "SECURITY", "COMMENT",
    "IMPORT", "REASSIGN", "ALTER",
})


def parse_one_statement(text: str, toks: list[Token] | None = None) -> Any:
    """Parse one statement (no trailing semicolon) into a sqlglot tree or an `mz_ast` node."""
    toks = tokenize(text) if toks is None else toks
    if not toks:
        return m.Empty()
    c = _Cursor(text, toks)
    head = toks[0].text.upper()
    if head in _QUERY_HEADS:
        return parse_query(text, toks)
    if head in _SQLGLOT_HEADS:
        return parse_sqlglot(text, toks)
    handler = _HANDLERS.get(head)
    if handler is None:
        if head in _POSTGRES_ONLY_HEADS:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{head} not yet supported",
                           hint="Slipstream speaks PostgreSQL's protocol but not every PostgreSQL statement.")
        raise syntax_error_at(toks[0])
    c.pos = 1
    return handler(c)


def _subscribe(c: _Cursor) -> m.Subscribe:
    c.accept("TO")
    target, query = None, None
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        i, j = c.paren_span()
        query = parse_query(c.text_of(i, j))
        if isinstance(query, m.SelectAsOf):
            raise syntax_error_at(c.peek())
    else:
        target = c.name()
    progress, snapshot, as_of, up_to, key = False, True, None, None, None
    while not c.at_end():
        if c.accept("ENVELOPE"):
            c.expect("UPSERT")
            c.expect_type(TokenType.L_PAREN)
            c.expect("KEY")
            key = c.ident_list()
            c.expect_type(TokenType.R_PAREN)
        elif c.accept("WITH"):
            for k, v in c.options().items():
                if k == "progress":
                    progress = _bool_option(v, k)
                elif k == "snapshot":
                    snapshot = _bool_option(v, k)
                else:
                    raise SqlError(SqlState.SYNTAX_ERROR, f"unrecognized SUBSCRIBE option {k.upper()}")
        elif c.accept("AS", "OF"):
            c.accept("AT", "LEAST")
            as_of = _parse_expr(_take_until(c, ("UP",)))
        elif c.accept("UP", "TO"):
            up_to = _parse_expr(_take_until(c, ("AS", "WITH", "ENVELOPE")))
        else:
            raise syntax_error_at(c.peek())
    return m.Subscribe(target, query, progress, snapshot, as_of, up_to, key)


def _take_until(c: _Cursor, stops: tuple[str, ...]) -> str:
    """Consume tokens up to (not including) a top-level stop word; return their text."""
    start, depth = c.pos, 0
    while not c.at_end():
        t = c.peek()
        if t.token_type == TokenType.L_PAREN:
            depth += 1
        elif t.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and any(c.is_word(s) for s in stops):
            break
        c.pos += 1
    return c.text_of(start, c.pos)


def _show(c: _Cursor) -> m.Show:
    if c.at_end():
        raise syntax_error_at(None)
    for words, what in ((("MATERIALIZED", "VIEWS"), "materialized views"), (("TABLES",), "tables"),
                        (("VIEWS",), "views"), (("SOURCES",), "sources"), (("SINKS",), "sinks"),
                        (("SCHEMAS",), "schemas"), (("DATABASES",), "databases"),
                        (("CLUSTERS",), "clusters"), (("OBJECTS",), "objects"),
                        (("SECRETS",), "secrets"), (("CONNECTIONS",), "connections"),
                        (("ROLES",), "roles"), (("CLUSTER", "REPLICAS"), "cluster replicas")):
        if c.accept(*words):
            schema = None
            if c.accept("FROM") or c.accept("IN"):
                schema = ".".join(c.name())
            c.expect_end()
            return m.Show(what, schema=schema)
    if c.accept("INDEXES") or c.accept("INDEX") or c.accept("KEYS"):
        target = c.name() if (c.accept("ON") or c.accept("FROM") or c.accept("IN")) else None
        c.expect_end()
        return m.Show("indexes", target=target)
    if c.accept("COLUMNS"):
        if not (c.accept("FROM") or c.accept("IN")):
            raise syntax_error_at(c.peek())
        target = c.name()
        c.expect_end()
        return m.Show("columns", target=target)
    if c.accept("CREATE"):
        for words, kind in ((("MATERIALIZED", "VIEW"), "materialized view"), (("TABLE",), "table"),
                            (("VIEW",), "view"), (("INDEX",), "index"), (("SOURCE",), "source")):
            if c.accept(*words):
                target = c.name()
                c.expect_end()
                return m.Show("create " + kind, target=target)
        raise syntax_error_at(c.peek())
    if c.accept("ALL"):
        c.expect_end()
        return m.Show("all")
    if c.accept("TRANSACTION", "ISOLATION", "LEVEL"):
        c.expect_end()
        return m.Show("variable", variable="transaction_isolation")
    if c.accept("TIME", "ZONE"):
        c.expect_end()
        return m.Show("variable", variable="timezone")
    var = ".".join(c.name()).lower()
    c.expect_end()
    return m.Show("variable", variable=var)


def _set(c: _Cursor) -> m.SetVariable:
    local = False
    if c.accept("LOCAL"):
        local = True
    else:
        c.accept("SESSION")
    if c.accept("TIME", "ZONE"):
        name = "timezone"
    elif c.accept("TRANSACTION", "ISOLATION", "LEVEL"):
        words = []
        while not c.at_end():
            words.append(c.ident())
        return m.SetVariable("transaction_isolation", " ".join(words), local)
    elif c.accept("CHARACTERISTICS", "AS", "TRANSACTION"):
        # SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ... / READ ONLY|WRITE: the
        # session's defaults (every level runs strict serializable here, the strongest).
        if c.accept("ISOLATION", "LEVEL"):
            words = [c.ident()]  # SERIALIZABLE, REPEATABLE READ, READ COMMITTED, READ UNCOMMITTED
            if words[0].lower() in ("repeatable", "read"):
                words.append(c.ident())
            c.accept_type(TokenType.COMMA)
            if c.at_end():
                return m.SetVariable("default_transaction_isolation", " ".join(words).lower(), local)
        if c.accept("READ", "ONLY") or c.accept("READ", "WRITE"):
            c.expect_end()
            return m.SetVariable("default_transaction_read_only",
                                 "on" if c.toks[c.pos - 1].text.upper() == "ONLY" else "off", local)
        raise syntax_error_at(c.peek())
    elif c.accept("NAMES"):
        name = "client_encoding"
    elif c.is_word("ROLE") or c.is_word("AUTHORIZATION"):  # SET [SESSION] ROLE / SESSION AUTHORIZATION
        raise unsupported(f"SET {'ROLE' if c.is_word('ROLE') else 'SESSION AUTHORIZATION'}")
    else:
        name = ".".join(c.name()).lower()
        if not (c.accept_type(TokenType.EQ) or c.accept("TO")):
            raise syntax_error_at(c.peek())
    if c.accept("DEFAULT") or (name == "timezone" and c.accept("LOCAL")):
        c.expect_end()
        return m.SetVariable(name, None, local)
    values = [c.value()]
    while c.accept_type(TokenType.COMMA):
        values.append(c.value())
    c.expect_end()
    return m.SetVariable(name, ", ".join(values), local)


def _reset(c: _Cursor) -> m.SetVariable:
    if c.accept("TIME", "ZONE"):
        name = "timezone"
    elif c.accept("ALL"):
        name = "all"
    else:
        name = ".".join(c.name()).lower()
    c.expect_end()
    return m.SetVariable(name, None)


def _txn_modes(c: _Cursor) -> bool:
    read_only = False
    while not c.at_end():
        if c.accept("ISOLATION", "LEVEL"):
            for words in (("SERIALIZABLE",), ("STRICT", "SERIALIZABLE"), ("REPEATABLE", "READ"),
                          ("READ", "COMMITTED"), ("READ", "UNCOMMITTED")):
                if c.accept(*words):
                    break
            else:
                raise syntax_error_at(c.peek())
        elif c.accept("READ", "ONLY"):
            read_only = True
        elif c.accept("READ", "WRITE"):
            read_only = False
        elif c.accept("NOT", "DEFERRABLE") or c.accept("DEFERRABLE"):
            pass
        else:
            raise syntax_error_at(c.peek())
        c.accept_type(TokenType.COMMA)
    return read_only


def _begin(c: _Cursor) -> m.Transaction:
    c.accept("WORK") or c.accept("TRANSACTION")
    return m.Transaction("begin", _txn_modes(c))


def _start(c: _Cursor) -> m.Transaction:
    c.expect("TRANSACTION")
    return m.Transaction("begin", _txn_modes(c))


def _finish(action: str):
    def handler(c: _Cursor) -> m.Transaction:
        c.accept("WORK") or c.accept("TRANSACTION")
        if action == "rollback" and c.accept("TO"):
            c.accept("SAVEPOINT")
            name = c.ident()
            c.expect_end()
            return m.Transaction("rollback_to", savepoint=name)
        c.accept("AND", "NO", "CHAIN")
        c.expect_end()
        return m.Transaction(action)
    return handler


def _savepoint(c: _Cursor) -> m.Transaction:
    name = c.ident()
    c.expect_end()
    return m.Transaction("savepoint", savepoint=name)


def _release(c: _Cursor) -> m.Transaction:
    c.accept("SAVEPOINT")
    name = c.ident()
    c.expect_end()
    return m.Transaction("release", savepoint=name)


def _discard(c: _Cursor) -> m.Discard:
    what = c.ident().lower()
    if what not in ("all", "plans", "sequences", "temp", "temporary"):
        raise syntax_error_at(c.toks[c.pos - 1])
    c.expect_end()
    return m.Discard(what)


def _deallocate(c: _Cursor) -> m.Deallocate:
    c.accept("PREPARE")
    if c.accept("ALL"):
        c.expect_end()
        return m.Deallocate(None)
    name = c.ident()
    c.expect_end()
    return m.Deallocate(name)


def _prepare(c: _Cursor) -> m.Prepare:
    name = c.ident()
    types: list[str] = []
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        start, end = c.paren_span()
        types = _split_top_level(c, start, end)
    c.expect("AS")
    return m.Prepare(name, tuple(types), c.rest_text())


def _execute(c: _Cursor) -> m.Execute:
    name = c.ident()
    args: list[str] = []
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        start, end = c.paren_span()
        args = _split_top_level(c, start, end)
    c.expect_end()
    return m.Execute(name, tuple(args))


def _split_top_level(c: _Cursor, start: int, end: int) -> list[str]:
    """The texts of the comma-separated items between token indexes start and end."""
    items, depth, first = [], 0, start
    for k in range(start, end + 1):
        t = c.toks[k] if k < end else None
        if t is not None and t.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif t is not None and t.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
        elif t is None or (t.token_type == TokenType.COMMA and depth == 0):
            if k > first:
                items.append(c.text[c.toks[first].start: c.toks[k - 1].end + 1])
            first = k + 1
    return items


def _declare(c: _Cursor) -> m.Declare:
    cursor = c.ident()
    c.accept("BINARY")
    c.accept("INSENSITIVE")
    c.accept("NO", "SCROLL") or c.accept("SCROLL")
    c.expect("CURSOR")
    c.accept("WITH", "HOLD") or c.accept("WITHOUT", "HOLD")
    c.expect("FOR")
    inner = parse_one_statement(c.rest_text())
    if not isinstance(inner, (exp.Query, m.SelectAsOf, m.Subscribe)):
        raise SqlError(SqlState.SYNTAX_ERROR, "DECLARE CURSOR requires a SELECT or SUBSCRIBE")
    return m.Declare(cursor, inner)


_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")
_UNIT_MS = {"": 1000, "ms": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000,
            "second": 1000, "seconds": 1000, "secs": 1000, "m": 60000, "min": 60000,
            "minute": 60000, "minutes": 60000, "mins": 60000, "h": 3600000, "hour": 3600000,
            "hours": 3600000, "us": 0.001, "microseconds": 0.001}


def interval_ms(text: str) -> int:
    """'1s' -> 1000, '100ms' -> 100, '2 minutes' -> 120000; a bare number means seconds."""
    mt = _INTERVAL.match(text.lower())
    if mt is None or mt.group(2) not in _UNIT_MS:
        raise SqlError(SqlState.INVALID_DATETIME_FORMAT,
                       f'invalid input syntax for type interval: "{text}"')
    return int(float(mt.group(1)) * _UNIT_MS[mt.group(2)])


def _fetch(c: _Cursor) -> m.Fetch:
    count: int | None = 1
    c.accept("FORWARD") or c.accept("NEXT")
    if c.accept("ALL"):
        count = None
    elif c.peek() is not None and c.peek().token_type == TokenType.NUMBER:
        count = int(c.value())
    c.accept("FROM") or c.accept("IN")
    cursor = c.ident()
    timeout = None
    if c.accept("WITH"):
        for k, v in c.options().items():
            if k != "timeout" or v is None:
                raise SqlError(SqlState.SYNTAX_ERROR, f"unrecognized FETCH option {k.upper()}")
            timeout = interval_ms(v)
    c.expect_end()
    return m.Fetch(cursor, count, timeout)


def _close(c: _Cursor) -> m.Close:
    if c.accept("ALL"):
        c.expect_end()
        return m.Close(None)
    name = c.ident()
    c.expect_end()
    return m.Close(name)


def _copy_options(c: _Cursor) -> dict[str, str | None]:
    opts: dict[str, str | None] = {}
    c.accept("WITH")
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        opts = c.options()
    while not c.at_end():  # PostgreSQL's pre-9.0 syntax: WITH CSV HEADER DELIMITER ','
        if c.accept("CSV"):
            opts["format"] = "csv"
        elif c.accept("HEADER"):
            opts["header"] = None
        elif c.accept("DELIMITER"):
            c.accept("AS")
            opts["delimiter"] = c.value()
        elif c.accept("BINARY"):
            opts["format"] = "binary"
        else:
            raise syntax_error_at(c.peek())
    for k in opts:
        if k not in ("format", "header", "delimiter", "null", "quote", "escape"):
            raise SqlError(SqlState.SYNTAX_ERROR, f"unrecognized COPY option {k.upper()}")
    fmt = (opts.get("format") or "text").lower()
    if fmt not in ("text", "csv", "binary"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"COPY format {fmt} not yet supported")
    return {"format": fmt, "header": "header" in opts and _bool_option(opts["header"], "header"),
            "delimiter": opts.get("delimiter")}


def _copy(c: _Cursor) -> Any:
    columns = None
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        i, j = c.paren_span()
        inner = parse_one_statement(c.text_of(i, j))
        if not isinstance(inner, (exp.Query, m.SelectAsOf, m.Subscribe)):
            raise syntax_error_at(c.toks[i])
    else:
        inner = c.name()
        if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
            columns = c.ident_list()
    if c.accept("TO"):
        c.expect("STDOUT")
        o = _copy_options(c)
        return m.CopyTo(inner, columns, o["format"], o["header"], o["delimiter"])
    if c.accept("FROM"):
        if not isinstance(inner, tuple):
            raise syntax_error_at(c.toks[c.pos - 1])
        c.expect("STDIN")
        o = _copy_options(c)
        return m.CopyFrom(inner, columns, o["format"], o["header"], o["delimiter"])
    raise syntax_error_at(c.peek())


def _explain(c: _Cursor) -> m.Explain:
    for stage in ("RAW", "DECORRELATED", "OPTIMIZED", "PHYSICAL", "LOCALLY"):
        c.accept(stage)
    c.accept("OPTIMIZED")
    if c.accept("PLAN"):
        if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
            c.paren_span()  # EXPLAIN PLAN (options) FOR: options are accepted and ignored
        c.accept("AS", "TEXT")
        c.accept("FOR")
    if c.accept("MATERIALIZED", "VIEW"):
        name = c.name()
        c.expect_end()
        return m.Explain(name, "materialized view")
    if c.accept("VIEW"):
        name = c.name()
        c.expect_end()
        return m.Explain(name, "view")
    inner = parse_one_statement(c.rest_text())
    if not isinstance(inner, (exp.Query, m.SelectAsOf, m.CreateView)):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "EXPLAIN of this statement not yet supported")
    return m.Explain(inner)


def _create(c: _Cursor) -> Any:
    or_replace = c.accept("OR", "REPLACE")
    if c.accept("MATERIALIZED", "VIEW"):
        return _create_view(c, True, or_replace)
    if c.accept("VIEW"):
        return _create_view(c, False, or_replace)
    if c.accept("TEMPORARY", "VIEW") or c.accept("TEMP", "VIEW"):
        return _create_view(c, False, or_replace)
    if or_replace:
        raise syntax_error_at(c.peek())
    if c.accept("DEFAULT", "INDEX"):
        return _create_index(c, default=True)
    if c.accept("INDEX"):
        return _create_index(c, default=False)
    if c.is_word("TABLE"):
        return parse_sqlglot(c.text)
    if c.is_word("ROLE") or c.is_word("USER") or c.is_word("GROUP"):
        from planner.role_syntax import parse_create_role
        return parse_create_role(c, c.peek().text.upper())
    for word in ("SCHEMA", "DATABASE"):
        if c.accept(word):
            if_not_exists = c.accept("IF", "NOT", "EXISTS")
            name = c.name()
            c.expect_end()
            return m.CreateNamespace(word.lower(), name, bool(if_not_exists))
    if c.is_word("SOURCE"):
        from planner.source_syntax import parse_create_source
        return parse_create_source(c)
    if c.is_word("CLUSTER"):
        from planner.cluster_syntax import parse_create_cluster
        return parse_create_cluster(c)
    if c.is_word("SECRET") or c.is_word("CONNECTION"):
        from planner import connection_syntax
        return (connection_syntax.parse_create_secret(c) if c.is_word("SECRET")
                else connection_syntax.parse_create_connection(c))
    if c.is_word("SINK"):
        from planner.kafka_syntax import parse_create_sink
        return parse_create_sink(c)
    t = c.peek()
    if t is not None and t.text.upper() in ("SOURCE", "SINK", "CLUSTER", "CONNECTION", "SECRET",
                                            "TYPE", "ROLE", "SCHEMA", "DATABASE", "FUNCTION"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"CREATE {t.text.upper()} not yet supported")
    raise syntax_error_at(t)


def _create_view(c: _Cursor, materialized: bool, or_replace: bool) -> m.CreateView:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name()
    columns = None
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        columns = c.ident_list()
    cluster = None
    if c.accept("IN", "CLUSTER"):
        cluster = c.ident()
    if c.accept("WITH"):
        c.paren_span()  # WITH (options) accepted and ignored
    c.expect("AS")
    definition = c.rest_text()
    query = parse_query(definition)
    if isinstance(query, m.SelectAsOf):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "AS OF in a view definition not yet supported")
    return m.CreateView(name, columns, query, definition, materialized, if_not_exists, or_replace, cluster)


def _create_index(c: _Cursor, default: bool) -> m.CreateIndex:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = None
    if not default and not c.is_word("ON") and not c.is_word("IN"):
        name = c.ident()
    cluster = None
    if c.accept("IN", "CLUSTER"):
        cluster = c.ident()
    c.expect("ON")
    on = c.name()
    c.accept("USING", "ARRANGEMENT")
    columns = None
    if not default:
        start, end = c.paren_span()
        cols = []
        for k in range(start, end):
            t = c.toks[k]
            if t.token_type == TokenType.COMMA:
                continue
            if t.token_type == TokenType.IDENTIFIER:
                cols.append(t.text)
            elif t.token_type in _NON_WORDS:
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "index keys on expressions not yet supported")
            else:
                cols.append(t.text.lower())
        if not cols or (end - start) != 2 * len(cols) - 1:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "index keys on expressions not yet supported")
        columns = tuple(cols)
    c.expect_end()
    return m.CreateIndex(name, on, columns, if_not_exists, cluster)


def _drop(c: _Cursor) -> m.Drop | m.DropNamespace | m.DropRole:
    if c.is_word("ROLE") or c.is_word("USER") or c.is_word("GROUP"):
        from planner.role_syntax import parse_drop_role
        return parse_drop_role(c, c.peek().text.upper())
    if c.is_word("CLUSTER"):
        from planner.cluster_syntax import parse_drop_cluster
        return parse_drop_cluster(c)
    if c.is_word("SECRET") or c.is_word("CONNECTION") or c.is_word("SINK"):
        from planner.connection_syntax import parse_drop
        return parse_drop(c)
    for word in ("SCHEMA", "DATABASE"):
        if c.accept(word):
            if_exists = c.accept("IF", "EXISTS")
            names = [c.name()]
            while c.accept_type(TokenType.COMMA):
                names.append(c.name())
            # DROP DATABASE drops what is in it unless told RESTRICT (PostgreSQL has no
            # RESTRICT; Materialize defaults to CASCADE); DROP SCHEMA restricts by default.
            cascade = word == "DATABASE"
            if c.accept("CASCADE"):
                cascade = True
            elif c.accept("RESTRICT"):
                cascade = False
            c.expect_end()
            return m.DropNamespace(word.lower(), tuple(names), bool(if_exists), cascade)
    for words, kind in ((("MATERIALIZED", "VIEW"), "materialized view"), (("TABLE",), "table"),
                        (("VIEW",), "view"), (("INDEX",), "index"), (("SOURCE",), "source")):
        if c.accept(*words):
            break
    else:
        t = c.peek()
        if t is not None and t.token_type not in _NON_WORDS:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"DROP {t.text.upper()} not yet supported")
        raise syntax_error_at(t)
    if_exists = c.accept("IF", "EXISTS")
    names = [c.name()]
    while c.accept_type(TokenType.COMMA):
        names.append(c.name())
    cascade = False
    if c.accept("CASCADE"):
        cascade = True
    else:
        c.accept("RESTRICT")
    c.expect_end()
    return m.Drop(kind, tuple(names), if_exists, cascade)


def _alter(c: _Cursor) -> m.AlterRole:
    if c.is_word("ROLE") or c.is_word("USER") or c.is_word("GROUP"):
        from planner.role_syntax import parse_alter_role
        return parse_alter_role(c, c.peek().text.upper())
    if c.is_word("SECRET"):
        from planner.connection_syntax import parse_alter_secret
        return parse_alter_secret(c)
    if c.is_word("CLUSTER") and not c.is_word("REPLICA", 1):
        from planner.cluster_syntax import parse_alter_cluster
        return parse_alter_cluster(c)
    from planner.privilege_syntax import parse_alter_owner
    owner = parse_alter_owner(c)
    if owner is not None:
        return owner
    raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "ALTER not yet supported",
                   hint="Slipstream speaks PostgreSQL's protocol but not every PostgreSQL statement.")


_HANDLERS = {
    "SUBSCRIBE": _subscribe, "SHOW": _show, "SET": _set, "RESET": _reset, "BEGIN": _begin,
    "START": _start, "COMMIT": _finish("commit"), "END": _finish("commit"),
    "ROLLBACK": _finish("rollback"), "ABORT": _finish("rollback"), "DISCARD": _discard,
    "SAVEPOINT": _savepoint, "RELEASE": _release, "PREPARE": _prepare, "EXECUTE": _execute,
    "DEALLOCATE": _deallocate, "DECLARE": _declare, "FETCH": _fetch, "CLOSE": _close,
    "COPY": _copy, "EXPLAIN": _explain, "CREATE": _create, "DROP": _drop, "ALTER": _alter,
    "GRANT": lambda c: _grant(c, False), "REVOKE": lambda c: _grant(c, True),
}


def _grant(c: _Cursor, revoke: bool):
    from planner.privilege_syntax import parse_grant
    return parse_grant(c, revoke)
