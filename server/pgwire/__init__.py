"""pgwire: the PostgreSQL frontend/backend protocol v3."""
