"""Rebuild a view from its SUBSCRIBE ... WITH (PROGRESS) diffs while a writer changes the
inputs, and at closed timestamps compare with `SELECT ... AS OF <t>` on another connection.
A progress row P closes every time < P, so the rebuilt state is the view AS OF P - 1.
If the server does not support AS OF (0A000 / 42601), only the final state is compared."""

from __future__ import annotations

import random
import threading
import time

import psycopg
import pytest

from tests.support.clients import psycopg_connect
from tests.support.subscribe import Reconstruction, psycopg_fetch

pytestmark = pytest.mark.e2e

WRITES = 60
MAX_AS_OF_CHECKS = 25


def writer(server, table: str, seed: int, done: threading.Event, errors: list) -> None:
    rng = random.Random(seed)
    try:
        with psycopg_connect(server) as conn:
            for i in range(WRITES):
                kind = rng.random()
                if kind < 0.5:
                    conn.execute(f"INSERT INTO {table} VALUES ({rng.randint(1, 5)}, "
                                 f"{rng.randint(1, 100)})")
                elif kind < 0.8:
                    conn.execute(f"UPDATE {table} SET amount = amount + {rng.randint(1, 9)} "
                                 f"WHERE grp = {rng.randint(1, 5)}")
                else:
                    conn.execute(f"DELETE FROM {table} WHERE grp = {rng.randint(1, 5)} "
                                 f"AND amount < {rng.randint(1, 60)}")
                time.sleep(rng.random() * 0.05)
    except Exception as exc:  # surfaced by the test
        errors.append(exc)
    finally:
        done.set()


def test_reconstruction_matches_as_of(slipstream, unique_prefix):
    p = unique_prefix
    view_sql = f"SELECT grp, count(*) AS n, sum(amount) AS total FROM {p}items GROUP BY grp"
    with psycopg_connect(slipstream) as sub, psycopg_connect(slipstream) as check:
        check.execute(f"CREATE TABLE {p}items (grp int, amount int)")
        check.execute(f"INSERT INTO {p}items VALUES (1, 10), (2, 20), (3, 30)")
        check.execute(f"CREATE MATERIALIZED VIEW {p}sums AS {view_sql}")

        sub.execute("BEGIN")
        sub.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {p}sums WITH (PROGRESS)")
        view = Reconstruction()
        done, errors = threading.Event(), []
        thread = threading.Thread(target=writer, args=(slipstream, f"{p}items", 7, done, errors))
        thread.start()
        as_of_supported, checked, compared_at = True, 0, -1
        try:
            while not done.is_set() or checked == 0:
                view.apply(psycopg_fetch(sub, "c", "1s"), progress=True)
                # The first progress row is the AS OF time itself: the snapshot at that time
                # follows it, so only later progress rows close a state the rebuild holds.
                closed = view.progress[-1] if len(view.progress) >= 2 else None
                if not as_of_supported or closed is None or closed <= compared_at \
                        or checked >= MAX_AS_OF_CHECKS:
                    if done.is_set():
                        break
                    continue
                try:
                    expected = check.execute(f"SELECT * FROM {p}sums AS OF {closed - 1}"
                                             ).fetchall()
                except (psycopg.errors.FeatureNotSupported, psycopg.errors.SyntaxError):
                    as_of_supported = False
                    continue
                assert view.rows() == sorted(map(tuple, expected), key=repr), \
                    f"rebuilt view differs from AS OF {closed - 1}"
                compared_at, checked = closed, checked + 1
        finally:
            thread.join()
        assert not errors, errors

        # Final state: once the writer stopped, the rebuilt view converges to SELECT.
        final = sorted(map(tuple, check.execute(f"SELECT * FROM {p}sums").fetchall()), key=repr)
        direct = sorted(map(tuple, check.execute(view_sql).fetchall()), key=repr)
        assert final == direct
        deadline = time.monotonic() + 30
        while view.rows() != final and time.monotonic() < deadline:
            view.apply(psycopg_fetch(sub, "c", "1s"), progress=True)
        assert view.rows() == final
        sub.execute("ROLLBACK")
    if as_of_supported:
        assert checked > 0, "no progress row was ever compared with AS OF"
