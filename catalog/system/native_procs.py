"""pg_proc rows of the functions the planner handles itself rather than through the function
library (`planner/functions`): sqlglot parses these natively (`upper`, `round`, `substring`,
...), so the library's tables do not list them. Each is a PostgreSQL 15 signature (name,
argument type OIDs, result type OID) that Slipstream plans with the same result type:
`tests/catalog/test_native_procs.py` checks every row, and `scripts/gen_native_procs.py` regenerates
the list from a PostgreSQL's pg_proc.
"""

NATIVE_PROCS: tuple[tuple[str, tuple[int, ...], int], ...] = (
    ('abs', (20,), 20),
    ('abs', (21,), 21),
    ('abs', (23,), 23),
    ('abs', (700,), 700),
    ('abs', (701,), 701),
    ('abs', (1700,), 1700),
    ('ceil', (701,), 701),
    ('ceil', (1700,), 1700),
    ('ceiling', (701,), 701),
    ('ceiling', (1700,), 1700),
    ('char_length', (25,), 23),
    ('char_length', (1042,), 23),
    ('character_length', (25,), 23),
    ('character_length', (1042,), 23),
    ('floor', (701,), 701),
    ('floor', (1700,), 1700),
    ('lower', (25,), 25),
    ('ltrim', (25,), 25),
    ('ltrim', (25, 25), 25),
    ('position', (25, 25), 23),
    ('replace', (25, 25, 25), 25),
    ('round', (701,), 701),
    ('round', (1700,), 1700),
    ('rtrim', (25,), 25),
    ('rtrim', (25, 25), 25),
    ('substr', (25, 23), 25),
    ('substr', (25, 23, 23), 25),
    ('substring', (25, 23), 25),
    ('substring', (25, 23, 23), 25),
    ('upper', (25,), 25),
)
