"""The adapter: what each SQL statement means, sequenced against the coordinator.

pgwire hands it statement text (`server.api.Adapter`); it parses and plans with `planner`, then
reads (peeks), writes (table updates at oracle timestamps), defines objects, or streams
SUBSCRIBE output. Transaction blocks buffer writes until COMMIT.
"""

from server.adapter.sequencer import SlipstreamAdapter

__all__ = ["SlipstreamAdapter"]
