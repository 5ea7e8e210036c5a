"""Build (or reuse) the SparkSession from the configured profile.

Local runs get a small-machine setup (UI off, few shuffle partitions, UTC,
micro-second Parquet timestamps that delta-rs reads correctly). On Databricks
the cluster's session is reused untouched except for the session settings.
"""

from __future__ import annotations

import importlib.util
import logging
import os

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


def has_delta_jvm(spark: SparkSession) -> bool:
    """True when Delta's JVM classes are on the session's classpath."""
    try:
        jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
        jvm.java.lang.Class.forName("io.delta.tables.DeltaTable")
        return True
    except Exception:
        return False
