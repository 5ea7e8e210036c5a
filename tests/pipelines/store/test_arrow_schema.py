"""Spark schemas to Arrow and back give the same types on every supported PySpark (make
test-compat runs this module on the oldest)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pipelines.store.arrow_schema import arrow_to_spark, spark_to_arrow

SCHEMA = StructType(
    [
        StructField("event_id", StringType()),
        StructField("event_time", TimestampType()),
        StructField("local_time", TimestampNTZType()),
        StructField("version", LongType()),
        StructField("tags", ArrayType(StringType())),
        StructField("aspects", MapType(StringType(), StringType())),
        StructField(
            "actor", StructType([StructField("urn", StringType()), StructField("at", TimestampType())])
        ),
    ]
)


def test_a_spark_timestamp_is_an_arrow_timestamp_in_utc_and_a_local_one_has_no_zone():
    arrow = spark_to_arrow(SCHEMA)

    assert arrow.field("event_time").type == pa.timestamp("us", tz="UTC")
    assert arrow.field("local_time").type == pa.timestamp("us")
    assert arrow.field("actor").type.field("at").type == pa.timestamp("us", tz="UTC")
    assert arrow.field("version").type == pa.int64()


def test_a_schema_comes_back_from_arrow_as_it_went():
    assert arrow_to_spark(spark_to_arrow(SCHEMA)) == SCHEMA


def test_a_zone_less_arrow_timestamp_is_a_timestamp_ntz():
    schema = pa.schema([pa.field("at", pa.timestamp("us")), pa.field("utc", pa.timestamp("us", tz="UTC"))])

    spark = arrow_to_spark(schema)

    assert spark["at"].dataType == TimestampNTZType()
    assert spark["utc"].dataType == TimestampType()
