"""`gold.deprecation_timeline`: one interval per period an entity was deprecated (DataHub).

DEPRECATION MODIFY carries `status` = DEPRECATED | ACTIVE (the `modifier` repeats it):
DEPRECATED opens the interval, ACTIVE closes it (`end_reason` REMOVED), a HARD_DELETE
of the entity closes it (ENTITY_DELETED). A repeated DEPRECATED (a new note or date)
continues the open interval.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP
from gold.interval_tables import extended_of, intervals_of
from gold.intervals import ADD, ENTITY_DELETED, GROUP_COLUMN, REMOVE, ROW_KEY
from pipelines.core.table_specs import Extend, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
SOURCES = (DATAHUB_CHANGES,)
KEYS = ["deprecation"]
COLUMNS = (
    ROW_KEY,
    "source",
    "entity_urn",
    "valid_from",
    "valid_to",
    "is_current",
    "deprecated_by",
    "undeprecated_by",
    "end_reason",
    "valid_from_event_id",
    "valid_to_event_id",
    GROUP_COLUMN,
)


def _status():
    return F.upper(F.coalesce(F.col("status"), F.col("modifier")))


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != DATAHUB_CHANGES:
        raise ValueError(f"gold.deprecation_timeline: unknown source table {source_table!r}")
    deprecation = F.col("category") == "DEPRECATION"
    deletion = (F.col("category") == "LIFECYCLE") & (F.col("operation") == "HARD_DELETE")
    return rows.filter(deprecation | deletion).withColumn(GROUP, F.col("entity_urn"))


def _events(rows: DataFrame) -> DataFrame:
    action = (
        F.when(F.col("category") == "LIFECYCLE", F.lit(ENTITY_DELETED))
        .when(_status() == "DEPRECATED", F.lit(ADD))
        .when(_status() == "ACTIVE", F.lit(REMOVE))
    )
    return rows.select(
        F.lit("datahub").alias("source"),
        "entity_urn",
        F.lit(None).cast("string").alias("parent_urn"),
        F.lit("DEPRECATED").alias("deprecation"),
        action.alias("action"),
        "event_time",
        "actor",
        "event_id",
    )


READERS = {DATAHUB_CHANGES: _events}


def _as_table(intervals: DataFrame) -> DataFrame:
    renamed = intervals.withColumnRenamed("added_by", "deprecated_by").withColumnRenamed(
        "removed_by", "undeprecated_by"
    )
    return renamed.select(*COLUMNS)


def _as_intervals(rows: DataFrame) -> DataFrame:
    """The table's rows in the interval builder's columns (one deprecation slot per entity)."""
    return rows.select(
        *[c for c in COLUMNS if c not in ("deprecated_by", "undeprecated_by")],
        F.lit(None).cast("string").alias("parent_urn"),
        F.lit("DEPRECATED").alias("deprecation"),
        F.col("deprecated_by").alias("added_by"),
        F.col("undeprecated_by").alias("removed_by"),
    )


def build(sources: dict[str, DataFrame]) -> DataFrame:
    return _as_table(intervals_of(sources, READERS, KEYS))


SPEC = GoldTableSpec(
    table="gold.deprecation_timeline",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=(ROW_KEY,),
    partition_by=("is_current",),
    incremental=Extend(extended_of(READERS, KEYS, _as_intervals, _as_table)),
)
