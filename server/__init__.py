"""environmentd: pgwire, sessions, the adapter that sequences statements, the timestamp oracle,
the controllers that drive storage and compute, and the `slipstream` CLI."""
