"""The two table engines in tests: a configuration for each, and the skip when Delta's jars are missing."""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path

import pytest

from pipelines.core.config import Config
from pipelines.store import TableStore, open_store

ENGINES = ("delta-rs", "delta-spark")
DELTA_SPARK_MISSING: list[str] = []  # why the suite's JVM has no Delta classes, if it has none (conftest)


WAREHOUSE_SCHEMA = re.compile(r"^w[0-9a-f]{10}_")  # what `schema_prefix_of` names schemas with


def schema_prefix_of(warehouse) -> str:
    """The schema prefix of a test warehouse's catalog tables on delta-spark: the suite's one
    session names the tables of many warehouses, a session catalog names each once."""
    return "w" + hashlib.sha1(str(Path(warehouse).resolve()).encode()).hexdigest()[:10] + "_"


def with_engine(config: Config, engine: str) -> Config:
    """`config` with `storage.engine` set to `engine`; on delta-spark, the schema prefix of its
    warehouse's own (`schema_prefix_of`) unless it names one."""
    raw = copy.deepcopy(config.raw)
    raw["storage"]["engine"] = engine
    if engine == "delta-spark" and not raw["storage"].get("schema_prefix"):
        raw["storage"]["schema_prefix"] = schema_prefix_of(config.warehouse)
    return Config(raw)


def engine_store(spark, warehouse, engine: str) -> TableStore:
    """The store of a test warehouse on `engine`, as `with_engine`'s configuration names its tables."""
    prefix = schema_prefix_of(warehouse) if engine == "delta-spark" else ""
    return open_store(spark, warehouse, engine, schema_prefix=prefix)


def skip_without_delta_spark(engine: str) -> None:
    """Skip a delta-spark variant, with the one reason, where Delta's jars could not be had."""
    if engine == "delta-spark" and DELTA_SPARK_MISSING:
        pytest.skip(f"delta-spark: {DELTA_SPARK_MISSING[0]}")


def forget_delta_logs(jvm) -> None:
    """Empty Delta's cache of opened tables (`DeltaLog`) in `jvm` (a Py4J view), if it has Delta.

    Delta keeps every table it has opened, with its log snapshot and that snapshot's query plans
    (a few MB a table), for an hour. A pipeline process opens one warehouse's tables; the suite's
    one JVM opens those of hundreds of warehouses, which would fill its heap."""
    if DELTA_SPARK_MISSING:
        return
    delta = jvm.org.apache.spark.sql.delta
    getattr(getattr(delta, "DeltaLog$"), "MODULE$").clearCache()
