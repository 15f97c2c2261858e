"""math functions: see `planner.functions.registry` for how a call picks an overload."""

from __future__ import annotations

from planner.functions.registry import Overload, overloads

FUNCTIONS: dict[str, list[Overload]] = overloads()
