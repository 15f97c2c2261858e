"""Function-library microbenchmark: rows/s of each function family's kernels over one batch."""
