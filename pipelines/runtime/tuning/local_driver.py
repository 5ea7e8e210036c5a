"""The local profile's driver JVM: starting it (quiet console, class archive, JIT options, garbage
collector) and asking it.

The one module, with the rest of `pipelines.runtime.tuning`, that reaches a JVM through Py4J:
only a local session has one in this process. The `databricks` and `connect` profiles never
import it (`pipelines.runtime.spark.get_spark`).
"""

from __future__ import annotations

import os

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from pipelines.core.config import Config
from pipelines.runtime.java import ensure_java
from pipelines.runtime.tuning import allocator, collector, console
from pipelines.runtime.tuning.class_archive import JAVA_OPTIONS, finish_recording_at_exit, for_session


def running() -> bool:
    """Whether this process's driver JVM runs already (then no JVM option applies any more)."""
    return SparkContext._active_spark_context is not None


def start(config: Config, spark_conf: dict, java_options: str = "") -> SparkSession:
    """A session of a local driver: a new JVM running the profile's garbage collector, mapping or
    recording the class archive where the profile says so, with `java_options`; or a session of
    the JVM running already. A local process also takes the profile's `delta_rs_allocator`
    (`allocator`)."""
    allocator.apply(config.profile.get("delta_rs_allocator"))  # a no-op once deltalake is loaded
    java_home = ensure_java()
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    spark_conf = _with_collector(config, spark_conf)  # before the archive's name, which it is part of
    if running():
        return _new_session(config, spark_conf, java_options)
    archive = for_session(config.profile.get("class_archive"), java_home, spark_conf)
    if archive is None:
        return _new_session(config, spark_conf, java_options)
    options, recording = archive.options()
    try:
        spark = _new_session(config, spark_conf, f"{options} {java_options}".strip())
    except PySparkRuntimeError:
        if recording is not None:
            raise
        archive.discard()  # HotSpot aborts on a damaged archive: start once more without it
        return _new_session(config, spark_conf, java_options)
    if recording is not None:
        finish_recording_at_exit(spark, archive, recording)
    return spark


def _with_collector(config: Config, spark_conf: dict) -> dict:
    """`spark_conf` with the profile's garbage collector among the driver's options (`collector`)."""
    own = str(spark_conf.get(JAVA_OPTIONS, "")).strip()
    chosen = collector.java_options(config.profile.get(collector.PROFILE_KEY), own)
    return {**spark_conf, JAVA_OPTIONS: f"{own} {chosen}".strip()} if chosen else spark_conf


def _new_session(config: Config, spark_conf: dict, java_options: str = "") -> SparkSession:
    profile = config.profile
    builder = SparkSession.builder.appName(profile.get("app_name", "catalog-lakehouse"))
    if profile.get("master"):
        builder = builder.master(profile["master"])
    settings = dict(spark_conf)
    own = str(settings.get(JAVA_OPTIONS, "")).strip()
    settings[JAVA_OPTIONS] = " ".join(filter(None, [own, java_options, console.java_options(own)]))
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    if not running():
        conf = SparkConf().setAll([(k, str(v)) for k, v in settings.items()])
        conf.setAppName(profile.get("app_name", "catalog-lakehouse"))
        if profile.get("master"):
            conf.setMaster(profile["master"])
        console.start_driver(conf)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def jvm_options(spark: SparkSession) -> list[str]:
    """The options the session's local JVM was started with (class archive, compilers, heap)."""
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    return list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
