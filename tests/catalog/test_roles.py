"""Roles in the durable catalog: PostgreSQL-compatible secrets, durability, no plaintext, and the
CREATE/ALTER/DROP ROLE grammar. The secret vectors were produced by PostgreSQL 15
(`CREATE ROLE a PASSWORD 'pw'` with password_encryption scram-sha-256, and with md5 for role m)."""

from __future__ import annotations

import base64

import pytest

from catalog.durable import Catalog
from catalog.roles import (DEFAULT_ROLE, DEFAULT_ROLE_OID, Role, encrypt_password, is_secret, md5_secret,
                           parse_scram_secret, scram_secret)
from dataflow.errors import SqlError
from dataflow.types import INT4, Column
from catalog.items import ItemKind
from planner import mz_ast as m
from planner.dialect import parse_one_statement

PG_SCRAM_PW = ("SCRAM-SHA-256$4096:nxLJse8rmhd3QX/hKgA1IA==$xK/OwMeh1uoFQHw0uLp+D44gUKHHBmU6zhqKTZr0efs="
               ":nZO8ihM27vw1+MP3MWh2w8++Iotnm0N5MFg2od6Pu+E=")
PG_MD5_M_PW = "md57764e463c73a54e4bb79b9b9e419e145"


def test_secrets_are_postgres_secrets():
    assert scram_secret("pw", base64.b64decode("nxLJse8rmhd3QX/hKgA1IA==")) == PG_SCRAM_PW
    assert md5_secret("pw", "m") == PG_MD5_M_PW
    fresh = parse_scram_secret(scram_secret("pw"))
    assert fresh.iterations == 4096 and len(fresh.salt) == 16
    assert Role("a", 1, scram=PG_SCRAM_PW).verify_password("pw")
    assert not Role("a", 1, scram=PG_SCRAM_PW).verify_password("pW")
    assert Role("m", 1, md5=PG_MD5_M_PW).verify_password("pw")
    assert not Role("n", 1, md5=PG_MD5_M_PW).verify_password("pw")  # md5 is salted with the name
    assert not Role("x", 1).verify_password("")


def test_encrypt_password_keeps_given_secrets():
    assert encrypt_password(PG_SCRAM_PW, "a", "md5") == PG_SCRAM_PW
    assert encrypt_password(PG_MD5_M_PW, "a", "scram-sha-256") == PG_MD5_M_PW
    assert encrypt_password("pw", "m", "md5") == PG_MD5_M_PW
    assert encrypt_password("pw", "a", "scram-sha-256").startswith("SCRAM-SHA-256$4096:")
    assert not is_secret("md5abc") and not is_secret("SCRAM-SHA-256$x")


def test_roles_are_durable_and_never_plaintext(tmp_path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    default = cat.role(DEFAULT_ROLE)
    assert (default.oid, default.superuser, default.login, default.secret) == (DEFAULT_ROLE_OID, True, True, None)
    table = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "CREATE TABLE t (a int)")
    alice = cat.role_store.create("alice", login=True, superuser=False,
                                  secret=encrypt_password("correct horse", "alice", "scram-sha-256"))
    bob = cat.role_store.create("bob", login=False, superuser=True, secret=md5_secret("battery staple", "bob"))
    assert alice.oid != table.oid and bob.oid == alice.oid + 1  # OIDs from the catalog's counter
    with pytest.raises(SqlError) as e:
        cat.role_store.create("alice", login=True, superuser=False, secret=None)
    assert (e.value.sqlstate, e.value.message) == ("42710", 'role "alice" already exists')
    cat.role_store.alter("bob", login=True, secret=None)
    salt = cat.role_store.mock_salt("ghost")
    cat.close()

    cat = Catalog.open(path)
    assert [r.name for r in cat.roles()] == [DEFAULT_ROLE, "alice", "bob"]
    assert cat.role("alice").verify_password("correct horse") and cat.role("alice").md5 is None
    assert cat.role("bob").login and cat.role("bob").secret is None
    assert cat.role_store.mock_salt("ghost") == salt != cat.role_store.mock_salt("ghost2")
    cat.role_store.drop(["bob"])
    with pytest.raises(SqlError) as e:
        cat.role_store.alter("bob", login=False)
    assert (e.value.sqlstate, e.value.message) == ("42704", 'role "bob" does not exist')
    cat.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"correct horse" not in raw and b"battery staple" not in raw


