"""Frames kept in memory between the actions of one task, where the compute allows it.

Silver and gold read one computed frame several times (the checks, the quarantine, the write):
cached, it is computed once. Databricks serverless refuses `persist` and `unpersist`
(`pipelines.runtime.compute_rules`): there the frame is computed again by each action, which
gives the same rows, since what a task caches is deterministic (no random values or clock
readings). Elsewhere behaviour is as `persist` always gave.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from pipelines.runtime.compute_rules import rules_of


def keep_cached(df: DataFrame) -> DataFrame:
    """`df.persist()` where the session's compute caches frames, else `df` as it is."""
    return df.persist() if rules_of(df.sparkSession).caches else df


def release_cached(df: DataFrame) -> None:
    """Undo `keep_cached`: `df.unpersist()` where the compute caches frames, else nothing."""
    if rules_of(df.sparkSession).caches:
        df.unpersist()
