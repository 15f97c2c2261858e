"""Reproducible benchmarks (engine alone, and side by side with peers)."""
