"""`gold.dataworks_node_reliability_daily`: per node and day, finished runs and how many failed.

A run is an instance of the node (`gold.dataworks_instance_runs`' rule, computed from the
same silver rows) counted on the day it finished; `failure_rate` = failed / runs.
Instances still running count nowhere yet. The recompute group is the node, so a late
status change of one of its instances recounts the node's days.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP, empty_frame
from gold.dataworks_instance_runs import STATUS_CHANGES, runs
from pipelines.core.table_specs import GoldTableSpec
from silver import dataworks_catalog as catalog

SOURCES = (STATUS_CHANGES,)
SUCCESS = catalog.status_names("instance_status")[catalog.status_codes("instance_status")["SUCCESS"]]
FAILURE = catalog.status_names("instance_status")[catalog.status_codes("instance_status")["FAILURE"]]
SCHEMA = "node_id bigint, event_date date, runs bigint, succeeded bigint, failed bigint, failure_rate double"


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != STATUS_CHANGES:
        raise ValueError(f"gold.dataworks_node_reliability_daily: unknown source table {source_table!r}")
    with_node = rows.filter(F.col("task_id").isNotNull() & F.col("node_id").isNotNull())
    return with_node.withColumn(GROUP, F.col("node_id"))


def build(sources: dict[str, DataFrame]) -> DataFrame:
    changes = sources.get(STATUS_CHANGES)
    if changes is None:
        return empty_frame(SCHEMA)
    finished = runs(changes).filter(F.col("is_finished") & F.col("node_id").isNotNull())
    daily = finished.groupBy("node_id", F.col("finished_date").alias("event_date")).agg(
        F.count("*").alias("runs"),
        F.sum(F.when(F.col("final_status_name") == SUCCESS, 1).otherwise(0)).alias("succeeded"),
        F.sum(F.when(F.col("final_status_name") == FAILURE, 1).otherwise(0)).alias("failed"),
    )
    return daily.select(
        "node_id",
        "event_date",
        "runs",
        "succeeded",
        "failed",
        (F.col("failed") / F.col("runs")).alias("failure_rate"),
    )


SPEC = GoldTableSpec(
    table="gold.dataworks_node_reliability_daily",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key="node_id",
    row_key=("node_id", "event_date"),
)
