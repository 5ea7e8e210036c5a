"""`gold.entity_versions`: the versions of each OpenMetadata entity and what each one changed.

One row per (entity, `currentVersion`) from `silver.openmetadata_change_events`
(entityCreated and every event that carries a version), with the fields the change
description lists as added, updated and deleted. Events that change nothing keep the
version (OpenMetadata: `previousVersion` = `currentVersion`): they add their fields to
that version's row, and `changed_at` / `changed_by` are the version's latest event's.
Unlike DataHub's Timeline API, nothing is cut by version retention.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from pipelines.core.table_specs import GoldTableSpec

OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
SOURCES = (OM_CHANGE_EVENTS,)
SCHEMA = (
    "entity_key string, entity_fqn string, entity_type string, version double, previous_version double, "
    "changed_at timestamp, changed_by string, event_type string, fields_added array<string>, "
    "fields_updated array<string>, fields_deleted array<string>, events bigint"
)
COLUMNS = column_names(SCHEMA)
_NAMES = "struct<fieldsAdded:array<struct<name:string>>,fieldsUpdated:array<struct<name:string>>,fieldsDeleted:array<struct<name:string>>>"


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != OM_CHANGE_EVENTS:
        raise ValueError(f"gold.entity_versions: unknown source table {source_table!r}")
    return rows.filter(F.col("current_version").isNotNull()).withColumn(GROUP, F.col("entity_key"))


def _names(description: Column, part: str) -> Column:
    return F.coalesce(F.transform(description[part], lambda f: f["name"]), F.array().cast("array<string>"))


def _merged(column: str) -> Column:
    return F.array_sort(F.array_distinct(F.flatten(F.collect_list(column))))


def build(sources: dict[str, DataFrame]) -> DataFrame:
    events = sources.get(OM_CHANGE_EVENTS)
    if events is None:
        return empty_frame(SCHEMA)
    description = F.from_json("change_description", _NAMES)
    described = events.select(
        "entity_key",
        "entity_fqn",
        "entity_type",
        "current_version",
        "previous_version",
        "event_time",
        "event_id",
        "actor",
        "event_type",
        _names(description, "fieldsAdded").alias("added"),
        _names(description, "fieldsUpdated").alias("updated"),
        _names(description, "fieldsDeleted").alias("deleted"),
    )
    latest = F.max_by(F.struct("actor", "event_type"), F.struct("event_time", "event_id"))
    versions = described.groupBy("entity_key", "current_version").agg(
        F.max("entity_fqn").alias("entity_fqn"),
        F.max("entity_type").alias("entity_type"),
        F.min(F.when(F.col("previous_version") != F.col("current_version"), F.col("previous_version"))).alias(
            "previous_version"
        ),
        F.max("event_time").alias("changed_at"),
        latest.alias("_latest"),
        _merged("added").alias("fields_added"),
        _merged("updated").alias("fields_updated"),
        _merged("deleted").alias("fields_deleted"),
        F.count("*").alias("events"),
    )
    return versions.select(
        "entity_key",
        "entity_fqn",
        "entity_type",
        F.col("current_version").alias("version"),
        "previous_version",
        "changed_at",
        F.col("_latest.actor").alias("changed_by"),
        F.col("_latest.event_type").alias("event_type"),
        "fields_added",
        "fields_updated",
        "fields_deleted",
        "events",
    )


SPEC = GoldTableSpec(
    table="gold.entity_versions",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key="entity_key",
    row_key=("entity_key", "version"),
)
