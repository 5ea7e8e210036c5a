"""Build (or reuse) the SparkSession from the configured profile.

Local runs get a small-machine setup (UI off, few shuffle partitions, UTC,
micro-second Parquet timestamps that delta-rs reads correctly). On Databricks
the cluster's session is reused untouched except for the session settings.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

from pipelines.config import Config
from pipelines.java import ensure_java

# Settings the delta-rs engine relies on whatever the profile says.
REQUIRED_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


def get_spark(config: Config) -> SparkSession:
    """The active session when the profile says so, else a new local/cluster one."""
    profile = config.profile
    spark_conf = {**profile.get("spark_conf", {}), **REQUIRED_CONF}
    if profile.get("use_existing_session"):
        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        for key, value in spark_conf.items():
            try:
                spark.conf.set(key, str(value))
            except Exception:  # static settings of a running cluster cannot change
                logging.getLogger(__name__).debug("cannot set %s on the running session", key)
        return spark

    ensure_java()
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    builder = SparkSession.builder.appName(profile.get("app_name", "catalog-lakehouse"))
    if profile.get("master"):
        builder = builder.master(profile["master"])
    if config.engine == "delta-spark" and importlib.util.find_spec("delta") is not None:
        builder = builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
    for key, value in spark_conf.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# Interpreted evaluation: no whole-stage code, and expressions evaluated without generated classes.
# `factoryMode` is an internal Spark setting; were it ever dropped, setting it is harmless and only
# the whole-stage half of the saving remains.
INTERPRETED_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


@contextmanager
def interpreted_below(spark: SparkSession, rows: int, limit: int | None) -> Iterator[bool]:
    """Evaluate the plans run inside without generated code when `rows` (the task's input) is
    below `limit` (the profile's `interpreted_below_rows`; 0 or None: never).

    Why: Spark compiles generated Java for every new plan; for our wide typing plans that costs
    seconds per task, far more than evaluating a few thousand rows interpreted (a 1% incremental
    run at 250k events: silver and gold 121 s with generated code, 92 s without). Large inputs
    keep generated code, which pays off once there are enough rows. Yields whether it switched.
    """
    if not limit or rows >= limit:
        yield False
        return
    previous = {key: spark.conf.get(key, None) for key in INTERPRETED_CONF}
    for key, value in INTERPRETED_CONF.items():
        spark.conf.set(key, value)
    try:
        yield True
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def has_delta_jvm(spark: SparkSession) -> bool:
    """True when Delta's JVM classes are on the session's classpath."""
    try:
        jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
        jvm.java.lang.Class.forName("io.delta.tables.DeltaTable")
        return True
    except Exception:
        return False
