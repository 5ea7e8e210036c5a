"""Build (or reuse) the SparkSession the configured profile asks for, and the session settings tasks use.

Profiles (`profile:` in the configuration, `profiles.<name>` in conf/lakehouse.yaml):
- `local`: a Spark driver in this process's own JVM, set up for a small machine (UI off, few
  shuffle partitions, UTC, micro-second Parquet timestamps that delta-rs reads correctly). Its
  JVM is started by `pipelines.runtime.tuning.local_driver`, the one place that reaches it.
- `databricks`: the cluster's session as it is (a classic cluster, a serverless job or a
  standard access mode cluster alike), with the session settings the code relies on.
- `connect`: a Spark Connect session: `profiles.connect.remote` (or `SPARK_REMOTE`) names the
  server, `sc://host:port`; `local[*]` starts a local Connect server carrying Delta's jars.

Everything here uses Spark's public session and SQL APIs only, so it serves a Spark Connect
client as well as a classic driver.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from pipelines.core.config import Config
from pipelines.runtime import connect_siblings
from pipelines.runtime.compute_rules import follow, named_rules, rules_of
from pipelines.runtime.table_engines import engine_for_new_session, uses_connect

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
REMOTE_ENV = "SPARK_REMOTE"  # Spark's own variable: overrides `profiles.connect.remote`
LOCAL_REMOTE = re.compile(r"local(\[[^\]]*\])?")  # a remote that starts a Connect server here


class DeltaJarsUnavailable(RuntimeError):
    """The delta-spark engine was asked for and Delta's jars could not be put on the classpath."""


def get_spark(config: Config, java_options: str = "") -> SparkSession:
    """The session the profile asks for (see the module's docstring).

    With the delta-spark engine (`engine_for_new_session`) a new session gets Delta's jars,
    SQL extension and catalog (`delta_session_conf`); Spark's resolver fetches the jars from
    Maven Central once and keeps them in its Ivy cache. `java_options` are added to a new local
    JVM's (`pipelines.runtime.tuning`); a running JVM keeps its own."""
    profile = config.profile
    spark_conf = {**profile.get("spark_conf", {}), **REQUIRED_CONF}
    if profile.get("use_existing_session"):
        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        rules = named_rules(profile.get("rules"))
        if rules is not None:
            follow(spark, rules)
        _set_runtime_conf(spark, spark_conf)
        return spark
    if uses_connect(config):
        return _connect_session(config, spark_conf)
    from pipelines.runtime.tuning import local_driver

    if local_driver.running():
        return local_driver.start(config, spark_conf, java_options)
    wanted = engine_for_new_session(config)
    if wanted == "delta-spark":
        try:
            return local_driver.start(config, {**spark_conf, **delta_session_conf(spark_conf)}, java_options)
        except PySparkException as exc:
            _fall_back(config, exc)
    return local_driver.start(config, spark_conf, java_options)


def _fall_back(config: Config, exc: Exception) -> None:
    """Raise `DeltaJarsUnavailable` where delta-spark was asked for by name, else say once on
    stderr that the run takes delta-rs."""
    reason = (
        f"Delta's jars ({delta_package()}) could not be fetched from Maven Central "
        f"nor found in Spark's Ivy cache ({type(exc).__name__})"
    )
    if config.engine == "delta-spark":
        raise DeltaJarsUnavailable(f"storage.engine is delta-spark but {reason}") from None
    print(f"engine     delta-rs, not delta-spark: {reason}", file=sys.stderr, flush=True)


def remote_of(config: Config) -> str:
    """The Spark Connect server of the `connect` profile: `SPARK_REMOTE`, else `profiles.connect.remote`."""
    return os.environ.get(REMOTE_ENV) or str(config.profile.get("remote") or "local[*]")


def _connect_session(config: Config, spark_conf: dict) -> SparkSession:
    """A Spark Connect session. A `local[...]` remote starts a Connect server for this process,
    with the profile's settings and (for delta-spark) Delta's jars; a running server keeps its
    own static settings, and takes the session's. With `rules` (serverless, standard) the
    session refuses what that Databricks compute refuses (`pipelines.runtime.rules_session`)."""
    remote = remote_of(config)
    rules = named_rules(config.profile.get("rules"))
    if rules is not None:
        from pipelines.runtime import rules_session

        def under_rules(new: bool) -> SparkSession:
            session = rules_session.connect(remote, rules, new=new)
            follow(session, rules)
            _set_runtime_conf(session, spark_conf)
            return session

        spark = under_rules(new=False)
        connect_siblings.allow_siblings(spark, lambda: under_rules(new=True))
        return spark
    builder = SparkSession.builder.remote(remote)
    if LOCAL_REMOTE.fullmatch(remote):
        settings = dict(spark_conf)
        if engine_for_new_session(config) == "delta-spark":
            settings.update(delta_session_conf(settings))
        for key, value in settings.items():
            builder = builder.config(key, str(value))
    try:
        spark = builder.getOrCreate()
    except PySparkException as exc:
        if engine_for_new_session(config) == "delta-spark" and LOCAL_REMOTE.fullmatch(remote):
            _fall_back(config, exc)
        raise
    _set_runtime_conf(spark, spark_conf)
    if not LOCAL_REMOTE.fullmatch(remote):  # a server of its own stops with any of its sessions

        def sibling() -> SparkSession:
            session = SparkSession.builder.remote(remote).create()
            _set_runtime_conf(session, spark_conf)
            return session

        connect_siblings.allow_siblings(spark, sibling)
    return spark


