"""The engine benchmark: V1 and V2 of the reference workload maintained in-process.

    .venv/bin/python -m bench.engine --sizes 100k,1M --out bench/results/engine
"""
