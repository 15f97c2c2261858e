"""The differential engine: plans, operators over update batches, arrangements and the worker runtime."""