@pytest.mark.parametrize("sql, expected", [
    ("CREATE ROLE a", m.CreateRole("a", ())),
    ("CREATE USER b WITH PASSWORD 'x' NOSUPERUSER",
     m.CreateRole("b", (("login", True), ("password", "x"), ("superuser", False)))),
    ("CREATE USER b NOLOGIN", m.CreateRole("b", (("login", False),))),
    ("CREATE GROUP g", m.CreateRole("g", ())),
    ("create role \"Mixed\" with login superuser encrypted password 'p' ",
     m.CreateRole("Mixed", (("login", True), ("superuser", True), ("password", "p")))),
    ("CREATE ROLE c LOGIN NOSUPERUSER INHERIT NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT -1 "
     "PASSWORD NULL", m.CreateRole("c", (("login", True), ("superuser", False), ("password", None)))),
    ("ALTER ROLE a", m.AlterRole("a", ())),
    ("ALTER USER a WITH PASSWORD 'y'", m.AlterRole("a", (("password", "y"),))),
    ("ALTER ROLE current_user PASSWORD NULL", m.AlterRole("CURRENT_USER", (("password", None),), True)),
    ('ALTER ROLE "CURRENT_USER" LOGIN', m.AlterRole("CURRENT_USER", (("login", True),), False)),
    ("DROP ROLE a, b", m.DropRole(("a", "b"), False)),
    ("DROP USER IF EXISTS a", m.DropRole(("a",), True)),
])
def test_role_statements_parse(sql, expected):
    assert parse_one_statement(sql) == expected


@pytest.mark.parametrize("sql, sqlstate, message", [
    ("CREATE ROLE a LOGIN NOLOGIN", "42601", "conflicting or redundant options"),
    ("CREATE ROLE a PASSWORD NULL PASSWORD 'x'", "42601", "conflicting or redundant options"),
    ("CREATE ROLE public", "42939", 'role name "public" is reserved'),
    ("CREATE ROLE none", "42939", 'role name "none" is reserved'),
    ("CREATE ROLE pg_monitor2", "42939", 'role name "pg_monitor2" is reserved'),
    ("CREATE ROLE current_user", "42939", "CURRENT_USER cannot be used as a role name here"),
    ("CREATE ROLE a CREATEDB", "0A000", "CREATE ROLE option CREATEDB not yet supported"),
    ("CREATE USER a VALID UNTIL 'infinity'", "0A000", "CREATE USER option VALID UNTIL not yet supported"),
    ("CREATE ROLE a CONNECTION LIMIT 5", "0A000", "CREATE ROLE option CONNECTION LIMIT not yet supported"),
    ("CREATE ROLE a IN ROLE b", "0A000", "CREATE ROLE option IN ROLE not yet supported"),
    ("ALTER ROLE a REPLICATION", "0A000", "ALTER ROLE option REPLICATION not yet supported"),
    ("ALTER ROLE a RENAME TO b", "0A000", "ALTER ROLE RENAME not yet supported"),
    ("ALTER ROLE a IN DATABASE d SET work_mem = 1", "0A000", "ALTER ROLE IN not yet supported"),
    ("ALTER ROLE a SET work_mem", "42601", "syntax error at end of input"),
    ("CREATE ROLE a UNENCRYPTED PASSWORD 'x'", "0A000", "UNENCRYPTED PASSWORD is no longer supported"),
    ("DROP ROLE current_user", "22023", "cannot use special role specifier in DROP ROLE"),
    ("DROP ROLE public", "22023", "cannot use special role specifier in DROP ROLE"),
    ("CREATE ROLE a PASSWORD 5", "42601", 'syntax error at or near "5"'),
    ("ALTER TABLE t ADD COLUMN b int", "0A000", "ALTER not yet supported"),
    ("SET ROLE alice", "0A000", "SET ROLE not yet supported"),
    ("SET SESSION AUTHORIZATION alice", "0A000", "SET SESSION AUTHORIZATION not yet supported"),
])
def test_role_statement_errors(sql, sqlstate, message):
    with pytest.raises(SqlError) as e:
        parse_one_statement(sql)
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)


def test_role_statement_repr_hides_the_password():
    assert "hunter2" not in repr(parse_one_statement("CREATE ROLE a PASSWORD 'hunter2'"))
    assert "hunter2" not in repr(parse_one_statement("ALTER ROLE a PASSWORD 'hunter2'"))
