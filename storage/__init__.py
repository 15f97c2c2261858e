"""Persist (durable shards), sources and sinks."""
