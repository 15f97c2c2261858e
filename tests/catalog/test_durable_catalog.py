"""The durable catalog: objects survive reopening, names are unique per schema, ids are never
reused, and DROP ... CASCADE finds every dependent."""

from pathlib import Path

import pytest

from catalog.durable import Catalog, creation_order, drop_closure
from catalog.items import ItemKind
from dataflow.errors import SqlError
from dataflow.types import INT4, TEXT, Column, numeric


def test_objects_survive_reopen_with_their_types(tmp_path: Path):
    path = tmp_path / "catalog.sqlite"
    cat = Catalog.open(path)
    t = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4, nullable=False), Column("b", numeric(10, 2))),
                   "CREATE TABLE t (a int NOT NULL, b numeric(10,2))")
    v = cat.create(ItemKind.VIEW, "public", "v", (Column("a", INT4),), "CREATE VIEW v AS SELECT a FROM t",
                   definition="SELECT a FROM t", depends_on=(t.id,),
                   pg_definitions=(" SELECT t.a\n   FROM t;", " SELECT t.a\n   FROM t;"))
    cat.set_setting("oracle_high_water", "123")
    cat.close()
    again = Catalog.open(path)
    assert again.resolve(("t",)) == t
    assert again.resolve(("public", "v")) == v
    assert again.get(v.id).pg_definitions == (" SELECT t.a\n   FROM t;", " SELECT t.a\n   FROM t;")
    assert again.get(t.id).columns[1].type == numeric(10, 2)
    assert again.get_setting("oracle_high_water") == "123"


def test_duplicate_names_and_unknown_relations_are_sql_errors(tmp_path: Path):
    cat = Catalog.open(tmp_path / "c.sqlite")
    cat.create(ItemKind.TABLE, "public", "t", (Column("a", TEXT),), "CREATE TABLE t (a text)")
    with pytest.raises(SqlError) as dup:
        cat.create(ItemKind.MATERIALIZED_VIEW, "public", "t", (), "CREATE MATERIALIZED VIEW t AS SELECT 1")
    assert dup.value.sqlstate == "42P07"
    with pytest.raises(SqlError) as missing:
        cat.resolve(("nope",))
    assert missing.value.sqlstate == "42P01"


def test_ids_are_never_reused_after_drop(tmp_path: Path):
    path = tmp_path / "c.sqlite"
    cat = Catalog.open(path)
    first = cat.create(ItemKind.TABLE, "public", "t", (), "CREATE TABLE t ()")
    cat.drop([first.id])
    cat.close()
    cat = Catalog.open(path)
    second = cat.create(ItemKind.TABLE, "public", "t", (), "CREATE TABLE t ()")
    assert second.id != first.id and second.oid != first.oid


def test_drop_closure_lists_dependents_first(tmp_path: Path):
    cat = Catalog.open(tmp_path / "c.sqlite")
    t = cat.create(ItemKind.TABLE, "public", "t", (Column("a", INT4),), "x")
    v = cat.create(ItemKind.VIEW, "public", "v", (Column("a", INT4),), "x", definition="SELECT a FROM t",
                   depends_on=(t.id,))
    mv = cat.create(ItemKind.MATERIALIZED_VIEW, "public", "mv", (Column("a", INT4),), "x",
                    definition="SELECT a FROM v", depends_on=(v.id,))
    idx = cat.create(ItemKind.INDEX, "public", "mv_idx", (Column("a", INT4),), "x", depends_on=(mv.id,),
                     index_on=mv.id, index_key=(0,))
    order = drop_closure(cat, [t.id])
    assert set(order) == {t.id, v.id, mv.id, idx.id}
    assert order.index(idx.id) < order.index(mv.id) < order.index(v.id) < order.index(t.id)


def test_creation_order_puts_inputs_first_past_ten_items(tmp_path: Path):
    """Rebuilding errored views in text order of their ids rebuilt 'u10' (a reader) before 'u9'
    (its input), which then handed its old error to the reader again."""
    cat = Catalog.open(tmp_path / "c.sqlite")
    items = [cat.create(ItemKind.TABLE, "public", f"t{i}", (Column("a", INT4),), "x") for i in range(12)]
    ids = [i.id for i in items]
    assert sorted(ids[7:]) != ids[7:]              # as text, u10 and u11 come before u8 and u9
    assert creation_order(cat, reversed(ids[7:])) == ids[7:]
