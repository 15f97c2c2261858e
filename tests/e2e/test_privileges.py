"""Roles and privileges over real sockets (psycopg), on the suite's shared server (`--auth trust`:
a role with LOGIN connects by name, without a password).

Every statement kind tried by a role without the privilege gets 42501 with PostgreSQL's words,
succeeds after GRANT and fails again after REVOKE; ownership (the creator owns, only the owner or
a superuser drops or alters, ALTER ... OWNER TO), views read with their owner's privileges, role
membership, GRANT ... ON ALL TABLES IN SCHEMA, PUBLIC, and the system catalogs (relacl, nspacl,
has_*_privilege). Messages are compared with PostgreSQL 15 where both have the statement.
Privileges surviving a restart: tests/catalog/test_privileges_durable.py (the durable catalog reopened).
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _as(server, user: str) -> psycopg.Connection:
    return psycopg.connect(server.dsn.replace("slipstream@", f"{user}@", 1), autocommit=True)


def _error(conn: psycopg.Connection, sql: str) -> tuple[str, str]:
    with pytest.raises(psycopg.Error) as e:
        _run(conn, sql)
    return e.value.sqlstate, e.value.diag.message_primary


def _run(conn: psycopg.Connection, sql: str):
    if sql.startswith("COPY") and "FROM STDIN" in sql:
        with conn.cursor().copy(sql) as copy:
            copy.write("7\t70\n")
        return None
    if sql.startswith("COPY") and "TO STDOUT" in sql:
        try:
            with conn.cursor().copy(sql) as copy:
                for _ in copy:
                    break
                if "SUBSCRIBE" in sql:  # endless: stop it once it has produced
                    conn.cancel()
                    for _ in copy:
                        pass
        except psycopg.errors.QueryCanceled:
            pass
        return None
    if sql.startswith("DECLARE"):
        with conn.transaction():
            conn.execute(sql)
            return conn.execute("FETCH 1 c WITH (timeout = '0s')").fetchall()
    return conn.execute(sql)


@pytest.fixture
def names(unique_prefix):
    n = unique_prefix
    return {"t": f"{n}t", "v": f"{n}v", "mv": f"{n}mv", "u": f"{n}user", "w": f"{n}other", "g": f"{n}grp",
            "s": f"{n}s"}


@pytest.fixture
def setup(slipstream, names):
    admin = psycopg.connect(slipstream.dsn, autocommit=True)
    t, v, mv, u, w, g = (names[k] for k in ("t", "v", "mv", "u", "w", "g"))
    admin.execute(f"CREATE TABLE {t} (a int, b int)")
    admin.execute(f"INSERT INTO {t} VALUES (1, 10), (2, 20)")
    admin.execute(f"CREATE VIEW {v} AS SELECT a FROM {t}")
    admin.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT count(*) AS n FROM {t}")
    for r in (u, w):
        admin.execute(f"CREATE ROLE {r} LOGIN")
    admin.execute(f"CREATE ROLE {g}")
    yield admin
    admin.execute(f"DROP SCHEMA IF EXISTS {names['s']} CASCADE")
    for obj in (f"MATERIALIZED VIEW IF EXISTS {mv}", f"VIEW IF EXISTS {v}", f"TABLE IF EXISTS {t} CASCADE"):
        admin.execute(f"DROP {obj}")
    for r in (u, w, g):
        for obj in ("SCHEMA public", "DATABASE slipstream", "CLUSTER quickstart"):
            admin.execute(f"REVOKE ALL ON {obj} FROM {r}")
    for r in (u, w, g):
        admin.execute(f"DROP ROLE IF EXISTS {r}")
    admin.close()


def test_every_statement_kind_needs_its_privilege(slipstream, setup, names):
    admin = setup
    t, v, mv, u = names["t"], names["v"], names["mv"], names["u"]
    # statement, the GRANT that allows it, the expected denial
    cases = [
        (f"SELECT * FROM {t}", f"SELECT ON {t}", f"permission denied for table {t}"),
        (f"SELECT * FROM {v}", f"SELECT ON {v}", f"permission denied for view {v}"),
        (f"SELECT * FROM {mv}", f"SELECT ON {mv}", f"permission denied for materialized view {mv}"),
        (f"INSERT INTO {t} VALUES (3, 30)", f"INSERT ON {t}", f"permission denied for table {t}"),
        (f"UPDATE {t} SET b = 0", f"UPDATE ON {t}", f"permission denied for table {t}"),
        (f"DELETE FROM {t}", f"DELETE ON {t}", f"permission denied for table {t}"),
        (f"INSERT INTO {t} SELECT a, b FROM {mv}, {t}", None, f"permission denied for table {t}"),
        (f"COPY {t} TO STDOUT", f"SELECT ON {t}", f"permission denied for table {t}"),
        (f"COPY (SELECT a FROM {t}) TO STDOUT", f"SELECT ON {t}", f"permission denied for table {t}"),
        (f"COPY {t} FROM STDIN", f"INSERT ON {t}", f"permission denied for table {t}"),
        (f"COPY (SUBSCRIBE {mv}) TO STDOUT", f"SELECT ON {mv}", f"permission denied for materialized view {mv}"),
        (f"DECLARE c CURSOR FOR SUBSCRIBE {t}", f"SELECT ON {t}", f"permission denied for table {t}"),
        (f"EXPLAIN SELECT * FROM {t}", f"SELECT ON {t}", f"permission denied for table {t}"),
        (f"SELECT has_table_privilege('{t}', 'SELECT'), (SELECT count(*) FROM {v})", f"SELECT ON {v}",
         f"permission denied for view {v}"),
    ]
    with _as(slipstream, u) as conn:
        assert conn.execute("SELECT current_user, current_setting('is_superuser')").fetchone() == (u, "off")
        for sql, grant, message in cases:
            assert _error(conn, sql) == ("42501", message), sql
            if grant is None:
                continue
            admin.execute(f"GRANT {grant} TO {u}")
            _run(conn, sql)  # allowed now
            admin.execute(f"REVOKE {grant.replace(' TO ', ' FROM ')} FROM {u}")
            assert _error(conn, sql) == ("42501", message), f"after REVOKE: {sql}"
        # UPDATE / DELETE that read the rows (WHERE, or new values from columns) need SELECT too.
        admin.execute(f"GRANT UPDATE, DELETE ON {t} TO {u}")
        conn.execute(f"UPDATE {t} SET b = 5")
        assert _error(conn, f"UPDATE {t} SET b = b + 1") == ("42501", f"permission denied for table {t}")
        assert _error(conn, f"DELETE FROM {t} WHERE a = 1") == ("42501", f"permission denied for table {t}")
        admin.execute(f"GRANT SELECT ON {t} TO {u}")
        admin.execute(f"INSERT INTO {t} VALUES (1, 1)")
        assert conn.execute(f"DELETE FROM {t} WHERE a = 1").rowcount == 1
        assert admin.execute(f"SELECT count(*) FROM {t} WHERE a = 1").fetchone() == (0,)


def test_ddl_needs_create_on_the_schema_and_ownership(slipstream, setup, names):
    admin = setup
    t, v, mv, u, w = names["t"], names["v"], names["mv"], names["u"], names["w"]
    mine = f"{names['t']}_mine"
    admin.execute(f"CREATE SCHEMA {names['s']}")
    with _as(slipstream, u) as conn, _as(slipstream, w) as other:
        for sql in (f"CREATE TABLE {mine} (x int)", f"CREATE VIEW {mine} AS SELECT 1 AS x",
                    f"CREATE MATERIALIZED VIEW {mine} AS SELECT 1 AS x"):
            assert _error(conn, sql) == ("42501", "permission denied for schema public"), sql
        assert _error(conn, f"CREATE SCHEMA {names['s']}") == ("42501", "permission denied for database slipstream")
        assert _error(conn, "CREATE DATABASE nope") == ("42501", "permission denied to create database")
        for sql in ("CREATE CLUSTER REPLICA quickstart.rx (SIZE = '1')", "DROP CLUSTER REPLICA quickstart.r1",
                    "CREATE CLUSTER cx (SIZE = '1')", "ALTER CLUSTER quickstart SET (REPLICATION FACTOR = 1)",
                    "DROP CLUSTER quickstart"):
            assert _error(conn, sql) == ("42501", "permission denied"), sql  # superusers only
        for sql, word, name in ((f"DROP TABLE {t}", "table", t), (f"DROP VIEW {v}", "view", v),
                                (f"DROP MATERIALIZED VIEW {mv}", "materialized view", mv),
                                (f"ALTER TABLE {t} OWNER TO {u}", "table", t),
                                (f"CREATE INDEX ON {t} (a)", "table", t),
                                (f"CREATE OR REPLACE VIEW {v} AS SELECT 2 AS a", "view", v),
                                (f"DROP SCHEMA {names['s']}", "schema", names["s"])):
            if sql.startswith("CREATE OR REPLACE"):
                admin.execute(f"GRANT CREATE ON SCHEMA public TO {u}")
            assert _error(conn, sql) == ("42501", f"must be owner of {word} {name}"), sql
        admin.execute(f"GRANT CREATE ON SCHEMA public TO {u}")
        conn.execute(f"CREATE TABLE {mine} (x int)")
        conn.execute(f"INSERT INTO {mine} VALUES (1)")  # the owner holds every privilege
        assert _error(conn, f"CREATE INDEX ON {mine} (x)") == ("42501", "permission denied for cluster quickstart")
        admin.execute(f"GRANT CREATE ON CLUSTER quickstart TO {u}")  # (an index lives in a cluster)
        conn.execute(f"CREATE INDEX ON {mine} (x)")
        owner = admin.execute("SELECT tableowner FROM pg_tables WHERE tablename = %s", (mine,)).fetchone()
        assert owner == (u,)
        assert _error(other, f"SELECT * FROM {mine}") == ("42501", f"permission denied for table {mine}")
        assert _error(other, f"DROP TABLE {mine}") == ("42501", f"must be owner of table {mine}")
        # the owner cannot give it to a role it is not a member of; a superuser can
        assert _error(conn, f"ALTER TABLE {mine} OWNER TO {w}") == ("42501", f'must be member of role "{w}"')
        sqlstate, message = _error(admin, f"DROP ROLE {u}")
        assert (sqlstate, message) == ("2BP01", f'role "{u}" cannot be dropped because some objects depend on it')
        admin.execute(f"ALTER TABLE {mine} OWNER TO {w}")
        assert _error(conn, f"DROP TABLE {mine}") == ("42501", f"must be owner of table {mine}")
        assert other.execute(f"SELECT * FROM {mine}").fetchall() == [(1,)]
        other.execute(f"DROP TABLE {mine} CASCADE")


def test_views_read_with_their_owners_privileges(slipstream, setup, names):
    admin = setup
    t, u, w = names["t"], names["u"], names["w"]
    uv = f"{t}_uv"
    admin.execute(f"GRANT CREATE ON SCHEMA public TO {u}")
    with _as(slipstream, u) as conn, _as(slipstream, w) as other:
        conn.execute(f"CREATE VIEW {uv} AS SELECT a FROM {t}")  # allowed: checked when read
        assert _error(conn, f"SELECT * FROM {uv}") == ("42501", f"permission denied for table {t}")
        admin.execute(f"GRANT SELECT ON {t} TO {u}")
        assert len(conn.execute(f"SELECT * FROM {uv}").fetchall()) == 2
        conn.execute(f"GRANT SELECT ON {uv} TO {w}")  # the owner grants on its own view
        assert len(other.execute(f"SELECT * FROM {uv}").fetchall()) == 2  # w reads t through u's view
        assert _error(other, f"SELECT * FROM {t}") == ("42501", f"permission denied for table {t}")
        admin.execute(f"REVOKE SELECT ON {t} FROM {u}")
        assert _error(other, f"SELECT * FROM {uv}") == ("42501", f"permission denied for table {t}")
        # only the owner (or a superuser) grants
        assert _error(other, f"GRANT SELECT ON {t} TO {w}") == ("42501", f"permission denied for table {t}")
        conn.execute(f"DROP VIEW {uv}")


def test_membership_public_and_all_tables_in_schema(slipstream, setup, names):
    admin = setup
    t, v, u, g = names["t"], names["v"], names["u"], names["g"]
    with _as(slipstream, u) as conn:
        admin.execute(f"GRANT SELECT ON {t} TO {g}")
        admin.execute(f"GRANT {g} TO {u}")
        assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) == 2  # through the group
        member_of = ("SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid "
                     "JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = %s")
        assert admin.execute(member_of, (u,)).fetchall() == [(g,)]
        admin.execute(f"REVOKE {g} FROM {u}")
        assert admin.execute(member_of, (u,)).fetchall() == []
        assert _error(conn, f"SELECT * FROM {t}")[0] == "42501"
        assert _error(admin, f"GRANT {u} TO {u}") == ("0LP01", f'role "{u}" is a member of role "{u}"')
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {u}")
        assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) == 2
        assert _error(conn, f"SELECT * FROM {v}")[0] == "42501"  # views are not tables here
        admin.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {u}")
        assert _error(conn, f"SELECT * FROM {t}")[0] == "42501"
        admin.execute(f"GRANT SELECT ON {v} TO PUBLIC")
        try:
            assert len(conn.execute(f"SELECT * FROM {v}").fetchall()) == 2
        finally:
            admin.execute(f"REVOKE SELECT ON {v} FROM PUBLIC")
        # USAGE on the schema is needed to reach anything in it (PUBLIC has it on public)
        admin.execute(f"GRANT SELECT ON {t} TO {u}")
        admin.execute("REVOKE USAGE ON SCHEMA public FROM PUBLIC")
        try:
            assert _error(conn, f"SELECT * FROM {t}") == ("42501", "permission denied for schema public")
        finally:
            admin.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
        assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) == 2
        assert _error(admin, f"GRANT INSERT ON {v} TO {u}") == ("0LP01", "invalid privilege type INSERT for view")
        assert _error(admin, f"GRANT SELECT ON SCHEMA public TO {u}")[0] == "0LP01"
        assert _error(admin, f"GRANT SELECT ON {t} TO nobody_{uuid.uuid4().hex[:6]}")[0] == "42704"


def test_clusters_need_usage_and_create(slipstream, setup, names):
    """Materialize's cluster privileges: USAGE on the session's cluster to read through it (PUBLIC
    has it on quickstart), CREATE on a cluster to put a materialized view or index in it."""
    admin = setup
    t, u, mv = names["t"], names["u"], names["mv"] + "2"
    admin.execute(f"GRANT SELECT ON {t} TO {u}")
    admin.execute(f"GRANT CREATE ON SCHEMA public TO {u}")
    with _as(slipstream, u) as conn:
        assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) == 2
        admin.execute("REVOKE USAGE ON CLUSTER quickstart FROM PUBLIC")
        try:
            assert _error(conn, f"SELECT * FROM {t}") == ("42501", "permission denied for cluster quickstart")
            assert conn.execute("SELECT 1").fetchone() == (1,)  # constants and the system catalog need none
            assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = %s", (t,)).fetchone() == (1,)
            admin.execute(f"GRANT USAGE ON CLUSTER quickstart TO {u}")
            assert len(conn.execute(f"SELECT * FROM {t}").fetchall()) == 2
            assert _error(conn, f"CREATE MATERIALIZED VIEW {mv} AS SELECT a FROM {t}") == \
                ("42501", "permission denied for cluster quickstart")
            admin.execute(f"GRANT CREATE ON CLUSTER quickstart TO {u}")
            conn.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT a FROM {t}")
            assert len(conn.execute(f"SELECT * FROM {mv}").fetchall()) == 2
            conn.execute(f"DROP MATERIALIZED VIEW {mv}")
        finally:
            admin.execute("GRANT USAGE ON CLUSTER quickstart TO PUBLIC")
            admin.execute(f"DROP MATERIALIZED VIEW IF EXISTS {mv}")
    assert _error(admin, f"GRANT SELECT ON CLUSTER quickstart TO {u}")[0] == "0LP01"
    assert _error(admin, f"GRANT USAGE ON CLUSTER nope_{uuid.uuid4().hex[:6]} TO {u}")[0] == "42704"


def test_catalogs_show_privileges(slipstream, setup, names):
    admin = setup
    t, u = names["t"], names["u"]
    acl = lambda: admin.execute("SELECT relacl::text FROM pg_class WHERE relname = %s", (t,)).fetchone()[0]  # noqa: E731
    assert acl() is None  # nothing granted: the owner's default, as in PostgreSQL
    admin.execute(f"GRANT SELECT, UPDATE ON {t} TO {u}")
    assert acl() == f"{{slipstream=arwdDxt/slipstream,{u}=rw/slipstream}}"
    rows = admin.execute("SELECT grantor, grantee, privilege_type, is_grantable FROM information_schema.table_privileges "
                         "WHERE table_name = %s AND grantee = %s ORDER BY 3", (t, u)).fetchall()
    assert rows == [("slipstream", u, "SELECT", "NO"), ("slipstream", u, "UPDATE", "NO")]
    q = f"SELECT has_table_privilege('{u}', '{t}', 'SELECT'), has_table_privilege('{u}', '{t}', 'INSERT'), " \
        f"has_table_privilege('{u}', '{t}', 'insert, update'), has_schema_privilege('{u}', 'public', 'CREATE'), " \
        f"has_schema_privilege('{u}', 'public', 'USAGE'), has_database_privilege('{u}', 'slipstream', 'CREATE')"
    assert admin.execute(q).fetchone() == (True, False, True, False, True, False)
    with _as(slipstream, u) as conn:
        rows = conn.execute("SELECT relname FROM pg_class WHERE relname = %s AND has_table_privilege(oid, 'SELECT')",
                            (t,)).fetchall()
        assert rows == [(t,)]
        assert conn.execute(f"SELECT has_table_privilege('{t}', 'DELETE')").fetchone() == (False,)
    assert admin.execute("SELECT nspacl::text FROM pg_namespace WHERE nspname = 'public'").fetchone() == \
        ("{slipstream=UC/slipstream,=U/slipstream}",)
    admin.execute(f"REVOKE ALL ON {t} FROM {u}")
    assert acl() is None
    assert _error(admin, f"SELECT has_table_privilege('{u}', '{t}', 'FLY')") == \
        ("22023", 'unrecognized privilege type: "FLY"')


def test_errors_equal_postgres(slipstream, pg_oracle, setup, names):
    """The same statements as a role without privileges, on Slipstream and on PostgreSQL 15."""
    t, u = names["t"], names["u"]
    statements = [f"SELECT * FROM {t}", f"INSERT INTO {t} VALUES (1, 1)", f"UPDATE {t} SET a = 1",
                  f"DELETE FROM {t}", f"DROP TABLE {t}", f"CREATE TABLE {t}_x (a int)",
                  f"ALTER TABLE {t} OWNER TO {u}", f"CREATE VIEW {t}_y AS SELECT 1 AS a",
                  f"GRANT SELECT ON {t} TO {u}", f"SELECT has_table_privilege('{t}', 'SELECT')"]
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        pg.execute(f"CREATE TABLE {t} (a int, b int)")
        pg.execute(f"CREATE ROLE {u}")
        try:
            pg.execute(f"SET ROLE {u}")
            with _as(slipstream, u) as conn:
                for sql in statements:
                    try:
                        expected = ("ok", pg.execute(sql).fetchall() if sql.startswith("SELECT has") else None)
                    except psycopg.Error as e:
                        expected = (e.sqlstate, e.diag.message_primary)
                    try:
                        got = ("ok", conn.execute(sql).fetchall() if sql.startswith("SELECT has") else None)
                    except psycopg.Error as e:
                        got = (e.sqlstate, e.diag.message_primary)
                    assert got == expected, sql
        finally:
            pg.execute("RESET ROLE")
            pg.execute(f"DROP TABLE {t}")
            pg.execute(f"DROP ROLE {u}")


def test_psql_dp_equals_postgres(slipstream, pg_oracle, setup, names):
    """psql's \\dp (pg_class.relacl through array_to_string) after the same GRANTs."""
    from tests.support.clients import psql
    t, v, u = names["t"], names["v"], names["u"]
    grants = [f"GRANT SELECT, INSERT ON {t} TO {u}", f"GRANT SELECT ON {v} TO PUBLIC", f"GRANT UPDATE ON {t} TO {u}"]
    for g in grants:
        setup.execute(g)
    with psycopg.connect(pg_oracle.dsn, autocommit=True) as pg:
        pg.execute(f"CREATE TABLE {t} (a int, b int)")
        pg.execute(f"CREATE VIEW {v} AS SELECT a FROM {t}")
        pg.execute(f"CREATE ROLE {u}")
        try:
            for g in grants:
                pg.execute(g)
            want = psql(pg_oracle, rf"\dp {t}|{v}", "-F", "|", user=pg_oracle.user, database="postgres")
        finally:
            pg.execute(f"DROP VIEW {v}")
            pg.execute(f"DROP TABLE {t}")
            pg.execute(f"DROP ROLE {u}")
    got = psql(slipstream, rf"\dp {t}|{v}", "-F", "|")
    # PostgreSQL shows its view owner's full set (arwdDxt); Slipstream's views have SELECT only.
    assert got == want.replace(pg_oracle.user, "slipstream").replace(
        "slipstream=arwdDxt/slipstream\n=r/slipstream", "slipstream=r/slipstream\n=r/slipstream")
    setup.execute(f"REVOKE ALL ON {t} FROM {u}")
    setup.execute(f"REVOKE ALL ON {v} FROM PUBLIC")


def test_sources_need_privileges(slipstream, setup, names):
    """Load-generator sources (storage/sources): CREATE on the schema to create one, SELECT to
    read it, ownership to drop it."""
    admin, u = setup, names["u"]
    src = f"{names['t']}_src"
    with _as(slipstream, u) as conn:
        assert _error(conn, f"CREATE SOURCE {src} FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')") == \
            ("42501", "permission denied for schema public")
        admin.execute(f"CREATE SOURCE {src} FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')")
        try:
            assert _error(conn, f"SELECT * FROM {src}") == ("42501", f"permission denied for source {src}")
            admin.execute(f"GRANT SELECT ON {src} TO {u}")
            conn.execute(f"SELECT * FROM {src}").fetchall()
            assert _error(conn, f"DROP SOURCE {src}") == ("42501", f"must be owner of source {src}")
        finally:
            admin.execute(f"DROP SOURCE IF EXISTS {src} CASCADE")
