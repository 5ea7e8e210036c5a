"""`gold.documentation_history`: every change of an entity's (or column's) description, with its text.

DataHub DOCUMENTATION ADD / MODIFY / REMOVE (`description`, or `documentation` on newer
servers; institutional-memory links carry none and keep their URL, the `modifier`);
OpenMetadata `description` field changes (`columns.<col>.description` on the column's
entity key) with the new text, and the description a created entity carries. `value`
is the text after the change (the removed text for a REMOVE). One row per silver row,
keyed by its own `event_id`, so like `gold.change_history` the table only appends.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.change_history import datahub_changes, om_field_changes
from pipelines.core.table_specs import Append, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
OM_FIELD_CHANGES = "silver.openmetadata_field_changes"
OM_CHANGE_EVENTS = "silver.openmetadata_change_events"
SOURCES = (DATAHUB_CHANGES, OM_FIELD_CHANGES, OM_CHANGE_EVENTS)
SCHEMA = (
    "change_id string, source string, entity_urn string, parent_urn string, changed_at timestamp, "
    "changed_by string, operation string, value string"
)
COLUMNS = column_names(SCHEMA)


def _om_text(value):
    """OpenMetadata sends the text JSON-quoted or as is: unquote a JSON string."""
    return F.coalesce(F.get_json_object(F.concat(F.lit('{"v":'), value, F.lit("}")), "$.v"), value)


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table == DATAHUB_CHANGES:
        chosen = rows.filter(F.col("category") == "DOCUMENTATION")
    elif source_table == OM_FIELD_CHANGES:
        chosen = rows.filter(F.col("field_base") == "description")
    elif source_table == OM_CHANGE_EVENTS:
        described = F.get_json_object("entity", "$.description").isNotNull()
        chosen = rows.filter((F.col("event_type") == "entityCreated") & described)
    else:
        raise ValueError(f"gold.documentation_history: unknown source table {source_table!r}")
    return chosen.withColumn(GROUP, F.col("event_id"))


def _datahub(rows: DataFrame) -> DataFrame:
    value = F.coalesce("description", "documentation", "modifier").alias("value")
    return _narrowed(datahub_changes(rows, value))


def _om_field_changes(rows: DataFrame) -> DataFrame:
    text = F.when(F.col("change_kind") == "deleted", F.col("old_value")).otherwise(F.col("new_value"))
    return _narrowed(om_field_changes(rows, _om_text(text).alias("value")))


def _narrowed(changes: DataFrame) -> DataFrame:
    """A change-history row (with its `value`) in this table's columns."""
    return changes.select(
        "change_id",
        "source",
        "entity_urn",
        "parent_urn",
        F.col("event_time").alias("changed_at"),
        F.col("actor").alias("changed_by"),
        "operation",
        "value",
    )


def _om_created(rows: DataFrame) -> DataFrame:
    return rows.select(
        F.col("event_id").alias("change_id"),
        F.lit("openmetadata").alias("source"),
        F.col("entity_key").alias("entity_urn"),
        F.lit(None).cast("string").alias("parent_urn"),
        F.col("event_time").alias("changed_at"),
        F.col("actor").alias("changed_by"),
        F.lit("ADD").alias("operation"),
        F.get_json_object("entity", "$.description").alias("value"),
    )


READERS = {DATAHUB_CHANGES: _datahub, OM_FIELD_CHANGES: _om_field_changes, OM_CHANGE_EVENTS: _om_created}


def build(sources: dict[str, DataFrame]) -> DataFrame:
    parts = [
        read(sources[name]).select(*COLUMNS)
        for name, read in READERS.items()
        if sources.get(name) is not None
    ]
    if not parts:
        return empty_frame(SCHEMA)
    return reduce(DataFrame.unionByName, parts)


SPEC = GoldTableSpec(
    table="gold.documentation_history",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key="change_id",
    row_key=("change_id",),
    incremental=Append(),
)
