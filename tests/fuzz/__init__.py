"""Differential and metamorphic SQL fuzzing of Slipstream against PostgreSQL (see README.md)."""
