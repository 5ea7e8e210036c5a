"""Build (or reuse) the SparkSession from the configured profile.

Local runs get a small-machine setup (UI off, few shuffle partitions, UTC,
micro-second Parquet timestamps that delta-rs reads correctly). On Databricks
the cluster's session is reused untouched except for the session settings.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from pipelines.core.config import Config
from pipelines.runtime import console
from pipelines.runtime.java import ensure_java
from pipelines.runtime.table_engines import engine_for_new_session
from pipelines.runtime.tuning import allocator
from pipelines.runtime.tuning.class_archive import JAVA_OPTIONS, finish_recording_at_exit, for_session

# Settings the code relies on whatever the profile says: the delta-rs engine (UTC, micro-second
# timestamps) and the plans built as SQL text, whose string literals escape `\`, `'` and `$`
# (pipelines/runtime/sql_expressions.py: with escaped literals on, `\u0024` would stay six characters).
REQUIRED_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parser.escapedStringLiterals": "false",
    # a JSON field that does not fit its type is null, the record's other fields kept: silver parses
    # each DataHub ECE once with nested types (silver/datahub_catalog.py, `_ENVELOPE_SCHEMA`)
    "spark.sql.json.enablePartialResults": "true",
}


def get_spark(config: Config, java_options: str = "") -> SparkSession:
    """The active session when the profile says so, else a new local/cluster one.

    With the delta-spark engine (`engine_for_new_session`) a new session gets Delta's jars,
    SQL extension and catalog (`delta_session_conf`); Spark's resolver fetches the jars from
    Maven Central once and keeps them in its Ivy cache.
    A new local JVM maps the class archive an earlier run recorded, or records one as it
    exits (`pipelines.runtime.tuning.class_archive`; the profile's `class_archive`, `off` to disable).
    `java_options` are added to a new JVM's (`pipelines.runtime.tuning.jit`); a running JVM keeps its own.
    A local process also takes the profile's `delta_rs_allocator` (`pipelines.runtime.tuning.allocator`)."""
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

    allocator.apply(profile.get("delta_rs_allocator"))  # a no-op once deltalake is loaded
    java_home = ensure_java()
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    running = SparkContext._active_spark_context is not None  # its JVM started already: no options apply
    if running:
        return _new_session(config, spark_conf, java_options)
    wanted = engine_for_new_session(config)
    if wanted == "delta-spark":
        try:
            return _start(config, {**spark_conf, **delta_session_conf(spark_conf)}, java_home, java_options)
        except PySparkRuntimeError as exc:
            reason = (
                f"Delta's jars ({delta_package()}) could not be fetched from Maven Central "
                f"nor found in Spark's Ivy cache ({type(exc).__name__})"
            )
            if config.engine == "delta-spark":
                raise DeltaJarsUnavailable(f"storage.engine is delta-spark but {reason}") from None
            print(f"engine     delta-rs, not delta-spark: {reason}", file=sys.stderr, flush=True)
    return _start(config, spark_conf, java_home, java_options)


def _start(config: Config, spark_conf: dict, java_home, java_options: str) -> SparkSession:
    """A new JVM and session, mapping or recording the class archive where the profile says so."""
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


class DeltaJarsUnavailable(RuntimeError):
    """The delta-spark engine was asked for and Delta's jars could not be put on the classpath."""


DELTA_SQL_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def delta_package() -> str:
    """The Maven coordinate of Delta's jars for the installed delta-spark and PySpark, named as
    delta-spark's `configure_spark_with_delta_pip` names it: the artifact is built per Spark
    minor version (Scala 2.13), its version is delta-spark's."""
    import pyspark

    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    return f"io.delta:delta-spark_{spark_minor}_2.13:{importlib.metadata.version('delta-spark')}"


def delta_session_conf(spark_conf: dict) -> dict[str, str]:
    """What a new session needs for Delta's JVM engine: its jars (added to any the profile
    lists), SQL extension and catalog."""
    packages = [p for p in str(spark_conf.get("spark.jars.packages", "")).split(",") if p.strip()]
    return {**DELTA_SQL_CONF, "spark.jars.packages": ",".join([delta_package(), *packages])}


def engine_in_use(config: Config, spark: SparkSession) -> str:
    """The engine a run on `spark` uses: the configured one, or for `auto` delta-spark where the
    session has Delta's classes and runs on a cluster (Databricks, a standalone cluster), else
    delta-rs (a local session, or one without Delta)."""
    if config.engine != "auto":
        return config.engine
    local = not config.profile.get("use_existing_session") and engine_for_new_session(config) == "delta-rs"
    return "delta-spark" if not local and has_delta_jvm(spark) else "delta-rs"


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
    if SparkContext._active_spark_context is None:
        conf = SparkConf().setAll([(k, str(v)) for k, v in settings.items()])
        conf.setAppName(profile.get("app_name", "catalog-lakehouse"))
        if profile.get("master"):
            conf.setMaster(profile["master"])
        console.start_driver(conf)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# How a small input runs: interpreted (no whole-stage code, expressions evaluated without generated
# classes), planned without adaptive re-optimisation, one shuffle partition. `factoryMode` is an
# internal Spark setting; were it ever dropped, setting it is harmless and the rest still applies.
SMALL_INPUT_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}


