"""Random schemas and data: tables t0..tN with columns c0..cK of random types, rows with NULLs,
duplicates, empty tables, extreme values (integer bounds, empty strings, infinities)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.fuzz.sqlast import (BOOL, BYTEA, DATE, FLOAT4, FLOAT8, INT2, INT4, INT8, INTARR,
                               INTERVAL, JSONB, NUMERIC, TEXT, TEXTARR, TIME, TIMESTAMP, UUID, Names,
                               base_type)

# Float values are dyadic (exact in binary) so that sums do not depend on the order of addition.
VALUES = {
    INT2: ["0", "1", "-1", "2", "3", "7", "-5", "100", "32767", "-32768"],
    INT4: ["0", "1", "-1", "2", "5", "-7", "42", "1000", "2147483647", "-2147483648"],
    INT8: ["0", "1", "-1", "3", "-10", "4294967296", "9223372036854775807",
           "-9223372036854775808"],
    NUMERIC: ["0", "1", "-1", "1.5", "-2.25", "0.001", "0.1", "3.14159", "1000000", "-0.0000001",
              "123456789.123456789", "99999999999999999999", "2.50", "-0.5"],
    FLOAT4: ["0", "1", "-1", "0.5", "-2.25", "3.75", "-0.125", "1000000", "16777216", "-0",
             "'Infinity'", "'-Infinity'", "'NaN'"],
    FLOAT8: ["0", "1", "-1", "0.5", "-2.25", "3.75", "-1024", "1e15", "-0.0625", "-0",
             "'Infinity'", "'-Infinity'", "'NaN'", "1e300"],
    TEXT: ["''", "'a'", "'A'", "'ab'", "'abc'", "'ABC'", "'Abc'", "' a '", "'a b'", "'x%y'",
           "'x_y'", "'%'", "'_'", "'hello'", "'HELLO'", "'123'", "'1.5'", "'true'",
           "'2020-01-01'", "'aaa'", "'it''s'", "'€uro'", "'ab\\c'"],
    BOOL: ["true", "false"],
    DATE: ["'2020-01-01'", "'2020-02-29'", "'1999-12-31'", "'1970-01-01'", "'2000-01-01'",
           "'1900-03-01'", "'2038-01-19'"],
    TIMESTAMP: ["'2020-01-01 00:00:00'", "'2020-01-01 12:34:56.789'", "'1999-12-31 23:59:59.999999'",
                "'1970-01-01 00:00:00'", "'2038-01-19 03:14:07'", "'2020-02-29 00:00:00'",
                "'1900-01-01 00:00:00'", "'2020-01-01 00:00:00.5'"],
    # Spans all different: GROUP BY/DISTINCT/joins compare an interval's three fields here
    # (docs/sql-semantics.md), so '1 mon' next to '30 days' would be a documented difference.
    INTERVAL: ["'1 day'", "'-2 hours'", "'1 mon'", "'1 year 2 mons 3 days 04:05:06.5'",
               "'00:00:00'", "'-1 day +02:00:00'", "'01:30:00'", "'7 days'", "'-3 mons'",
               "'0.000001 seconds'", "'100 years'", "'178000000 years'"],
    TIME: ["'00:00:00'", "'12:34:56'", "'23:59:59.999999'", "'01:02:03.5'", "'12:00:00'",
           "'08:30:00'"],
    BYTEA: ["''", "'\\x00'", "'\\xdeadbeef'", "'abc'", "'\\x41'", "'\\xff00'", "'a b'"],
    UUID: ["'00000000-0000-0000-0000-000000000000'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
           "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12}'",
           "'A0EEBC999C0B4EF8BB6D6BB9BD380A13'"],
    JSONB: ["'{}'", "'[]'", "'null'", "'1'", "'\"a\"'", "'{\"a\": 1, \"b\": [1, 2]}'",
            "'{\"a\": {\"b\": \"x\"}}'", "'[1, \"a\", null, true]'", "'{\"b\": 2.5, \"a\": null}'",
            "'true'", "'{\"a\": \"1\", \"ab\": [], \"c\": -7}'", "'[[1], {\"a\": 2}]'"],
    TEXTARR: ["'{}'", "'{a,b}'", "'{\"a b\",NULL}'", "'{\"\"}'", "'{x,y,z}'", "'{A}'", "'{a,a}'",
              "'{NULL}'", "'{\"it''s\",\"c,d\"}'"],
    INTARR: ["'{}'", "'{1,2,3}'", "'{NULL,1}'", "'{-2147483648,2147483647}'", "'{5}'", "'{1,1}'",
             "'{0,-1}'", "'{NULL}'"],
}
# Values past the common ones: rarer, for extremes.
RARE = {INT2: {"32767", "-32768"}, INT4: {"2147483647", "-2147483648"},
        INT8: {"9223372036854775807", "-9223372036854775808", "4294967296"},
        NUMERIC: {"99999999999999999999", "123456789.123456789"},
        FLOAT4: {"'Infinity'", "'-Infinity'", "'NaN'", "16777216"},
        FLOAT8: {"'Infinity'", "'-Infinity'", "'NaN'", "1e300", "1e15"},
        INTERVAL: {"'178000000 years'", "'100 years'"},
        INTARR: {"'{-2147483648,2147483647}'"}}

COLUMN_TYPES = [INT2, INT4, INT4, INT8, TEXT, TEXT, BOOL, FLOAT8, FLOAT4, NUMERIC, "numeric(5,2)",
                "numeric(10,0)", "numeric(12,4)", DATE, TIMESTAMP]
# The types added with the function library (Features.new_types).
NEW_COLUMN_TYPES = [INTERVAL, TIME, BYTEA, UUID, JSONB, JSONB, TEXTARR, INTARR, INTARR,
                    "varchar(5)", "character(3)"]


def pick_value(rng: random.Random, t: str, rare_ok: bool = True) -> str:
    """A SQL literal for a value of column type t (without NULL)."""
    if t.startswith("numeric("):
        p, s = (int(x) for x in t[8:-1].split(","))
        intdigits = rng.randint(0, max(0, p - s - 1)) if rng.random() < 0.8 else p - s
        whole = "".join(rng.choice("0123456789") for _ in range(intdigits)) or "0"
        extra = 1 if s and intdigits < p - s and rng.random() < 0.3 else 0  # rounded on insert
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, s + extra)))
        v = whole + ("." + frac if frac else "")
        return ("-" if rng.random() < 0.3 else "") + v
    pool = VALUES[base_type(t)]
    if t.startswith(("varchar(", "character(")):
        # Values that fit (or have only blanks past the length, which are cut).
        n = int(t[t.index("(") + 1:-1])
        pool = [v for v in pool if len(v[1:-1].replace("''", "'").rstrip()) <= n]
    rare = RARE.get(base_type(t), set())
    choices = [v for v in pool if rare_ok or v not in rare]
    v = rng.choice(choices)
    if v in rare and rng.random() < 0.6:   # make the extremes rarer
        v = rng.choice([c for c in pool if c not in rare])
    return v


@dataclass
class Table:
    name: str                      # logical: t0, t1, ...
    columns: list[tuple[str, str]]  # (name, declared type)
    rows: list[list[str]] = field(default_factory=list)   # SQL literals, 'NULL' for NULL

    def ddl(self, n: Names) -> str:
        cols = ", ".join(f"{c} {t}" for c, t in self.columns)
        return f"CREATE TABLE {n.table(self.name)} ({cols})"

    def insert(self, n: Names, rows: list[list[str]] | None = None) -> str | None:
        rows = self.rows if rows is None else rows
        if not rows:
            return None
        values = ", ".join("(" + ", ".join(r) + ")" for r in rows)
        return f"INSERT INTO {n.table(self.name)} VALUES {values}"


@dataclass
class Schema:
    tables: list[Table]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def setup_sql(self, n: Names) -> list[str]:
        out = []
        for t in self.tables:
            out.append(t.ddl(n))
            ins = t.insert(n)
            if ins:
                out.append(ins)
        return out

    def drop_sql(self, n: Names) -> list[str]:
        return [f"DROP TABLE IF EXISTS {n.table(t.name)} CASCADE" for t in self.tables]


def random_row(rng: random.Random, table: Table, null_rate: float) -> list[str]:
    return ["NULL" if rng.random() < null_rate else pick_value(rng, t) for _, t in table.columns]


def random_schema(rng: random.Random, max_rows: int = 10, new_types: bool = True) -> Schema:
    tables = []
    first: dict[str, str] = {}
    for i in range(rng.randint(2, 4)):
        cols = []
        for j in range(rng.randint(1, 5)):
            c = f"c{j}"
            typ = rng.choice(NEW_COLUMN_TYPES) if new_types and rng.random() < 0.3 else rng.choice(COLUMN_TYPES)
            # Same-named columns often share a type, so that USING and equi-joins on them work.
            if c in first and rng.random() < 0.5:
                typ = first[c]
            first.setdefault(c, typ)
            cols.append((c, typ))
        tables.append(Table(f"t{i}", cols))
    for t in tables:
        shape = rng.random()
        nrows = 0 if shape < 0.1 else (rng.randint(1, 3) if shape < 0.3 else rng.randint(3, max_rows))
        null_rate = rng.choice([0.0, 0.1, 0.2, 0.4])
        for _ in range(nrows):
            if t.rows and rng.random() < 0.15:
                t.rows.append(list(rng.choice(t.rows)))      # duplicate row
            else:
                t.rows.append(random_row(rng, t, null_rate))
    return Schema(tables)
