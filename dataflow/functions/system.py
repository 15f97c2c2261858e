"""Kernels of the system functions (signatures: `planner.functions.system`)."""

from __future__ import annotations

KERNELS: dict = {}