@contextmanager
def session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Set `settings` for the plans run inside, then restore the previous values (also on failure)."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@contextmanager
def small_input_mode(spark: SparkSession, rows: int, limit: int | None) -> Iterator[bool]:
    """Run the plans inside with `SMALL_INPUT_CONF` when `rows` (the task's input) is below
    `limit` (the profile's `small_input_rows`; 0 or None: never). Yields whether it switched.

    Why: Spark compiles generated Java for every new plan, and adaptive execution splits each
    action into a job per shuffle stage; for our wide typing plans that costs seconds per task,
    far more than evaluating a few thousand rows interpreted in one job. Large inputs keep the
    defaults, which pay off once there are enough rows.
    """
    if not limit or rows >= limit:
        yield False
        return
    with session_conf(spark, SMALL_INPUT_CONF):
        yield True


EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
FILTER_PUSHDOWN_RULES = tuple(  # the batch rule and the single rule some batches run on their own
    f"org.apache.spark.sql.catalyst.optimizer.{rule}"
    for rule in ("PushDownPredicates", "PushPredicateThroughNonJoin")
)


@contextmanager
def filters_stay_put(spark: SparkSession) -> Iterator[None]:
    """Plans optimized inside keep each filter above the projections it was written over.

    Why: Spark moves a filter below a projection by copying the projected expressions into
    it, so they are computed twice. The silver write keeps the typed rows without `_bad`,
    and `_bad` is built from every typed column's cast check: pushed down, every row's
    JSON was parsed in the filter and again in the projection. Filters right above a table
    scan still reach the Parquet reader.
    """
    rules = [r for r in (spark.conf.get(EXCLUDED_RULES, None) or "").split(",") if r.strip()]
    with session_conf(spark, {EXCLUDED_RULES: ",".join(dict.fromkeys([*rules, *FILTER_PUSHDOWN_RULES]))}):
        yield


def task_session(spark: SparkSession) -> SparkSession:
    """A session of its own for one task run on this thread: same SparkContext, cache and
    settings as `spark`, but settings changed inside the task (`small_input_mode`,
    `filters_stay_put`) no longer reach tasks running beside it. Made the thread's
    active session, so code asking for the active session gets this one."""
    session = spark.newSession()
    for key, value in spark.conf.getAll.items():  # settings set on the running session too
        if spark.conf.isModifiable(key):
            session.conf.set(key, value)
    sessions = getattr(spark.sparkContext._jvm, "org.apache.spark.sql.classic.SparkSession")  # type: ignore[attr-defined]
    sessions.setActiveSession(session._jsparkSession)  # type: ignore[attr-defined]
    return session


def jvm_options(spark: SparkSession) -> list[str]:
    """The options the session's local JVM was started with (class archive, compilers, heap)."""
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    return list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())


def has_delta_jvm(spark: SparkSession) -> bool:
    """True when Delta's JVM classes are on the session's classpath."""
    try:
        jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
        # jars added at start (`spark.jars.packages`) live in Spark's class loader, not the system one
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName("io.delta.tables.DeltaTable", False, loader)
        return True
    except Exception:
        return False
