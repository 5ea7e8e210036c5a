"""silver/common.py: the SQL text helpers give exactly what their Column twins give."""

from __future__ import annotations

from pyspark.sql import functions as F

from pipelines.runtime.sql_expressions import column, name
from silver.common import (
    cast_error,
    cast_error_text,
    deterministic_id,
    deterministic_id_text,
    epoch_millis_to_timestamp,
    epoch_unit,
    event_epoch_to_timestamp,
)

VALUES = [
    None,
    "",
    "x",
    " 7 ",
    "1649953100653",
    "1649953100",
    "-5",
    "99999999999",
    "100000000000",
    "-62135596800000",
    "-62135596800001",
    "253402300799999",
    "253402300800000",
    "9223372036854775807",
    "9223372036854775808",
    "1.5",
    "it's \u001f \u0000",
]


def test_text_helpers_match_their_column_twins(spark):
    df = spark.createDataFrame([(v, "b") for v in VALUES], "v string, w string")
    v = name("v")
    pairs = {
        "id": (deterministic_id(F.lit("s"), "v", F.col("w")), deterministic_id_text("'s'", v, name("w"))),
        "cast_int": (cast_error(F.col("v"), "int", "f.v"), cast_error_text(v, "int", "f.v")),
        "cast_long": (cast_error(F.col("v"), "long", "v"), cast_error_text(v, "long", "v")),
    }
    columns = [c for key, (col, text) in pairs.items() for c in (col.alias(key), column(text, f"{key}_text"))]
    result = df.select(*columns)
    for key in pairs:
        by_column, by_text = result.schema[key], result.schema[f"{key}_text"]
        assert (by_column.dataType, by_column.nullable) == (by_text.dataType, by_text.nullable), key
    rows = result.select([F.col(c).cast("string") for c in result.columns]).collect()  # year 1 is no datetime
    for key in pairs:
        assert [r[key] for r in rows] == [r[f"{key}_text"] for r in rows], key


def test_epoch_millis_are_utc_timestamps_and_null_outside_sparks_range(spark):
    values = ["0", "1649953100653", "-62135596800000", "253402300799999", "253402300800000", "x", None]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    got = [
        r["at"] for r in df.select(epoch_millis_to_timestamp(name("v")).cast("string").alias("at")).collect()
    ]
    assert got == [
        "1970-01-01 00:00:00",
        "2022-04-14 16:18:20.653",
        "0001-01-01 00:00:00",
        "9999-12-31 23:59:59.999",
        None,
        None,
        None,
    ]


def test_event_epochs_in_seconds_or_milliseconds(spark):
    df = spark.createDataFrame([("1649953100653",), ("1649953100",), ("x",), (None,)], "t string")
    rows = df.select(event_epoch_to_timestamp(name("t")).alias("at"), epoch_unit(name("t")).alias("unit"))
    got = [(r["at"] is not None, r["unit"]) for r in rows.collect()]
    assert got == [(True, "milliseconds"), (True, "seconds"), (False, None), (False, None)]
