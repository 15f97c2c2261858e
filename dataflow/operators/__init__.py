"""Differential operators over update batches, one module per family.

Every operator is a node of a rendered dataflow (`dataflow.render`): `step(ctx)` pulls its
inputs' updates for the step, and returns its own output updates for the same times.
"""
