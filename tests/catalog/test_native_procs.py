"""Every pg_proc row of a function the planner handles natively (catalog/system/native_procs.py)
names a signature Slipstream plans, with that result type; psql's `\\df upper` finds them."""

from __future__ import annotations

import pytest

from catalog.system.native_procs import NATIVE_PROCS
from planner import parse, plan_statement
from planner.system_catalog import procs
from planner.typing import type_from_oid
from tests.planner.planner_catalog import MemoryCatalog


@pytest.mark.parametrize("name, args, result", NATIVE_PROCS)
def test_signature_plans_with_its_result_type(name, args, result):
    cat = MemoryCatalog()
    call = f"SELECT {name}({', '.join(f'CAST(NULL AS {type_from_oid(a).name})' for a in args)})"
    plan = plan_statement(cat, parse(call)[0])
    assert [c.type.oid for c in plan.columns] == [result], call


def test_listed_in_pg_proc():
    listed = {(p.name, p.arg_oids) for p in procs()}
    assert all((name, args) in listed for name, args, _ in NATIVE_PROCS)
