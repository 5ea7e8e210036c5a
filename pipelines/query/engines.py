"""Which query engine answers `lakehouse sql` and `lakehouse timeline`, and their sessions.

`auto` (no `--engine`): on a local warehouse DuckDB where it answers alike, else Spark SQL
(`pipelines.query.auto_session`); Spark SQL alone where DuckDB cannot read the warehouse (a
cluster's or Databricks' session, catalog tables of the delta-spark engine). `spark` and
`duckdb` force one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.core.config import Config, ConfigError
from pipelines.runtime.table_engines import configured_engine

if TYPE_CHECKING:
    from pipelines.query.duckdb_session import DuckDbSession
    from pipelines.query.spark_session import SqlSession

AUTO, SPARK, DUCKDB = "auto", "spark", "duckdb"
QUERY_ENGINES = (AUTO, SPARK, DUCKDB)


def why_not_duckdb(config: Config) -> str | None:
    """Why DuckDB cannot read this warehouse's tables, or None when it can: it reads the
    warehouse folder of a local warehouse."""
    if config.profile.get("use_existing_session"):
        return f"the {config.raw['profile']} profile's tables are its session's"
    catalog = config.section("storage")["catalog"]
    if catalog and configured_engine(config) == "delta-spark":
        return f"the tables are catalog tables in {catalog!r} here (delta-spark engine)"
    return None


def warehouse_folder(config: Config) -> Path:
    if not config.warehouse.is_dir():
        raise FileNotFoundError(f"warehouse {config.warehouse} does not exist")
    return config.warehouse


def duckdb_session(config: Config, command: str, version: int | None = None) -> DuckDbSession:
    """A DuckDB session over the warehouse; ConfigError when DuckDB cannot read it."""
    from pipelines.query.duckdb_session import DuckDbSession

    reason = why_not_duckdb(config)
    if reason:
        raise ConfigError(
            f"lakehouse {command} --engine duckdb reads warehouse folders; {reason}: use --engine spark"
        )
    return DuckDbSession(warehouse_folder(config), version)


def spark_session(config: Config, version: int | None = None) -> SqlSession:
    """A Spark SQL session over the warehouse (this starts Spark)."""
    from pipelines.query.spark_session import SqlSession, quiet_spark_errors
    from pipelines.runtime.spark import engine_in_use, get_spark

    folder = warehouse_folder(config)
    spark = get_spark(config)
    quiet_spark_errors()
    storage = config.section("storage")
    engine = engine_in_use(config, spark)
    return SqlSession(spark, folder, engine, version, storage["catalog"], storage["schema_prefix"])
