"""Reading a warehouse: `lakehouse sql` (read-only Spark SQL over every table) and
`lakehouse timeline` (one entity's history in the shape of DataHub's Timeline API,
`pipelines.query.timeline`), through Spark or, with `--engine duckdb`, through DuckDB
(`pipelines.query.duckdb_session`)."""

from pipelines.query.sql import ReadOnlyViolation, SqlSession, run_script

__all__ = ["ReadOnlyViolation", "SqlSession", "run_script"]
