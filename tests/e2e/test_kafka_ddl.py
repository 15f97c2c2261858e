"""Kafka DDL end to end over a real server, without a broker (none can run where this was built):
CREATE CONNECTION ... TO KAFKA / CONFLUENT SCHEMA REGISTRY validating by connecting (a clean
08001, quickly, when nothing answers) or not (WITH (VALIDATE = false)), CREATE SOURCE ... FROM
KAFKA shown by SHOW SOURCES / mz_sources with its columns, its ingestion reported stalled with
the broker's error, CREATE SINK in SHOW SINKS / mz_sinks, the refusals, the dependencies between
them (2BP01 without CASCADE), and all of it kept across a restart."""

from __future__ import annotations

import socket
import time

import psycopg
import pytest

from tests.support.slipstream_server import SlipstreamServer

pytestmark = pytest.mark.e2e


def closed_port() -> int:
    """A local port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kafka")
    srv = SlipstreamServer.start(data_dir=tmp / "data", log_file=tmp / "server.log", workers=1)
    yield srv
    srv.stop()


def error_of(conn, sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql)
    return e.value


def test_kafka_connections_sources_and_sinks(server):
    port = closed_port()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE SECRET kpass AS 'p4ss'")
        started = time.monotonic()
        e = error_of(conn, f"CREATE CONNECTION k TO KAFKA (BROKER '127.0.0.1:{port}')")
        assert e.sqlstate == "08001" and f"127.0.0.1:{port}" in e.diag.message_primary
        assert "cannot connect to the Kafka broker" in e.diag.message_primary
        e = error_of(conn, f"CREATE CONNECTION csr TO CONFLUENT SCHEMA REGISTRY (URL 'http://127.0.0.1:{port}')")
        assert e.sqlstate == "08001" and "schema registry" in e.diag.message_primary
        assert time.monotonic() - started < 30  # bounded, never a hang
        e = error_of(conn, "CREATE CONNECTION k TO KAFKA (BROKER 'b:9092', SASL MECHANISMS 'PLAIN') "
                           "WITH (VALIDATE = false)")
        assert e.sqlstate == "22023"
        e = error_of(conn, "CREATE CONNECTION k TO KAFKA (BROKER 'b:9092', SSL KEY = SECRET kpass)")
        assert e.sqlstate == "0A000"

        conn.execute(f"CREATE CONNECTION k TO KAFKA (BROKER '127.0.0.1:{port}', SASL MECHANISMS = 'SCRAM-SHA-256', "
                     "SASL USERNAME = 'u', SASL PASSWORD = SECRET kpass) WITH (VALIDATE = false)")
        conn.execute(f"CREATE CONNECTION csr TO CONFLUENT SCHEMA REGISTRY (URL 'http://127.0.0.1:{port}') "
                     "WITH (VALIDATE = false)")
        assert conn.execute("SELECT name, type FROM mz_connections ORDER BY name").fetchall() == [
            ("csr", "confluent-schema-registry"), ("k", "kafka")]
        assert "p4ss" not in str(conn.execute("SELECT create_sql FROM mz_connections").fetchall())

        conn.execute("CREATE SOURCE events FROM KAFKA CONNECTION k (TOPIC 'events') KEY FORMAT TEXT VALUE FORMAT JSON "
                     "INCLUDE PARTITION, OFFSET AS off, TIMESTAMP ENVELOPE UPSERT")
        conn.execute("CREATE SOURCE raw FROM KAFKA CONNECTION k (TOPIC 'raw') FORMAT BYTES")
        assert conn.execute("SHOW SOURCES").fetchall() == [
            ("events", "kafka", "quickstart", ""), ("events_progress", "progress", None, ""),
            ("raw", "kafka", "quickstart", ""), ("raw_progress", "progress", None, "")]
        cur = conn.execute("SELECT * FROM events")
        assert [d.name for d in cur.description] == ["key", "data", "partition", "off", "timestamp"]
        assert cur.fetchall() == []
        cur = conn.execute('SELECT "partition", "offset" FROM events_progress')
        assert cur.fetchall() == []
        assert conn.execute("SELECT name, type FROM mz_sources WHERE name LIKE 'events%' ORDER BY name").fetchall() == [
            ("events", "kafka"), ("events_progress", "progress")]
        # The ingestion cannot reach the broker: stalled, with the broker's error, retried.
        deadline = time.monotonic() + 60
        while True:
            row = conn.execute("SELECT status, error FROM mz_internal.mz_source_statuses "
                               "WHERE name = 'events'").fetchone()
            if row is not None and row[0] == "stalled":
                break
            assert time.monotonic() < deadline, row
            time.sleep(0.5)
        assert row[1]

        # Refusals, in the user's words.
        assert error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION csr (TOPIC 't') FORMAT TEXT").sqlstate == "42809"
        assert error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION nope (TOPIC 't') FORMAT TEXT").sqlstate == "42704"
        assert error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION k (TOPIC 't') FORMAT PROTOBUF").sqlstate == "0A000"
        assert error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION k (TOPIC 't') FORMAT TEXT "
                              "ENVELOPE UPSERT").sqlstate == "22023"
        assert error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION k (TOPIC 't') FORMAT TEXT "
                              "INCLUDE HEADERS").sqlstate == "0A000"
        e = error_of(conn, "CREATE SOURCE x FROM KAFKA CONNECTION k (TOPIC 't') FORMAT AVRO USING CONFLUENT "
                           "SCHEMA REGISTRY CONNECTION csr")
        assert e.sqlstate == "08001"

        conn.execute("CREATE MATERIALIZED VIEW latest AS SELECT key, data->>'v' AS v FROM events")
        conn.execute("CREATE SINK out FROM latest INTO KAFKA CONNECTION k (TOPIC 'out') KEY (key) "
                     "FORMAT JSON ENVELOPE UPSERT")
        assert error_of(conn, "CREATE SINK bad FROM latest INTO KAFKA CONNECTION k (TOPIC 'o') KEY (nope) "
                              "FORMAT JSON ENVELOPE UPSERT").sqlstate == "42703"
        assert error_of(conn, "CREATE SINK bad FROM latest INTO KAFKA CONNECTION k (TOPIC 'o') "
                              "FORMAT JSON ENVELOPE UPSERT").sqlstate == "22023"
        assert conn.execute("SHOW SINKS").fetchall() == [("out", "kafka", "quickstart", "")]
        assert conn.execute("SELECT name, type FROM mz_sinks").fetchall() == [("out", "kafka")]
        assert error_of(conn, "DROP CONNECTION k").sqlstate == "2BP01"
        assert error_of(conn, "DROP SECRET kpass").sqlstate == "2BP01"

    server.restart()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert [r[0] for r in conn.execute("SHOW SOURCES").fetchall()] == [
            "events", "events_progress", "raw", "raw_progress"]
        assert conn.execute("SHOW SINKS").fetchall() == [("out", "kafka", "quickstart", "")]
        conn.execute("DROP SINK out")
        assert conn.execute("SHOW SINKS").fetchall() == []
        conn.execute("DROP MATERIALIZED VIEW latest")
        conn.execute("DROP CONNECTION k CASCADE")
        assert conn.execute("SHOW SOURCES").fetchall() == []
        assert conn.execute("SELECT name FROM mz_connections").fetchall() == [("csr",)]
