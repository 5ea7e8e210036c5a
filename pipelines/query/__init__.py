"""`lakehouse sql`: read-only Spark SQL over every table of a warehouse."""

from pipelines.query.sql import ReadOnlyViolation, SqlSession, run_script

__all__ = ["ReadOnlyViolation", "SqlSession", "run_script"]
