"""Kernels of the math functions (signatures: `planner.functions.math`)."""

from __future__ import annotations

KERNELS: dict = {}
