"""Frames kept between the actions of one task, where the compute allows it.

A large silver or gold task reads one computed frame several times (the checks, the quarantine,
the write): cached, it is computed once. Databricks serverless refuses `persist` and
`unpersist` (`pipelines.runtime.compute_rules`): there the frame is computed again by each
action, which gives the same rows, since what a task caches is deterministic (no random values
or clock readings). A small task computes its rows once whatever the compute: collected as
Arrow (`LOCAL_ROWS`; `pipelines.store.collected`). Elsewhere behaviour is as `persist` always
gave.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from pipelines.runtime.compute_rules import rules_of

# Up to this many rows travel to the driver once rather than being computed again by each action
# that reads them: a batch's new source rows (shared by the tables they feed), a small silver
# batch, a few bronze records. A few MB at most on the driver.
LOCAL_ROWS = 10_000


def keep_cached(df: DataFrame) -> DataFrame:
    """`df.persist()` where the session's compute caches frames; else `df` as it is (computed
    again by each action)."""
    if rules_of(df.sparkSession).caches:
        return df.persist()
    return df


def release_cached(df: DataFrame) -> None:
    """Undo `keep_cached`: `df.unpersist()` where the compute caches frames, else nothing."""
    if rules_of(df.sparkSession).caches:
        df.unpersist()
