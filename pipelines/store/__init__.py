"""The table store: one interface over two Delta engines (`TableStore`, in table_store.py).

Opening a store picks the engine; nothing outside this package knows which one runs.
"""

from __future__ import annotations

import os
from typing import Any

from pyspark.sql import SparkSession

from pipelines.core.warehouse_layout import LAYERS, folder_tables
from pipelines.store.engine import Compaction, ConcurrentWriteError, Engine
from pipelines.store.table_store import CatalogTableError, TableStore

__all__ = [
    "LAYERS",
    "CatalogTableError",
    "Compaction",
    "ConcurrentWriteError",
    "TableStore",
    "folder_tables",
    "make_engine",
    "open_configured_store",
    "open_folder_store",
    "open_store",
]


def make_engine(spark: SparkSession, name: str = "auto") -> Engine:
    """`delta-spark` when asked for or when the session has Delta, else `delta-rs`."""
    from pipelines.runtime.spark import has_delta

    if name == "auto":
        name = "delta-spark" if has_delta(spark) else "delta-rs"
    if name == "delta-spark":
        if not has_delta(spark):
            raise RuntimeError(
                "storage.engine is delta-spark but the session has no Delta (its SQL extension and "
                "catalog; start it with pipelines.runtime.spark.get_spark, which adds them)"
            )
        from pipelines.store.delta_spark import DeltaSparkEngine

        return DeltaSparkEngine(spark)
    if name == "delta-rs":
        from pipelines.store.delta_rs import DeltaRsEngine

        return DeltaRsEngine(spark)
    raise ValueError(f"unknown storage engine '{name}'")


def open_store(
    spark: SparkSession,
    warehouse: str | os.PathLike,
    engine: str = "auto",
    catalog: str = "",
    schema_prefix: str = "",
) -> TableStore:
    """A store over `warehouse` with the engine chosen by `engine` (auto-detected by default);
    `catalog` and `schema_prefix` name the catalog tables of the delta-spark engine."""
    return TableStore(warehouse, make_engine(spark, engine), catalog, schema_prefix)


def open_configured_store(spark: SparkSession, config: Any) -> TableStore:
    """The store a run uses: the configuration's warehouse, engine (`auto` resolved for this
    session, `pipelines.runtime.spark.engine_in_use`) and catalog names; with delta-spark and
    no catalog, the warehouse's tables are registered in the session catalog."""
    from pipelines.runtime.spark import engine_in_use

    storage = config.section("storage")
    store = open_store(
        spark,
        config.warehouse,
        engine_in_use(config, spark),
        storage.get("catalog") or "",
        storage.get("schema_prefix") or "",
    )
    store.register_all()
    return store


def open_folder_store(warehouse: str | os.PathLike, spark: Any = None) -> TableStore:
    """A store of the warehouse's table folders by delta-rs, whichever engine writes them (the same
    Delta format), with no Spark session (`spark`: what stands for one, `None` by default): for
    weighing tasks before a session starts, and for a run that needs none. Not for a catalog's
    managed tables, whose folders only the catalog knows."""
    from pipelines.store.delta_rs import DeltaRsEngine

    return TableStore(warehouse, DeltaRsEngine(spark))
