"""The durable catalog of objects (tables, views, materialized views, indexes) and the system
relations clients introspect."""
