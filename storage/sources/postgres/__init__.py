"""PostgreSQL CDC sources: `replication.py` (a walsender client), `pgoutput.py` (the logical
replication messages), `types.py` (upstream types and column-wise value decoding), `spec.py`
(what a source ingests, as its catalog definition stores it), `upstream.py` (connections and
errors), `setup.py` (CREATE SOURCE's checks), `ingest.py` (snapshot, streaming, restart)."""
