"""Privileges, ownership and role membership are durable: a catalog reopened from its SQLite file
(what environmentd does at start, also after kill -9) answers exactly as before."""

from __future__ import annotations

from catalog.durable import Catalog
from catalog.items import ItemKind
from catalog.privileges import CURRENT_ROLE, PUBLIC, PrivilegeChecker, acl_items, item_key, schema_key
from dataflow.types import INT4, Column


def test_privileges_survive_reopening(tmp_path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    cat.role_store.create("alice", login=True, superuser=False, secret=None)
    cat.role_store.create("bob", login=True, superuser=False, secret=None)
    cat.role_store.create("readers", login=False, superuser=False, secret=None)
    token = CURRENT_ROLE.set("alice")
    try:
        owned = cat.create(ItemKind.TABLE, "public", "owned", (Column("a", INT4),), "CREATE TABLE owned (a int)")
    finally:
        CURRENT_ROLE.reset(token)
    t = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "CREATE TABLE t (a int)")
    cat.privileges.grant(item_key(t), ["readers"], "r")
    cat.privileges.grant(item_key(t), ["bob"], "aw")
    cat.privileges.add_member("readers", "bob")
    cat.privileges.grant(schema_key("slipstream", "public"), ["alice"], "C")
    cat.create_schema("slipstream", "s2")
    cat.privileges.set_owner(schema_key("slipstream", "s2"), "bob")
    before = acl_items(cat.privileges, item_key(t), "table", t.owner)
    cat.close()

    cat = Catalog.open(path)
    check = PrivilegeChecker(cat)
    assert cat.get(owned.id).owner == "alice" and cat.get(t.id).owner == "slipstream"
    assert acl_items(cat.privileges, item_key(t), "table", "slipstream") == before == \
        "{slipstream=arwdDxt/slipstream,bob=aw/slipstream,readers=r/slipstream}"
    assert check.has("bob", item_key(t), "r")  # through readers
    assert not check.has("alice", item_key(t), "r")
    assert check.has("alice", item_key(owned), "d")  # the owner
    assert check.has("alice", schema_key("slipstream", "public"), "C")
    assert check.has("bob", schema_key("slipstream", "public"), "U")  # PUBLIC's default
    assert cat.privileges.acl(schema_key("slipstream", "public"))[PUBLIC] == "U"
    assert cat.privileges.owner(schema_key("slipstream", "s2")) == "bob"
    cat.drop([t.id])
    cat.close()
    cat = Catalog.open(path)
    assert cat.privileges.acl(item_key(t)) == {}  # dropped objects leave no privileges behind
    cat.close()
