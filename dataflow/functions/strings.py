"""Kernels of the strings functions (signatures: `planner.functions.strings`)."""

from __future__ import annotations

KERNELS: dict = {}
