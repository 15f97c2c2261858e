"""Test support: real PostgreSQL and Slipstream processes, client helpers, buildpg statements.

    from tests.support.clients import psql, psycopg_connect, asyncpg_connect
    out = psql(server, "SELECT 1")        # '1'
"""
