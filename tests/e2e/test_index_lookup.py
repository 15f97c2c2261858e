"""Point lookups through an index: SELECT/UPDATE/DELETE with equality on an indexed key read only
the matching rows, and give the same answers as without the index."""

from __future__ import annotations

import pytest

from tests.support.clients import psycopg_connect

pytestmark = pytest.mark.e2e


def test_lookups_through_an_index_agree_with_scans(slipstream, unique_prefix):
    p = unique_prefix
    with psycopg_connect(slipstream) as conn:
        conn.autocommit = True
        for t in ("a", "b"):  # b gets an index, a does not: same statements, same answers
            conn.execute(f"CREATE TABLE {p}{t} (id bigint, k int, v text)")
            conn.execute(f"INSERT INTO {p}{t} SELECT * FROM (VALUES "
                         + ", ".join(f"({i}, {i % 7}, 'v{i}')" for i in range(500)) + ") AS x")
        conn.execute(f"CREATE INDEX {p}b_id ON {p}b (id)")
        conn.execute(f"CREATE INDEX {p}b_kv ON {p}b (k, v)")
        statements = [
            "SELECT * FROM {t} WHERE id = 42",
            "SELECT v FROM {t} WHERE id IN (1, 2, 3, 999) ORDER BY v",
            "SELECT * FROM {t} WHERE id = 7 AND k = 5",
            "SELECT id FROM {t} WHERE k = 3 AND v = 'v10'",
            "SELECT id FROM {t} WHERE k = 3 AND v = 'v59'",
            "UPDATE {t} SET v = 'changed' WHERE id = 10",
            "SELECT * FROM {t} WHERE id = 10",
            "DELETE FROM {t} WHERE id IN (11, 12)",
            "SELECT count(*) FROM {t} WHERE id IN (10, 11, 12, 13)",
            "INSERT INTO {t} VALUES (11, 4, 'again')",
            "SELECT * FROM {t} WHERE id = 11",
        ]
        for sql in statements:
            results = []
            for t in ("a", "b"):
                cur = conn.execute(sql.format(t=f"{p}{t}"))
                results.append((cur.statusmessage, cur.fetchall() if cur.description else None))
            assert results[0] == results[1], sql
        assert conn.execute(f"SELECT * FROM {p}b WHERE id = 10").fetchall() == [(10, 3, "changed")]
        assert conn.execute(f"SELECT * FROM {p}b WHERE id = 11").fetchall() == [(11, 4, "again")]
        assert conn.execute(f"SELECT id FROM {p}b WHERE k = 3 AND v = 'v59'").fetchall() == [(59,)]
