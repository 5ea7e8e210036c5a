"""Shared fixtures: one SparkSession for the whole suite, fresh warehouses per test."""

from __future__ import annotations

import os
import shutil

import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

from pipelines.core.config import load_config
from pipelines.orchestration.runner import run_pipeline
from pipelines.runtime.spark import SMALL_INPUT_CONF, DeltaJarsUnavailable, get_spark, session_conf
from pipelines.runtime.tuning.class_archive import ENV as CLASS_ARCHIVE_ENV
from pipelines.store import open_store
from tests.support.engines import (
    DELTA_SPARK_MISSING,
    WAREHOUSE_SCHEMA,
    forget_delta_logs,
    skip_without_delta_spark,
    with_engine,
)
from tests.support.one_at_a_time import one_at_a_time
from tests.support.runs import SAMPLES

# each module's time and its bound (`module_clock`); pytest runs inside a test (`pytester`)
pytest_plugins = ["tests.support.module_clock", "pytester"]

# No JVM class archive in the suite, its `lakehouse` subprocesses included: they would map one a
# previous run left in the user's cache, or each record one (tests/pipelines/runtime/test_class_archive.py).
os.environ[CLASS_ARCHIVE_ENV] = "off"


@pytest.fixture(scope="session")
def config():
    return load_config()


def _suite_session(config, engine: str, fast: bool):
    """The profile's session settings; in a selection without slow tests (`fast`), Spark's own
    default parallelism (a partition per core): its tests build their input from a few
    hand-written rows, which `createDataFrame` splits over that many partitions, and the
    profile's larger figure only adds tasks to every stage over them. The slow tests (the
    generated-scale run among them) keep the profile's figure."""
    settings = with_engine(config, engine)
    if fast:
        settings.profile["spark_conf"].pop("spark.default.parallelism", None)
    return settings


@pytest.fixture(scope="session")
def spark(config, request):
    """One JVM for the suite (a JVM for each test worker), carrying Delta's jars so both engines
    run on it (the delta-rs engine never touches Delta's classes). Every delta-spark test is
    `slow`: a selection without one (`make test`) starts without the jars, which would only
    lengthen its start. Without Maven Central, or in such a selection, the delta-spark tests
    skip, saying why."""
    fast = not any(item.get_closest_marker("slow") for item in request.session.items)
    if fast:
        DELTA_SPARK_MISSING.append("the selection has no slow test, so its session has no Delta jars")
    with one_at_a_time("spark-session-start"):  # test workers side by side: one fetches Delta's jars
        try:
            session = get_spark(_suite_session(config, "delta-rs" if fast else "delta-spark", fast))
        except DeltaJarsUnavailable as exc:
            DELTA_SPARK_MISSING.append(str(exc))
            session = get_spark(_suite_session(config, "delta-rs", fast))
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


@pytest.fixture(scope="module", autouse=True)
def _delta_logs_forgotten():
    """When a module ends, its warehouses go: the session catalog forgets the names its tables had
    (the next module's warehouses take the same names) and Delta the tables its tests opened
    (`forget_delta_logs`), so the suite's one JVM keeps a fixed heap."""
    yield
    context = SparkContext._active_spark_context  # the suite's session, if a test has started it
    if context is None:
        return
    session = SparkSession.getActiveSession()
    if session is not None:
        for (database,) in session.sql("SHOW DATABASES").collect():
            if database != "default":
                session.sql(f"DROP DATABASE IF EXISTS `{database}` CASCADE")
    forget_delta_logs(context._jvm)


@pytest.fixture
def small_input(spark):
    """Plans run as the pipeline runs a small input (`SMALL_INPUT_CONF`: interpreted, one
    partition, no adaptive re-planning). Transform tests over a few hand-written rows use it: they
    would otherwise spend most of their time compiling generated code for each new plan. The
    generated-code path is the one the generated-scale test takes."""
    with session_conf(spark, SMALL_INPUT_CONF):
        yield


@pytest.fixture(autouse=True)
def _catalog_left_empty(request):
    """Catalog tables a test registered (delta-spark names its tables) go with the test: the
    suite's one session would otherwise resolve `gold.x` to another test's warehouse.
    The check asks the session's catalog directly: it runs after every test, and through
    `spark.catalog.listDatabases()` it would cost tens of milliseconds each time."""
    if "spark" not in request.fixturenames:
        yield
        return
    spark = request.getfixturevalue("spark")
    catalog = spark._jsparkSession.sessionState().catalog()
    before = catalog.listDatabases().size()  # a module's fixture may have made some: they stay
    kept = {row[0] for row in spark.sql("SHOW DATABASES").collect()} if before > 1 else {"default"}
    yield
    if catalog.listDatabases().size() > before:
        for (database,) in spark.sql("SHOW DATABASES").collect():
            # a warehouse's own prefix (`schema_prefix_of`) names nothing another test's can: those
            # stay until the module ends, for fixtures that cache a warehouse across its tests
            if database not in kept and not WAREHOUSE_SCHEMA.match(database):
                spark.sql(f"DROP DATABASE IF EXISTS `{database}` CASCADE")


@pytest.fixture(params=["delta-rs", pytest.param("delta-spark", marks=pytest.mark.slow)])
def engine(request, spark) -> str:
    """Each table engine in turn (tests that must hold on both); the delta-spark variants are
    `slow` (Delta's JVM engine pays seconds per commit that delta-rs does not): `make test-all`."""
    skip_without_delta_spark(request.param)
    return request.param


@pytest.fixture(scope="session")
def sample_warehouse(config, spark, tmp_path_factory):
    """(config, run summary) of the bundled samples run through bronze, silver and gold by the
    delta-rs engine, built once for the suite. Tests only read it; one that writes copies it."""
    root = tmp_path_factory.mktemp("samples")
    shutil.copytree(SAMPLES, root / "landing")
    built = with_engine(
        config.with_overrides(landing=str(root / "landing"), warehouse=str(root / "warehouse")), "delta-rs"
    )
    return built, run_pipeline(built, spark=spark)


@pytest.fixture
def warehouse(tmp_path):
    return tmp_path / "warehouse"


@pytest.fixture
def store(spark, warehouse):
    return open_store(spark, warehouse, "delta-rs")


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """One Spark Connect server with Delta for the suite (`tests/support/connect_server.py`);
    the tests that need it skip, saying why, where it cannot start."""
    from tests.support.connect_server import ServerUnavailable, start_server

    try:
        with one_at_a_time("spark-session-start"):  # its resolver may fetch Delta's jars too
            server = start_server(tmp_path_factory.mktemp("connect"))
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()
