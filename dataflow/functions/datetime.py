"""Kernels of the datetime functions (signatures: `planner.functions.datetime`)."""

from __future__ import annotations

KERNELS: dict = {}