def _set_runtime_conf(spark: SparkSession, spark_conf: dict) -> None:
    """Apply the settings a running session takes (a cluster's or a server's static ones stay;
    on serverless only those it lets a client set: every other one has the value the code
    needs as Spark's default, or only tunes speed)."""
    for key, value in rules_of(spark).settable_part(spark_conf).items():
        try:
            if spark.conf.isModifiable(key):
                spark.conf.set(key, str(value))
        except Exception:  # a setting the server does not know or refuses
            logging.getLogger(__name__).debug("cannot set %s on the running session", key)


def is_connect(spark: SparkSession) -> bool:
    """Whether `spark` is a Spark Connect client session (serverless, standard access mode, Databricks Connect)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


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
    session has Delta and runs on a cluster or a Connect server (Databricks, a standalone
    cluster), else delta-rs (a local session, or one without Delta)."""
    if config.engine != "auto":
        return config.engine
    local = not config.profile.get("use_existing_session") and engine_for_new_session(config) == "delta-rs"
    return "delta-spark" if not local and has_delta(spark) else "delta-rs"


def has_delta(spark: SparkSession) -> bool:
    """Whether the session runs Delta's SQL: a Databricks runtime (Delta built in), or Delta's
    SQL extension among the session's settings (asked through its SQL configuration, so the
    answer holds for a Spark Connect session too)."""
    if os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return True
    extensions = spark.conf.get("spark.sql.extensions", None) or ""
    return DELTA_SQL_CONF["spark.sql.extensions"] in extensions


# How a small input runs: interpreted (no whole-stage code, expressions evaluated without generated
# classes), planned without adaptive re-optimisation, one shuffle partition. `factoryMode` is an
# internal Spark setting; were it ever dropped, setting it is harmless and the rest still applies.
SMALL_INPUT_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.autoBroadcastJoinThreshold": "-1",  # a broadcast is a job of its own; a small join is a stage of the one job
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
def tuning_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """`session_conf` for settings that only tune speed: those the session's compute does not
    let a client set (serverless, `pipelines.runtime.compute_rules`) are left as they are."""
    with session_conf(spark, rules_of(spark).settable_part(settings)):
        yield


def is_small_input(rows: int, limit: int | None) -> bool:
    """Whether `rows` (a task's input) is below `limit` (the profile's `small_input_rows`; 0 or None: never)."""
    return bool(limit) and rows < limit


@contextmanager
def small_input_mode(spark: SparkSession, rows: int, limit: int | None) -> Iterator[bool]:
    """Run the plans inside with `SMALL_INPUT_CONF` when `rows` (the task's input) is below
    `limit` (the profile's `small_input_rows`; 0 or None: never). Yields whether it switched.

    Why: Spark compiles generated Java for every new plan, adaptive execution splits each action
    into a job per shuffle stage, and every join with a side small enough to broadcast collects
    that side in a job of its own; for our wide plans that costs seconds per task, far more than
    evaluating a few thousand rows interpreted, joined within one job. Large inputs keep the
    defaults, which pay off once there are enough rows.
    """
    if not is_small_input(rows, limit):
        yield False
        return
    with tuning_conf(spark, SMALL_INPUT_CONF):
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
    if not rules_of(spark).may_set(EXCLUDED_RULES):  # serverless: the same rows, typed twice
        yield
        return
    excluded = [r for r in (spark.conf.get(EXCLUDED_RULES, None) or "").split(",") if r.strip()]
    with session_conf(spark, {EXCLUDED_RULES: ",".join(dict.fromkeys([*excluded, *FILTER_PUSHDOWN_RULES]))}):
        yield


def task_session(spark: SparkSession, connect_sibling: bool = True) -> SparkSession:
    """A session of its own for one task run on this thread: same Spark, cache and settings as
    `spark`, but settings changed inside the task (`small_input_mode`, `filters_stay_put`) no
    longer reach tasks running beside it. A Spark Connect session's sibling is a new session on
    the same server (`pipelines.runtime.connect_siblings`; `release_task_session` ends it); one
    with no siblings is returned as it is, and its tasks run one at a time; so is any Connect
    session with `connect_sibling=False` (a caller with no task to end it after: a sibling left
    open is closed by PySpark as the interpreter exits, which can hang it)."""
    if is_connect(spark):
        if connect_sibling and connect_siblings.has_siblings(spark):
            return connect_siblings.open_sibling(spark)
        return spark
    session = spark.newSession()
    follow(session, rules_of(spark))
    for key, value in spark.conf.getAll.items():  # settings set on the running session too
        if spark.conf.isModifiable(key):
            session.conf.set(key, value)
    return session


def release_task_session(session: SparkSession) -> None:
    """End a task's session once its task is done, where it holds a server's resources (a
    Spark Connect sibling); a classic sibling needs nothing."""
    connect_siblings.release(session)


def runs_tasks_side_by_side(spark: SparkSession) -> bool:
    """Whether tasks may run beside each other on `spark`: a classic session always; a Spark
    Connect session where it has siblings (`pipelines.runtime.connect_siblings`)."""
    return not is_connect(spark) or connect_siblings.has_siblings(spark)
