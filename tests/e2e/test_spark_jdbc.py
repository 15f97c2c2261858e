"""Spark's own JDBC reader (pgjdbc underneath) reading a materialized view into a DataFrame, and a
query pushed down as `query`: the schema comes from pgjdbc's result metadata (which asks
pg_catalog whether columns are nullable), the rows from the view; a later insert shows in the next
read. Skipped, saying so, where the machine has no pgjdbc jar (tests/support/jdbc.py)."""

from __future__ import annotations

import pytest

from tests.support.clients import psycopg_connect
from tests.support.jdbc import pgjdbc_jar

pytestmark = pytest.mark.e2e

JAR = pgjdbc_jar()


@pytest.fixture(scope="module")
def spark():
    if not JAR:
        pytest.skip("no pgjdbc jar in the local Maven repository")
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[1]").appName("slipstream-jdbc-client")
               .config("spark.jars", JAR).config("spark.ui.enabled", "false")
               .config("spark.driver.memory", "512m").getOrCreate())
    yield session
    session.stop()


def test_spark_reads_a_materialized_view_over_jdbc(slipstream, spark, unique_prefix):
    table, view = f"{unique_prefix}orders", f"{unique_prefix}totals"
    with psycopg_connect(slipstream) as conn:
        conn.execute(f"CREATE TABLE {table} (customer int, amount numeric(10,2), note text)")
        conn.execute(f"INSERT INTO {table} VALUES (1, 10.50, 'a'), (2, 3.25, NULL), (1, 1.00, 'b')")
        conn.execute(f"CREATE MATERIALIZED VIEW {view} AS SELECT customer, sum(amount) AS total, "
                     f"count(*) AS n FROM {table} GROUP BY customer")
    url = f"jdbc:postgresql://{slipstream.host}:{slipstream.port}/slipstream?user=slipstream"
    props = {"driver": "org.postgresql.Driver"}

    df = spark.read.jdbc(url, view, properties=props)
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == \
        [("customer", "int"), ("total", "decimal(38,18)"), ("n", "bigint")]
    assert sorted((r.customer, float(r.total), r.n) for r in df.collect()) == [(1, 11.5, 2), (2, 3.25, 1)]

    with psycopg_connect(slipstream) as conn:
        conn.execute(f"INSERT INTO {table} VALUES (3, 7.00, 'c')")
    again = spark.read.jdbc(url, view, properties=props)
    assert sorted(r.customer for r in again.collect()) == [1, 2, 3]

    pushed = (spark.read.format("jdbc").option("url", url).option("driver", "org.postgresql.Driver")
              .option("query", f"SELECT note, amount FROM {table} WHERE note IS NOT NULL").load())
    assert sorted(r.note for r in pushed.collect()) == ["a", "b", "c"]
