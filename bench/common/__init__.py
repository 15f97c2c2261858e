"""Shared by every benchmark: the reference workload and its ground truth."""
