"""`gold.dataworks_instance_runs`: one row per DataWorks task instance: when it ran, how it ended.

From `silver.dataworks_instance_status_changes` (status codes named by the catalog's
`instance_status` enum). The final status is the latest event's, in the order of the payload's
own change time (`changed_at`: modifyTime, else finishTime or beginRunningTime, in
milliseconds), then the CloudEvent time (whole seconds: DataWorks publishes a whole run within
one second), then the lifecycle (waiting, running, finished: among events that tie on both
times a finished status is never followed by a running one), then `event_id`
(`silver.dataworks_families.change_order`). A rerun after a failure therefore ends as its last
attempt did. `started_at`
is the earliest `beginRunningTime` sent (else the first RUNNING event's time),
`finished_at` the final event's `finishTime` (else its time) once the instance is
finished (FAILURE or SUCCESS), and `duration_seconds` the difference.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from pipelines.core.table_specs import GoldTableSpec
from silver import dataworks_catalog as catalog
from silver.dataworks_families import change_order

STATUS_CHANGES = "silver.dataworks_instance_status_changes"
SOURCES = (STATUS_CHANGES,)
RUNNING = catalog.status_codes("instance_status")["RUNNING"]
FINISHED = (
    catalog.status_codes("instance_status")["FAILURE"],
    catalog.status_codes("instance_status")["SUCCESS"],
)
WAITING = tuple(
    catalog.status_codes("instance_status")[name] for name in ("NOT_RUN", "WAIT_TIME", "WAIT_RESOURCE")
)
SCHEMA = (
    "instance_id bigint, node_id bigint, dag_id bigint, project_id bigint, first_seen_at timestamp, "
    "started_at timestamp, finished_at timestamp, duration_seconds double, final_status int, "
    "final_status_name string, status_changes bigint, is_finished boolean, finished_date date"
)
COLUMNS = column_names(SCHEMA)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != STATUS_CHANGES:
        raise ValueError(f"gold.dataworks_instance_runs: unknown source table {source_table!r}")
    return rows.filter(F.col("task_id").isNotNull()).withColumn(GROUP, F.col("task_id"))


def runs(changes: DataFrame) -> DataFrame:
    """The run rows (`COLUMNS`) of the instances in `changes`."""
    if "changed_at" not in changes.columns:  # rows typed before the family had `changed_at`
        changes = changes.withColumn("changed_at", F.lit(None).cast("timestamp"))
    lifecycle = (
        F.when(F.col("status").isin(*FINISHED), 2).when(F.col("status").isin(*WAITING), 0).otherwise(1)
    )
    order = change_order((lifecycle,))
    final = F.max_by(F.struct("status", "finish_time", "event_time"), order)
    first_running = F.min(F.when(F.col("status") == RUNNING, F.col("event_time")))
    per_instance = changes.groupBy("task_id").agg(
        F.max_by("node_id", order).alias("node_id"),
        F.max_by("dag_id", order).alias("dag_id"),
        F.max_by("project_id", order).alias("project_id"),
        F.min("event_time").alias("first_seen_at"),
        F.coalesce(F.min("begin_running_time"), first_running).alias("started_at"),
        final.alias("_final"),
        F.count("*").alias("status_changes"),
    )
    is_finished = F.col("_final.status").isin(*FINISHED)
    finished_at = F.when(is_finished, F.coalesce(F.col("_final.finish_time"), F.col("_final.event_time")))
    duration = F.unix_micros(finished_at) - F.unix_micros(F.col("started_at"))
    return per_instance.select(
        F.col("task_id").alias("instance_id"),
        "node_id",
        "dag_id",
        "project_id",
        "first_seen_at",
        "started_at",
        finished_at.alias("finished_at"),
        (duration / F.lit(1_000_000)).alias("duration_seconds"),
        F.col("_final.status").alias("final_status"),
        catalog.status_name_col("instance_status", F.col("_final.status")).alias("final_status_name"),
        "status_changes",
        is_finished.alias("is_finished"),
        F.to_date(finished_at).alias("finished_date"),
    )


def build(sources: dict[str, DataFrame]) -> DataFrame:
    changes = sources.get(STATUS_CHANGES)
    return empty_frame(SCHEMA) if changes is None else runs(changes)


SPEC = GoldTableSpec(
    table="gold.dataworks_instance_runs",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key="instance_id",
    row_key=("instance_id",),
)
