"""environmentd's HTTP listener (next to pgwire): today the webhook sources' endpoint,
`POST /api/webhook/<database>/<schema>/<source>` (`server/http/webhook.py`)."""
