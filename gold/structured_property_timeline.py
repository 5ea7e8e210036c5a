"""`gold.structured_property_timeline`: an entity's structured-property values over time (DataHub).

STRUCTURED_PROPERTY ADD / MODIFY (`propertyUrn`, else the `modifier`; `propertyValues`,
a JSON list newer servers may omit) open an interval for the property with those values
and close the property's interval under other values (SUPERSEDE); REMOVE closes the
property whatever its values (REMOVE_ALL); a HARD_DELETE of the entity (or of the
dataset of a schema field) closes everything. `property_values` is the values' JSON
text, null when the event did not send them.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold import GROUP
from gold.interval_tables import extended_of, intervals_of
from gold.intervals import (
    ENTITY_DELETED,
    GROUP_COLUMN,
    REMOVE_ALL,
    ROW_KEY,
    SUPERSEDE,
    interval_columns,
    root_urn,
)
from pipelines.core.table_specs import Extend, GoldTableSpec

DATAHUB_CHANGES = "silver.datahub_entity_changes"
SOURCES = (DATAHUB_CHANGES,)
KEYS = ["property_urn", "property_values"]
COLUMNS = tuple(interval_columns(KEYS))


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    if source_table != DATAHUB_CHANGES:
        raise ValueError(f"gold.structured_property_timeline: unknown source table {source_table!r}")
    prop = (F.col("category") == "STRUCTURED_PROPERTY") & F.col("operation").isin("ADD", "MODIFY", "REMOVE")
    deletion = (F.col("category") == "LIFECYCLE") & (F.col("operation") == "HARD_DELETE")
    return rows.filter(prop | deletion).withColumn(GROUP, root_urn())


def _events(rows: DataFrame) -> DataFrame:
    operation = F.col("operation")
    action = (
        F.when(operation == "HARD_DELETE", F.lit(ENTITY_DELETED))
        .when(operation == "REMOVE", F.lit(REMOVE_ALL))
        .otherwise(F.lit(SUPERSEDE))
    )
    values = F.when(F.col("propertyValues").isNotNull(), F.to_json("propertyValues"))
    return rows.select(
        F.lit("datahub").alias("source"),
        "entity_urn",
        "parent_urn",
        F.coalesce(F.col("propertyUrn"), F.col("modifier")).alias("property_urn"),
        values.alias("property_values"),
        action.alias("action"),
        "event_time",
        "actor",
        "event_id",
    )


READERS = {DATAHUB_CHANGES: _events}


def _as_is(frame: DataFrame) -> DataFrame:
    return frame.select(*COLUMNS)


def build(sources: dict[str, DataFrame]) -> DataFrame:
    return intervals_of(sources, READERS, KEYS).select(*COLUMNS)


SPEC = GoldTableSpec(
    table="gold.structured_property_timeline",
    sources=SOURCES,
    relevant=relevant,
    build=build,
    group_key=GROUP_COLUMN,
    row_key=(ROW_KEY,),
    partition_by=("is_current",),
    incremental=Extend(extended_of(READERS, KEYS, _as_is, _as_is)),
)
