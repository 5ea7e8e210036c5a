"""A toy task graph for the runner's scheduling tests: silver jobs over `bronze.toy_<name>`.

`meet` makes a transform wait until the other task at the rendezvous arrives too, so a
test can tell tasks ran at the same time (one by one, the first would wait in vain).
"""

from __future__ import annotations

import threading

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.core.table_specs import ERRORS_COLUMN, SilverTableSpec

RENDEZVOUS = {"barrier": threading.Barrier(2, timeout=60)}
SESSIONS: list[str] = []  # the Spark session id each meeting transform's input belongs to
SCHEMA = "raw string, source_file string, record_index long, ingested_at timestamp"


def session_id(spark) -> str:
    """The id of a classic session (its JVM's) or of a Spark Connect session (the server's)."""
    return getattr(spark, "session_id", None) or spark._jsparkSession.sessionUUID()


def meet(bronze: DataFrame) -> None:
    SESSIONS.append(session_id(bronze.sparkSession))
    RENDEZVOUS["barrier"].wait()


def typed(bronze: DataFrame) -> DataFrame:
    return bronze.select(
        F.col("raw").alias("event_id"),
        F.col("ingested_at").alias("event_time"),
        F.to_date("ingested_at").alias("event_date"),
        "raw",
        "source_file",
        "record_index",
        "ingested_at",
        F.array().cast("array<string>").alias(ERRORS_COLUMN),
    )


def spec(name: str, transform) -> SilverTableSpec:
    return SilverTableSpec(table=f"silver.toy_{name}", source=f"bronze.toy_{name}", transform=transform)
