"""Frames kept between the actions of one task, where the compute allows it.

Silver and gold read one computed frame several times (the checks, the quarantine, the write):
cached, it is computed once. Databricks serverless refuses `persist` and `unpersist`
(`pipelines.runtime.compute_rules`): there the frame is computed again by each action, which
gives the same rows, since what a task caches is deterministic (no random values or clock
readings), unless the caller allows a few rows to be collected: then they are computed once,
brought to the driver as Arrow and handed back as a frame of those rows (`keep_cached`'s
`collect_up_to`), which the later actions read instead of the plan. Elsewhere behaviour is as
`persist` always gave.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from pipelines.runtime.compute_rules import rules_of

# Up to this many rows travel to the driver once rather than being computed again by each action
# that reads them: a batch's new source rows (shared by the tables they feed), a small silver
# batch, a few bronze records, and where the compute caches no frame a small task's frame
# (`keep_cached`'s `collect_up_to`). A few MB at most on the driver.
LOCAL_ROWS = 10_000


def keep_cached(df: DataFrame, collect_up_to: int = 0) -> DataFrame:
    """`df.persist()` where the session's compute caches frames. Where it caches none: with
    `collect_up_to`, `df`'s rows when there are at most that many, collected once and given back
    as a local frame of the same schema; otherwise (more rows: computed once more, for nothing)
    `df` as it is."""
    if rules_of(df.sparkSession).caches:
        return df.persist()
    if collect_up_to > 0:
        rows = df.limit(collect_up_to + 1).toArrow()
        if rows.num_rows <= collect_up_to:
            return df.sparkSession.createDataFrame(rows, schema=df.schema)
    return df


def release_cached(df: DataFrame) -> None:
    """Undo `keep_cached`: `df.unpersist()` where the compute caches frames, else nothing."""
    if rules_of(df.sparkSession).caches:
        df.unpersist()
