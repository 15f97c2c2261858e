"""Kafka / Redpanda sources and sinks (Materialize's FROM KAFKA and INTO KAFKA).

    formats.py   FORMAT BYTES | TEXT | JSON | AVRO: columns and batch decoding
    avro.py      the Confluent wire format, Avro schemas as columns, Avro encoding for sinks
    envelope.py  ENVELOPE NONE | UPSERT (keyed state) | DEBEZIUM over a batch of messages
    spec.py      what a source ingests, as stored in its catalog definition
"""
