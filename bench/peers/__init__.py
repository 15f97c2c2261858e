"""Side-by-side benchmarks of Slipstream against its peers (see run.py)."""
